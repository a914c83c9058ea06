"""Helix, Zed and Sublime Text: the snippet's server, started with that editor's capabilities.

None of these editors can run here, so each test is the editor's side of the conversation:
the command, arguments and settings come from the snippet file (parsed with tomllib or a
comment-aware JSON reader), the initialize capabilities from the editor's source code
(``capabilities/*.json``), and the requests are the ones the editor sends when the user opens
the completion menu or the code-action menu. The assertions are what the editor shows: one
completion entry whose ``textEdit`` inserts the suggestion, and the refactor code actions,
resolved into the edit that replaces the selection.
"""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.e2e.snippets import snippets
from tests.e2e.snippets.conftest import (
    ADD_LINE,
    COMPLETION_DOC,
    PRINT_LINE,
    REFACTOR_DOC,
    REFACTOR_SELECTION,
    chat_requests,
    completion_starts,
)
from tests.e2e.snippets.editor_client import editor_session, parse_jsonc
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, completion_reply

EDITORS = ["helix", "zed", "sublime"]
TYPED = "return "


async def open_and_ask(session, name: str = "add.py"):
    """Open the document and ask for the entry at the end of ``    return `` as the editor does.

    Helix (C-x) and Zed (ctrl-space, or while typing) say how completion was triggered.
    Sublime declares no completion context, so the server treats every request as automatic;
    its popup opens while the user types, so the user types ``return `` first.
    """
    if session.editor.sends_completion_context:
        uri = session.open(name, COMPLETION_DOC)
    else:
        lines = COMPLETION_DOC.split("\n")
        lines[ADD_LINE] = "    "
        uri = session.open(name, "\n".join(lines))
        await session.type(uri, ADD_LINE, 4, TYPED)
    line = session.documents[uri][ADD_LINE]
    cursor = session.units(line)
    # The editor asks again while the list is empty and incomplete (every 0.2 s here): how many
    # asks the model's first answer takes depends on the machine's load, so allow ten seconds.
    answer, attempts = await session.complete(uri, ADD_LINE, cursor, attempts=50)
    return uri, cursor, answer, attempts


EXPECTED_ENCODING = {"helix": "utf-8", "zed": "utf-16", "sublime": "utf-16"}


# The documentation format has its own test below (it fails for Helix and Zed).
@pytest.mark.filterwarnings("ignore:Client does not support documentation format")
@pytest.mark.parametrize("name", EDITORS)
async def test_completion_menu_entry_and_refactor_actions(name, home, replay: ReplayServer):
    editor = snippets.EDITOR_FACTORIES[name]()
    assert editor.command == ["qodeassist-lsp"]
    replay.script("/v1/completions", completion_reply("a + b", repeat=5))
    replay.script(
        "/v1/chat/completions", chat_reply("```python\n", "    return sum(xs)\n", "```\n")
    )
    async with editor_session(editor, home) as session:
        caps = session.result.capabilities
        assert caps.completion_provider is not None
        assert caps.code_action_provider is not None
        assert session.encoding == EXPECTED_ENCODING[name]

        # The completion menu: one entry, after every other server's, inserting the suggestion.
        uri, cursor, answer, attempts = await open_and_ask(session)
        assert answer.items, f"{name}: no entry after {attempts} requests"
        [item] = answer.items
        assert answer.is_incomplete  # the editor asks again as the user keeps typing
        assert item.label == "return a + b" and item.detail == "qodeassist"  # the whole line
        assert item.sort_text == "\U0010ffff"
        assert item.insert_text_format in (None, types.InsertTextFormat.PlainText)
        assert isinstance(item.text_edit, types.TextEdit)
        here = types.Position(ADD_LINE, cursor)
        assert item.text_edit.range == types.Range(here, here)
        assert item.text_edit.new_text == "a + b"
        session.apply(uri, [item.text_edit])
        assert session.documents[uri][ADD_LINE] == "    return a + b"
        # The snippet's settings reached the server: 80 lines of context, not the default 50.
        assert ADD_LINE - 79 in completion_starts(replay)

        # The code-action menu on a selection: the instruction library, resolved lazily. The
        # shown entry may have started the prefetch of the next one (a local model): let it go
        # upstream first, so that the count below sees only what the listing costs.
        await asyncio.sleep(0.5)
        calls = len(chat_requests(replay))
        total = session.open("total.py", REFACTOR_DOC)
        start, end = REFACTOR_SELECTION
        selection = types.Range(types.Position(*start), types.Position(*end))
        actions = await session.code_actions(total, selection)
        titles = [a.title for a in actions]
        assert "QodeAssist: Improve" in titles
        assert titles[-1] == "QodeAssist: Refactor with instruction…"
        assert all(a.kind == types.CodeActionKind.RefactorRewrite for a in actions)
        assert all(a.data is not None and a.command is None for a in actions)
        # Listing costs no model call (opening total.py may warm the completion model).
        assert len(chat_requests(replay)) == calls
        improve = next(a for a in actions if a.title == "QodeAssist: Improve")
        resolved = await session.client.code_action_resolve_async(improve)
        [change] = resolved.edit.document_changes
        assert change.text_document.version == session.versions[total]
        session.apply(total, list(change.edits))
        assert session.text(total) == "def total(xs):\n    return sum(xs)\n"
        # While the model ran the editor showed work-done progress (its status line spinner).
        [reports] = [  # the codebase index's build shows its own progress
            r
            for r in session.client.progress_reports.values()
            if r and not str(getattr(r[0], "title", "")).startswith("QodeAssist: indexing")
        ]
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)

        status = await session.status()
        assert status.state == "ready"
        assert (status.problems.errors, status.problems.warnings) == (0, 0)


