"""The checkpoint store: exact bytes (and absence) per turn, read back by a new instance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qodeassist_lsp.tools.edits.checkpoints import CheckpointNotFound, CheckpointStore

RAW = b"caf\xc3\xa9\r\nno final newline\x00\xff"  # any bytes, kept exactly


def test_the_first_save_of_a_file_in_a_turn_wins_and_a_restart_reads_it_back(tmp_path: Path):
    store = CheckpointStore(tmp_path / "checkpoints")
    target = tmp_path / "a.py"
    first = store.save("chat/1", "req-1", target, target.as_uri(), RAW)
    again = store.save("chat/1", "req-1", target, target.as_uri(), b"later bytes")
    assert again.checkpoint_id == first.checkpoint_id and len(again.files) == 1
    created = tmp_path / "new.py"
    store.save("chat/1", "req-1", created, created.as_uri(), None)  # did not exist

    restarted = CheckpointStore(tmp_path / "checkpoints")  # a new server over the same folder
    [checkpoint] = restarted.entries("chat/1")
    assert checkpoint.to_json()["files"] == [target.as_uri(), created.as_uri()]
    assert checkpoint.chat_id == "chat/1" and checkpoint.request_id == "req-1"
    saved, absent = checkpoint.files
    assert restarted.content(checkpoint, saved) == RAW
    assert restarted.content(checkpoint, absent) is None
    assert restarted.get(checkpoint.checkpoint_id) == checkpoint


def test_turns_are_separate_checkpoints_listed_newest_first_per_chat(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    target = tmp_path / "a.py"
    store.save("one", "r1", target, target.as_uri(), b"1")
    store.save("one", "r2", target, target.as_uri(), b"2")
    store.save("two", "r3", target, target.as_uri(), b"3")
    assert [c.request_id for c in store.entries("one")] == ["r2", "r1"]
    assert {c.chat_id for c in store.entries()} == {"one", "two"}
    assert store.entries("three") == []


def test_unknown_and_malformed_ids_are_not_found(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    target = tmp_path / "a.py"
    store.save("c", "r", target, target.as_uri(), b"x")
    for bad in ("cp-nope", "../c", "", "a/b"):
        with pytest.raises(CheckpointNotFound, match="qodeassist/checkpoints/list"):
            store.get(bad)


def test_a_broken_index_is_skipped_not_fatal(tmp_path: Path):
    store = CheckpointStore(tmp_path)
    target = tmp_path / "a.py"
    good = store.save("c", "r1", target, target.as_uri(), b"x")
    broken = store.save("c", "r2", target, target.as_uri(), b"y")
    index = next(tmp_path.rglob(f"{broken.checkpoint_id}/checkpoint.json"))
    index.write_text("{not json")
    assert [c.checkpoint_id for c in store.entries("c")] == [good.checkpoint_id]
    json.loads(next(tmp_path.rglob(f"{good.checkpoint_id}/checkpoint.json")).read_text())
