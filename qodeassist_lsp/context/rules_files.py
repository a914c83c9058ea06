"""The project's rules files: ``AGENTS.md``, ``CLAUDE.md`` and friends, found for a file.

For a file, every folder from the file's own up to its workspace root is searched for
``AGENTS.md``, ``CLAUDE.md`` and ``.qodeassist/rules/*.md`` (sorted by name), and the root for
``.github/copilot-instructions.md``; the nearest folder comes first, the root last, and where
two files disagree the one nearer to the file wins (the AGENTS.md convention). Without a file
(a chat) only the workspace root is searched.

Every candidate is confined to its workspace folder (a symlink that leads out is refused), and
a file ``.qodeassistignore`` lists is skipped (the caller's ignore rule). Each file is cut at
``[rules] max_file_chars`` and all of them together at ``[rules] max_chars``, with a visible
marker; ``[rules]`` switches each source off. Files are read again when their size or time
changes, and a deleted file is gone at the next prompt. A file that cannot be read (or is not
UTF-8) is left out and its problem logged once; it never stops a request.

`set_layer` is the one place a system prompt gets the rules: chat (every door, plan mode) and
refactor (the editor and the command line) call it, never completion or next edits.
"""

from __future__ import annotations

import codecs
import logging
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from qodeassist_lsp.config.settings import RulesSettings
    from qodeassist_lsp.context.ignore import IgnoreFilter
    from qodeassist_lsp.core.system_prompt_builder import SystemPromptBuilder

log = logging.getLogger("qodeassist.rules")

RULES_LAYER: Final = "project.rules"
RULES_PRIORITY: Final = 40
"""After the agent's own system prompt (0), before the project context of chat (50)."""
RULES_DIR: Final = ".qodeassist/rules"
COPILOT_FILE: Final = ".github/copilot-instructions.md"
READ_LIMIT: Final = 4_000_000
"""Bytes read of one file at most: far more than any budget lets through."""

_Signature = tuple[int, int, int]

IgnoredBy = Callable[[Path, Path], bool]
"""``ignored(root, path)``: whether the ignore rule of workspace folder ``root`` hides ``path``."""


@dataclass(frozen=True, slots=True)
class RulesFile:
    """One rules file in effect: where it is, where it came from, and what of it is sent."""

    path: Path
    """The file's path inside the workspace (as found, symlinks not followed)."""
    relative: str
    """The path relative to its workspace folder, with ``/`` (the heading in the prompt)."""
    source: str
    """The ``[rules]`` switch that governs it (``agents_md``, ``claude_md`` …)."""
    text: str
    """What is sent (cut with a marker when it did not fit; empty when left out)."""
    chars: int
    """The file's length in characters."""
    truncated: bool = False
    """Cut to fit a budget (a marker says where), or left out."""
    omitted: bool = False
    """Nothing of it fitted into ``[rules] max_chars``."""

    def to_json(self) -> dict[str, Any]:
        """Return the file as ``qodeassist/status`` and ``doctor --json`` list it."""
        return {
            "path": self.relative,
            "source": self.source,
            "chars": self.chars,
            "truncated": self.truncated,
            "omitted": self.omitted,
        }


@dataclass(frozen=True, slots=True)
class RulesSet:
    """The rules files in effect for one file (or the workspace), nearest first."""

    files: tuple[RulesFile, ...] = ()
    problems: tuple[str, ...] = ()
    """Files left out because they could not be read, with why."""

    def layer(self) -> str:
        """Return the system-prompt section of the rules (empty when there are none)."""
        shown = [f for f in self.files if not f.omitted]
        if not shown:
            return ""
        names = ", ".join(dict.fromkeys(_kind(f) for f in shown))
        parts = [
            f"# Project rules (from {names})\n"
            "The project's rules files follow, the one nearest to the file being worked on "
            "first. Follow them; where two disagree, the one listed first wins, and what the "
            "user asks in this conversation wins over both."
        ]
        parts += [f"## {f.relative}\n\n{f.text.strip()}" for f in shown]
        left_out = [f.relative for f in self.files if f.omitted]
        if left_out:
            parts.append(f"[… left out, over the [rules] max_chars budget: {', '.join(left_out)}]")
        return "\n\n".join(parts)

    def to_json(self) -> list[dict[str, Any]]:
        """Return the files as ``qodeassist/status`` and ``doctor --json`` list them."""
        return [f.to_json() for f in self.files]

    def status(self, max_chars: int) -> dict[str, Any]:
        """Return what ``qodeassist/status`` (``rules``) and ``doctor --json`` say of the rules."""
        return {"files": self.to_json(), "problems": list(self.problems), "maxChars": max_chars}