@pytest.mark.filterwarnings("ignore:Client does not support documentation format")
async def test_completion_entry_survives_the_editor_word_filter(home, replay) -> None:
    replay.script("/v1/completions", completion_reply("d(1, 2)", repeat=5))
    async with editor_session(snippets.helix(), home) as session:
        uri = session.open("add.py", COMPLETION_DOC)
        answer, _ = await session.complete(uri, PRINT_LINE, len("print(ad"))
        [item] = answer.items
        # Helix filters the menu by the identifier left of the cursor, "ad".
        assert (item.filter_text or item.label).startswith("ad"), item


async def test_completion_documentation_in_a_format_the_editor_declared(home, replay) -> None:
    replay.script("/v1/completions", completion_reply("a + b", repeat=5))
    async with editor_session(snippets.helix(), home) as session:
        # pytest-lsp checks every answer against the client's capabilities and warns
        # (an error here) when the server uses something the client did not declare.
        _uri, _cursor, answer, _attempts = await open_and_ask(session)
        assert answer.items


def test_helix_snippet_adds_the_server_beside_the_default_ones() -> None:
    config = snippets.helix_config()
    server = config["language-server"]["qodeassist"]
    assert server["command"] == "qodeassist-lsp" and server["args"] == []
    assert server["config"]["qodeassist"]["completion"]["lines_before"] == 80
    languages = {lang["name"]: lang["language-servers"] for lang in config["language"]}
    for name in ("python", "rust", "go", "typescript", "c", "cpp"):
        servers = languages[name]
        assert servers[-1] == "qodeassist", (name, servers)
        assert len(servers) > 1, f"{name}: the language's own servers must stay in the list"
    assert languages["python"] == ["ty", "ruff", "jedi", "pylsp", "qodeassist"]


def test_zed_snippet_matches_the_extension() -> None:
    import tomllib

    manifest = tomllib.loads(snippets.ZED_EXTENSION.read_text())
    [server_id] = manifest["language_servers"]
    settings = snippets.zed_settings()
    assert server_id == "qodeassist" and server_id in settings["lsp"]
    attached = manifest["language_servers"][server_id]["languages"]
    for language, config in settings["languages"].items():
        assert language in attached, language
        assert "qodeassist" in config["language_servers"] and "..." in config["language_servers"]
    source = (snippets.ZED_EXTENSION.parent / "src" / "lib.rs").read_text()
    assert f'const SERVER: &str = "{server_id}";' in source
    cargo = tomllib.loads((snippets.ZED_EXTENSION.parent / "Cargo.toml").read_text())
    assert cargo["lib"]["crate-type"] == ["cdylib"]
    assert "zed_extension_api" in cargo["dependencies"]


def test_sublime_snippet_is_a_clients_entry() -> None:
    client = snippets.sublime_settings()["clients"]["qodeassist"]
    assert client["enabled"] is True
    assert "source.python" in client["selector"].split(" | ")


def test_jsonc_reader_keeps_strings_and_drops_comments() -> None:
    text = '{\n  // a comment\n  "url": "http://x//y", /* block */ "list": [1, 2,],\n}\n'
    assert parse_jsonc(text) == {"url": "http://x//y", "list": [1, 2]}
