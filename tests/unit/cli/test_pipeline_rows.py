"""A pipeline is a row: adding one to the table is all it takes to list, validate and show it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.config import pipelines
from qodeassist_lsp.config.pipelines import PipelineSpec, ToolAccess
from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.app import create_server

REVIEW = PipelineSpec(
    slot="code_review",
    alias="review",
    ordered=False,
    settings="chat",
    retries=True,
    tool_access=ToolAccess.READ,
    status_key="codeReview",
)


@pytest.fixture
def review_row(monkeypatch: pytest.MonkeyPatch) -> PipelineSpec:
    monkeypatch.setattr(pipelines, "PIPELINE_TABLE", (*pipelines.PIPELINE_TABLE, REVIEW))
    return REVIEW


def test_without_the_row_the_slot_is_unknown(run_cli, config_dir: Path) -> None:
    (config_dir / "pipelines.toml").write_text('[pipelines]\ncode_review = "Embedded Chat"\n')
    code, out, _ = run_cli("agents", "validate")
    assert code == 0 and "unknown pipeline 'code_review' is ignored" in out
    with pytest.raises(SystemExit):
        run_cli("agents", "list", "--pipeline", "review")


def test_a_new_row_is_listed_validated_and_shown(review_row, run_cli, config_dir: Path) -> None:
    pipelines_file = config_dir / "pipelines.toml"
    pipelines_file.write_text('[pipelines]\ncode_review = ["", "Embedded Chat", "Other"]\n')
    code, out, _ = run_cli("agents", "validate")
    assert (code, out) == (0, ""), out
    for name in ("review", "code_review"):
        code, out, _ = run_cli("agents", "list", "--pipeline", name, "--json")
        rows = json.loads(out)
        assert code == 0 and [r["name"] for r in rows] == ["Embedded Chat"]
        assert "code_review" in rows[0]["pipelines"]
    assert _status()["pipelines"]["codeReview"] == "Embedded Chat"

    pipelines_file.write_text('[pipelines]\ncode_review = "Embeded Chat"\n')
    code, out, _ = run_cli("agents", "validate")
    assert "pipelines name agent 'Embeded Chat', which is not loaded" in out


def test_a_row_picked_by_a_router_offers_auto(monkeypatch, run_cli, config_dir: Path) -> None:
    picked = PipelineSpec(
        slot="code_review",
        alias="review",
        ordered=True,
        settings="chat",
        retries=True,
        tool_access=ToolAccess.READ,
        status_key="codeReview",
        picked_by="chat_router",
    )
    monkeypatch.setattr(pipelines, "PIPELINE_TABLE", (*pipelines.PIPELINE_TABLE, picked))
    (config_dir / "pipelines.toml").write_text(
        '[pipelines]\ncode_review = ["Embedded Chat"]\nchat_router = "Embedded Chat"\n'
    )
    code, out, _ = run_cli("agents", "list", "--pipeline", "review", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["name"] for r in rows] == ["Embedded Chat", "auto"]
    assert rows[-1]["auto"] and rows[-1]["pipelines"] == ["code_review"]
    code, out, _ = run_cli("agents", "list", "--pipeline", "completion", "--json")
    assert "auto" not in [r["name"] for r in json.loads(out)]


def _status() -> dict[str, Any]:
    """Start the real server in-process and answer ``qodeassist/status``."""

    async def run() -> dict[str, Any]:
        server = create_server()
        protocol = server.protocol
        sent: list[dict[str, Any]] = []

        class Sink:
            def write(self, data: bytes) -> None:
                sent.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

            def close(self) -> None:
                pass

        protocol.set_writer(Sink())

        def deliver(message: dict[str, Any]) -> None:
            protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))

        deliver({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
        assert server.start_task is not None
        await server.start_task
        deliver({"id": 2, "method": methods.STATUS, "params": None})
        for _ in range(300):
            answer = next((m for m in sent if m.get("id") == 2), None)
            if answer is not None:
                await server.backend.aclose()
                return dict(answer["result"])
            await asyncio.sleep(0.01)
        raise AssertionError("no status answer")

    return asyncio.run(run())