def _kind(file: RulesFile) -> str:
    """Return the kind of rules file ``file`` is, as the section's title names it."""
    if file.source == "qodeassist_rules":
        return RULES_DIR + "/*.md"
    if file.source == "copilot_instructions":
        return COPILOT_FILE
    return file.path.name


def set_layer(builder: SystemPromptBuilder, rules: RulesSet) -> None:
    """Put ``rules`` into a system prompt as its ``project.rules`` layer (none: removed)."""
    builder.set_layer(RULES_LAYER, rules.layer(), RULES_PRIORITY)


def ignore_rule(filter_of: Callable[[Path], IgnoreFilter | None]) -> IgnoredBy:
    """Return the ``ignored(root, path)`` of ``filter_of(root)``'s ``.qodeassistignore``."""

    def ignored(root: Path, path: Path) -> bool:
        found = filter_of(root)
        return found is not None and found.is_ignored(path)

    return ignored


@dataclass(slots=True)
class _Read:
    signature: _Signature
    text: str | None
    problem: str | None


@dataclass(slots=True)
class RulesCache:
    """The texts read so far, by resolved path, each with the size and time it was read at."""

    entries: dict[Path, _Read] = field(default_factory=dict)
    told: set[tuple[Path, str]] = field(default_factory=set)
    """The problems logged already (each once per file and message)."""


class RulesFinder:
    """Finds the rules files in effect for a file of the workspace, read fresh when changed."""

    def __init__(
        self,
        settings: Callable[[], RulesSettings],
        folders: Callable[[], Sequence[Path]],
        ignored: IgnoredBy = lambda _root, _path: False,
        cache: RulesCache | None = None,
    ) -> None:
        """Search the workspace ``folders`` under ``settings`` (both read per call)."""
        self._settings = settings
        self._folders = folders
        self._ignored = ignored
        self._cache = cache or RulesCache()

    def find(self, file: Path | None = None) -> RulesSet:
        """Return the rules files for ``file`` (None: the workspace), nearest first."""
        settings = self._settings()
        folders = [Path(f) for f in self._folders()]
        if not folders:
            return RulesSet()
        root, start = _root_of(folders, file)
        problems: list[str] = []
        found: list[tuple[Path, str, str, int]] = []
        for candidate, source in _candidates(root, start, settings):
            read = self._read(root, candidate)
            if read is None:
                continue
            if read.problem is not None:
                problems.append(f"{_relative(root, candidate)}: {read.problem}")
                continue
            assert read.text is not None
            found.append((candidate, source, read.text, len(read.text)))
        return RulesSet(_fit(root, found, settings), tuple(problems))

    def _read(self, root: Path, path: Path) -> _Read | None:
        """Return ``path``'s text or problem; None when it is not there, or ignored."""
        try:
            info = path.lstat()
        except OSError:
            return None
        if self._ignored(root, path):
            return None
        try:
            resolved = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return self._problem(path, "a broken or looping symlink; it is left out")
        if not resolved.is_relative_to(root.resolve()):
            return self._problem(path, "a symlink that leads outside the workspace; it is left out")
        try:
            info = resolved.stat()
        except OSError as exc:
            return self._problem(path, f"cannot be read ({exc.strerror or exc}); it is left out")
        if not stat.S_ISREG(info.st_mode):
            return self._problem(path, "not a regular file; it is left out")
        signature = (info.st_mtime_ns, info.st_size, info.st_ino)
        cached = self._cache.entries.get(resolved)
        if cached is not None and cached.signature == signature:
            return cached
        read = _load(resolved, signature)
        self._cache.entries[resolved] = read
        if read.problem is not None:
            self._tell(path, read.problem)
        return read

    def _problem(self, path: Path, problem: str) -> _Read:
        self._tell(path, problem)
        return _Read((0, 0, 0), None, problem)

    def _tell(self, path: Path, problem: str) -> None:
        key = (path, problem)
        if key not in self._cache.told:
            self._cache.told.add(key)
            log.warning("rules file %s: %s", path, problem)


