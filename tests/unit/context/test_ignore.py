from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from qodeassist_lsp.context.ignore import (
    IGNORE_FILE_NAME,
    FolderIgnores,
    IgnoredFiles,
    IgnoreFilter,
    compile_ignore_patterns,
)


def make(
    root: Path,
    patterns: str,
    check_interval_s: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
) -> IgnoreFilter:
    (root / IGNORE_FILE_NAME).write_text(patterns, encoding="utf-8")
    return IgnoreFilter(root, check_interval_s=check_interval_s, clock=clock)


def touch(root: Path, *relatives: str) -> None:
    for relative in relatives:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# -- gitignore semantics ----------------------------------------------------------------------


def test_blank_lines_and_comments(tmp_path: Path) -> None:
    f = make(tmp_path, "\n# secret.txt\n   \n*.log\n\\#literal\n")
    assert not f.is_ignored("secret.txt")
    assert not f.is_ignored("# secret.txt")
    assert f.is_ignored("x.log")
    assert f.is_ignored("#literal")
    assert f.problems == ()


def test_directory_pattern_excludes_everything_inside(tmp_path: Path) -> None:
    # The original plugin's quirk: `build/` did not exclude files inside build/.
    f = make(tmp_path, "build/\n")
    assert f.is_ignored("build/x/y.cpp")
    assert f.is_ignored("build/main.o")
    assert f.is_ignored("src/build/gen.cpp")  # unanchored: any level


def test_directory_pattern_needs_a_directory(tmp_path: Path) -> None:
    f = make(tmp_path, "build/\n")
    touch(tmp_path, "build")  # a *file* called build
    assert not f.is_ignored("build")
    assert f.is_ignored("out/build/")  # a trailing separator marks a directory


