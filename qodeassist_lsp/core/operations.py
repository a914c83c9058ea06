"""A feature's declaration: its operations, served at every door from this one description.

A feature package (L4, ``features/<name>/``) describes itself with a `FeatureSpec` — a light
module-level constant the feature table (``workbench/features.py``) lists, one line per
feature — whose ``build`` factory receives the engine's `FeatureServices` and returns the running
`Feature`. The package imports this module and lower layers only; never the workbench or a door.

Each `Operation` (pydantic request and result models, an ``async`` function between them) is
served without door code, as

- LSP ``qodeassist/<feature>/<op>`` (params: the request model; result: the result model),
- ACP ``_qodeassist/<feature>/<op>`` (an extension method, ACP's custom-method convention),
- HTTP ``POST /v1/qodeassist/<feature>/<op>`` (JSON body: the request model).

A door validates the params with the request model (bad params: LSP/ACP -32602, HTTP 400) and
answers what ``run`` raises through the one error table (``wire/error_table.py``): raise the
package's errors (``wire/errors.py``), e.g. ``InvalidParams`` for a request that makes no sense.

A worked example, ``features/echo/__init__.py``::

    from pydantic import BaseModel

    from qodeassist_lsp.core.operations import Feature, FeatureServices, FeatureSpec, Operation


    class ReverseRequest(BaseModel):
        text: str


    class ReverseResult(BaseModel):
        text: str
        folders: int


    def build(services: FeatureServices) -> Feature:
        async def reverse(request: ReverseRequest) -> ReverseResult:
            return ReverseResult(text=request.text[::-1], folders=len(services.folders()))

        return Feature(
            operations=(
                Operation(name="reverse", request=ReverseRequest, result=ReverseResult,
                          run=reverse, summary="The text reversed."),
            ),
        )


    SPEC = FeatureSpec(name="echo", build=build)

and its one registration line: ``SPEC`` in the workbench's table (a built-in feature), or an
entry point of group ``qodeassist_lsp.features`` naming it (a plugin: ``echo = pkg:SPEC``).

Lifecycle: the workbench builds every feature once per process (a ``build`` that raises is
logged and the feature left out), runs each ``start`` in a task of its own once the door is up
(cancelled at shutdown), calls ``files_changed`` and ``reloaded`` as they happen, reads
``status`` for ``qodeassist/status`` (under the feature's name), offers ``tools`` to every chat
of every door, and awaits ``aclose`` at shutdown. Every hook is optional.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

    from qodeassist_lsp.config.confinement import Confinement
    from qodeassist_lsp.config.settings_types import SettingsSection
    from qodeassist_lsp.core.runtime_view import RuntimeView
    from qodeassist_lsp.core.tools import ToolContributor

__all__ = [
    "NAME_PATTERN",
    "Feature",
    "FeatureServices",
    "FeatureSpec",
    "FileChange",
    "FileChangeKind",
    "Operation",
    "ProgressReporter",
    "ProgressTask",
]

NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]*")
"""What a feature's and an operation's name look like (one path segment of every door)."""

# Bound by name: importing the declaration does not import pydantic (the LSP server reads the
# feature table before `initialize` is answered).
Request = TypeVar("Request", bound="BaseModel")
Result = TypeVar("Result", bound="BaseModel")


@dataclass(frozen=True, kw_only=True)
class Operation(Generic[Request, Result]):
    """One operation of a feature: ``run`` turns a validated ``request`` into a ``result``."""

    name: str
    """The ``<op>`` of ``qodeassist/<feature>/<op>`` (`NAME_PATTERN`)."""
    request: type[Request]
    """The params' model (unknown keys: as the model's ``model_config`` says)."""
    result: type[Result]
    """The answer's model (sent as ``model_dump(mode="json", by_alias=True)``)."""
    run: Callable[[Request], Awaitable[Result]]
    """The operation; raise the package's errors (the error table answers them)."""
    summary: str = ""
    """One line for docs and listings."""

    def __post_init__(self) -> None:
        """Refuse a name that is not one path segment."""
        if not NAME_PATTERN.fullmatch(self.name):
            raise ValueError(f"operation name {self.name!r} must match {NAME_PATTERN.pattern}")


