"""``qodeassist-lsp doctor`` against the loopback replay provider: the real CLI, real HTTP."""

from __future__ import annotations

import itertools
import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.replay_server import ReplayServer, Reply
from tests.support.workspace import USER_AGENT_MODEL, CliResult, Workspace

CLAUDE = "E2E Claude (no tools)"
OLLAMA = "E2E Ollama (no tools)"


def _workspace(tmp_path: Path, replay: ReplayServer, completion: str, chat: str) -> Workspace:
    workspace = Workspace(tmp_path, replay.url)
    workspace.write(
        "pipelines.toml",
        f"""
        [pipelines]
        code_completion = [{json.dumps(completion)}]
        chat_assistant = [{json.dumps(chat)}]
        chat_compression = ""
        quick_refactor = ""
        next_edit = []
        """,
    )
    return workspace


def _claude_models(*ids: str) -> Reply:
    return Reply.json({"data": [{"id": i, "type": "model"} for i in ids], "has_more": False})


def _agent(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in report["agents"] if a["name"] == name)


def test_doctor_json_names_a_missing_model_and_times_a_working_agent(
    tmp_path: Path, replay: ReplayServer
) -> None:
    workspace = _workspace(tmp_path, replay, completion=OLLAMA, chat=CLAUDE)
    replay.route("/v1/models", _claude_models(USER_AGENT_MODEL, "claude-other"))
    replay.script("/v1/messages", Reply("anthropic/stream_text_hello.sse", split="events"))
    replay.route("/api/tags", Reply.json({"models": [{"name": "other-model:latest"}]}))

    result = workspace.run("doctor", "--json")

    assert result.returncode == 1, result.describe()  # code_completion has no working agent
    report = json.loads(result.stdout)
    assert report["ok"] is False
    pipelines = {p["pipeline"]: p for p in report["pipelines"]}
    assert pipelines["chat_assistant"]["working"] is True
    assert pipelines["code_completion"]["working"] is False
    claude = _agent(report, CLAUDE)
    assert claude["working"] is True, claude
    assert claude["checks"] == {
        "reachable": "ok",
        "auth": "ok",
        "model": "ok",
        "fim": "not_applicable",
        "probe": "ok",
    }
    assert claude["firstTokenMs"] is not None and claude["firstTokenMs"] >= 0
    probe = next(r for r in replay.requests if r.path == "/v1/messages")
    assert probe.json["max_tokens"] <= 16
    ollama = _agent(report, OLLAMA)
    assert ollama["working"] is False
    assert ollama["checks"]["model"] == "problem"
    assert [p["check"] for p in ollama["problems"]] == ["model"]
    assert USER_AGENT_MODEL in ollama["problems"][0]["message"]
    assert f"ollama pull {USER_AGENT_MODEL}" in ollama["problems"][0]["fix"]
    # The broken agent got no test request: only the model list was asked.
    assert not any(r.path.startswith("/api/chat") for r in replay.requests)


def test_doctor_json_names_a_rejected_key_as_auth(tmp_path: Path, replay: ReplayServer) -> None:
    workspace = _workspace(tmp_path, replay, completion=CLAUDE, chat=CLAUDE)
    replay.route("/v1/models", Reply("anthropic/error_http_401_authentication.json", status=401))

    result = workspace.run("doctor", "--json")

    assert result.returncode == 1, result.describe()
    claude = _agent(json.loads(result.stdout), CLAUDE)
    assert claude["checks"]["reachable"] == "ok"
    assert claude["checks"]["auth"] == "problem"
    assert [p["check"] for p in claude["problems"]] == ["auth"]
    assert "qodeassist-lsp secrets set Claude" in claude["problems"][0]["fix"]
    assert "ANTHROPIC_API_KEY" in claude["problems"][0]["fix"]


def test_doctor_text_report_exits_0_when_every_pipeline_works(
    tmp_path: Path, replay: ReplayServer
) -> None:
    workspace = _workspace(tmp_path, replay, completion=CLAUDE, chat=CLAUDE)
    replay.route("/v1/models", _claude_models(USER_AGENT_MODEL))
    replay.script("/v1/messages", Reply("anthropic/stream_text_hello.sse"))
    (workspace.project / "AGENTS.md").write_text("Run the tests.\n", encoding="utf-8")
    (workspace.project / "CLAUDE.md").write_bytes(b"caf\xe9\n")

    result = workspace.run("doctor")

    assert result.returncode == 0, result.describe()
    assert f"✓ {CLAUDE} — Claude / {USER_AGENT_MODEL}" in result.stdout
    assert "chat_compression: off" in result.stdout
    assert "first token after" in result.stdout
    assert "project rules (in the chat and refactor system prompts, nearest first):\n" in (
        result.stdout
    )
    assert "  AGENTS.md (15 characters)\n" in result.stdout
    assert "  problem: CLAUDE.md: is not UTF-8 (byte 3); save it as UTF-8 to use it" in (
        result.stdout
    )