def _root_of(folders: Sequence[Path], file: Path | None) -> tuple[Path, Path]:
    """Return the workspace folder of ``file`` (the deepest holding it) and where to start."""
    if file is not None:
        absolute = Path(os.path.abspath(file))
        roots = [Path(os.path.abspath(f)) for f in folders]
        holding = [r for r in roots if absolute.is_relative_to(r)]
        if holding:
            return max(holding, key=lambda r: len(r.parts)), absolute.parent
    root = Path(os.path.abspath(folders[0]))
    return root, root


def _candidates(root: Path, start: Path, settings: RulesSettings) -> list[tuple[Path, str]]:
    """Return the files to look at, nearest folder first, the root's last."""
    folders = [start]
    while folders[-1] != root and folders[-1].parent != folders[-1]:
        folders.append(folders[-1].parent)
    found: list[tuple[Path, str]] = []
    for folder in folders:
        if settings.agents_md:
            found.append((folder / "AGENTS.md", "agents_md"))
        if settings.claude_md:
            found.append((folder / "CLAUDE.md", "claude_md"))
        if settings.qodeassist_rules:
            found += [(p, "qodeassist_rules") for p in _rules_dir(folder / RULES_DIR)]
    if settings.copilot_instructions:
        found.append((root / COPILOT_FILE, "copilot_instructions"))
    return found


def _rules_dir(folder: Path) -> list[Path]:
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".md"))
    except OSError:
        return []
    return [folder / name for name in names]


def _load(path: Path, signature: _Signature) -> _Read:
    """Read ``path`` as UTF-8 (at most `READ_LIMIT` bytes: the budget cuts far sooner)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(READ_LIMIT)
    except OSError as exc:
        return _Read(signature, None, f"cannot be read ({exc.strerror or exc}); it is left out")
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(raw, final=len(raw) < READ_LIMIT)
    except UnicodeDecodeError as exc:
        return _Read(
            signature, None, f"is not UTF-8 (byte {exc.start}); save it as UTF-8 to use it"
        )
    return _Read(signature, text.lstrip("\ufeff"), None)


def _relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _fit(
    root: Path, found: list[tuple[Path, str, str, int]], settings: RulesSettings
) -> tuple[RulesFile, ...]:
    """Cut each file at ``max_file_chars`` and all of them at ``max_chars``, nearest first."""
    left = settings.max_chars
    fitted: list[RulesFile] = []
    for path, source, text, chars in found:
        relative = _relative(root, path)
        limit = min(settings.max_file_chars, left)
        if limit <= 0:
            fitted.append(RulesFile(path, relative, source, "", chars, True, True))
            continue
        if chars <= limit:
            fitted.append(RulesFile(path, relative, source, text, chars))
            left -= chars
            continue
        which = "max_file_chars" if limit == settings.max_file_chars else "max_chars"
        marker = (
            f"\n[… cut: {relative} has {chars} characters, {chars - limit} more than "
            f"[rules] {which} lets through]"
        )
        fitted.append(RulesFile(path, relative, source, text[:limit] + marker, chars, True))
        left -= limit
    return tuple(fitted)
