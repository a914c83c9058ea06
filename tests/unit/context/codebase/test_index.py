"""SqliteCodebaseIndex: build, stat scan, update, search ranking, definitions, status, closing."""

from __future__ import annotations

import asyncio
import os
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from qodeassist_lsp.context.codebase.index import SqliteCodebaseIndex, database_path_for
from qodeassist_lsp.context.codebase.limits import IndexLimits
from qodeassist_lsp.context.codebase.model import CodebaseIndex

SEGMENT = textwrap.dedent(
    '''\
    """Text segments."""


    class Segment:
        """A piece of a text between two offsets."""

        def __init__(self, text: str, start: int) -> None:
            self.text = text
            self.start = start

        def split(self, at: int) -> "tuple[Segment, Segment]":
            """Split the segment in two at an offset."""
            return Segment(self.text[:at], self.start), Segment(self.text[at:], self.start + at)
    '''
)
CONFIG = textwrap.dedent(
    '''\
    """Reading the settings file."""

    DEFAULT_TIMEOUT = 5.0


    def parse_config(path: str) -> dict[str, str]:
        """Read the key = value lines of a settings file."""
        pairs = {}
        for line in open(path):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
        return pairs


    class RetryPolicy:
        def backoff_delay(self, attempt: int) -> float:
            return min(DEFAULT_TIMEOUT, 0.1 * 2**attempt)
    '''
)
USES = textwrap.dedent(
    """\
    from seg import Segment
    from config import parse_config


    def main() -> None:
        settings = parse_config("app.cfg")
        parts = Segment(settings["name"], 0).split(3)
        print(parts)
    """
)


def make_project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "seg.py").write_text(SEGMENT)
    (root / "src" / "config.py").write_text(CONFIG)
    (root / "src" / "app.py").write_text(USES)
    (root / "README.md").write_text("# Demo\n\nHow to configure the retry backoff.\n")
    return root


@pytest.fixture
async def project(tmp_path: Path) -> AsyncIterator[tuple[Path, SqliteCodebaseIndex]]:
    root = make_project(tmp_path / "project")
    index = SqliteCodebaseIndex(root, database_path_for(tmp_path / "data", root))
    yield root, index
    await index.aclose()


def test_database_path_is_per_folder_under_the_data_root(tmp_path: Path) -> None:
    a = database_path_for(tmp_path / "data", tmp_path / "one" / "app")
    b = database_path_for(tmp_path / "data", tmp_path / "two" / "app")
    assert a.parent == tmp_path / "data" / "index"
    assert a.name.startswith("app-") and a.suffix == ".sqlite3"
    assert a != b


async def test_the_index_follows_the_protocol(project) -> None:
    _, index = project
    typed: CodebaseIndex = index
    assert typed.status().state == "waiting"


async def test_build_indexes_the_folder_and_reports_progress(project) -> None:
    _, index = project
    seen: list[tuple[int, int]] = []
    status = await index.build(lambda done, total: seen.append((done, total)))
    await asyncio.sleep(0)  # progress is reported through the loop
    assert status.state == "ready"
    assert status.files == 4
    assert status.symbols >= 6
    assert status.chunks >= status.symbols
    assert status.done == status.total == 4
    assert seen and seen[-1] == (4, 4)
    assert status.database == str(index.database_path)
    assert index.database_path.stat().st_size > 0


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("parse_config", "src/config.py"),
        ("Segment", "src/seg.py"),
        ("how do I split a segment", "src/seg.py"),
        ("read the settings file", "src/config.py"),
        ("ParseConfig", "src/config.py"),
        ("retry backoff delay", "src/config.py"),
    ],
)
async def test_search_ranks_the_defining_file_first(project, query: str, path: str) -> None:
    _, index = project
    await index.build()
    hits = index.search(query, limit=5)
    assert hits and hits[0].path == path, [(h.path, h.name) for h in hits]
    assert hits == sorted(hits, key=lambda hit: hit.rank)


async def test_search_of_nothing_meaningful_is_empty(project) -> None:
    _, index = project
    await index.build()
    assert index.search("", 5) == []
    assert index.search('"*()-+', 5) == []
    assert index.search("parse_config", 0) == []