def test_doctor_says_when_a_fim_model_refuses_the_suffix(
    tmp_path: Path, replay: ReplayServer
) -> None:
    workspace = _workspace(tmp_path, replay, completion="E2E Ollama FIM", chat="")
    workspace.write(
        "agents/e2e_fim.toml",
        f"""
        schema_version = 1
        name = "E2E Ollama FIM"
        extends = "Ollama Base FIM"
        model = "{USER_AGENT_MODEL}"
        """,
    )
    replay.route("/api/tags", Reply.json({"models": [{"name": f"{USER_AGENT_MODEL}:latest"}]}))
    replay.script(
        "/api/generate", Reply("ollama/error_http_400_suffix_not_supported.json", status=400)
    )

    result = workspace.run("doctor", "--json")

    assert result.returncode == 1, result.describe()
    agent = _agent(json.loads(result.stdout), "E2E Ollama FIM")
    assert agent["checks"]["model"] == "ok"  # the implicit :latest tag counts
    assert agent["checks"]["fim"] == "problem"
    assert [p["check"] for p in agent["problems"]] == ["fim"]
    assert "base/code model" in agent["problems"][0]["fix"]
    assert "suffix" in replay.last.json


def test_a_missing_key_is_reported_as_such_before_anything_is_sent(
    tmp_path: Path, replay: ReplayServer
) -> None:
    workspace = _workspace(tmp_path, replay, completion=CLAUDE, chat=CLAUDE)
    workspace.extra_env["ANTHROPIC_API_KEY"] = ""

    doctor = workspace.run("doctor", "--json")
    chat = workspace.run("chat", "--agent", CLAUDE, "hi")
    sample = workspace.project / "a.py"
    sample.write_text("def add(a, b):\n    return \n")
    complete = workspace.run(
        "complete", str(sample), "--line", "2", "--col", "12", "--agent", "Claude Completion"
    )

    assert doctor.returncode == 1, doctor.describe()
    claude = _agent(json.loads(doctor.stdout), CLAUDE)
    assert [p["check"] for p in claude["problems"]] == ["auth"], claude
    assert claude["problems"][0]["message"].startswith("missing API key for Claude")
    assert claude["checks"]["reachable"] == "not_checked"
    for result in (chat, complete):
        assert result.returncode == 3, result.describe()
        assert "auth error: missing API key for Claude: set ANTHROPIC_API_KEY" in result.stderr
        assert "network" not in result.stderr
    assert replay.requests == []  # offline or not, nothing was sent


LLAMA = "E2E llama.cpp (no tools)"


def test_a_busy_llama_cpp_server_is_busy_not_failing(tmp_path: Path, replay: ReplayServer) -> None:
    """Its one slot serves another request: the probe would only queue behind it."""
    workspace = _workspace(tmp_path, replay, completion=LLAMA, chat=LLAMA)
    replay.route("/v1/models", Reply.json({"data": [{"id": USER_AGENT_MODEL}]}))
    replay.route("/slots", Reply.json([{"id": 0, "is_processing": True}]))

    result = workspace.run("doctor", "--json")

    assert result.returncode == 0, result.describe()
    agent = _agent(json.loads(result.stdout), LLAMA)
    assert agent["checks"]["reachable"] == "ok" and agent["checks"]["probe"] == "busy", agent
    assert agent["problems"] == [] and agent["working"] is True
    assert any(
        note.startswith("busy: the server is serving another request") for note in agent["notes"]
    )
    assert not any(r.path == "/v1/chat/completions" for r in replay.requests)
    text = workspace.run("doctor")
    assert "probe busy" in text.stdout and "FAIL" not in text.stdout, text.describe()


def test_a_llama_cpp_server_that_times_out_idle_is_a_failure(
    tmp_path: Path, replay: ReplayServer
) -> None:
    workspace = _workspace(tmp_path, replay, completion=LLAMA, chat=LLAMA)
    replay.route("/v1/models", Reply.json({"data": [{"id": USER_AGENT_MODEL}]}))
    replay.route("/slots", Reply.json([{"id": 0, "is_processing": False}]))
    replay.script("/v1/chat/completions", Reply(hold_open=True))

    result = workspace.run("doctor", "--json", "--timeout", "2")

    assert result.returncode == 1, result.describe()
    agent = _agent(json.loads(result.stdout), LLAMA)
    assert agent["checks"]["probe"] == "problem" and agent["working"] is False, agent


def _fresh(root: Path, pipelines: str) -> dict[str, str]:
    """The environment of a fresh install: bundled instances only, ``pipelines`` as given."""
    (root / "config").mkdir(parents=True, exist_ok=True)
    (root / "config" / "pipelines.toml").write_text(pipelines, encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("QODEASSIST_") and not k.endswith("_API_KEY")
    }
    env.update(
        QODEASSIST_CONFIG_DIR=str(root / "config"),
        QODEASSIST_DATA_DIR=str(root / "data"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        PYTHONIOENCODING="utf-8",
        NO_PROXY="*",
    )
    return env


def _cli(env: dict[str, str], *args: str, cwd: Path) -> CliResult:
    argv = [sys.executable, "-m", "qodeassist_lsp", *args]
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, encoding="utf-8", timeout=120
    )
    return CliResult(argv[1:], done.returncode, done.stdout, done.stderr)


