"""``qodeassist-lsp chat`` on the default (Embedded Chat) agent, against the replay server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, write_embedded_instances

LOOP = "I am a helpful software engineer who writes clean code.\n"


@pytest.fixture
def replay(config_dir: Path):
    with ReplayServer() as server:
        write_embedded_instances(config_dir / "providers", server.url)
        yield server


def test_a_looping_answer_is_cut_and_said_so(run_cli, replay) -> None:
    # Issue 15: `chat "hi"` printed a kilobyte of repeated persona text.
    replay.script("/v1/chat/completions", chat_reply("Hello!\n", *[LOOP] * 30))
    code, out, err = run_cli("chat", "hi")
    assert code == 0, err
    assert out.count(LOOP) == 3
    assert "[stopped: the answer started repeating itself]" in err


def test_the_stop_reason_is_in_the_events(run_cli, replay) -> None:
    replay.script("/v1/chat/completions", chat_reply(*[LOOP] * 30))
    code, out, _err = run_cli("chat", "--events", "jsonl", "hi")
    assert code == 0
    last = json.loads(out.splitlines()[-1])
    assert last["kind"] == "finished" and last["stopReason"] == "repetition"


def test_a_demo_model_says_so_once_on_stderr(run_cli, replay, config_dir: Path) -> None:
    instruct = config_dir / "providers" / "embedded_instruct.toml"
    instruct.write_text(instruct.read_text() + "demo = true\n")
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    code, out, err = run_cli("chat", "hi")
    assert code == 0, err
    assert out == "Hello!\n"
    notices = [line for line in err.splitlines() if "offline demo model" in line]
    assert len(notices) == 1 and "`qodeassist-lsp setup`" in notices[0]


def test_a_real_provider_has_no_demo_notice(run_cli, replay) -> None:
    replay.script("/v1/chat/completions", chat_reply("Hello!"))
    code, _out, err = run_cli("chat", "hi")
    assert code == 0 and "demo" not in err


def test_a_starting_servers_download_progress_shows_on_stderr(
    run_cli, config_dir: Path, tmp_path: Path
) -> None:
    from tests.support.tiny_launch import Tiny

    tiny = Tiny(tmp_path)
    (config_dir / "providers").mkdir(exist_ok=True)
    (config_dir / "providers" / "embedded_instruct.toml").write_text(
        tiny.provider_file("Embedded Instruct", "--progress")
    )
    code, out, err = run_cli("chat", "hi")
    assert code == 0, err
    assert out == "pong\n"
    assert [line for line in err.splitlines() if "%" in line] == [
        f"qodeassist-lsp: Embedded Instruct: {p}% downloading model.gguf: {p} of 100 MiB"
        for p in (0, 50, 100)
    ]
