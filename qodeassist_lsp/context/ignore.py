"""``.qodeassistignore``: which project files no feature or tool may read or send to a model.

The file sits at the project root and has real gitignore semantics (via ``pathspec``): ``#``
comments, ``!`` negation, last match wins, ``dir/`` covers everything inside, a leading ``/``
anchors, ``**`` spans directories, and — like git — a file cannot be re-included once a parent
directory is excluded. This fixes the original plugin's quirk where ``build/`` did not exclude
``build/x/y.cpp``. The filter re-reads the file when it changes and treats a missing or unreadable
file as "nothing is ignored", reporting unreadable files and bad patterns as ``ConfigProblem``.

A *nested* filter (``.gitignore``, as git reads it) also follows the file of that name in every
folder below the root: its patterns are relative to its folder and apply only inside it, and the
deepest file with a pattern matching a path decides (``sub/.gitignore``'s ``!keep.log`` beats the
root's ``*.log`` inside ``sub``). ``.qodeassistignore`` is read at the root only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Final

from pathspec import GitIgnoreSpec

from qodeassist_lsp.config.paths import IGNORE_FILE_NAME
from qodeassist_lsp.config.problems import ConfigProblem

__all__ = [
    "IGNORE_FILES",
    "IGNORE_FILE_NAME",
    "NESTED_IGNORE_FILES",
    "FolderIgnores",
    "IgnoreFilter",
    "IgnoredFiles",
    "compile_ignore_patterns",
]

_MAX_CACHED_DIRS: Final = 50_000
_MAX_VERDICTS: Final = 4096

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
        nested: bool = False,
    ) -> None:
        """Create a filter for ``root``; the ignore file is read lazily on first use.

        Args:
            root: The project directory holding the ignore file.
            file_name: Name of the ignore file inside ``root``.
            check_interval_s: How often (at most) the file is checked for changes; calls in
                between reuse the loaded rules, so filtering many paths costs no extra ``stat``.
            clock: Monotonic time source (injectable for tests).
            nested: Follow ``file_name`` in every folder below ``root`` too, as git does with
                ``.gitignore`` (see the module docstring).
        """
        self._root = os.path.abspath(os.fspath(root))
        self._real_root = os.path.realpath(self._root)
        self._file = os.path.join(self._root, file_name)
        self._file_name = file_name
        self._check_interval_s = check_interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._rules = _NO_RULES
        self._checked_at: float | None = None
        self._dir_cache: dict[str, bool] = {}
        self._nested = nested
        self._below: dict[str, tuple[float, _Rules]] = {}
        """Nested: per folder relative to the root, when its file was checked and its rules."""

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

    def state(self) -> object:
        """Return a token that stays the same (``is``) while this filter's answers do.

        It checks the ignore file as `is_ignored` does (at most every ``check_interval_s``), so
        a caller that remembers verdicts per path keeps them while the token is unchanged. A
        nested filter depends on files below the root too: its token is new on every call.
        """
        rules = self._current()
        return object() if self._nested else rules

    def reload(self) -> None:
        """Check the ignore file (and nested ones) now instead of after ``check_interval_s``."""
        with self._lock:
            self._checked_at = None
            self._below = {
                folder: (float("-inf"), rules) for folder, (_at, rules) in self._below.items()
            }
        self._current()

    def held(self) -> AbstractContextManager[None]:
        """Return a scope for many checks: nothing to hold (the file is read once per interval)."""
        return contextlib.nullcontext()

    def is_ignored(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (absolute, or relative to the root) is excluded by the ignore file.

        Paths outside the project, and the root itself, are never ignored by this filter. A
        trailing separator marks a directory; otherwise the file system is asked when needed.
        """
        rules = self._current()
        if rules.spec is None and not self._nested:
            return False
        located = self._relative(path)
        if located is None:
            return False
        relative, absolute, trailing_sep = located
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            if self._nested and depth > 1:
                self._rules_below("/".join(parts[: depth - 1]))  # the folder's own file
            if self._dir_ignored("/".join(parts[:depth])):
                return True
        if self._nested and len(parts) > 1:
            self._rules_below("/".join(parts[:-1]))
        if trailing_sep or os.path.isdir(absolute):
            return self._dir_ignored(relative)
        return self._matches(relative, is_dir=False)

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

    def _dir_ignored(self, relative_dir: str) -> bool:
        cached = self._dir_cache.get(relative_dir)
        if cached is None:
            if len(self._dir_cache) >= _MAX_CACHED_DIRS:
                self._dir_cache.clear()
            cached = self._matches(relative_dir, is_dir=True)
            self._dir_cache[relative_dir] = cached
        return cached

    def _matches(self, relative: str, *, is_dir: bool) -> bool:
        """Whether the rules (the root's, and nested ones inside out) exclude ``relative``.

        Its ancestors' verdicts are the caller's business (git never looks inside an excluded
        folder).
        """
        suffix = "/" if is_dir else ""
        if not self._nested:
            spec = self._rules.spec
            return spec is not None and bool(spec.match_file(relative + suffix))
        parts = relative.split("/")
        for depth in range(len(parts) - 1, -1, -1):  # the deepest file with a match decides
            base = "/".join(parts[:depth])
            spec = (self._rules_below(base) if base else self._rules).spec
            if spec is None:
                continue
            include = spec.check_file("/".join(parts[depth:]) + suffix).include
            if include is not None:
                return include
        return False

    def _rules_below(self, folder: str) -> _Rules:
        """Return the rules of the file in ``folder`` (relative, not the root), kept fresh."""
        now = self._clock()
        found = self._below.get(folder)
        if found is not None and now - found[0] < self._check_interval_s:
            return found[1]
        with self._lock:
            found = self._below.get(folder)
            current = found[1] if found is not None else _NO_RULES
            rules = self._load(current, os.path.join(self._root, folder, self._file_name))
            if len(self._below) >= _MAX_CACHED_DIRS:
                self._below.clear()
            self._below[folder] = (now, rules)
            if rules is not current:
                self._dir_cache = {}
            return rules

    def _current(self) -> _Rules:
        now = self._clock()
        checked_at = self._checked_at
        if checked_at is not None and now - checked_at < self._check_interval_s:
            return self._rules
        with self._lock:
            if self._checked_at is None or now - self._checked_at >= self._check_interval_s:
                self._checked_at = now
                rules = self._load(self._rules, self._file)
                if rules is not self._rules:
                    self._rules = rules
                    self._dir_cache = {}
            return self._rules

    def _load(self, current: _Rules, file: str) -> _Rules:
        try:
            info = os.stat(file)
        except (FileNotFoundError, NotADirectoryError):
            return _NO_RULES
        except OSError as exc:
            return self._unreadable(exc, file)
        signature = (info.st_mtime_ns, info.st_size, info.st_ino)
        if signature == current.signature:
            return current
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            return self._unreadable(exc, file)
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
                    file=file,
                )
            )
        spec, pattern_problems = compile_ignore_patterns(text, file)
        problems.extend(pattern_problems)
        return _Rules(spec=spec, signature=signature, problems=tuple(problems))

    def _unreadable(self, exc: OSError, file: str) -> _Rules:
        reason = exc.strerror or type(exc).__name__
        problem = ConfigProblem(
            "warning",
            f"cannot read the ignore file ({reason}); nothing is ignored until it is readable",
            file=file,
        )
        return _Rules(spec=None, signature=None, problems=(problem,))


