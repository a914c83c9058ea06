import json
from pathlib import Path

import pytest

from tests.support.replay_server import Reply
from tests.support.streams import completion_reply


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample.py"
    path.write_text("def add(a, b):\n    return \n")
    return path


def test_complete_prints_the_suggestion(run_cli, replay, sample) -> None:
    replay.script("/v1/completions", completion_reply("a", " + b"))
    code, out, err = run_cli("complete", str(sample), "--line", "2", "--col", "12")
    assert code == 0, err
    assert out == "a + b\n"
    assert replay.last.json["prompt"] == "def add(a, b):\n    return"  # healed


def test_complete_json_and_agent_override(run_cli, replay, sample, config_dir) -> None:
    (config_dir / "agents" / "x.toml").write_text(
        'name = "Mine"\nextends = "Embedded Completion"\nmodel = "other"\n'
    )
    replay.script("/v1/completions", completion_reply("a"))
    code, out, _ = run_cli(
        "complete", str(sample), "--line", "2", "--col", "12", "--agent", "Mine", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["agent"] == "Mine" and data["items"][0] == {
        "text": "a",
        "line": 2,
        "startColumn": 12,
        "endColumn": 12,
    }
    assert replay.last.json["model"] == "other"


def test_complete_reports_provider_failure_with_exit_3(run_cli, replay, sample) -> None:
    replay.script(
        "/v1/completions",
        Reply.json({"error": {"message": "model not loaded"}}, status=503, repeat=3),
    )
    code, _out, err = run_cli("complete", str(sample), "--line", "2", "--col", "12")
    assert code == 3 and "error" in err


@pytest.mark.parametrize(
    ("line", "col", "message"),
    [("9", "1", "--line 9 is outside"), ("2", "99", "--col 99 is outside")],
)
def test_complete_position_errors(run_cli, sample, line, col, message) -> None:
    code, _out, err = run_cli("complete", str(sample), "--line", line, "--col", col)
    assert code == 1 and message in err


def test_complete_missing_file(run_cli, tmp_path) -> None:
    code, _out, err = run_cli("complete", str(tmp_path / "nope.py"), "--line", "1", "--col", "1")
    assert code == 1 and "no such file" in err
