"""`ChildCodebaseIndex`: built and updated by the indexer child, read in this process."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from qodeassist_lsp.context.codebase.client import ChildCodebaseIndex, IndexWorker
from qodeassist_lsp.context.codebase.store import IndexStore


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "parser.py").write_text("def parse_config(text):\n    return text\n")
    (root / "pkg" / "app.py").write_text("def main():\n    parse_config('x')\n")
    (root / "secret.py").write_text("def secret_thing():\n    pass\n")
    (root / "built.py").write_text("def built_thing():\n    pass\n")
    (root / "gen").mkdir()
    (root / "gen" / "out.py").write_text("def generated_thing():\n    pass\n")
    (root / ".qodeassistignore").write_text("secret.py\n")
    (root / ".gitignore").write_text("built.py\n")
    return root


def make(project: Path, worker: IndexWorker, **kwargs: object) -> ChildCodebaseIndex:
    database = project.parent / "data" / "index.sqlite3"
    return ChildCodebaseIndex(project, database, worker=worker, **kwargs)  # type: ignore[arg-type]


def indexed_paths(index: ChildCodebaseIndex) -> set[str]:
    store = IndexStore(index.database_path)
    try:
        return set(store.signatures())
    finally:
        store.close()


async def test_build_and_update_run_in_the_child_with_the_same_ignore_rule(project: Path) -> None:
    worker = IndexWorker()
    index = make(project, worker, folders=[project], exclude=["gen/"])
    seen: list[tuple[int, int]] = []
    status = await index.build(lambda done, total: seen.append((done, total)))
    assert status.state == "ready", status.error
    assert worker.pid is not None and worker.pid != os.getpid()
    assert seen and seen[-1][0] == seen[-1][1] == status.files
    paths = {s.path for s in index.search("thing parse_config", 20)}
    assert "pkg/parser.py" in paths
    # .qodeassistignore, .gitignore and [codebase] exclude are applied in the child
    assert not {"secret.py", "built.py", "gen/out.py"} & indexed_paths(index)
    assert status.skipped.get("ignored", 0) >= 2
    await index.update(project / "pkg" / "app.py", "def brand_new_name(x):\n    return x\n")
    assert [d.path for d in index.definitions("brand_new_name")] == ["pkg/app.py"]
    await index.aclose()
    assert worker.pid is None


async def test_a_killed_child_is_started_again_by_the_next_update(project: Path) -> None:
    worker = IndexWorker()
    index = make(project, worker)
    await index.build()
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    await index.update(project / "pkg" / "app.py", "def after_the_kill():\n    pass\n")
    assert worker.starts == 2
    assert [d.path for d in index.definitions("after_the_kill")] == ["pkg/app.py"]
    assert index.status().state == "ready"
    assert index.status().error is None
    await index.aclose()


async def test_an_idle_child_ends_and_the_next_update_starts_it(project: Path) -> None:
    worker = IndexWorker(idle_seconds=0.05)
    index = make(project, worker)
    await index.build()
    process = worker._process
    assert process is not None
    assert await process.wait() == 0  # it ended on its own, and was waited for
    await index.update(project / "pkg" / "app.py", "def after_idle():\n    pass\n")
    assert worker.starts >= 2  # (a loaded machine may see it idle out once more meanwhile)
    assert [d.path for d in index.definitions("after_idle")] == ["pkg/app.py"]
    await index.aclose()


async def test_updates_while_the_child_starts_wait_for_it_and_keep_their_order(
    project: Path,
) -> None:
    worker = IndexWorker()
    index = make(project, worker)
    path = project / "pkg" / "app.py"
    await asyncio.gather(*(index.update(path, f"def version_{n}():\n    pass\n") for n in range(5)))
    assert worker.starts == 1
    assert [d.path for d in index.definitions("version_4")] == ["pkg/app.py"]
    assert index.definitions("version_3") == []
    await index.aclose()


async def test_closing_during_a_build_stops_it_and_ends_the_child(project: Path) -> None:
    for n in range(300):
        (project / "pkg" / f"mod_{n}.py").write_text(f"def function_{n}(x):\n    return x\n")
    worker = IndexWorker()
    index = make(project, worker)
    started = asyncio.Event()
    build = asyncio.create_task(index.build(lambda _done, _total: started.set()))
    await started.wait()
    process = worker._process
    assert process is not None
    await index.aclose()
    status = await build
    assert status.state in ("waiting", "ready")
    assert process.returncode is not None  # ended and waited for: no zombie
    store = IndexStore(index.database_path)  # every batch whole: the database opens
    try:
        assert store.counts()[0] >= 0
    finally:
        store.close()


async def test_a_child_that_cannot_start_fails_the_build_with_a_reason(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.executable", str(project / "no-python-here"))
    worker = IndexWorker()
    index = make(project, worker)
    status = await index.build()
    assert status.state == "failed"
    assert status.error is not None and "could not start" in status.error
    await index.aclose()


async def test_the_shared_worker_is_one_per_loop_and_ends_with_its_last_index(
    project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.py").write_text("def b_thing():\n    pass\n")
    first = ChildCodebaseIndex(project, tmp_path / "data" / "a.sqlite3")
    second = ChildCodebaseIndex(other, tmp_path / "data" / "b.sqlite3")
    await first.build()
    await second.build()
    worker = IndexWorker.shared()
    assert worker.starts == 1
    process = worker._process
    assert process is not None
    await first.aclose()
    assert process.returncode is None
    await second.aclose()
    assert process.returncode is not None


async def test_cancelling_a_build_stops_it_in_the_child_and_keeps_the_child(
    project: Path,
) -> None:
    for n in range(300):
        (project / "pkg" / f"mod_{n}.py").write_text(f"def function_{n}(x):\n    return x\n")
    worker = IndexWorker()
    index = make(project, worker)
    started = asyncio.Event()
    build = asyncio.create_task(index.build(lambda _done, _total: started.set()))
    await started.wait()
    build.cancel()
    with pytest.raises(asyncio.CancelledError):
        await build
    assert index.status().state == "waiting"
    assert worker.pid is not None  # the child answered the stop and serves the next request
    status = await index.build()
    assert status.state == "ready"
    assert [d.path for d in index.definitions("function_299")] == ["pkg/mod_299.py"]
    assert worker.starts == 1
    await index.aclose()


async def test_closing_after_the_child_died_starts_no_new_one(project: Path) -> None:
    worker = IndexWorker()
    index = make(project, worker)
    await index.build()
    process = worker._process
    assert process is not None
    process.kill()
    await process.wait()
    await index.aclose()
    assert worker.starts == 1
    assert worker.pid is None


async def test_a_nested_gitignore_applies_and_a_rescan_follows_its_change(project: Path) -> None:
    (project / "pkg" / "build").mkdir()
    (project / "pkg" / "build" / "out.py").write_text("def built_below():\n    pass\n")
    (project / "pkg" / "cache.py").write_text("def cached_below():\n    pass\n")
    (project / "pkg" / ".gitignore").write_text("build/\n")
    worker = IndexWorker()
    index = make(project, worker, folders=[project])
    try:
        await index.build()
        assert "pkg/build/out.py" not in indexed_paths(index)
        assert [d.path for d in index.definitions("cached_below")] == ["pkg/cache.py"]
        # the nested file changes; the rescan right after it sees the change (no stale rules)
        (project / "pkg" / ".gitignore").write_text("build/\ncache.py\n")
        await index.build()
        assert index.definitions("cached_below") == []
        assert not {"pkg/build/out.py", "pkg/cache.py"} & indexed_paths(index)
    finally:
        await index.aclose()
