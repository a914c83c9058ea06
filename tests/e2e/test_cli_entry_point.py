"""The real ``python -m qodeassist_lsp`` entry point, start-up included.

`test_cli_fixtures` runs its many cases as forked CLI processes that share the imports; these
runs go through ``python -m qodeassist_lsp`` exactly as a user or an editor starts it, and must
print the same events.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.replay_server import ReplayServer, Reply
from tests.support.wire_cases import STREAMS, TARGETS, comparable, expected_events
from tests.support.workspace import PLANTED_KEY, Workspace, run_forked, run_many

CASES = [
    c
    for c in STREAMS
    if c.fixture
    in ("anthropic/stream_thinking_signature_text.sse", "gemini/sse_thought_parts_then_text.sse")
]


def test_python_m_prints_the_same_events_as_the_forked_runner(
    tmp_path: Path, replay: ReplayServer
) -> None:
    jobs = []
    for index, case in enumerate(CASES):
        target = TARGETS[case.target]
        for runner in ("m", "fork"):
            prefix = f"/{runner}{index}"
            replay.script(prefix + target.route, Reply(case.fixture, split="events", delay=0.001))
            workspace = Workspace(tmp_path / f"{runner}{index}", replay.url + prefix)
            jobs.append(
                (
                    runner,
                    case,
                    (workspace, ("chat", "--agent", target.agent, "--events", "jsonl", "hi")),
                )
            )
    real = run_many([job for runner, _, job in jobs if runner == "m"], workers=2)
    forked = run_forked([job for runner, _, job in jobs if runner == "fork"])
    assert len(real) == len(forked) == len(CASES)
    for case, by_m, by_fork in zip(CASES, real, forked, strict=True):
        expected = expected_events(case)
        assert by_m.returncode == 0, by_m.describe()
        assert comparable(by_m.events, expected) == expected, by_m.describe()
        assert comparable(by_fork.events, expected) == expected, by_fork.describe()
        assert PLANTED_KEY not in by_m.stdout + by_m.stderr
    assert replay.unmatched == []


def test_plain_mode_streams_text_as_it_arrives(workspace: Workspace, replay: ReplayServer) -> None:
    target = TARGETS["openai"]
    replay.script(target.route, Reply("openai_chat/stream_text_with_usage.sse", split="events"))
    result = workspace.run("chat", "--agent", target.agent, "A question")
    assert result.returncode == 0, result.describe()
    assert result.stdout == (
        "I'm unable to provide real-time weather updates. To get the current weather in San "
        "Francisco, I recommend checking a reliable weather website or a weather app.\n"
    )
    assert result.error_lines == []
