"""IndexStore: identifier splitting, query terms, schema upgrades, several processes on one file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qodeassist_lsp.context.codebase.chunker import Chunk, FileChunks, Symbol
from qodeassist_lsp.context.codebase.store import (
    SCHEMA_VERSION,
    FileRecord,
    IndexStore,
    query_terms,
    split_identifier,
)

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("parse_config", ["parse", "config"]),
        ("ParseConfig", ["parse", "config"]),
        ("HTTPServer", ["http", "server"]),
        ("getHTTPResponse2", ["get", "http", "response", "2"]),
        ("__init__", ["init"]),
        ("x", ["x"]),
    ],
)
def test_split_identifier(word: str, parts: list[str]) -> None:
    assert split_identifier(word) == parts


def test_query_terms_drop_question_words_and_add_identifier_parts() -> None:
    assert query_terms("How do I set a timeout for all requests?") == ["set", "timeout", "requests"]
    assert query_terms("parse_config") == ["parse_config", "parse", "config"]
    assert query_terms("how to") == ["how", "to"]  # nothing else left: keep them
    assert query_terms('"; DROP TABLE x; --') == ["drop", "table", "x"]
    assert query_terms("") == []


def _record(path: str, names: list[str], version: int = 0) -> FileRecord:
    chunks = [
        Chunk(n * 3, n * 3 + 2, "function", name, f"def {name}():\n    return {version}\n")
        for n, name in enumerate(names)
    ]
    symbols = [
        Symbol(name, None, "function", n * 3, n * 3 + 2, f"def {name}():", f"def {name}():")
        for n, name in enumerate(names)
    ]
    return FileRecord(path, version, 1, f"h{version}", FileChunks(chunks, symbols, "python"))


def test_a_database_of_another_schema_version_is_rebuilt(tmp_path: Path) -> None:
    database = tmp_path / "index.sqlite3"
    with sqlite3.connect(database) as old:
        old.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        old.execute("INSERT INTO meta VALUES ('schema_version', '0')")
        old.execute("CREATE TABLE chunks (whatever TEXT)")
    old.close()
    store = IndexStore(database)
    try:
        store.write([_record("a.py", ["alpha"])])
        assert [d.name for d in store.definitions(["alpha"], 5)] == ["alpha"]
        with sqlite3.connect(database) as check:
            version = check.execute("SELECT value FROM meta").fetchone()[0]
        check.close()
        assert version == str(SCHEMA_VERSION)
    finally:
        store.close()


def test_an_unchanged_chunk_keeps_its_row_and_gets_its_new_lines(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "index.sqlite3")
    try:
        store.write([_record("a.py", ["alpha", "beta"])])
        with sqlite3.connect(store.path) as db:
            before = dict(db.execute("SELECT name, id FROM chunks").fetchall())
        db.close()
        moved = _record("a.py", ["gamma", "alpha", "beta"])
        store.write([moved])
        with sqlite3.connect(store.path) as db:
            after = {
                name: (rowid, start)
                for name, rowid, start in db.execute("SELECT name, id, start_line FROM chunks")
            }
        db.close()
        assert after["alpha"] == (before["alpha"], 3)
        assert after["beta"] == (before["beta"], 6)
        assert [hit.name for hit in store.search("gamma", 5)] == ["gamma"]
        assert store.search("alpha", 5)[0].start_line == 3
    finally:
        store.close()


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from pathlib import Path
    from qodeassist_lsp.context.codebase.chunker import Chunk, FileChunks, Symbol
    from qodeassist_lsp.context.codebase.store import FileRecord, IndexStore

    def record(path, names, version):
        chunks = [Chunk(n, n, "function", name, f"def {name}(): {version}")
                  for n, name in enumerate(names)]
        symbols = [Symbol(name, None, "function", n, n, "", "") for n, name in enumerate(names)]
        return FileRecord(path, version, 1, str(version), FileChunks(chunks, symbols))

    store = IndexStore(Path(sys.argv[1]))
    for round in range(60):
        names = ["one", "two", "three"] if round % 2 else [f"w{n}" for n in range(7)]
        store.write([record("shared.py", names, round), record(f"theirs{round}.py", ["t"], 0)])
    store.close()
    print("done", flush=True)
    """
)


def test_two_processes_write_one_database_and_readers_never_see_half_a_file(
    tmp_path: Path,
) -> None:
    database = tmp_path / "index.sqlite3"
    store = IndexStore(database)
    try:
        store.write([_record("shared.py", ["one", "two", "three"])])
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(database), str(ROOT)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen: set[int] = set()
        mine = 0
        while writer.poll() is None:
            with store._read_lock:
                count = store._reader.execute(
                    "SELECT count(*) FROM chunks WHERE path = 'shared.py'"
                ).fetchone()[0]
            seen.add(count)
            store.write([_record(f"mine{mine}.py", ["m"])])  # a second writer meanwhile
            mine += 1
        out, err = writer.communicate()
        assert writer.returncode == 0, err
        assert out.strip() == "done"
        assert seen <= {3, 7}, seen  # never a mix of two versions of the file
        files, _, _ = store.counts()
        assert files == 1 + 60 + mine
        assert len(store.definitions(["t"], 100)) == 60
    finally:
        store.close()


def _many(path: str, count: int, words: str) -> FileRecord:
    chunks = [
        Chunk(n, n, "function", f"f{n}", f"def f{n}():\n    {words} {n % 7}\n")
        for n in range(count)
    ]
    return FileRecord(path, 0, 1, "h", FileChunks(chunks, []))


def test_common_terms_only_add_to_the_score_of_chunks_with_a_rare_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import qodeassist_lsp.context.codebase.store as store_module

    monkeypatch.setattr(store_module, "_SCORED_ROWS", 5)
    store = IndexStore(tmp_path / "index.sqlite3")
    try:
        store.write(
            [
                _many("common.py", 40, "value value"),
                _many("rare.py", 3, "zebra value"),
                _many("other.py", 2, "zebra"),
            ]
        )
        found = store.search("zebra value", 10)
        with sqlite3.connect(store.path) as db:
            naive = db.execute(
                f"SELECT c.path, c.name FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
                f' WHERE chunks_fts MATCH \'"zebra" OR "value"\''
                f" ORDER BY {store_module._BM25} LIMIT 5"
            ).fetchall()
        db.close()
        # the same order as scoring every chunk, among those with the rare term
        assert [(hit.path, hit.name) for hit in found] == naive
        assert {hit.path for hit in found} == {"rare.py", "other.py"}
    finally:
        store.close()


def test_when_every_term_is_common_chunks_naming_it_come_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import qodeassist_lsp.context.codebase.store as store_module

    monkeypatch.setattr(store_module, "_SCORED_ROWS", 5)
    monkeypatch.setattr(store_module, "_FALLBACK_ROWS", 8)
    store = IndexStore(tmp_path / "index.sqlite3")
    try:
        named = FileRecord(
            "named.py",
            0,
            1,
            "h",
            FileChunks([Chunk(0, 1, "class", "Value", "class Value:\n    pass\n")], []),
        )
        store.write([_many("common.py", 40, "value"), named])
        found = store.search("value", 6)
        assert found[0].name == "Value"
        assert len(found) == 6
        assert [hit.rank for hit in found] == sorted(hit.rank for hit in found)
    finally:
        store.close()