async def test_definitions_of_a_class_give_its_members_signatures(project) -> None:
    _, index = project
    await index.build()
    [segment] = index.definitions("Segment")
    assert (segment.kind, segment.path, segment.container) == ("class", "src/seg.py", None)
    assert (segment.start_line, segment.end_line) == (3, 12)
    assert segment.signature == "class Segment:"
    assert "def __init__(self, text: str, start: int) -> None:" in segment.summary
    assert 'def split(self, at: int) -> "tuple[Segment, Segment]":' in segment.summary
    assert "self.start = start" not in segment.summary


async def test_definitions_of_a_method_by_its_class(project) -> None:
    _, index = project
    await index.build()
    [split] = index.definitions("Segment.split")
    assert (split.kind, split.name, split.container) == ("method", "split", "Segment")
    assert (split.start_line, split.end_line) == (10, 12)
    assert split.summary.startswith("    def split(")
    assert index.definitions("Other.split") == []
    assert [d.name for d in index.definitions("split")] == ["split"]


async def test_definitions_of_several_names_in_the_order_asked(project) -> None:
    _, index = project
    await index.build()
    found = index.definitions_of(["parse_config", "nothing_like_it", "Segment", "backoff_delay"])
    assert [d.name for d in found] == ["parse_config", "Segment", "backoff_delay"]
    assert index.definitions_of(["Segment", "parse_config"], limit=1)[0].name == "Segment"
    assert index.definitions_of([]) == []


async def test_definitions_of_a_module_level_constant(project) -> None:
    root, index = project
    await index.build()
    [timeout] = index.definitions("DEFAULT_TIMEOUT")
    assert (timeout.kind, timeout.path, timeout.container) == ("variable", "src/config.py", None)
    assert (timeout.start_line, timeout.end_line) == (2, 2)
    assert timeout.signature == timeout.summary == "DEFAULT_TIMEOUT = 5.0"
    # a class or function of the same name comes before an assignment
    (root / "src" / "other.py").write_text("parse_config = None\n")
    await index.build()
    assert [d.kind for d in index.definitions("parse_config")] == ["function", "variable"]


async def test_the_generation_counts_writes_but_a_files_own_when_asked(project) -> None:
    root, index = project
    app, config = str(root / "src" / "app.py"), str(root / "src" / "config.py")
    start = index.generation()
    await index.build()
    built = index.generation(app)
    assert built > start
    await index.update(root / "src" / "app.py", USES + "\nx = 1\n")
    await index.update(Path("src/app.py"), USES + "\nx = 2\n")  # relative to the folder
    assert index.generation(app) == built  # typing in app.py keeps app.py's caches
    assert index.generation() > built and index.generation(config) > built
    await index.update(root / "src" / "config.py")
    after_config = index.generation(app)
    assert after_config > built  # another file was written
    await index.update(root / "src" / "app.py", USES)
    assert index.generation(app) == after_config


async def test_a_second_build_rereads_only_changed_files(project, monkeypatch) -> None:
    root, index = project
    await index.build()
    read: list[str] = []
    original = index._read

    def spy(relative: str, *args: object) -> object:
        read.append(relative)
        return original(relative, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "_read", spy)
    status = await index.build()
    assert read == []
    assert status.files == 4

    config = root / "src" / "config.py"
    config.write_text(CONFIG.replace("parse_config", "load_settings"))
    os.utime(config, ns=(1, 1))  # a different mtime, whatever the clock's resolution
    (root / "src" / "app.py").unlink()
    (root / "src" / "new.py").write_text("def brand_new_function():\n    return 1\n")
    status = await index.build()
    assert sorted(read) == ["src/config.py", "src/new.py"]
    assert status.files == 4
    assert index.definitions("parse_config") == []
    assert index.definitions("load_settings")[0].path == "src/config.py"
    assert index.definitions("brand_new_function")[0].path == "src/new.py"
    assert index.definitions("main") == []


async def test_a_touched_file_with_the_same_content_is_not_reindexed(project) -> None:
    root, index = project
    await index.build()
    before = index.definitions("Segment")
    os.utime(root / "src" / "seg.py", ns=(2, 2))
    await index.build()
    assert index.definitions("Segment") == before