FileChangeKind = Literal["opened", "changed", "saved", "closed", "created", "deleted"]
"""What happened to a file: an editor buffer's life (opened … closed) or the disk's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """A file a door saw change: an open buffer edited or saved, a file created or deleted."""

    path: Path
    kind: FileChangeKind
    text: str | None = None
    """The buffer's text for ``opened``/``changed``/``saved`` when the door has it, else None."""


class ProgressTask(Protocol):
    """One long operation's progress, begun by `ProgressReporter.begin`."""

    def report(self, message: str, percentage: int | None = None) -> None:
        """Report how far the operation is."""
        ...

    def end(self, message: str = "") -> None:
        """Report the end (once)."""
        ...


class ProgressReporter(Protocol):
    """Where long work is shown: LSP ``$/progress``; the other doors log."""

    async def begin(self, title: str, message: str = "") -> ProgressTask:
        """Begin showing an operation called ``title``."""
        ...


@dataclass(frozen=True, kw_only=True)
class FeatureServices:
    """What the engine gives a feature's ``build``: read the callables per call (reload-safe)."""

    view: RuntimeView
    """The configuration, sessions and settings, read per request."""
    folders: Callable[[], Sequence[Path]]
    """The workspace folders now."""
    ignored_by: Callable[[Path], str | None]
    """The one ignore rule: the ignore file (``.qodeassistignore``, ``.gitignore``) excluding a
    path, or None. A feature never reads or returns a file it names."""
    confinement: Callable[[], Confinement]
    """Where files may be read now: the workspace folders plus ``allowed_roots``."""
    data_root: Callable[[], Path]
    """The data root (a feature keeps its files in a folder of its own name below it)."""
    progress: ProgressReporter
    """Where long work is shown (LSP ``$/progress``; other doors log)."""


@dataclass(frozen=True, kw_only=True)
class Feature:
    """A running feature: its operations and its optional hooks (see the module docstring)."""

    operations: Sequence[Operation[Any, Any]] = ()
    start: Callable[[], Awaitable[None]] | None = None
    """Background work begun once the door is up, in a task of its own; cancelled at shutdown."""
    aclose: Callable[[], Awaitable[None]] | None = None
    """Release what the feature holds (after ``start``'s task has ended)."""
    status: Callable[[], Mapping[str, Any]] | None = None
    """The feature's part of ``qodeassist/status`` (JSON-able), under the feature's name."""
    tools: ToolContributor | None = None
    """Adds the feature's chat tools to each chat's registry (every door's chats)."""
    files_changed: Callable[[Sequence[FileChange]], None] | None = None
    """Told of buffer edits and saves and of files changed on disk; must return quickly."""
    reloaded: Callable[[], None] | None = None
    """Called after the configuration reloaded (settings may have changed)."""
    provides: object | None = None
    """What the feature offers the others through the workbench (typed by a lower layer's
    protocol, e.g. ``context.codebase.model``); features never import each other."""


@dataclass(frozen=True, kw_only=True)
class FeatureSpec:
    """A feature's row of the feature table: its name, settings section and factory."""

    name: str
    """The ``<feature>`` of ``qodeassist/<feature>/<op>`` (`NAME_PATTERN`)."""
    build: Callable[[FeatureServices], Feature]
    """Builds the feature once per process; it must not block (start work in ``start``)."""
    settings: SettingsSection[Any] | None = None
    """Its ``[section]`` of ``settings.toml``, registered with the core sections."""
    summary: str = ""
    """One line for docs and listings."""
    operations: tuple[str, ...] = ()
    """Its operations' names, when known without building it: the language server registers
    their methods before ``initialize`` and builds the feature after it (the operations'
    models are not imported on the way to the answer). Empty: built when the table is read.
    The built feature must serve exactly these (a difference is logged)."""

    def __post_init__(self) -> None:
        """Refuse a name that is not one path segment."""
        if not NAME_PATTERN.fullmatch(self.name):
            raise ValueError(f"feature name {self.name!r} must match {NAME_PATTERN.pattern}")
