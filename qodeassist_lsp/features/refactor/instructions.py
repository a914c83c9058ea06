"""The quick-refactor instruction library: small TOML files layered bundled < user < project.

Each file in ``<bundled>/instructions/``, ``<config>/instructions/`` or
``<project>/.qodeassist/instructions/`` holds one instruction (``name``, ``body``, optional
``default`` and ``agent``). Its id is the file stem, so a user or project file with the same
stem replaces a bundled one and ids stay stable across renames of the display name (the
code-action menu and ``instructionId`` refer to them). A broken file becomes a
``ConfigProblem`` with file and line, never an exception: the rest of the library still loads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.config.problems import ConfigProblem, did_you_mean
from qodeassist_lsp.config.toml_source import TomlFile, read_toml

__all__ = [
    "INSTRUCTIONS_DIR",
    "Instruction",
    "InstructionLayer",
    "default_instruction",
    "instruction_dirs",
    "load_instructions",
]

INSTRUCTIONS_DIR: Final = "instructions"
InstructionLayer = Literal["bundled", "user", "project"]
"""Where an instruction comes from; later layers win."""
_LAYER_RANK: Final[dict[str, int]] = {"bundled": 0, "user": 1, "project": 2}
_KEYS: Final = ("name", "body", "default", "agent")


@dataclass(frozen=True, slots=True)
class Instruction:
    """One refactor instruction of the library."""

    id: str
    """Stable identifier: the file stem (``improve`` for ``improve.toml``)."""
    name: str
    body: str
    default: bool = False
    agent: str | None = None
    """Agent to use instead of ``pipelines.quick_refactor``."""
    source: Path | None = None
    layer: InstructionLayer = "bundled"


def instruction_dirs(paths: ConfigPaths) -> list[tuple[InstructionLayer, Path]]:
    """Return the instruction folders of ``paths``, lowest precedence first."""
    dirs: list[tuple[InstructionLayer, Path]] = [
        ("bundled", paths.bundled / INSTRUCTIONS_DIR),
        ("user", paths.config_root / INSTRUCTIONS_DIR),
    ]
    if paths.project_config is not None:
        dirs.append(("project", paths.project_config / INSTRUCTIONS_DIR))
    return dirs


def _parse(
    toml: TomlFile, layer: InstructionLayer, problems: list[ConfigProblem]
) -> Instruction | None:
    data: dict[str, Any] = toml.data
    for key in data:
        if key not in _KEYS:
            problems.append(
                toml.problem(
                    "warning", f"unknown key {key!r} ignored{did_you_mean(key, _KEYS)}", key
                )
            )
    for key in ("name", "body"):
        value = data.get(key)
        if key not in data:
            message = f"missing required key {key!r}; instruction skipped"
            problems.append(toml.problem("error", message, line=1))
            return None
        if not isinstance(value, str) or not value.strip():
            message = f"{key!r} must be a non-empty string; instruction skipped"
            problems.append(toml.problem("error", message, key))
            return None
    default = data.get("default", False)
    if not isinstance(default, bool):
        problems.append(toml.problem("error", "'default' must be true or false", "default"))
        default = False
    agent = data.get("agent")
    if agent is not None and (not isinstance(agent, str) or not agent.strip()):
        problems.append(toml.problem("error", "'agent' must be a non-empty string", "agent"))
        agent = None
    return Instruction(
        id=toml.path.stem,
        name=str(data["name"]).strip(),
        body=str(data["body"]).strip(),
        default=default,
        agent=agent.strip() if isinstance(agent, str) else None,
        source=toml.path,
        layer=layer,
    )


def _files(folder: Path, problems: list[ConfigProblem]) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".toml" and p.is_file())
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(ConfigProblem("error", f"cannot list folder: {exc.strerror}", str(folder)))
        return []


def load_instructions(
    paths: ConfigPaths | Sequence[tuple[InstructionLayer, Path]],
) -> tuple[list[Instruction], list[ConfigProblem]]:
    """Load and layer the library; return the instructions sorted by name, and the problems."""
    dirs = instruction_dirs(paths) if isinstance(paths, ConfigPaths) else list(paths)
    problems: list[ConfigProblem] = []
    by_id: dict[str, Instruction] = {}
    for layer, folder in dirs:
        for path in _files(folder, problems):
            toml = read_toml(path)
            if isinstance(toml, ConfigProblem):
                problems.append(toml)
                continue
            instruction = _parse(toml, layer, problems)
            if instruction is not None:
                by_id[instruction.id] = instruction
    instructions = sorted(by_id.values(), key=lambda i: (i.name.casefold(), i.id))
    defaults = [i for i in instructions if i.default]
    chosen = default_instruction(instructions)
    for other in defaults:
        if chosen is not None and other is not chosen and other.layer == chosen.layer:
            problems.append(
                ConfigProblem(
                    "warning",
                    f"more than one default instruction; {chosen.id!r} is used, "
                    f"'default' of {other.id!r} ignored",
                    str(other.source) if other.source else None,
                )
            )
    return instructions, problems


def default_instruction(instructions: Iterable[Instruction]) -> Instruction | None:
    """Return the default instruction: highest layer first, then by id; ``None`` if none."""
    defaults = [i for i in instructions if i.default]
    if not defaults:
        return None
    return min(defaults, key=lambda i: (-_LAYER_RANK[i.layer], i.id))
