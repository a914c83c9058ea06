"""The code table behind the start-up caches: what it reads, what it writes back, and when."""

from __future__ import annotations

import importlib.util
import marshal
import threading
import types
from pathlib import Path

import pytest

from qodeassist_lsp.config.code_cache import (
    MISSING,
    CodeTable,
    cache_disabled,
    read_table,
    write_table,
)

CODE = (types.CodeType,)


def _code(text: str) -> types.CodeType:
    return compile(text, "<test>", "exec")


def test_added_entries_are_found_by_the_next_table(tmp_path: Path) -> None:
    path = tmp_path / "t.marshal"
    first = CodeTable(path)
    assert first.get(b"k", CODE) is MISSING
    first.add(b"k", _code("x = 1"))
    first.add(b"none", None)
    assert first.save()
    assert first.added == 0  # saved: a second save has nothing to write
    assert not first.save()

    second = CodeTable(path)
    assert second.loaded == 2
    code = second.get(b"k", CODE)
    assert isinstance(code, types.CodeType)
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert namespace["x"] == 1
    assert second.get(b"none", (types.CodeType, type(None))) is None
    assert second.get(b"none", CODE) is MISSING  # a value of another kind is a miss
    assert second.hits == 2
    assert not second.save()  # nothing compiled: the file is left alone


def test_the_file_keeps_the_used_entries_then_a_bounded_number_of_others(tmp_path: Path) -> None:
    path = tmp_path / "t.marshal"
    write_table(path, {b"old1": 1, b"old2": 2, b"old3": 3, b"used": 4})
    table = CodeTable(path, keep_unused=2)
    assert table.get(b"used", (int,)) == 4
    table.add(b"new", 5)
    assert table.save()
    assert list(read_table(path)) == [b"used", b"new", b"old1", b"old2"]

    only_used = CodeTable(path)
    only_used.add(b"newer", 6)
    assert only_used.save()
    assert read_table(path) == {b"newer": 6}


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"garbage",
        importlib.util.MAGIC_NUMBER + b"\xff\x00garbage",
        importlib.util.MAGIC_NUMBER + marshal.dumps([1, 2, 3]),
        b"\x00\x00\r\n" + marshal.dumps({b"k": 1}),  # another interpreter's magic number
    ],
)
def test_a_corrupt_or_foreign_file_is_an_empty_table(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "t.marshal"
    path.write_bytes(content)
    table = CodeTable(path)
    assert table.loaded == 0
    assert table.get(b"k", (int,)) is MISSING
    table.add(b"k", 1)
    assert table.save()
    assert read_table(path) == {b"k": 1}


def test_keys_that_are_not_bytes_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "t.marshal"
    path.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps({"text": 1, b"k": 2}))
    assert read_table(path) == {b"k": 2}


def test_no_path_is_a_table_that_is_never_written(tmp_path: Path) -> None:
    table = CodeTable(None)
    table.add(b"k", 1)
    assert table.get(b"k", (int,)) == 1
    assert not table.save()
    assert not any(tmp_path.iterdir())


def test_an_unwritable_directory_only_costs_the_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")  # a file where the directory should be: fails even for root
    table = CodeTable(blocker / "cache" / "t.marshal")
    table.add(b"k", 1)
    assert not table.save()
    assert list(tmp_path.iterdir()) == [blocker]


def test_threads_adding_and_saving_at_once_leave_a_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "t.marshal"
    table = CodeTable(path)

    def work(n: int) -> None:
        for i in range(50):
            table.add(f"{n}-{i}".encode(), i)
            table.save()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    table.save()
    assert len(read_table(path)) == 200
    assert [p.name for p in tmp_path.iterdir()] == ["t.marshal"]  # no temporary file is left


def test_the_environment_variable_turns_the_caches_off() -> None:
    assert cache_disabled({"QODEASSIST_NO_STARTUP_CACHE": "1"})
    assert not cache_disabled({"QODEASSIST_NO_STARTUP_CACHE": "0"})
    assert not cache_disabled({})
