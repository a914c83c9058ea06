"""The index's operations: ``codebase/search``, ``definition``, ``status`` and ``reindex``.

Served at every door by the feature table (LSP ``qodeassist/codebase/<op>``, ACP
``_qodeassist/codebase/<op>``, HTTP ``POST /v1/qodeassist/codebase/<op>``). Payloads are
camelCase; paths are relative to their workspace folder (``uri`` is the file's URI) and lines
are 1-based and inclusive, as the tools show them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from qodeassist_lsp.core.operations import Operation
from qodeassist_lsp.wire.errors import ErrorKind, QodeAssistError

if TYPE_CHECKING:
    from qodeassist_lsp.features.codebase.service import CodebaseService, Found, Hit


class CodebaseOff(QodeAssistError):
    """The index is switched off (``[codebase] enabled = false``)."""

    error_kind = ErrorKind.UNAVAILABLE


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class SearchRequest(_Model):
    """``codebase/search``: a question or identifiers, and at most how many snippets."""

    query: str = Field(min_length=1)
    limit: int | None = Field(default=None, ge=1, le=50)


class SnippetResult(_Model):
    """One ranked snippet (lines 1-based, inclusive)."""

    path: str
    uri: str
    start_line: int
    end_line: int
    kind: str
    name: str | None
    text: str
    rank: float

    @classmethod
    def of(cls, hit: Hit) -> SnippetResult:
        """Return the result shape of ``hit``."""
        s = hit.snippet
        return cls(
            path=s.path,
            uri=hit.path.as_uri(),
            start_line=s.start_line + 1,
            end_line=s.end_line + 1,
            kind=s.kind,
            name=s.name,
            text=s.text,
            rank=s.rank,
        )


class SearchResult(_Model):
    """The snippets found, best first."""

    snippets: list[SnippetResult]


class DefinitionRequest(_Model):
    """``codebase/definition``: a name (``Class``, ``func``, ``Class.method``)."""

    symbol: str = Field(min_length=1)
    limit: int = Field(default=5, ge=1, le=50)


class DefinitionResult(_Model):
    """One definition (lines 1-based, inclusive)."""

    name: str
    kind: str
    container: str | None
    path: str
    uri: str
    start_line: int
    end_line: int
    signature: str
    summary: str

    @classmethod
    def of(cls, found: Found) -> DefinitionResult:
        """Return the result shape of ``found``."""
        d = found.definition
        return cls(
            name=d.name,
            kind=d.kind,
            container=d.container,
            path=d.path,
            uri=found.path.as_uri(),
            start_line=d.start_line + 1,
            end_line=d.end_line + 1,
            signature=d.signature,
            summary=d.summary,
        )


class DefinitionsResult(_Model):
    """The definitions found."""

    definitions: list[DefinitionResult]


class StatusRequest(_Model):
    """``codebase/status``: no parameters."""


class ReindexRequest(_Model):
    """``codebase/reindex``: rescan every folder; ``wait`` for the build to end."""

    wait: bool = False


class StatusResult(_Model):
    """The index's state and counts (the ``codebase`` part of ``qodeassist/status``)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    state: str
    files: int = 0
    chunks: int = 0
    symbols: int = 0
    done: int = 0
    total: int = 0
    folders: list[dict[str, Any]] = Field(default_factory=list)


def operations(service: Callable[[], CodebaseService]) -> tuple[Operation[Any, Any], ...]:
    """Return the four operations over ``service()``."""

    def on() -> CodebaseService:
        current = service()
        if not current.settings.enabled:
            raise CodebaseOff(
                "the codebase index is off; set [codebase] enabled = true in settings.toml"
            )
        return current

    async def search(request: SearchRequest) -> SearchResult:
        hits = on().search(request.query, request.limit)
        return SearchResult(snippets=[SnippetResult.of(hit) for hit in hits])

    async def definition(request: DefinitionRequest) -> DefinitionsResult:
        found = on().definitions(request.symbol, request.limit)
        return DefinitionsResult(definitions=[DefinitionResult.of(f) for f in found])

    async def status(_request: StatusRequest) -> StatusResult:
        return StatusResult.model_validate(service().status())

    async def reindex(request: ReindexRequest) -> StatusResult:
        return StatusResult.model_validate(await on().reindex(wait=request.wait))

    return (
        Operation(
            name="search",
            request=SearchRequest,
            result=SearchResult,
            run=search,
            summary="The snippets best matching a question or identifiers, best first.",
        ),
        Operation(
            name="definition",
            request=DefinitionRequest,
            result=DefinitionsResult,
            run=definition,
            summary="Where a symbol is defined, with its signature and summary.",
        ),
        Operation(
            name="status",
            request=StatusRequest,
            result=StatusResult,
            run=status,
            summary="The index's state and counts.",
        ),
        Operation(
            name="reindex",
            request=ReindexRequest,
            result=StatusResult,
            run=reindex,
            summary="Rescan every workspace folder (only changed files are re-read).",
        ),
    )
