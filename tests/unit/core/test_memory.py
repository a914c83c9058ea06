"""Persistent memory: scopes on disk, secrets refused, relevance in budget, no lost writes."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from qodeassist_lsp.core.memory import Memory, MemoryRefused, layer_text


def memory(tmp_path: Path, project: bool = True) -> Memory:
    return Memory(tmp_path / "data", tmp_path / "project/.qodeassist" if project else None)


def test_entries_are_stored_per_scope_with_id_time_and_source(tmp_path: Path) -> None:
    mem = memory(tmp_path)
    first = mem.add("Use tabs in Makefiles", "cli")
    second = mem.add("  The tests   run with pytest ", "chat", "project")
    assert second.text == "The tests run with pytest" and second.scope == "project"
    stored = json.loads((tmp_path / "data/memory.json").read_text())["entries"]
    assert stored == [
        {"id": first.id, "text": first.text, "created": first.created, "source": "cli"}
    ]
    assert (tmp_path / "project/.qodeassist/memory.json").is_file()
    assert [e.id for e in mem.entries()] == [first.id, second.id]
    assert [e.id for e in mem.entries("project")] == [second.id]


def test_forget_removes_from_whichever_scope_holds_the_id(tmp_path: Path) -> None:
    mem = memory(tmp_path)
    kept = mem.add("keep me", "cli")
    gone = mem.add("forget me", "cli", "project")
    assert mem.forget(gone.id).text == "forget me"
    assert [e.id for e in mem.entries()] == [kept.id]
    with pytest.raises(MemoryRefused, match="no memory entry 'nope'"):
        mem.forget("nope")


@pytest.mark.parametrize(
    "text",
    [
        "my key is sk-proj-abcdefghijklmnopqrstuvwx",
        "Authorization: Bearer abc.def.ghi",
        "google AIzaSyA1234567890abcdefghijklmnopqrstu",
        "x-api-key: 1234567890",
    ],
)
def test_text_that_looks_like_a_secret_is_refused_and_not_stored(tmp_path: Path, text: str) -> None:
    mem = memory(tmp_path)
    with pytest.raises(MemoryRefused, match="looks like a secret"):
        mem.add(text, "cli")
    assert mem.entries() == []


def test_empty_text_and_project_memory_without_a_workspace_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MemoryRefused, match="empty"):
        memory(tmp_path).add("   ", "cli")
    with pytest.raises(MemoryRefused, match="no workspace"):
        memory(tmp_path, project=False).add("x", "cli", "project")


def test_search_finds_similar_entries_best_first(tmp_path: Path) -> None:
    mem = memory(tmp_path)
    mem.add("Use tabs in Makefiles", "cli")
    mem.add("The user prefers British spelling", "cli")
    assert [e.text for e in mem.search("makefile tabs")] == ["Use tabs in Makefiles"]
    assert mem.search("quantum chromodynamics") == []


def test_relevant_ranks_by_similarity_then_recency_within_the_budget(tmp_path: Path) -> None:
    mem = memory(tmp_path)
    mem.add("Deploys go through the staging cluster first", "cli")
    for n in range(30):
        mem.add(f"unrelated note number {n} " + "x" * 40, "cli")
    chosen = mem.relevant("how do deploys reach the staging cluster?", budget_tokens=30)
    assert chosen[0].text.startswith("Deploys go through")
    assert sum(len(e.text) + 3 for e in chosen) <= 30 * 4
    assert "# Memory" in layer_text(chosen) and layer_text([]) == ""


def _add_many(root: str, worker: int) -> None:
    mem = Memory(Path(root), None)
    for n in range(10):
        mem.add(f"worker {worker} note {n}", "cli")


def test_concurrent_processes_lose_no_entry(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_add_many, args=(str(tmp_path), w)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
    assert all(p.exitcode == 0 for p in workers)
    texts = {e.text for e in Memory(tmp_path, None).entries()}
    assert texts == {f"worker {w} note {n}" for w in range(4) for n in range(10)}


def test_a_broken_file_reads_as_empty(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data/memory.json").write_text("{not json")
    assert memory(tmp_path).entries() == []
