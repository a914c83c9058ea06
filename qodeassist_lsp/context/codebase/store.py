"""The index's database: SQLite with FTS5 (BM25) over chunks, a symbol table and file signatures.

One file per workspace folder. Several processes (two editors on one project, ``serve --http``
beside an editor) may open it at once: the journal is WAL, so readers never wait for the
writer, and ``busy_timeout`` makes a second writer wait its turn instead of failing. Every file's
rows are replaced in one transaction, so a reader sees a file's old chunks or its new ones,
never half of each. A database this code cannot read — another schema version, or not a
database at all — is rebuilt from scratch, never a crash: the index is a cache of the folder.

Search text is tokenised by FTS5's ``unicode61`` with ``_`` kept inside tokens (``parse_config``
is one token, as a user types it) and Porter stemming (``requests`` finds ``request``); beside
it each chunk stores the split form of its identifiers (``parse_config``, ``ParseConfig`` →
``parse config``) and of its path, so a question in words finds the code that spells them as
one identifier.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from qodeassist_lsp.config.confinement import real_path
from qodeassist_lsp.context.codebase.model import ChunkKind, Snippet, SymbolDefinition

if TYPE_CHECKING:  # the server reads the store and never loads the chunker (the child writes)
    from qodeassist_lsp.context.codebase.chunker import Chunk, FileChunks

__all__ = [
    "SCHEMA_VERSION",
    "FileRecord",
    "IndexStore",
    "database_path_for",
    "match_expression",
    "query_terms",
    "split_identifier",
]

log = logging.getLogger("qodeassist.codebase")

SCHEMA_VERSION: Final = 3
"""Bumped whenever the tables or what goes into them change: an older database is rebuilt."""

_BUSY_TIMEOUT_MS: Final = 10_000
_READ_BUSY_TIMEOUT_MS: Final = 2_000
"""A query runs on the event loop: it waits less for a lock (WAL readers rarely wait at all)."""
_SCORED_ROWS: Final = 2_000
"""At most about this many chunks are scored per query, so a query stays within milliseconds."""
_FALLBACK_ROWS: Final = 1_000
"""When even the rarest term is in more than `_SCORED_ROWS` chunks: how many of them are scored."""
_DF_CACHE_SIZE: Final = 4_096
_NAME_WEIGHT, _PATH_WEIGHT, _TERMS_WEIGHT, _TEXT_WEIGHT = 6.0, 3.0, 1.5, 1.0
_BM25: Final = f"bm25(chunks_fts, {_NAME_WEIGHT}, {_PATH_WEIGHT}, {_TERMS_WEIGHT}, {_TEXT_WEIGHT})"
_IDENTIFIER: Final = re.compile(r"[^\W\d][\w]*")
_WORD: Final = re.compile(r"\w+")
_PARTS: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W_\d]+")
_STOPWORDS: Final = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "each",
        "for",
        "from",
        "get",
        "gets",
        "got",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "one",
        "or",
        "our",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "use",
        "used",
        "using",
        "want",
        "was",
        "way",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
"""Words of a question that say nothing about the code (``how do I …``)."""

_SCHEMA: Final = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,"
    " hash TEXT, skipped TEXT, chunks INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID",
    "CREATE TABLE chunks (id INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL,"
    " end_line INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT, digest INTEGER NOT NULL)",
    "CREATE INDEX chunks_by_path ON chunks (path)",
    "CREATE VIRTUAL TABLE chunks_fts USING fts5 (name, path, terms, text,"
    " tokenize = 'porter unicode61 tokenchars _')",
    "CREATE TABLE symbols (id INTEGER PRIMARY KEY, name TEXT NOT NULL, container TEXT,"
    " kind TEXT NOT NULL, path TEXT NOT NULL, start_line INTEGER NOT NULL,"
    " end_line INTEGER NOT NULL, signature TEXT NOT NULL, summary TEXT NOT NULL)",
    "CREATE INDEX symbols_by_name ON symbols (name)",
    "CREATE INDEX symbols_by_path ON symbols (path)",
)
_TABLES: Final = ("chunks_fts", "symbols", "chunks", "files", "meta")


def split_identifier(word: str) -> list[str]:
    """Return an identifier's lower-case words: ``ParseConfig``/``parse_config`` → parse, config."""
    return [part.lower() for part in _PARTS.findall(word)]


