"""Writing a setup plan: provider and agent files, and the user's ``pipelines.toml``.

Every file is edited through tomlkit, so a file that already exists keeps its comments, key
order and formatting; only the keys setup owns are set (an agent's ``extends``,
``provider_instance`` and ``model``; an instance's ``extends``, ``url`` and ``demo``; the changed
pipeline slots). A file is written only when its text changes, atomically (a temporary file
renamed over the old one). Nothing under the bundled tree is ever written. Afterwards the
configuration is loaded again exactly as ``agents validate`` loads it, and the problems that
concern the written files are returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
from tomlkit.items import Table

from qodeassist_lsp.config.atomic import write_text_atomically
from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.config.problems import ConfigProblem
from qodeassist_lsp.core.setup.proposals import (
    LIST_SLOTS,
    AgentProposal,
    ProviderProposal,
    SetupPlan,
)
from qodeassist_lsp.wire.errors import QodeAssistError

_HEADER = "Written by `qodeassist-lsp setup` for {server}."
_OWNED = "Edit freely: running setup again only changes {keys}."
_PIPELINES_HEADER = (
    "Which agents serve each pipeline (see docs/configuration.md). Keys missing here keep the\n"
    "bundled defaults; `qodeassist-lsp setup` updated the slots below."
)


class SetupWriteError(QodeAssistError):
    """A file setup must edit cannot be read or parsed; nothing was written to it."""


@dataclass(frozen=True)
class FileChange:
    """What happened to one file."""

    path: Path
    action: Literal["created", "updated", "unchanged"]
    keys: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        return {"file": str(self.path), "action": self.action, "keys": list(self.keys)}


@dataclass(frozen=True)
class SetupResult:
    """The files written and the problems the configuration has afterwards."""

    changes: list[FileChange]
    problems: list[ConfigProblem]

    @property
    def errors(self) -> list[ConfigProblem]:
        """Only the problems of severity ``error``."""
        return [p for p in self.problems if p.severity == "error"]


def apply_plan(plan: SetupPlan, paths: ConfigPaths) -> SetupResult:
    """Write ``plan`` under the user's config root, then validate what was written.

    Every file is read and edited before the first one is written, so a file that cannot be
    parsed stops the run with nothing written.
    """
    bundled = paths.bundled.resolve()
    edits: list[tuple[Path, _Edit]] = [(p.file, _ProviderEdit(p)) for p in plan.providers]
    edits += [(a.file, _AgentEdit(a)) for a in plan.agents if a.state != "same"]
    if plan.slots:
        edits.append((plan.pipelines_file, _PipelinesEdit(plan)))
    prepared = [_prepare(path, bundled, edit) for path, edit in edits]
    changes = [_commit(*item) for item in prepared]
    return SetupResult(changes, validate_written(paths, changes))


def validate_written(paths: ConfigPaths, changes: list[FileChange]) -> list[ConfigProblem]:
    """Load the configuration as ``agents validate`` does; keep the problems of written files."""
    config = load_configuration(paths)
    written = {str(change.path.resolve()) for change in changes}
    return [
        p
        for p in config.problems
        if (p.file and str(Path(p.file).resolve()) in written) or p.key == "pipelines"
    ]


class _Edit:
    """Sets keys on a tomlkit document and remembers which ones changed."""

    def __init__(self, header: str) -> None:
        self.header = header
        self.changed: list[str] = []

    def apply(self, document: tomlkit.TOMLDocument) -> None:
        """Change ``document`` in place (overridden)."""

    def set(self, table: Any, key: str, value: Any, label: str = "") -> None:
        """Set ``table[key]`` unless it already holds ``value``."""
        current = table.get(key)
        if current is not None and _plain(current) == value:
            return
        table[key] = value
        self.changed.append(label or key)


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


class _ProviderEdit(_Edit):
    def __init__(self, provider: ProviderProposal) -> None:
        owned = ["extends", "url", *(k for k in ("demo", "local") if getattr(provider, k))]
        keys = f"{', '.join(owned[:-1])} and {owned[-1]}"
        super().__init__(f"{_HEADER.format(server=provider.server)}\n{_OWNED.format(keys=keys)}")
        self.provider = provider

    def apply(self, document: tomlkit.TOMLDocument) -> None:
        p = self.provider
        self.set(document, "schema_version", 1)
        self.set(document, "name", p.name)
        self.set(document, "extends", p.extends)
        if "description" not in document:
            self.set(document, "description", f"{p.server}, found by `qodeassist-lsp setup`.")
        self.set(document, "url", p.url)
        if p.demo:
            self.set(document, "demo", True)
        if p.local:
            self.set(document, "local", True)


class _AgentEdit(_Edit):
    def __init__(self, agent: AgentProposal) -> None:
        keys = "extends, provider_instance and model"
        super().__init__(f"{_HEADER.format(server=agent.server)}\n{_OWNED.format(keys=keys)}")
        self.agent = agent

    def apply(self, document: tomlkit.TOMLDocument) -> None:
        a = self.agent
        new = "name" not in document
        self.set(document, "schema_version", 1)
        self.set(document, "name", a.name)
        self.set(document, "extends", a.extends)
        if new:
            self.set(document, "description", f"{a.extends} with {a.model} ({a.server}).")
        if a.provider_instance:
            self.set(document, "provider_instance", a.provider_instance)
        elif "provider_instance" in document:
            del document["provider_instance"]
            self.changed.append("provider_instance")
        self.set(document, "model", a.model)
        if new:
            self.set(document, "tags", list(a.tags))
            if a.enable_tools is not None:
                self.set(document, "enable_tools", a.enable_tools)


class _PipelinesEdit(_Edit):
    def __init__(self, plan: SetupPlan) -> None:
        super().__init__(_PIPELINES_HEADER)
        self.plan = plan

    def apply(self, document: tomlkit.TOMLDocument) -> None:
        table = document.get("pipelines")
        if not isinstance(table, Table):
            if table is not None:
                raise SetupWriteError(
                    f"{self.plan.pipelines_file}: 'pipelines' is not a table; fix it by hand"
                )
            document.add("pipelines", tomlkit.table())
            table = document["pipelines"]
        for change in self.plan.slots:
            value: Any = change.after
            if change.slot in LIST_SLOTS and isinstance(value, list):
                array = tomlkit.array()
                array.extend(value)
                array.multiline(len(value) > 1)
                value = array
            self.set(table, change.slot, value, f"pipelines.{change.slot}")


def _prepare(path: Path, bundled: Path, edit: _Edit) -> tuple[Path, str | None, str, _Edit]:
    if path.resolve().is_relative_to(bundled):
        raise SetupWriteError(f"{path} is a bundled file; setup never writes there")
    try:
        text: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupWriteError(f"{path}: cannot read it ({exc}); nothing was written") from exc
    try:
        document = tomlkit.parse(text) if text is not None else tomlkit.document()
    except tomlkit.exceptions.ParseError as exc:
        raise SetupWriteError(
            f"{path}:{exc.line}: invalid TOML ({exc}); fix the syntax first, nothing was written"
        ) from exc
    if text is None:
        for line in edit.header.splitlines():
            document.add(tomlkit.comment(line))
    edit.apply(document)
    return path, text, tomlkit.dumps(document), edit


def _commit(path: Path, before: str | None, after: str, edit: _Edit) -> FileChange:
    if after == before:
        return FileChange(path, "unchanged")
    write_text_atomically(path, after)
    return FileChange(path, "created" if before is None else "updated", tuple(edit.changed))
