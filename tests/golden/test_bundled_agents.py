"""Golden snapshots of every bundled concrete agent's rendered request.

Each bundled agent is rendered against the synthetic validation context and compared with the
JSON checked in under ``snapshots/``. Regenerate after an intended change with:

    QODEASSIST_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/golden

and review the diff like code.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CODE_COMPLETION, QUICK_REFACTOR
from qodeassist_lsp.config.template_context import synthetic_context
from qodeassist_lsp.core.agent import REDACTED, AgentFactory

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("QODEASSIST_UPDATE_SNAPSHOTS") == "1"


def bundled_only(tmp: Path) -> Configuration:
    paths = ConfigPaths(tmp / "config", tmp / "data", bundled_root(), project=None)
    return load_configuration(paths)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Configuration:
    return bundled_only(tmp_path_factory.mktemp("bundled"))


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_")


def rendered(config: Configuration, name: str) -> dict[str, object]:
    agent = AgentFactory(config).create(name)
    key = REDACTED if agent.provider.api_key_ref or agent.provider.api_key_env else None
    return agent.build_request(synthetic_context(agent.model), key).as_json()


def test_bundled_configuration_has_no_problems(config: Configuration) -> None:
    assert [p.format() for p in config.problems] == []
    assert len(config.agents) >= 40
    apis = {p.client_api for p in config.providers.values()}
    assert len(apis) == 16  # the 13 HTTP APIs and the 3 agent programs (ACP, Claude, Gemini)


def test_every_pipeline_agent_is_bundled(config: Configuration) -> None:
    assert config.pipelines.agent_names() <= set(config.agents)
    assert config.pipelines.roster(CODE_COMPLETION) and config.pipelines.agent(QUICK_REFACTOR)


def test_snapshots_match(config: Configuration) -> None:
    expected_files = {f"{slug(name)}.json" for name in config.agents}
    mismatched = []
    for name in sorted(config.agents):
        path = SNAPSHOTS / f"{slug(name)}.json"
        actual = {"agent": name, **rendered(config, name)}
        text = json.dumps(actual, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        if UPDATE:
            path.write_text(text, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            mismatched.append(name)
    if UPDATE:
        for stale in SNAPSHOTS.glob("*.json"):
            if stale.name not in expected_files:
                stale.unlink()
    stale = sorted(p.name for p in SNAPSHOTS.glob("*.json") if p.name not in expected_files)
    assert not mismatched, (
        f"rendered requests changed for {mismatched}; if intended, regenerate with "
        "QODEASSIST_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/golden"
    )
    assert not stale, f"snapshots without an agent: {stale}"


def test_the_embedded_agent_stops_a_multi_line_answer_at_a_blank_line_only(
    config: Configuration,
) -> None:
    agent = AgentFactory(config).create("Embedded Completion")
    for single, stop in ((False, ["\n\n"]), (True, [])):
        ctx = {**synthetic_context(agent.model), "single_line": single}
        assert agent.build_request(ctx, None).as_json()["body"]["stop"] == stop