def test_directory_itself_is_ignored_when_it_exists(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    f = make(tmp_path, "build/\n")
    assert f.is_ignored("build")
    assert f.is_ignored(tmp_path / "build")


def test_plain_name_matches_files_and_directories_at_any_level(tmp_path: Path) -> None:
    f = make(tmp_path, "node_modules\n")
    assert f.is_ignored("node_modules/a/b.js")
    assert f.is_ignored("web/node_modules/a.js")
    assert f.is_ignored("node_modules")


def test_leading_slash_anchors_to_the_root(tmp_path: Path) -> None:
    f = make(tmp_path, "/dist\n/TODO.md\n")
    assert f.is_ignored("dist/app.js")
    assert f.is_ignored("TODO.md")
    assert not f.is_ignored("pkg/dist/app.js")
    assert not f.is_ignored("docs/TODO.md")


def test_middle_slash_anchors_too(tmp_path: Path) -> None:
    f = make(tmp_path, "docs/*.md\n")
    assert f.is_ignored("docs/a.md")
    assert not f.is_ignored("sub/docs/a.md")
    assert not f.is_ignored("docs/deep/a.md")  # `*` does not cross `/`


def test_double_star_forms(tmp_path: Path) -> None:
    f = make(tmp_path, "**/generated\nlogs/**\na/**/z.txt\n")
    assert f.is_ignored("generated/x.cpp")
    assert f.is_ignored("deep/down/generated/x.cpp")
    assert f.is_ignored("logs/2024/01/app.txt")
    assert f.is_ignored("a/z.txt")
    assert f.is_ignored("a/b/c/z.txt")
    assert not f.is_ignored("b/a/z.txt")


def test_question_mark_and_character_class(tmp_path: Path) -> None:
    f = make(tmp_path, "file?.txt\n*.[oa]\n")
    assert f.is_ignored("file1.txt")
    assert not f.is_ignored("file12.txt")
    assert f.is_ignored("lib/x.o") and f.is_ignored("x.a")
    assert not f.is_ignored("x.c")


def test_negation_and_last_match_wins(tmp_path: Path) -> None:
    f = make(tmp_path, "*.env\n!example.env\nsecret/*.env\n")
    assert f.is_ignored("prod.env")
    assert not f.is_ignored("example.env")
    assert not f.is_ignored("config/example.env")
    assert f.is_ignored("secret/example.env")  # a later pattern wins again


def test_negation_inside_a_directory_glob(tmp_path: Path) -> None:
    f = make(tmp_path, "vendor/*\n!vendor/ours\n")
    assert f.is_ignored("vendor/theirs/a.c")
    assert not f.is_ignored("vendor/ours/a.c")


def test_no_reinclusion_below_an_excluded_directory(tmp_path: Path) -> None:
    # git: "It is not possible to re-include a file if a parent directory of that file is
    # excluded."
    f = make(tmp_path, "build/\n!build/keep.txt\n")
    assert f.is_ignored("build/keep.txt")


# -- paths ------------------------------------------------------------------------------------


def test_absolute_and_relative_paths(tmp_path: Path) -> None:
    f = make(tmp_path, "*.log\n")
    assert f.is_ignored(tmp_path / "a" / "x.log")
    assert f.is_ignored(str(tmp_path / "x.log"))
    assert f.is_ignored("a/./b/../x.log")


def test_paths_outside_the_project_are_never_ignored(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    f = make(project, "*.log\n")
    assert not f.is_ignored(tmp_path / "x.log")
    assert not f.is_ignored("../x.log")
    assert not f.is_ignored(tmp_path / "projectile" / "x.log")
    assert not f.is_ignored(project)
    assert not f.is_ignored(".")


def test_symlinked_root(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    try:
        link.symlink_to(real, target_is_directory=True)
    except OSError:
        pytest.skip("symlinks not available")
    f = make(link, "*.log\n")
    assert f.is_ignored(real / "x.log")
    assert f.is_ignored(link / "x.log")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX separators")
def test_ignore_file_with_crlf_and_bom(tmp_path: Path) -> None:
    (tmp_path / IGNORE_FILE_NAME).write_bytes(b"\xef\xbb\xbf*.log\r\nbuild/\r\n")
    f = IgnoreFilter(tmp_path)
    assert f.is_ignored("x.log")
    assert f.is_ignored("build/a.c")


# -- missing, unreadable, invalid -------------------------------------------------------------


def test_missing_file_ignores_nothing(tmp_path: Path) -> None:
    f = IgnoreFilter(tmp_path)
    assert not f.is_ignored("anything.log")
    assert f.problems == ()


def test_unreadable_file_ignores_nothing(tmp_path: Path) -> None:
    (tmp_path / IGNORE_FILE_NAME).mkdir()
    f = IgnoreFilter(tmp_path)
    assert not f.is_ignored("x.log")
    (problem,) = f.problems
    assert problem.severity == "warning" and "cannot read" in problem.message


def test_invalid_pattern_is_skipped_and_reported(tmp_path: Path) -> None:
    f = make(tmp_path, "*.log\n!\n*.tmp\n")
    assert f.is_ignored("x.log") and f.is_ignored("x.tmp")
    (problem,) = f.problems
    assert problem.line == 2
    assert problem.file == str(tmp_path / IGNORE_FILE_NAME)
    assert problem.format().startswith(f"{tmp_path / IGNORE_FILE_NAME}:2: warning:")


def test_invalid_utf8_is_tolerated(tmp_path: Path) -> None:
    (tmp_path / IGNORE_FILE_NAME).write_bytes(b"*.log\n\xff\xfe\n")
    f = IgnoreFilter(tmp_path)
    assert f.is_ignored("x.log")
    assert any("UTF-8" in p.message for p in f.problems)


def test_compile_ignore_patterns_directly() -> None:
    spec, problems = compile_ignore_patterns("a/\n\\\n", "f")
    assert spec.match_file("a/b")
    assert [p.line for p in problems] == [2]


# -- reloading --------------------------------------------------------------------------------


def test_reloads_when_the_file_changes(tmp_path: Path) -> None:
    f = make(tmp_path, "*.log\n", check_interval_s=0)
    assert f.is_ignored("x.log")
    ignore_file = tmp_path / IGNORE_FILE_NAME
    ignore_file.write_text("*.tmp\n!keep.tmp\n", encoding="utf-8")
    stat = ignore_file.stat()
    os.utime(ignore_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert not f.is_ignored("x.log")
    assert f.is_ignored("x.tmp") and not f.is_ignored("keep.tmp")


def test_deleting_the_file_ignores_nothing(tmp_path: Path) -> None:
    f = make(tmp_path, "*.log\n", check_interval_s=0)
    assert f.is_ignored("x.log")
    (tmp_path / IGNORE_FILE_NAME).unlink()
    assert not f.is_ignored("x.log")
    (tmp_path / IGNORE_FILE_NAME).write_text("*.log\n", encoding="utf-8")
    assert f.is_ignored("x.log")


def test_change_checks_are_rate_limited(tmp_path: Path) -> None:
    clock = FakeClock()
    f = make(tmp_path, "*.log\n", check_interval_s=1.0, clock=clock)
    assert f.is_ignored("x.log")
    (tmp_path / IGNORE_FILE_NAME).write_text("*.tmp\n", encoding="utf-8")
    clock.now = 0.5
    assert f.is_ignored("x.log")  # not checked again yet
    f.reload()
    assert not f.is_ignored("x.log")
    (tmp_path / IGNORE_FILE_NAME).write_text("*.log\n", encoding="utf-8")
    clock.now = 2.0
    assert f.is_ignored("x.log")


def test_directory_verdicts_are_refreshed_on_reload(tmp_path: Path) -> None:
    f = make(tmp_path, "build/\n", check_interval_s=0)
    assert f.is_ignored("build/a.c")
    ignore_file = tmp_path / IGNORE_FILE_NAME
    ignore_file.write_text("# nothing\n", encoding="utf-8")
    f.reload()
    assert not f.is_ignored("build/a.c")


def test_properties(tmp_path: Path) -> None:
    f = IgnoreFilter(tmp_path)
    assert f.root == tmp_path
    assert f.ignore_file == tmp_path / IGNORE_FILE_NAME


def test_folder_ignores_keep_their_filters_in_the_cache(tmp_path: Path) -> None:
    cache: dict[tuple[Path, str], IgnoreFilter] = {}
    (tmp_path / ".gitignore").write_text("*.log\n")
    first = FolderIgnores.of([tmp_path], cache)
    assert first.ignored_by(tmp_path / "a.log") == ".gitignore"
    assert sorted(name for _, name in cache) == [".gitignore", ".qodeassistignore"]
    kept = dict(cache)
    other = tmp_path / "other"
    again = FolderIgnores.of([tmp_path, other], cache)
    assert all(cache[key] is kept[key] for key in kept) and len(cache) == 4
    assert again.ignored_by(tmp_path / "b.log") == ".gitignore"


# -- nested .gitignore files ---------------------------------------------------------------------
def test_a_nested_gitignore_applies_to_its_folder_as_git_does(tmp_path: Path) -> None:
    touch(tmp_path, "sub/build/out.py", "build/out.py", "sub/deep/build/x.py", "sub/src/a.py")
    (tmp_path / "sub" / ".gitignore").write_text("build/\n/only_here.txt\n")
    touch(tmp_path, "sub/only_here.txt", "sub/deep/only_here.txt")
    rules = FolderIgnores.of([tmp_path])
    assert rules.ignored_by(tmp_path / "sub" / "build" / "out.py") == ".gitignore"
    assert rules.ignored_by(tmp_path / "sub" / "build") == ".gitignore"
    assert rules.ignored_by(tmp_path / "sub" / "deep" / "build" / "x.py") == ".gitignore"
    assert rules.ignored_by(tmp_path / "sub" / "only_here.txt") == ".gitignore"  # anchored
    assert rules.ignored_by(tmp_path / "sub" / "deep" / "only_here.txt") is None
    assert rules.ignored_by(tmp_path / "build" / "out.py") is None  # outside sub: not its rule
    assert rules.ignored_by(tmp_path / "sub" / "src" / "a.py") is None


def test_the_deepest_gitignore_with_a_match_decides(tmp_path: Path) -> None:
    touch(tmp_path, "a.log", "sub/a.log", "sub/keep.log", "sub/inner/keep.log")
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "sub" / ".gitignore").write_text("!keep.log\n")
    (tmp_path / "sub" / "inner").mkdir(exist_ok=True)
    (tmp_path / "sub" / "inner" / ".gitignore").write_text("keep.log\n")
    rules = FolderIgnores.of([tmp_path])
    assert rules.ignored_by(tmp_path / "a.log") == ".gitignore"
    assert rules.ignored_by(tmp_path / "sub" / "a.log") == ".gitignore"  # the root's rule
    assert rules.ignored_by(tmp_path / "sub" / "keep.log") is None  # sub's negation wins
    assert rules.ignored_by(tmp_path / "sub" / "inner" / "keep.log") == ".gitignore"


def test_a_nested_gitignore_cannot_reinclude_below_an_excluded_folder(tmp_path: Path) -> None:
    touch(tmp_path, "out/keep.py")
    (tmp_path / ".gitignore").write_text("out/\n")
    (tmp_path / "out" / ".gitignore").write_text("!keep.py\n")
    assert FolderIgnores.of([tmp_path]).ignored_by(tmp_path / "out" / "keep.py") == ".gitignore"


def test_a_nested_gitignore_is_followed_when_it_appears_or_changes(tmp_path: Path) -> None:
    clock = FakeClock()
    touch(tmp_path, "sub/build/out.py", "sub/gen/x.py")
    f = IgnoreFilter(tmp_path, file_name=".gitignore", nested=True, clock=clock)
    assert not f.is_ignored("sub/build/out.py")
    (tmp_path / "sub" / ".gitignore").write_text("build/\n")
    clock.now = 2.0
    assert f.is_ignored("sub/build/out.py")
    (tmp_path / "sub" / ".gitignore").write_text("gen/\n")
    f.reload()
    assert not f.is_ignored("sub/build/out.py") and f.is_ignored("sub/gen/x.py")


def test_qodeassistignore_is_read_at_the_root_only(tmp_path: Path) -> None:
    touch(tmp_path, "sub/secret.txt")
    (tmp_path / "sub" / IGNORE_FILE_NAME).write_text("secret.txt\n")
    assert FolderIgnores.of([tmp_path]).ignored_by(tmp_path / "sub" / "secret.txt") is None
    assert not IgnoreFilter(tmp_path).is_ignored("sub/secret.txt")


# -- remembered verdicts (asked for every open document of every completion) -----------------


class CountingFilter(IgnoreFilter):
    """An `IgnoreFilter` that counts the paths it is asked about."""

    def __init__(self, root: Path, **kwargs: object) -> None:
        super().__init__(root, **kwargs)  # type: ignore[arg-type]
        self.asked = 0

    def is_ignored(self, path: str | os.PathLike[str]) -> bool:
        self.asked += 1
        return super().is_ignored(path)


def _rewrite(file: Path, text: str) -> None:
    """Write ``text`` with an mtime a second later, so the change shows on any file system."""
    file.write_text(text, encoding="utf-8")
    stat = file.stat()
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_the_state_stays_while_the_file_does_and_changes_with_it(tmp_path: Path) -> None:
    f = make(tmp_path, "*.log\n", check_interval_s=0)
    state = f.state()
    assert f.state() is state
    _rewrite(tmp_path / IGNORE_FILE_NAME, "*.tmp\n")
    assert f.state() is not state
    nested = IgnoreFilter(tmp_path, file_name=".gitignore", nested=True)
    assert nested.state() is not nested.state()  # files below the root count: never the same


def test_a_verdict_is_remembered_per_path(tmp_path: Path) -> None:
    (tmp_path / IGNORE_FILE_NAME).write_text("secret.txt\n")
    f = CountingFilter(tmp_path, check_interval_s=0)
    ignored = IgnoredFiles(lambda: [tmp_path], lambda folder: f)
    secret, kept = str(tmp_path / "secret.txt"), str(tmp_path / "kept.py")
    assert ignored(secret) and not ignored(kept)
    assert ignored(secret) and not ignored(Path(kept))
    assert f.asked == 2


def test_an_edited_ignore_file_takes_effect_at_the_next_check(tmp_path: Path) -> None:
    (tmp_path / IGNORE_FILE_NAME).write_text("secret.txt\n")
    f = CountingFilter(tmp_path, check_interval_s=0)
    ignored = IgnoredFiles(lambda: [tmp_path], lambda folder: f)
    secret, kept = str(tmp_path / "secret.txt"), str(tmp_path / "kept.py")
    assert ignored(secret) and not ignored(kept)
    _rewrite(tmp_path / IGNORE_FILE_NAME, "kept.py\n")
    assert ignored(kept) and not ignored(secret)
    (tmp_path / IGNORE_FILE_NAME).unlink()
    assert not ignored(kept)


def test_the_verdicts_follow_the_folders(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / IGNORE_FILE_NAME).write_text("secret.txt\n")
    filters = {folder: IgnoreFilter(folder) for folder in (first, second)}
    folders = [first]
    ignored = IgnoredFiles(lambda: folders, filters.get)
    secret = str(second / "secret.txt")
    assert not ignored(secret)  # b is not a workspace folder (yet)
    folders.append(second)
    assert ignored(secret)
    folders.remove(second)
    assert not ignored(secret)


def test_held_checks_the_folders_and_files_once_for_the_calls_inside(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / IGNORE_FILE_NAME).write_text("secret.txt\n")
    filters = {folder: IgnoreFilter(folder, check_interval_s=0) for folder in (first, second)}
    folders = [first]
    asked = []

    def listed() -> list[Path]:
        asked.append(1)
        return folders

    ignored = IgnoredFiles(listed, filters.get)
    secret, kept = str(second / "secret.txt"), str(first / "kept.py")
    with ignored.held():
        assert not ignored(secret) and not ignored(kept) and not ignored(secret)
        assert len(asked) == 1
        folders.append(second)  # (cannot happen inside a synchronous pass: no await)
        _rewrite(first / IGNORE_FILE_NAME, "kept.py\n")
        assert not ignored(secret) and not ignored(kept)
    assert len(asked) == 1
    assert ignored(secret) and ignored(kept)  # both changes count once the hold is over
    assert len(asked) == 3