def test_the_fix_for_a_wrong_ollama_url_works_when_followed(
    tmp_path: Path, replay: ReplayServer, unused_tcp_port: int
) -> None:
    env = _fresh(
        tmp_path,
        '[pipelines]\ncode_completion = []\nchat_assistant = ["Ollama Chat — Simple"]\n'
        'chat_compression = ""\nquick_refactor = ""\nnext_edit = []\n',
    )
    wrong = _cli(
        env,
        "providers",
        "override",
        "Ollama (Native)",
        f"url=http://127.0.0.1:{unused_tcp_port}",
        cwd=tmp_path,
    )
    assert wrong.returncode == 0, wrong.describe()
    replay.route("/api/tags", Reply.json({"models": [{"name": "qwen3.5:4b"}]}))
    replay.script("/api/chat", Reply("ollama/chat_stream_docs_reconstructed.ndjson"))

    broken = _cli(env, "doctor", "--json", cwd=tmp_path)
    assert broken.returncode == 1, broken.describe()
    [problem] = _agent(json.loads(broken.stdout), "Ollama Chat — Simple")["problems"]
    assert problem["check"] == "reachable"
    # Follow the fix as printed: the command, with the right url for URL.
    command = problem["fix"].split("`")[1]
    argv = shlex.split(command.replace("url=URL", f"url={replay.url}"))
    assert argv[0] == "qodeassist-lsp", problem["fix"]
    followed = _cli(env, *argv[1:], cwd=tmp_path)
    assert followed.returncode == 0, followed.describe()

    fixed = _cli(env, "doctor", "--json", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.describe()
    agent = _agent(json.loads(fixed.stdout), "Ollama Chat — Simple")
    assert agent["working"] is True and agent["url"] == replay.url, agent
    # Every other Ollama agent still loads: the override changed the url, nothing else.
    validate = _cli(env, "agents", "validate", cwd=tmp_path)
    assert validate.returncode == 0 and "0 error(s)" in validate.stderr, validate.describe()


def _closed(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


EMBEDDED_AT_REPLAY = """\
schema_version = 1
name = "Embedded Instruct"
client_api = "llama.cpp"
url = "{url}"
demo = true
"""


def test_a_fresh_install_lists_unset_fallbacks_probes_one_server_in_turn_and_logs_after(
    tmp_path: Path, replay: ReplayServer
) -> None:
    # The bundled chat_assistant list as shipped (Embedded Chat, two Ollama agents, Claude,
    # OpenAI); Embedded Instruct is a one-slot llama.cpp server, here the replay.
    env = _fresh(
        tmp_path,
        '[pipelines]\ncode_completion = []\nchat_compression = "Embedded Compression"\n'
        'quick_refactor = "Embedded Quick Refactor"\nnext_edit = []\n',
    )
    env["PYTHONUNBUFFERED"] = "1"
    (tmp_path / "config" / "providers").mkdir()
    (tmp_path / "config" / "providers" / "embedded_instruct.toml").write_text(
        EMBEDDED_AT_REPLAY.format(url=replay.url), encoding="utf-8"
    )
    replay.route("/v1/models", Reply.json({"data": [{"id": "smollm2-135m-instruct"}]}))
    replay.route("/slots", Reply.json([{"id": 0, "is_processing": False}]))
    stream = Reply("openai_chat/stream_text_with_usage.sse", split="events", delay=0.05)
    replay.script("/v1/chat/completions", [stream] * 6)

    argv = [sys.executable, "-m", "qodeassist_lsp", "doctor"]
    done = subprocess.run(
        argv,
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    output = done.stdout

    assert done.returncode == 0, output
    lines = output.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("all pipelines"))
    assert "bundled fallback(s) not configured" in lines[verdict], output
    # Logs (the retried model list of an Ollama that does not run) come after the report.
    assert not any(" WARNING " in line for line in lines[:verdict]), output
    for name in ("Claude Chat — Sonnet", "OpenAI Chat"):
        assert f"– {name} — " in output and f"✗ {name}" not in output, output
    if _closed(11434):
        assert "– Ollama Chat — Simple — " in output, output
    assert "✗" not in output and "busy" not in output, output
    # The three agents of the one-slot server were probed one after the other.
    probes = [r for r in replay.requests if r.path == "/v1/chat/completions"]
    assert len(probes) == 3
    for before, after in itertools.pairwise(probes):
        ended = before.response_finished_at or before.disconnected_at
        assert ended is not None and ended <= after.received_at, "probes overlapped"

    as_json = _cli(env, "doctor", "--json", cwd=tmp_path)
    report = json.loads(as_json.stdout)
    claude = _agent(report, "Claude Chat — Sonnet")
    assert claude["configured"] is False and claude["working"] is False
    assert _agent(report, "Embedded Chat")["configured"] is True
    assert report["ok"] is True
