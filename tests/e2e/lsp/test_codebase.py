"""The codebase index over the real server: built after ``initialize``, fresh, never ignored files.

A workspace of two Python modules (``settings_parser.py`` defines ``parse_settings_file``,
``app.py`` calls it), a ``.qodeassistignore``d and a ``.gitignore``d file. After ``initialize``
the index builds in the background with server-created ``$/progress`` and the ``codebase`` part
of ``qodeassist/status`` reaches ``ready``; ``qodeassist/codebase/search`` finds the other
module's function; a rename (``didChange`` + ``didSave``) is found once saved; the ignored
files are never returned, not even after they were edited and saved in the editor.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_chat import request, start
from tests.support.replay_server import ReplayServer

MARKER = "zebraquux"
"""A word only the ignored files hold."""
IGNORED = {"private.py", "generated/gen.py"}

PARSER = '''"""Reading the settings file."""


def parse_settings_file(path):
    """Return the settings read from the file at path."""
    with open(path) as stream:
        return stream.read()
'''
APP = """from settings_parser import parse_settings_file


def run():
    return parse_settings_file("app.toml")
"""


def write_project(project: Path) -> None:
    """The two modules, and one file of each ignore file."""
    (project / "settings_parser.py").write_text(PARSER)
    (project / "app.py").write_text(APP)
    (project / ".qodeassistignore").write_text("private.py\n")
    (project / ".gitignore").write_text("generated/\n")
    (project / "private.py").write_text(f"def {MARKER}_private():\n    return '{MARKER}'\n")
    (project / "generated").mkdir()
    (project / "generated/gen.py").write_text(f"def {MARKER}_generated():\n    pass\n")


@pytest.fixture(autouse=True)
def setup(lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    write_project(lsp_home / "project")


async def search(client: Any, query: str) -> list[dict[str, Any]]:
    found = await request(client, "codebase/search", {"query": query})
    snippets: list[dict[str, Any]] = found["snippets"]
    return snippets


async def found_within(client: Any, query: str, seconds: float) -> list[dict[str, Any]]:
    """Search ``query`` until something is found or ``seconds`` passed; the last answer."""
    began = time.monotonic()
    hits = await search(client, query)
    while not hits and time.monotonic() - began < seconds:
        await asyncio.sleep(0.02)
        hits = await search(client, query)
    return hits


def indexing(client: Any) -> list[list[Any]]:
    """The ``$/progress`` reports of every index build the client was shown."""
    return [
        reports
        for reports in client.progress_reports.values()
        if reports and getattr(reports[0], "title", "") == "QodeAssist: indexing project"
    ]


async def test_the_index_builds_after_initialize_with_progress_and_status(
    client: Any, lsp_home: Path
) -> None:
    await start(client)
    # waits for the build under way (or makes one): every $/progress of it precedes the answer
    settled = await request(client, "codebase/reindex", {"wait": True})
    assert settled["state"] == "ready", settled
    assert settled["files"] == 4, settled  # the modules and the two ignore files (text)
    builds = indexing(client)
    assert builds, client.progress_reports
    first = builds[0]
    assert isinstance(first[0], types.WorkDoneProgressBegin)
    assert isinstance(first[-1], types.WorkDoneProgressEnd)
    assert "4 files" in (first[-1].message or ""), first[-1]
    status = await request(client, "status", {})
    assert status["codebase"]["state"] == "ready", status
    assert status["codebase"]["files"] == 4, status

    hits = await search(client, "parse settings file")
    assert hits[0]["path"] == "settings_parser.py", hits
    assert "def parse_settings_file(path):" in hits[0]["text"]
    assert hits[0]["uri"] == (lsp_home / "project/settings_parser.py").as_uri()
    definitions = await request(client, "codebase/definition", {"symbol": "parse_settings_file"})
    assert definitions["definitions"][0]["path"] == "settings_parser.py", definitions
    assert definitions["definitions"][0]["startLine"] == 4, definitions


async def test_a_rename_is_found_once_saved(client: Any, lsp_home: Path) -> None:
    await start(client)
    await request(client, "codebase/reindex", {"wait": True})
    path = lsp_home / "project/settings_parser.py"
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, PARSER))
    )
    renamed = PARSER.replace("parse_settings_file", "load_config_document")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(renamed)],
        )
    )
    path.write_text(renamed)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri))
    )
    # The update's budget (50 ms p95) is measured by benchmarks/codebase_index.py; a test on a
    # loaded machine only bounds it.
    hits = await found_within(client, "load_config_document", 10.0)
    assert hits and hits[0]["path"] == "settings_parser.py", hits
    assert "def load_config_document(path):" in hits[0]["text"]
    stale = await search(client, "parse_settings_file")
    assert all("def parse_settings_file" not in h["text"] for h in stale), stale


async def test_ignored_files_are_never_returned(client: Any, lsp_home: Path) -> None:
    await start(client)
    await request(client, "codebase/reindex", {"wait": True})
    assert await search(client, MARKER) == []
    for query in (f"{MARKER}_private", f"{MARKER} generated", "private generated"):
        assert not {h["path"] for h in await search(client, query)} & IGNORED, query
    found = await request(client, "codebase/definition", {"symbol": f"{MARKER}_generated"})
    assert found["definitions"] == []
    # edited and saved in the editor: still never indexed
    for path in (lsp_home / "project/private.py", lsp_home / "project/generated/gen.py"):
        uri = path.as_uri()
        text = path.read_text() + f"\n\ndef {MARKER}_more():\n    pass\n"
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
        )
        path.write_text(text)
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri))
        )
    await request(client, "codebase/reindex", {"wait": True})
    assert await search(client, MARKER) == []
    assert not {h["path"] for h in await search(client, f"{MARKER}_more")} & IGNORED
    status = await request(client, "codebase/status", {})
    assert status["files"] == 4, status


async def test_files_changed_on_disk_follow_watched_file_events(
    client: Any, lsp_home: Path
) -> None:
    await start(client)
    await request(client, "codebase/reindex", {"wait": True})
    project = lsp_home / "project"
    (project / "tokenizer.py").write_text("def split_into_tokens(text):\n    return text.split()\n")
    (project / "app.py").unlink()
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            [
                types.FileEvent((project / "tokenizer.py").as_uri(), types.FileChangeType.Created),
                types.FileEvent((project / "app.py").as_uri(), types.FileChangeType.Deleted),
            ]
        )
    )
    # no rescan: only the events can tell the index (polled; each update takes milliseconds)
    hits = await found_within(client, "split_into_tokens", 5.0)
    assert hits and hits[0]["path"] == "tokenizer.py", hits
    gone: list[dict[str, Any]] = [{"path": "app.py"}]
    began = time.monotonic()
    while any(h["path"] == "app.py" for h in gone) and time.monotonic() - began < 5.0:
        gone = await search(client, "run app toml")
        await asyncio.sleep(0.02)
    assert all(h["path"] != "app.py" for h in gone), gone


@pytest.mark.parametrize("client", ["visual_studio_code"], indirect=True)
async def test_a_client_that_offers_it_is_asked_to_watch_the_files(client: Any) -> None:
    registered: list[Any] = client.registrations  # the conftest's client answers and keeps them
    await start(client)
    await asyncio.wait_for(client.registered.wait(), 10)
    watch = [r for r in registered if r.method == "workspace/didChangeWatchedFiles"]
    assert watch, registered
    watchers = watch[0].register_options["watchers"]
    assert watchers == [{"globPattern": "**/*"}], watchers


async def test_the_server_parses_nothing_itself_the_indexer_child_does(
    client: Any, lsp_home: Path
) -> None:
    """Issues 45/46: tree-sitter is loaded only in the indexer child, never in the server."""
    await start(client)
    await request(client, "codebase/reindex", {"wait": True})
    path = lsp_home / "project/app.py"
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, APP))
    )
    edited = APP + "\n\ndef only_in_the_buffer():\n    pass\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(edited)],
        )
    )
    hits = await found_within(client, "only_in_the_buffer", 10.0)
    assert hits and hits[0]["path"] == "app.py", hits
    server = client._server.pid
    assert "tree_sitter" not in _proc(server, "maps")
    children = _proc(server, f"task/{server}/children").split()
    indexers = [
        pid for pid in children if "qodeassist_lsp.context.codebase.worker" in _proc(pid, "cmdline")
    ]
    assert len(indexers) == 1, children
    assert "tree_sitter" in _proc(indexers[0], "maps")


def _proc(pid: int | str, name: str) -> str:
    """Read ``/proc/<pid>/<name>`` (a sync helper: the reads are of the kernel's memory)."""
    return Path(f"/proc/{pid}/{name}").read_text(errors="replace")
