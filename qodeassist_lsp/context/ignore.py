"""``.qodeassistignore``: which project files no feature or tool may read or send to a model.

The file sits at the project root and has real gitignore semantics (via ``pathspec``): ``#``
comments, ``!`` negation, last match wins, ``dir/`` covers everything inside, a leading ``/``
anchors, ``**`` spans directories, and — like git — a file cannot be re-included once a parent
directory is excluded. This fixes the original plugin's quirk where ``build/`` did not exclude
``build/x/y.cpp``. The filter re-reads the file when it changes and treats a missing or unreadable
file as "nothing is ignored", reporting unreadable files and bad patterns as ``ConfigProblem``.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from pathspec import GitIgnoreSpec

from qodeassist_lsp.config.paths import IGNORE_FILE_NAME
from qodeassist_lsp.config.problems import ConfigProblem

__all__ = ["IGNORE_FILE_NAME", "IgnoreFilter", "compile_ignore_patterns"]

_MAX_CACHED_DIRS: Final = 50_000

_Signature = tuple[int, int, int]


def compile_ignore_patterns(
    text: str, source: str | None = None
) -> tuple[GitIgnoreSpec, list[ConfigProblem]]:
    """Compile ignore-file text, skipping (and reporting) lines that are not valid patterns."""
    valid: list[str] = []
    problems: list[ConfigProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            GitIgnoreSpec.from_lines([line])
        except ValueError as exc:
            problems.append(
                ConfigProblem(
                    "warning",
                    f"invalid ignore pattern {line.strip()!r} ({exc}); the line is skipped",
                    file=source,
                    line=number,
                )
            )
            continue
        valid.append(line)
    return GitIgnoreSpec.from_lines(valid), problems


@dataclasses.dataclass(frozen=True, slots=True)
class _Rules:
    """One loaded state of the ignore file; replaced as a whole so readers never see a mix."""

    spec: GitIgnoreSpec | None
    signature: _Signature | None
    problems: tuple[ConfigProblem, ...] = ()


_NO_RULES: Final = _Rules(spec=None, signature=None)


class IgnoreFilter:
    """Answers "is this path ignored?" for one project root, following its ignore file."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        file_name: str = IGNORE_FILE_NAME,
        check_interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Create a filter for ``root``; the ignore file is read lazily on first use.

        Args:
            root: The project directory holding the ignore file.
            file_name: Name of the ignore file inside ``root``.
            check_interval_s: How often (at most) the file is checked for changes; calls in
                between reuse the loaded rules, so filtering many paths costs no extra ``stat``.
            clock: Monotonic time source (injectable for tests).
        """
        self._root = os.path.abspath(os.fspath(root))
        self._real_root = os.path.realpath(self._root)
        self._file = os.path.join(self._root, file_name)
        self._check_interval_s = check_interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._rules = _NO_RULES
        self._checked_at: float | None = None
        self._dir_cache: dict[str, bool] = {}

    @property
    def root(self) -> Path:
        """The project directory paths are relative to."""
        return Path(self._root)

    @property
    def ignore_file(self) -> Path:
        """The ignore file this filter follows (it need not exist)."""
        return Path(self._file)

    @property
    def problems(self) -> tuple[ConfigProblem, ...]:
        """Problems of the current ignore file (unreadable, invalid patterns)."""
        return self._current().problems

    def reload(self) -> None:
        """Check the ignore file now instead of waiting for ``check_interval_s``."""
        with self._lock:
            self._checked_at = None
        self._current()

    def is_ignored(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (absolute, or relative to the root) is excluded by the ignore file.

        Paths outside the project, and the root itself, are never ignored by this filter. A
        trailing separator marks a directory; otherwise the file system is asked when needed.
        """
        rules = self._current()
        if rules.spec is None:
            return False
        located = self._relative(path)
        if located is None:
            return False
        relative, absolute, trailing_sep = located
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            if self._dir_ignored(rules.spec, "/".join(parts[:depth])):
                return True
        if trailing_sep or os.path.isdir(absolute):
            return self._dir_ignored(rules.spec, relative)
        return bool(rules.spec.match_file(relative))

    # ----------------------------------------------------------------------------------------
    def _relative(self, path: str | os.PathLike[str]) -> tuple[str, str, bool] | None:
        """Return (posix path relative to the root, absolute path, ends with a separator)."""
        text = os.fspath(path)
        trailing_sep = text.endswith(("/", os.sep))
        absolute = os.path.normpath(os.path.join(self._root, text))
        # The real root too, so a path resolved through a symlinked project root still counts.
        for root in dict.fromkeys((self._root, self._real_root)):
            try:
                relative = os.path.relpath(absolute, root)
            except ValueError:  # another drive on Windows
                continue
            if relative != os.curdir and not _escapes(relative):
                return relative.replace(os.sep, "/"), absolute, trailing_sep
        return None

    def _dir_ignored(self, spec: GitIgnoreSpec, relative_dir: str) -> bool:
        cached = self._dir_cache.get(relative_dir)
        if cached is None:
            if len(self._dir_cache) >= _MAX_CACHED_DIRS:
                self._dir_cache.clear()
            cached = bool(spec.match_file(relative_dir + "/"))
            self._dir_cache[relative_dir] = cached
        return cached

    def _current(self) -> _Rules:
        now = self._clock()
        checked_at = self._checked_at
        if checked_at is not None and now - checked_at < self._check_interval_s:
            return self._rules
        with self._lock:
            if self._checked_at is None or now - self._checked_at >= self._check_interval_s:
                self._checked_at = now
                rules = self._load(self._rules)
                if rules is not self._rules:
                    self._rules = rules
                    self._dir_cache = {}
            return self._rules

    def _load(self, current: _Rules) -> _Rules:
        try:
            info = os.stat(self._file)
        except FileNotFoundError:
            return _NO_RULES
        except OSError as exc:
            return self._unreadable(exc)
        signature = (info.st_mtime_ns, info.st_size, info.st_ino)
        if signature == current.signature:
            return current
        try:
            with open(self._file, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            return self._unreadable(exc)
        problems: list[ConfigProblem] = []
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("utf-8-sig", errors="replace")
            problems.append(
                ConfigProblem(
                    "warning",
                    "the ignore file is not valid UTF-8; undecodable bytes are replaced — save it "
                    "as UTF-8",
                    file=self._file,
                )
            )
        spec, pattern_problems = compile_ignore_patterns(text, self._file)
        problems.extend(pattern_problems)
        return _Rules(spec=spec, signature=signature, problems=tuple(problems))

    def _unreadable(self, exc: OSError) -> _Rules:
        reason = exc.strerror or type(exc).__name__
        problem = ConfigProblem(
            "warning",
            f"cannot read the ignore file ({reason}); nothing is ignored until it is readable",
            file=self._file,
        )
        return _Rules(spec=None, signature=None, problems=(problem,))


def _escapes(relative: str) -> bool:
    return relative == os.pardir or relative.startswith(os.pardir + os.sep)


IGNORE_FILES: Final = (".qodeassistignore", ".gitignore")
"""The ignore files at a workspace folder's root that tools honour, in order."""


class FolderIgnores:
    """The ignore files at the root of each workspace folder (the tool kit's ``IgnoreRules``)."""

    def __init__(self, filters: list[IgnoreFilter]) -> None:
        self._filters = filters

    def ignored_by(self, path: Path) -> str | None:
        """Return the name of the first ignore file that excludes ``path``, or None."""
        for ignore in self._filters:
            if ignore.is_ignored(path):
                return ignore.ignore_file.name
        return None

    @classmethod
    def of(
        cls, folders: list[Path], cache: dict[tuple[Path, str], IgnoreFilter] | None = None
    ) -> FolderIgnores:
        """Return the rules of `IGNORE_FILES` at the root of each of ``folders``.

        ``cache`` keeps each filter between calls (a filter rereads its file when it changes).
        """
        cache = {} if cache is None else cache
        filters = []
        for folder in folders:
            for name in IGNORE_FILES:
                if (folder, name) not in cache:
                    cache[folder, name] = IgnoreFilter(folder, file_name=name)
                filters.append(cache[folder, name])
        return cls(filters)