def _escapes(relative: str) -> bool:
    return relative == os.pardir or relative.startswith(os.pardir + os.sep)


IGNORE_FILES: Final = (".qodeassistignore", ".gitignore")
"""The ignore files of a workspace folder that tools honour, in order."""
NESTED_IGNORE_FILES: Final = frozenset({".gitignore"})
"""Those read in every folder below the root too (git's rule); the others at the root only."""


class FolderIgnores:
    """The ignore files of each workspace folder (the tool kit's ``IgnoreRules``).

    ``.qodeassistignore`` at the folder's root; ``.gitignore`` at its root and in every folder
    below it, as git reads them.
    """

    def __init__(self, filters: list[IgnoreFilter]) -> None:
        self._filters = filters

    def ignored_by(self, path: Path) -> str | None:
        """Return the name of the first ignore file that excludes ``path``, or None."""
        for ignore in self._filters:
            if ignore.is_ignored(path):
                return ignore.ignore_file.name
        return None

    def reload(self) -> None:
        """Check every ignore file now (before a rescan that must see a change at once)."""
        for ignore in self._filters:
            ignore.reload()

    @classmethod
    def of(
        cls, folders: list[Path], cache: dict[tuple[Path, str], IgnoreFilter] | None = None
    ) -> FolderIgnores:
        """Return the rules of `IGNORE_FILES` of each of ``folders`` (nested ones too).

        ``cache`` keeps each filter between calls (a filter rereads its file when it changes).
        """
        cache = {} if cache is None else cache
        filters = []
        for folder in folders:
            for name in IGNORE_FILES:
                if (folder, name) not in cache:
                    cache[folder, name] = IgnoreFilter(
                        folder, file_name=name, nested=name in NESTED_IGNORE_FILES
                    )
                filters.append(cache[folder, name])
        return cls(filters)