async def test_update_from_a_buffer_then_from_disk_then_deleted(project) -> None:
    root, index = project
    await index.build()
    path = root / "src" / "seg.py"
    await index.update(path, SEGMENT.replace("def split(", "def cut_in_two("))
    assert index.definitions("Segment.split") == []
    assert index.definitions("Segment.cut_in_two")[0].path == "src/seg.py"
    await index.update(path)  # didSave of the unchanged disk file: back to what is on disk
    assert index.definitions("Segment.split")
    path.unlink()
    await index.update(path)
    assert index.definitions("Segment") == []
    assert index.status().files == 3


async def test_update_of_a_new_file_and_of_paths_to_leave_alone(project, tmp_path: Path) -> None:
    root, index = project
    await index.build()
    await index.update(root / "src" / "extra.py", "def extra_helper():\n    pass\n")
    assert index.definitions("extra_helper")[0].path == "src/extra.py"
    outside = tmp_path / "elsewhere.py"
    outside.write_text("def outside_function():\n    pass\n")
    await index.update(outside)
    await index.update(root / "node_modules" / "lib.js", "function inDeps() {}\n")
    await index.update(root / ".env", "API_KEY=secret\n")
    assert index.definitions_of(["outside_function", "inDeps"]) == []
    assert index.search("secret", 5) == []


