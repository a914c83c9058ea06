"""The shape every built-in tool shares: a name, a description, typed arguments, a class.

A tool's arguments are a pydantic model; its JSON schema (without pydantic's ``title`` and
``default`` keys, which some APIs refuse) is what the model is offered, and the same model
validates what the model sends back, so a malformed call becomes one clear error the model can
act on instead of a crash deep inside the tool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from qodeassist_lsp.config.settings import ToolsSettings
from qodeassist_lsp.core.tools import PermissionClass, ToolContext, ToolOutput
from qodeassist_lsp.tools.workspace import ToolWorkspace
from qodeassist_lsp.wire.errors import QodeAssistError
from qodeassist_lsp.wire.tools import ToolSpec

_DROPPED_KEYS = frozenset({"title", "default"})


class ToolInputError(QodeAssistError, ValueError):
    """The model's arguments or what they name cannot be used; ``str()`` says how to fix it."""


class ToolArguments(BaseModel):
    """Base of every tool's arguments: unknown keys are ignored, values coerced where sane."""

    model_config = ConfigDict(extra="ignore", frozen=True)


A = TypeVar("A", bound=ToolArguments)


def schema_of(model: type[ToolArguments]) -> dict[str, Any]:
    """Return the JSON schema offered to the model for ``model``."""
    schema: dict[str, Any] = _clean(model.model_json_schema())
    schema.pop("description", None)  # the model's docstring, written for programmers
    return schema


def _clean(value: Any) -> Any:
    """Drop ``title``/``default`` from every schema (not from ``properties``, which are names)."""
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if not isinstance(value, dict):
        return value
    cleaned = {k: _clean(v) for k, v in value.items() if k not in _DROPPED_KEYS}
    if isinstance(value.get("properties"), dict):
        cleaned["properties"] = {k: _clean(v) for k, v in value["properties"].items()}
    return cleaned


def parse_arguments(model: type[A], tool: str, arguments: dict[str, Any]) -> A:
    """Validate ``arguments`` for ``tool``; raise ``ToolInputError`` naming each bad field."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
            for error in exc.errors()
        )
        raise ToolInputError(
            f"invalid arguments for {tool} ({problems}); call it again with arguments that "
            "match its parameters"
        ) from None


def _no_workspace() -> ToolWorkspace:
    raise RuntimeError("this tool was built without a workspace")


class KitTool(Generic[A]):
    """A built-in tool: subclasses set the class attributes and implement ``call``."""

    name: ClassVar[str]
    description: ClassVar[str]
    permission: PermissionClass = "read"
    arguments: type[A]

    def __init__(
        self,
        workspace: Callable[[], ToolWorkspace] = _no_workspace,
        settings: Callable[[], ToolsSettings] = ToolsSettings,
    ) -> None:
        """Work in ``workspace()`` under the ``[tools]`` ``settings()``, both read per call."""
        self._workspace = workspace
        self._settings = settings

    @property
    def spec(self) -> ToolSpec:
        """The definition sent to the provider."""
        return ToolSpec(self.name, self.description, schema_of(self.arguments))

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        """Validate the model's arguments, then run the tool."""
        return await self.call(parse_arguments(self.arguments, self.name, arguments), context)

    async def call(self, args: A, context: ToolContext) -> ToolOutput:
        """Run with validated arguments."""
        raise NotImplementedError


def error(message: str) -> ToolOutput:
    """Return an error output the model (and the user) reads."""
    return ToolOutput(f"Error: {message}", is_error=True)
