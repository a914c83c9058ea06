"""The ``load_skill`` tool (read class) and the contributor that offers it to chat sessions.

Called with a skill's ``name``, it returns the skill's instructions and the list of its other
files; called with ``name`` and ``resource`` (a path relative to the skill's folder), it returns
that file, confined to the folder (symlinks followed, so a link cannot lead out of it). It is
offered only to chat sessions (refactor has no catalog to pick from) while skills are enabled,
``[tools.enabled] load_skill`` is on and at least one skill exists.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

from qodeassist_lsp.config.confinement import Confinement, PathRefused, real_path
from qodeassist_lsp.config.pipelines import PipelineSpec, ToolAccess
from qodeassist_lsp.core.tools import PermissionClass, ToolContext, ToolOutput, ToolRegistry
from qodeassist_lsp.skills.library import SkillLibrary
from qodeassist_lsp.skills.skill import Skill
from qodeassist_lsp.wire.tools import ToolSpec

TOOL_NAME: Final = "load_skill"
RESOURCE_MAX_BYTES: Final = 256 * 1024
"""A larger resource file is cut here: it goes into the model's context whole."""

SPEC: Final = ToolSpec(
    TOOL_NAME,
    "Load a skill's instructions by its name (the skills are listed under 'Available Skills' "
    "in the system prompt); the answer also lists the skill's other files. Pass `resource` "
    "with one of those paths to read that file.",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, like code-review."},
            "resource": {
                "type": "string",
                "description": "Optional: a file of the skill, relative to its folder "
                "(like references/guide.md).",
            },
        },
        "required": ["name"],
    },
)


class LoadSkillTool:
    """Returns a skill's body and resources from the library current at call time."""

    spec = SPEC
    permission: PermissionClass = "read"

    def __init__(self, library: Callable[[], SkillLibrary | None]) -> None:
        """Serve the skills of ``library()`` (read per call: skills reload on change)."""
        self._library = library

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        """Return the body (and resource list) of skill ``name``, or one of its files."""
        name = arguments.get("name")
        if not isinstance(name, str) or not name.strip():
            return ToolOutput("Error: `name` (a skill's name) is required", is_error=True)
        library = self._library()
        skill = library.get(name.strip()) if library is not None else None
        if skill is None:
            known = ", ".join(library.skills) if library is not None else ""
            return ToolOutput(
                f"Error: no skill named {name!r}; available: {known or 'none'}", is_error=True
            )
        resource = arguments.get("resource")
        if resource is None or resource == "":
            return await asyncio.to_thread(_describe, skill)
        if not isinstance(resource, str):
            return ToolOutput("Error: `resource` must be a path string", is_error=True)
        return await asyncio.to_thread(_read_resource, skill, resource)


def _describe(skill: Skill) -> ToolOutput:
    if not skill.body.strip():
        return ToolOutput(f"Error: skill {skill.name!r} has no instructions", is_error=True)
    text = f"Skill: {skill.name}\n\n{skill.body}"
    resources = skill.resources()
    if resources:
        listed = "\n".join(f"- {path}" for path in resources)
        text += (
            f"\n\nFiles of this skill (read one with load_skill name={skill.name!r} "
            f"resource=<path>):\n{listed}"
        )
    return ToolOutput(text)


def _read_resource(skill: Skill, resource: str) -> ToolOutput:
    folder = real_path(skill.folder)
    confinement = Confinement((folder,), scope=f"the folder of skill {skill.name!r}", advice="")
    try:
        path = confinement.for_read(resource, base=folder)
        with path.open("rb") as handle:
            data = handle.read(RESOURCE_MAX_BYTES + 1)
    except PathRefused as exc:
        return ToolOutput(f"Error: {exc}", is_error=True)
    except FileNotFoundError:
        return ToolOutput(
            f"Error: skill {skill.name!r} has no file {resource!r}; its files: "
            f"{', '.join(skill.resources()) or 'none'}",
            is_error=True,
        )
    except OSError as exc:
        return ToolOutput(f"Error: cannot read {resource!r}: {exc.strerror}", is_error=True)
    cut = len(data) > RESOURCE_MAX_BYTES
    text = data[:RESOURCE_MAX_BYTES].decode("utf-8", errors="replace")
    if "\x00" in text:
        return ToolOutput(f"Error: {resource!r} is a binary file", is_error=True)
    return ToolOutput(text + ("\n\n[file truncated]" if cut else ""))


def contributor(
    library: Callable[[], SkillLibrary | None], enabled: Callable[[], bool]
) -> Callable[[ToolRegistry, PipelineSpec], None]:
    """Return the contributor that registers ``load_skill`` on sessions with full tool access.

    ``enabled()`` is read per session (the current settings); so is the library.
    """

    def contribute(registry: ToolRegistry, pipeline: PipelineSpec) -> None:
        current = library()
        if (
            pipeline.tool_access is ToolAccess.ALL
            and enabled()
            and current is not None
            and current.skills
        ):
            registry.register(LoadSkillTool(library))

    return contribute