def _split_terms(text: str) -> str:
    """Return the split forms of ``text``'s compound identifiers, each word once."""
    seen: dict[str, None] = {}
    for identifier in set(_IDENTIFIER.findall(text)):
        parts = split_identifier(identifier)
        if len(parts) > 1:
            seen.update(dict.fromkeys(parts))
    return " ".join(seen)


def _path_terms(path: str) -> str:
    words: list[str] = []
    for piece in re.split(r"[/\\.\-]+", path):
        words.extend(split_identifier(piece) or ([piece.lower()] if piece else []))
    return " ".join(dict.fromkeys(words))


def query_terms(query: str) -> list[str]:
    """Return the search terms of a user's words or identifiers, each once, in order.

    Words that carry no meaning in a question are dropped unless nothing else is left; an
    identifier also contributes its parts, so ``ParseConfig`` finds ``parse_config``.
    """
    terms: dict[str, None] = {}
    dropped: dict[str, None] = {}
    for word in _WORD.findall(query):
        lower = word.lower()
        (dropped if lower in _STOPWORDS else terms)[lower] = None
        parts = split_identifier(word)
        if len(parts) > 1:
            terms.update((part, None) for part in parts if part not in _STOPWORDS)
    return list(terms or dropped)


def match_expression(terms: Sequence[str]) -> str:
    """Return the FTS5 expression matching any of ``terms`` (each quoted: no operators)."""
    return " OR ".join(f'"{term}"' for term in terms)


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One file's new state: its signature and its chunks, or why it was left out."""

    path: str
    mtime_ns: int
    size: int
    hash: str | None
    chunks: FileChunks | None
    skipped: str | None = None


_INDEX_FOLDER: Final = "index"


def database_path_for(data_root: Path, root: Path) -> Path:
    """Return ``<data_root>/index/<folder name>-<hash of its real path>.sqlite3``."""
    real = real_path(root)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:12]
    name = re.sub(r"[^\w.-]+", "_", real.name)[:40] or "root"
    return data_root / _INDEX_FOLDER / f"{name}-{digest}.sqlite3"


