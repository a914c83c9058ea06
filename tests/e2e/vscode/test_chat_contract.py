"""The extension's chat model against the real server: streamed events equal the saved history.

``chat_client.js`` speaks LSP over stdio to ``python -m qodeassist_lsp serve`` the way the
extension does (settings as ``initializationOptions`` and ``workspace/configuration`` answers,
``qodeassist/chat/*`` requests) and feeds ``qodeassist/chat/event`` notifications into the
extension's compiled ``ChatStore``. Two chats stream at the same time (their events interleave)
and a follow-up goes into the first; then ``qodeassist/chat/get`` of each chat, loaded into a
fresh store, must give the same messages as the events did (docs/protocol.md: "events are
projections of the chat's history"). The provider is the loopback replay server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, write_embedded_instances

CLIENT = Path(__file__).resolve().parent / "chat_client.js"
ANSWERS = {
    "a": ["The parser ", "skips blank ", "lines on ", "purpose."],
    "b": ["Extract ", "a helper ", "function ", "here."],
    "a2": ["Yes, ", "see above."],
}


def comparable(chat: dict[str, Any]) -> list[dict[str, Any]]:
    """Roles and blocks (what a history keeps of a message)."""
    return [{"role": m["role"], "blocks": m["blocks"]} for m in chat["messages"]]


@pytest.fixture
def home(tmp_path: Path, replay: ReplayServer) -> Path:
    for folder in ("config/providers", "config/agents", "data", "project"):
        (tmp_path / folder).mkdir(parents=True)
    write_embedded_instances(tmp_path / "config" / "providers", replay.url)
    return tmp_path


def test_streamed_chats_equal_their_histories(
    compiled: Path, home: Path, replay: ReplayServer
) -> None:
    for key in ("a", "b", "a2"):
        replay.script("/v1/chat/completions", chat_reply(*ANSWERS[key], delay=0.05))
    params = home / "params.json"
    params.write_text(
        json.dumps(
            {
                "extension": str(compiled),
                "cmd": [sys.executable, "-m", "qodeassist_lsp", "serve"],
                "cwd": str(home / "project"),
                "rootUri": (home / "project").as_uri(),
                "env": {
                    "QODEASSIST_CONFIG_DIR": str(home / "config"),
                    "QODEASSIST_DATA_DIR": str(home / "data"),
                    "QODEASSIST_LOG_LEVEL": "INFO",
                    "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
                },
                "sends": [
                    {"key": "a", "message": "Why does the parser skip blank lines?"},
                    {"key": "b", "message": "Refactor ideas?"},
                    {"key": "a2", "message": "Is that on purpose?", "chat": "a"},
                ],
                "deadlineMs": 40000,
            }
        )
    )
    node = shutil.which("node") or pytest.fail("node is not installed", pytrace=False)
    done = subprocess.run(
        [node, str(CLIENT), str(params)],
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    why = (
        f"\nerrors: {report['errors']}\nserver stderr:\n{report.get('stderr', '')[-4000:]}"
        f"\nevents: {json.dumps(report.get('events'))[:4000]}"
    )
    assert not report["errors"], why
    assert report["exitCode"] == 0, why

    assert report["inlineCompletionProvider"], why
    assert {"qodeassist.accepted", "qodeassist.refactor"} <= set(report["commands"]), why
    assert report["configurationRequests"] and all(
        sections == ["qodeassist"] for sections in report["configurationRequests"]
    ), report["configurationRequests"]
    assert report["agents"], why

    chat_a = report["sends"]["a"]["chatId"]
    chat_b = report["sends"]["b"]["chatId"]
    assert chat_a != chat_b
    assert report["sends"]["a2"]["chatId"] == chat_a, "the follow-up went into the first chat"

    # The two first answers streamed at the same time: their events interleave.
    order = [e["chatId"] for e in report["events"] if e["kind"] == "text"]
    first_b = order.index(chat_b)
    assert chat_a in order[first_b:] and chat_b in order[: order.index(chat_a, first_b)], order

    streamed, loaded = report["streamed"], report["loaded"]
    texts = {}
    for chat_id in (chat_a, chat_b):
        assert comparable(streamed[chat_id]) == comparable(loaded[chat_id]), (
            f"{chat_id}: streamed\n{json.dumps(streamed[chat_id], indent=1)}\n"
            f"loaded\n{json.dumps(loaded[chat_id], indent=1)}"
        )
        assert [m["status"] for m in streamed[chat_id]["messages"] if m["role"] == "assistant"] == [
            "finished"
        ] * (2 if chat_id == chat_a else 1), why
        texts[chat_id] = [
            "".join(b["text"] for b in m["blocks"] if b["kind"] == "text")
            for m in streamed[chat_id]["messages"]
            if m["role"] == "assistant"
        ]
    answers = {key: "".join(parts) for key, parts in ANSWERS.items()}
    # Which of the two concurrent sends reached the provider first is up to the server.
    assert sorted([texts[chat_a][0], texts[chat_b][0]]) == sorted([answers["a"], answers["b"]])
    assert texts[chat_a][1] == answers["a2"]
    assert loaded[chat_a]["title"] == "Why does the parser skip blank lines?"

    rendered = report["rendered"][chat_a]
    assert not rendered["busy"]
    assert "Why does the parser skip blank lines?" in rendered["messages"][0]["blocks"][0]["html"]
    assert {c["chatId"] for c in report["list"]} >= {chat_a, chat_b}
    assert report["tokens"].get("estimate", 0) > 0, report["tokens"]
    assert report["invalidSend"] and report["invalidSend"]["code"] == -32602, report["invalidSend"]