class IgnoredFiles:
    """Whether the filter of one of some folders excludes a file, remembered per path.

    The verdicts are kept while the folders are the same and so is every filter's
    `IgnoreFilter.state` (which checks its file as `IgnoreFilter.is_ignored` does, at most every
    ``check_interval_s``): another folder list or a changed ignore file drops them all. A call
    then costs the folder list, one state per filter and a dict lookup, not the path arithmetic,
    a ``stat`` and the patterns for each file, on every completion for every open document.
    Paths are taken to stay what they are (open documents are files). Within `held` (one
    completion's prompt) the folders and files are checked once, not once per document.
    """

    def __init__(
        self,
        folders: Callable[[], Sequence[Path]],
        filter_of: Callable[[Path], IgnoreFilter | None],
    ) -> None:
        """Follow the folders ``folders()`` returns, and ``filter_of`` each one's filter."""
        self._folders = folders
        self._filter_of = filter_of
        self._seen: tuple[Path, ...] | None = None
        self._filters: list[IgnoreFilter] = []
        self._states: list[object] = []
        self._verdicts: dict[str, bool] = {}
        self._holds = 0
        self._checked = False
        """Held, and the folders and states were checked since the hold began."""

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Check the folders and ignore files once for the calls inside (a synchronous pass).

        Nothing else runs in between (no ``await``), so no folder change can arrive; an ignore
        file edited meanwhile counts from the next pass, as it would a moment later anyway.
        """
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds:
                self._checked = False

    def __call__(self, path: str | os.PathLike[str]) -> bool:
        """Whether the filter of one of the folders excludes ``path``."""
        if not self._checked:
            self._check()
            self._checked = self._holds > 0
        key = os.fspath(path)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = any(ignore.is_ignored(key) for ignore in self._filters)
            if len(self._verdicts) >= _MAX_VERDICTS:
                self._verdicts.clear()
            self._verdicts[key] = verdict
        return verdict

    def _check(self) -> None:
        """Drop the verdicts if the folders or the state of one of their filters changed."""
        folders = tuple(self._folders())
        if folders != self._seen:
            self._seen = folders
            self._filters = [f for f in map(self._filter_of, folders) if f is not None]
            self._states = []
            self._verdicts.clear()
        states = [ignore.state() for ignore in self._filters]
        if len(states) != len(self._states) or any(
            new is not old for new, old in zip(states, self._states, strict=True)
        ):
            self._states = states
            self._verdicts.clear()