class IndexStore:
    """The database of one folder's index; methods may be called from any thread."""

    def __init__(self, path: Path) -> None:
        """Open (creating, or rebuilding when unreadable or of another schema) the database."""
        self.path = path
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._writer = self._open_and_check()
        except sqlite3.DatabaseError as exc:
            log.warning("the index database %s is unreadable (%s): rebuilding it", path, exc)
            self._discard_files()
            self._writer = self._open_and_check()
        self._reader = self._connect(_READ_BUSY_TIMEOUT_MS)
        self._frequencies: dict[str, int] = {}

    def close(self) -> None:
        """Close both connections (idempotent)."""
        with self._write_lock, self._read_lock:
            for connection in (self._writer, self._reader):
                with contextlib.suppress(sqlite3.Error):
                    connection.close()

    # -- opening -------------------------------------------------------------------------------
    def _connect(self, busy_timeout_ms: int = _BUSY_TIMEOUT_MS) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path,
            timeout=busy_timeout_ms / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        connection.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        return connection

    def _open_and_check(self) -> sqlite3.Connection:
        connection = self._connect()
        try:
            mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                log.info("the index database %s is not in WAL mode (%s)", self.path, mode)
            connection.execute("PRAGMA synchronous = NORMAL")
            with _transaction(connection):
                if self._version(connection) != SCHEMA_VERSION:
                    for table in _TABLES:
                        connection.execute(f"DROP TABLE IF EXISTS {table}")
                    for statement in _SCHEMA:
                        connection.execute(statement)
                    connection.execute(
                        "INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                        (str(SCHEMA_VERSION),),
                    )
            connection.execute("SELECT count(*) FROM chunks_fts WHERE rowid = 0").fetchone()
        except sqlite3.DatabaseError:
            connection.close()
            raise
        return connection

    @staticmethod
    def _version(connection: sqlite3.Connection) -> int | None:
        exists = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        if exists is None:
            return None
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        try:
            return int(row[0]) if row is not None else None
        except ValueError:
            return None

    def _discard_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def reset(self) -> None:
        """Throw the database away and start empty (after it was found corrupt)."""
        with self._write_lock, self._read_lock:
            for connection in (self._writer, self._reader):
                with contextlib.suppress(sqlite3.Error):
                    connection.close()
            self._discard_files()
            self._writer = self._open_and_check()
            self._reader = self._connect(_READ_BUSY_TIMEOUT_MS)
            self._frequencies = {}

    # -- writing -------------------------------------------------------------------------------
    def signatures(self) -> dict[str, tuple[int, int, str | None]]:
        """Return every stored file's (mtime_ns, size, hash)."""
        with self._read_lock:
            rows = self._reader.execute("SELECT path, mtime_ns, size, hash FROM files").fetchall()
        return {path: (mtime, size, digest) for path, mtime, size, digest in rows}

    def stored_hash(self, path: str) -> str | None:
        """Return the content hash stored for ``path``, or None."""
        with self._read_lock:
            row = self._reader.execute("SELECT hash FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else row[0]

    def write(
        self,
        records: Sequence[FileRecord],
        deleted: Iterable[str] = (),
        touched: Iterable[tuple[str, int, int]] = (),
    ) -> None:
        """Replace ``records``' files, drop ``deleted`` ones, re-sign ``touched``: one transaction.

        ``touched`` files (path, mtime_ns, size) get a new signature, their rows unchanged.
        """
        with self._write_lock, _transaction(self._writer) as db:
            for path in deleted:
                _delete(db, path)
            for record in records:
                count = 0
                if record.chunks is None:
                    _delete(db, record.path)
                else:
                    count = _replace(db, record.path, record.chunks)
                    db.execute("DELETE FROM files WHERE path = ?", (record.path,))
                db.execute(
                    "INSERT INTO files (path, mtime_ns, size, hash, skipped, chunks)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (record.path, record.mtime_ns, record.size, record.hash, record.skipped, count),
                )
            db.executemany(
                "UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?",
                [(mtime_ns, size, path) for path, mtime_ns, size in touched],
            )

    # -- reading -------------------------------------------------------------------------------
    def counts(self) -> tuple[int, int, int]:
        """Return (files indexed, chunks, symbols)."""
        with self._read_lock:
            files = self._reader.execute(
                "SELECT count(*) FROM files WHERE skipped IS NULL"
            ).fetchone()[0]
            chunks = self._reader.execute("SELECT count(*) FROM chunks").fetchone()[0]
            symbols = self._reader.execute("SELECT count(*) FROM symbols").fetchone()[0]
        return int(files), int(chunks), int(symbols)

    def skipped_counts(self) -> dict[str, int]:
        """Return how many stored files were left out after reading them, by reason."""
        with self._read_lock:
            rows = self._reader.execute(
                "SELECT skipped, count(*) FROM files WHERE skipped IS NOT NULL GROUP BY skipped"
            ).fetchall()
        return {str(reason): int(count) for reason, count in rows}

    def search(self, query: str, limit: int) -> list[Snippet]:
        """Return the chunks matching ``query`` best first (BM25; names weigh most).

        BM25 in FTS5 is a sum over the query's terms, and a term in half the chunks or more adds
        next to nothing, yet scoring every chunk that holds ``self`` costs tens of milliseconds.
        So the terms are split by how many chunks hold them: the rare ones, together in at most
        `_SCORED_ROWS` chunks, choose the candidates; the common ones only add to the score of
        candidates that hold them (an ``AND`` query, scored with all the terms). The result is
        BM25's exact order among chunks holding a rare term. When even the rarest term is
        common, the chunks naming it come first, then the first `_FALLBACK_ROWS` holding it.
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        with self._read_lock:
            counts = {term: self._document_frequency(term) for term in terms}
            ordered = sorted((term for term in terms if counts[term]), key=counts.__getitem__)
            if not ordered:
                return []
            rare: list[str] = []
            total = 0
            for term in ordered:
                if rare and total + counts[term] > _SCORED_ROWS:
                    break
                rare.append(term)
                total += counts[term]
            common = ordered[len(rare) :]
            if total <= _SCORED_ROWS:
                scores = self._scores(match_expression(rare), limit)
                if common:
                    both = f"({match_expression(rare)}) AND ({match_expression(common)})"
                    scores.update(self._scores(both, limit))
                best = sorted(scores.items(), key=lambda item: item[1])[:limit]
            else:
                names = self._scores(f"{{name path}} : ({match_expression(ordered)})", limit)
                best = sorted(names.items(), key=lambda item: item[1])
                if len(best) < limit:
                    rest = self._scores(match_expression(ordered), None)
                    floor = best[-1][1] if best else float("-inf")
                    more = sorted(
                        (i for i in rest.items() if i[0] not in names), key=lambda i: i[1]
                    )
                    best += [(rowid, max(score, floor)) for rowid, score in more]
                best = best[:limit]
            return self._snippets(best)

    def _document_frequency(self, term: str) -> int:
        cached = self._frequencies.get(term)
        if cached is None:
            row = self._reader.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{term}"',)
            ).fetchone()
            cached = int(row[0])
            if cached:  # an estimate that may age, but a term new to the index is looked at again
                if len(self._frequencies) >= _DF_CACHE_SIZE:
                    self._frequencies.clear()
                self._frequencies[term] = cached
        return cached

    def _scores(self, expression: str, limit: int | None) -> dict[int, float]:
        """Return rowid → BM25 of the best ``limit`` matches, or of the first `_FALLBACK_ROWS`."""
        if limit is None:
            sql = f"SELECT rowid, {_BM25} FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?"
            arguments: tuple[object, ...] = (expression, _FALLBACK_ROWS)
        else:
            sql = (
                f"SELECT rowid, {_BM25} AS score FROM chunks_fts WHERE chunks_fts MATCH ?"
                " ORDER BY score LIMIT ?"
            )
            arguments = (expression, limit)
        return {int(rowid): float(score) for rowid, score in self._reader.execute(sql, arguments)}

    def _snippets(self, ranked: Sequence[tuple[int, float]]) -> list[Snippet]:
        found: list[Snippet] = []
        for rowid, score in ranked:
            row = self._reader.execute(
                "SELECT c.path, c.start_line, c.end_line, c.kind, c.name, f.text"
                " FROM chunks AS c JOIN chunks_fts AS f ON f.rowid = c.id WHERE c.id = ?",
                (rowid,),
            ).fetchone()
            if row is None:
                continue
            path, start, end, kind, name, text = row
            found.append(
                Snippet(
                    path=path,
                    start_line=start,
                    end_line=end,
                    kind=_kind(kind),
                    name=name,
                    text=text,
                    rank=score,
                )
            )
        return found

    def definitions(self, names: Sequence[str], limit: int) -> list[SymbolDefinition]:
        """Return where each of ``names`` (``name`` or ``Container.name``) is defined, in order.

        A plain name matches definitions of that name in any container; ``A.b`` matches ``b``
        inside ``A`` (or inside a container whose name ends with ``.A``). Classes and functions
        come first, then module-level assignments and type aliases, then methods; shorter paths
        before deeper ones.
        """
        wanted: list[tuple[str, str | None]] = []
        for name in names:
            owner, _, simple = name.strip().rpartition(".")
            if simple:
                wanted.append((simple, owner or None))
        if not wanted or limit <= 0:
            return []
        conditions: list[str] = []
        arguments: list[object] = []
        for simple, container in wanted:
            if container is None:
                conditions.append("name = ?")
                arguments.append(simple)
            else:
                conditions.append("(name = ? AND (container = ? OR container LIKE ? ESCAPE '\\'))")
                arguments.extend((simple, container, "%." + _like_escape(container)))
        arguments.append(limit)
        sql = (
            "SELECT name, container, kind, path, start_line, end_line, signature, summary"
            " FROM (SELECT *, row_number() OVER (PARTITION BY name"
            " ORDER BY kind = 'method', kind IN ('variable', 'type'), length(path), path,"
            " start_line) AS position"
            f" FROM symbols WHERE {' OR '.join(conditions)}) WHERE position <= ?"
        )
        with self._read_lock:
            rows = self._reader.execute(sql, arguments).fetchall()
        by_name: dict[str, list[SymbolDefinition]] = {}
        for name, container, kind, path, start, end, signature, summary in rows:
            by_name.setdefault(name, []).append(
                SymbolDefinition(
                    name=name,
                    kind=_kind(kind),
                    path=path,
                    start_line=start,
                    end_line=end,
                    signature=signature,
                    summary=summary,
                    container=container,
                )
            )
        found: list[SymbolDefinition] = []
        seen: set[tuple[str, int]] = set()
        for simple, container in wanted:
            for definition in by_name.get(simple, []):
                if container is not None and not _in_container(definition.container, container):
                    continue
                key = (definition.path, definition.start_line)
                if key in seen:
                    continue
                seen.add(key)
                found.append(definition)
                if len(found) >= limit:
                    return found
        return found


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _in_container(actual: str | None, wanted: str) -> bool:
    return actual is not None and (actual == wanted or actual.endswith("." + wanted))


_KINDS: Final[dict[str, ChunkKind]] = {
    "function": "function",
    "method": "method",
    "class": "class",
    "lines": "lines",
    "variable": "variable",
    "type": "type",
}


def _kind(value: str) -> ChunkKind:
    return _KINDS.get(value, "lines")


@contextlib.contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _delete(db: sqlite3.Connection, path: str) -> None:
    db.execute(
        "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE path = ?)", (path,)
    )
    db.execute("DELETE FROM chunks WHERE path = ?", (path,))
    db.execute("DELETE FROM symbols WHERE path = ?", (path,))
    db.execute("DELETE FROM files WHERE path = ?", (path,))


def _chunk_digest(chunk: Chunk) -> int:
    data = f"{chunk.kind}\0{chunk.name or ''}\0{chunk.text}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big", signed=True)


def _replace(db: sqlite3.Connection, path: str, chunks: FileChunks) -> int:
    """Replace one file's chunks and symbols; a chunk whose text is unchanged keeps its row.

    A one-line edit changes one chunk's text and at most the line numbers of the chunks after
    it: only that chunk is re-tokenised, the others get their new lines (a plain ``UPDATE``).
    """
    old: dict[int, list[tuple[int, int, int]]] = {}
    for rowid, digest, start, end in db.execute(
        "SELECT id, digest, start_line, end_line FROM chunks WHERE path = ?", (path,)
    ):
        old.setdefault(digest, []).append((rowid, start, end))
    path_terms = _path_terms(path)
    moved: list[tuple[int, int, int]] = []
    for chunk in chunks.chunks:
        digest = _chunk_digest(chunk)
        same = old.get(digest)
        if same:
            rowid, start, end = same.pop()
            if (start, end) != (chunk.start_line, chunk.end_line):
                moved.append((chunk.start_line, chunk.end_line, rowid))
            continue
        cursor = db.execute(
            "INSERT INTO chunks (path, start_line, end_line, kind, name, digest)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (path, chunk.start_line, chunk.end_line, chunk.kind, chunk.name, digest),
        )
        name_terms = ""
        if chunk.name:
            words = [chunk.name, *split_identifier(chunk.name.replace(".", "_"))]
            name_terms = " ".join(dict.fromkeys(words))
        db.execute(
            "INSERT INTO chunks_fts (rowid, name, path, terms, text) VALUES (?, ?, ?, ?, ?)",
            (cursor.lastrowid, name_terms, path_terms, _split_terms(chunk.text), chunk.text),
        )
    db.executemany("UPDATE chunks SET start_line = ?, end_line = ? WHERE id = ?", moved)
    gone = [(rowid,) for rows in old.values() for rowid, _, _ in rows]
    db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", gone)
    db.executemany("DELETE FROM chunks WHERE id = ?", gone)
    db.execute("DELETE FROM symbols WHERE path = ?", (path,))
    db.executemany(
        "INSERT INTO symbols (name, container, kind, path, start_line, end_line, signature,"
        " summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                symbol.name,
                symbol.container,
                symbol.kind,
                path,
                symbol.start_line,
                symbol.end_line,
                symbol.signature,
                symbol.summary,
            )
            for symbol in chunks.symbols
        ],
    )
    return len(chunks.chunks)
