"""Word healing over stdio: the bundled Embedded Completion agent asks with a GBNF grammar."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.lsp.conftest import serve_from
from tests.e2e.lsp.test_inline_completion import open_doc, params
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply

DOC = "def add(a, b):\n    re\n\nprint(add(1, 2))\n"


@pytest.fixture(autouse=True)
def embedded_points_at_replay(
    lsp_home: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_from(lsp_home, replay, monkeypatch)
    (lsp_home / "config/settings.toml").write_text(
        "[completion]\nwarm_idle_ms = 0\nprefetch_after_accept = false\n"
    )


async def test_the_half_typed_word_is_asked_for_with_a_grammar(client, lsp_home, replay) -> None:
    # The replay server writes the grammar's word first, as llama.cpp does: "re" + "turn a + b".
    replay.script("/v1/completions", completion_reply("turn", " a", " +", " b"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home, DOC)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 6))
    assert [item.insert_text for item in answer.items] == ["turn a + b"]
    sent = replay.last.json
    assert sent["prompt"] == "def add(a, b):\n    "
    assert sent["grammar"] == 'root ::= "re" [^\\x00]*'


async def test_heal_words_off_sends_the_prompt_as_typed(client, lsp_home, replay) -> None:
    settings = lsp_home / "config/settings.toml"
    settings.write_text(settings.read_text() + "heal_words = false\n")
    replay.script("/v1/completions", completion_reply("turn", " a"))
    await client.initialize_session(client.init_params)
    uri = await open_doc(client, lsp_home, DOC)
    answer = await client.text_document_inline_completion_async(params(uri, 1, 6))
    assert [item.insert_text for item in answer.items] == ["turn a"]
    sent = replay.last.json
    assert sent["prompt"] == "def add(a, b):\n    re"
    assert "grammar" not in sent
