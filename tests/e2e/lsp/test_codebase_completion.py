"""Completion sees the codebase index: a class defined in another module is in the prompt.

The real server over stdio indexes its workspace (the codebase feature, the SQLite engine);
a completion in one module after ``Segment.`` sends the upstream model (the replay server)
``Segment``'s definition from the other module: its header and its methods' signatures.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp.conftest import serve_from
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply

SEGMENT = '''"""Segments of text."""


class Segment:
    """A run of text with a start."""

    def __init__(self, text: str, start: int = 0) -> None:
        self.text = text
        self.start = start

    def split(self, at: int) -> list["Segment"]:
        """Cut the segment in two at ``at``."""
        return [Segment(self.text[:at], self.start), Segment(self.text[at:], self.start + at)]

    def _private(self) -> None:
        pass
'''
MAIN = "from text.segment import Segment\n\n\ndef halves(segment):\n    return Segment.\n"


@pytest.fixture(autouse=True)
def embedded_points_at_replay(
    lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\nwarm_idle_ms = 0\nprefetch_after_accept = false\n"
    )
    (lsp_home / "project/text").mkdir()
    (lsp_home / "project/text/segment.py").write_text(SEGMENT)
    (lsp_home / "project/main.py").write_text(MAIN)


async def complete_after_segment_dot(client, lsp_home: Path, replay: ReplayServer) -> str:
    """Ask for a completion after ``Segment.`` in main.py; return the prompt sent upstream."""
    await client.initialize_session(client.init_params)
    status = await client.protocol.send_request_async("qodeassist/codebase/reindex", {"wait": True})
    assert status.symbols >= 2, status
    uri = (lsp_home / "project/main.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, MAIN))
    )
    await client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Invoked
            ),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(4, len("    return Segment.")),
        )
    )
    return str(replay.last.json["prompt"])


async def test_the_other_modules_definition_is_in_the_prompt(client, lsp_home, replay) -> None:
    replay.script("/v1/completions", completion_reply("split(len(segment.text) // 2)"))
    prompt = await complete_after_segment_dot(client, lsp_home, replay)
    # The Embedded Completion agent sends the prefix alone: the file block leads it
    # (codebase_context_in_prefix, on by default): what main.py imports, as code under its
    # file's name, then main.py's name; signatures without annotations, private members and
    # bodies left out.
    assert prompt == (
        "# file: text/segment.py\nclass Segment:\n"
        "    def __init__(self, text, start=0):\n"
        '    def split(self, at) -> list["Segment"]:\n'
        "# file: main.py\n" + MAIN.rstrip("\n")
    ), prompt


async def test_codebase_context_off_sends_the_prefix_alone(client, lsp_home, replay) -> None:
    settings = lsp_home / "config/settings.toml"
    settings.write_text(settings.read_text() + "codebase_context = false\n")
    replay.script("/v1/completions", completion_reply("split(1)"))
    prompt = await complete_after_segment_dot(client, lsp_home, replay)
    assert prompt == MAIN.rstrip("\n")


async def test_the_file_block_follows_a_change_of_the_other_module(
    client, lsp_home: Path, replay: ReplayServer
) -> None:
    """The other module's class gains a method, saved and indexed: the next prompt shows it.

    The file block is kept per file while the names it imports stay the same; it must be made
    again when the index holds a newer definition (issue 45's known gap: it was not).
    """
    replay.script("/v1/completions", [completion_reply("split(1)"), completion_reply("merge(x)")])
    first = await complete_after_segment_dot(client, lsp_home, replay)
    assert "def merge" not in first
    segment = lsp_home / "project/text/segment.py"
    segment.write_text(
        SEGMENT.replace(
            "    def _private(self)",
            '    def merge(self, other: "Segment") -> "Segment":\n'
            "        return Segment(self.text + other.text, self.start)\n\n"
            "    def _private(self)",
        )
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(segment.as_uri()))
    )
    for _attempt in range(400):  # until the index holds it (the child re-reads the file)
        found = await client.protocol.send_request_async(
            "qodeassist/codebase/definition", {"symbol": "Segment.merge"}
        )
        if found.definitions:
            break
        await asyncio.sleep(0.025)
    else:
        raise AssertionError("the saved module was never indexed again")
    uri = (lsp_home / "project/main.py").as_uri()
    text = MAIN + "\n\ndef joined(segment):\n    return Segment."
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text)],
        )
    )
    await client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Invoked
            ),
            text_document=types.TextDocumentIdentifier(uri),
            position=types.Position(8, len("    return Segment.")),
        )
    )
    prompt = str(replay.last.json["prompt"])
    assert prompt == (
        "# file: text/segment.py\nclass Segment:\n"
        "    def __init__(self, text, start=0):\n"
        '    def split(self, at) -> list["Segment"]:\n'
        '    def merge(self, other) -> "Segment":\n'
        "# file: main.py\n" + text
    ), prompt
