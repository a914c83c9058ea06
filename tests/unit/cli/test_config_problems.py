"""Every command that loads the configuration says, once, what in it could not be used."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, completion_reply

SYNTAX = "invalid TOML"


@pytest.fixture
def replay(replay: ReplayServer) -> ReplayServer:
    replay.script("/v1/completions", completion_reply(" a + b"))
    replay.script("/v1/chat/completions", chat_reply("```python\n", "    return a + b\n", "```"))
    return replay


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample.py"
    path.write_text("def add(a, b):\n    return a+b\n")
    return path


@pytest.fixture
def broken_settings(config_dir: Path) -> Path:
    settings = config_dir / "settings.toml"
    settings.write_text("[completion\ndebounce_ms = 10\n")
    return settings


@pytest.mark.parametrize(
    "argv",
    [
        ("complete", "{sample}", "--line", "2", "--col", "11"),
        ("chat", "hi"),
        ("refactor", "{sample}", "--range", "2:1-2:15", "--instruction", "space it"),
        ("agents", "list"),
    ],
    ids=["complete", "chat", "refactor", "agents-list"],
)
def test_a_malformed_settings_file_is_reported_once(
    run_cli, replay, sample: Path, broken_settings: Path, argv: tuple[str, ...]
) -> None:
    code, _out, err = run_cli(*(arg.format(sample=sample) for arg in argv))
    assert code == 0, err
    reported = [line for line in err.splitlines() if SYNTAX in line]
    assert len(reported) == 1, err
    assert reported[0].startswith(f"qodeassist-lsp: {broken_settings}:")


def test_validate_prints_its_problems_without_the_extra_report(run_cli, broken_settings) -> None:
    code, out, err = run_cli("agents", "validate")
    assert code == 1
    assert out.count(SYNTAX) == 1 and SYNTAX not in err


def test_render_says_when_the_context_is_synthetic(run_cli, tmp_path: Path) -> None:
    code, _out, err = run_cli("agents", "render", "Embedded Chat")
    assert code == 0
    assert "synthetic validation context" in err and "--context" in err
    ctx = tmp_path / "ctx.json"
    ctx.write_text('{"history": [{"role": "user", "content": "hi"}]}')
    code, _out, err = run_cli("agents", "render", "Embedded Chat", "--context", str(ctx))
    assert code == 0 and "synthetic" not in err