async def test_update_drops_a_file_that_became_ignored(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    rules: set[str] = set()
    index = SqliteCodebaseIndex(
        root, tmp_path / "db.sqlite3", ignored=lambda path: "rule" if path.name in rules else None
    )
    try:
        await index.build()
        assert index.definitions("parse_config")
        rules.add("config.py")
        await index.update(root / "src" / "config.py")
        assert index.definitions("parse_config") == []
    finally:
        await index.aclose()


async def test_the_gitignore_and_qodeassistignore_are_respected(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    (root / ".gitignore").write_text("build/\n")
    (root / ".qodeassistignore").write_text("src/config.py\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("def built_function():\n    pass\n")
    index = SqliteCodebaseIndex(root, database_path_for(tmp_path / "data", root))
    try:
        status = await index.build()
        assert index.definitions_of(["built_function", "parse_config"]) == []
        assert index.definitions("Segment")
        assert status.skipped.get("ignored") == 2
    finally:
        await index.aclose()


async def test_a_nested_gitignore_applies_to_its_folder(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    (root / "src" / ".gitignore").write_text("build/\n")
    (root / "src" / "build").mkdir()
    (root / "src" / "build" / "out.py").write_text("def built_below():\n    pass\n")
    (root / "build").mkdir()
    (root / "build" / "kept.py").write_text("def built_above():\n    pass\n")
    index = SqliteCodebaseIndex(root, database_path_for(tmp_path / "data", root))
    try:
        status = await index.build()
        assert index.definitions("built_below") == []  # sub's build/ is ignored …
        assert [d.path for d in index.definitions("built_above")] == ["build/kept.py"]  # … only
        assert status.skipped.get("ignored") == 1
        await index.update(root / "src" / "build" / "out.py")
        assert index.definitions("built_below") == []  # an update of an ignored file too
    finally:
        await index.aclose()


async def test_the_callers_ignore_rule_is_used(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    asked: list[Path] = []

    def ignored(path: Path) -> str | None:
        asked.append(path)
        return "policy" if path.name == "seg.py" else None

    index = SqliteCodebaseIndex(root, tmp_path / "db.sqlite3", ignored=ignored)
    try:
        await index.build()
        assert root / "src" / "seg.py" in asked
        assert index.definitions("Segment") == []
        assert index.definitions("parse_config")
    finally:
        await index.aclose()


async def test_turned_off_it_creates_nothing(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    database = tmp_path / "db.sqlite3"
    index = SqliteCodebaseIndex(root, database, limits=IndexLimits(enabled=False))
    status = await index.build()
    await index.update(root / "src" / "seg.py")
    assert status.state == "off"
    assert index.search("Segment") == []
    assert index.definitions("Segment") == []
    assert not database.exists()
    await index.aclose()


async def test_an_unwritable_database_location_fails_with_advice(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    blocker = tmp_path / "file"
    blocker.write_text("")
    index = SqliteCodebaseIndex(root, blocker / "index" / "db.sqlite3")
    status = await index.build()
    assert status.state == "failed"
    assert status.error is not None and "enabled = false" in status.error
    assert index.search("Segment") == []
    await index.aclose()


async def test_a_corrupt_database_is_rebuilt(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    database = tmp_path / "db.sqlite3"
    database.write_bytes(b"this is not a database at all" * 100)
    index = SqliteCodebaseIndex(root, database)
    try:
        status = await index.build()
        assert status.state == "ready"
        assert index.definitions("Segment")
    finally:
        await index.aclose()


async def test_max_files_caps_the_index(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    index = SqliteCodebaseIndex(root, tmp_path / "db.sqlite3", limits=IndexLimits(max_files=2))
    try:
        status = await index.build()
        assert status.files == 2
        assert status.skipped["too_many"] == 2
    finally:
        await index.aclose()


async def test_aclose_stops_a_running_build(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    for number in range(200):
        (root / f"m{number}.py").write_text(f"def function_{number}():\n    return {number}\n")
    index = SqliteCodebaseIndex(root, tmp_path / "db.sqlite3")
    started = asyncio.Event()
    build = asyncio.ensure_future(index.build(lambda done, total: started.set()))
    await started.wait()
    await index.aclose()
    status = await build
    assert status.state != "ready" or status.done == 200
    assert index.search("function_1") == []  # closed


async def test_cancelling_the_build_task_stops_the_thread(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    for number in range(200):
        (root / f"m{number}.py").write_text(f"def function_{number}():\n    return {number}\n")
    index = SqliteCodebaseIndex(root, tmp_path / "db.sqlite3")
    started = asyncio.Event()
    build = asyncio.ensure_future(index.build(lambda done, total: started.set()))
    await started.wait()
    build.cancel()
    with pytest.raises(asyncio.CancelledError):
        await build
    assert not index._build_lock.locked()  # the worker thread has finished
    status = await index.build()  # a later build finishes the job
    assert status.state == "ready" and status.files == 200
    await index.aclose()


async def test_status_shows_the_last_sessions_index_before_a_build(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    database = tmp_path / "db.sqlite3"
    first = SqliteCodebaseIndex(root, database)
    await first.build()
    await first.aclose()
    second = SqliteCodebaseIndex(root, database)
    try:
        status = second.status()
        assert (status.state, status.files) == ("waiting", 4)
        assert second.definitions("Segment")  # usable at once
    finally:
        await second.aclose()


async def test_a_file_the_chunker_chokes_on_does_not_cost_the_index(
    project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, index = project
    original = index._chunker.chunk

    def chunk(relative: str, text: str, **options: object) -> object:
        if relative == "src/seg.py":
            raise RecursionError("maximum recursion depth exceeded")
        return original(relative, text, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(index._chunker, "chunk", chunk)
    status = await index.build()
    assert status.state == "ready"
    assert status.skipped.get("unparsable") == 1
    assert index.definitions("parse_config")


async def test_an_older_update_never_overwrites_a_newer_one(project) -> None:
    root, index = project
    await index.build()
    store = index._open()
    relative = "src/seg.py"
    newer = index._read(relative, root / relative, "def newest():\n    pass\n", None, None)
    older = index._read(relative, root / relative, "def older():\n    pass\n", None, None)
    assert newer is not None and older is not None
    index._write_update(store, relative, 7, newer)
    index._write_update(store, relative, 6, older)  # its thread finished last
    assert index.definitions("newest") and not index.definitions("older")


async def test_a_build_does_not_overwrite_what_an_update_wrote_after_reading(project) -> None:
    root, index = project
    await index.build()
    store = index._open()
    relative = "src/seg.py"
    from_disk = index._read(relative, root / relative, "def from_disk():\n    pass\n", None, None)
    from_buffer = index._read(relative, root / relative, "def typed():\n    pass\n", None, None)
    assert from_disk is not None and from_buffer is not None
    read_at = 0.0  # the build read the file before the update below was written
    index._write_update(store, relative, 1, from_buffer)
    index._write_scanned(store, [(from_disk, read_at)], [relative], [], read_at)
    assert index.definitions("typed") and not index.definitions("from_disk")
