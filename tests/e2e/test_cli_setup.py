"""``qodeassist-lsp setup`` against a loopback Ollama replay: the real CLI, real HTTP.

The replay answers ``/api/version``, ``/api/tags`` and ``/api/show`` with recordings in the
shape of Ollama's documented API (``tests/fixtures/wire/ollama``, see ``SOURCES.md``); setup
probes only the ports the test names (``--probe`` or ``$QODEASSIST_SETUP_PROBE``).
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.replay_server import ReplayServer, Reply
from tests.support.workspace import CliResult

SHOWS = [
    "ollama/show_qwen2.5-coder_1.5b-base_SYNTHETIC.json",
    "ollama/show_qwen2.5-coder_7b_SYNTHETIC.json",
    "ollama/show_llama3.2_SYNTHETIC.json",
    "ollama/show_nomic-embed-text_SYNTHETIC.json",
]
USER_PIPELINES = """\
# My pipelines: setup must keep this comment.
[pipelines]
# Completion on the offline model until I have something better.
code_completion = ["Embedded Completion"]
quick_refactor = "Claude Quick Refactor"  # my choice, keep it
"""


@pytest.fixture
def ollama() -> Iterator[ReplayServer]:
    """An Ollama replay with four pulled models (one ``/api/show`` answer each, per run)."""
    with ReplayServer() as server:
        server.route("/api/version", Reply("ollama/version_docs.json"))
        server.route("/api/tags", Reply("ollama/tags_setup_SYNTHETIC.json"))
        yield server


def _script_shows(server: ReplayServer) -> None:
    server.script("/api/show", SHOWS, method="POST")


def _env(root: Path, probe: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QODEASSIST_")}
    env.update(
        QODEASSIST_CONFIG_DIR=str(root / "config"),
        QODEASSIST_DATA_DIR=str(root / "data"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
        PYTHONIOENCODING="utf-8",
    )
    if probe:
        env["QODEASSIST_SETUP_PROBE"] = probe
    return env


def _run(root: Path, *args: str, probe: str = "") -> CliResult:
    argv = [sys.executable, "-m", "qodeassist_lsp", *args]
    done = subprocess.run(
        argv,
        env=_env(root, probe),
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    return CliResult(argv[1:], done.returncode, done.stdout, done.stderr)


def _files(root: Path) -> dict[str, str]:
    config = root / "config"
    return {
        str(p.relative_to(config)): p.read_text(encoding="utf-8")
        for p in sorted(config.rglob("*"))
        if p.is_file()
    }


def test_json_prints_findings_and_plan_and_writes_nothing(
    tmp_path: Path, ollama: ReplayServer
) -> None:
    _script_shows(ollama)
    result = _run(tmp_path, "setup", "--json", "--probe", f"127.0.0.1:{ollama.port}")

    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    assert set(report) == {"probed", "plan", "written", "changes", "problems"}
    [probed] = report["probed"]
    assert probed["status"] == "found" and probed["target"] == f"127.0.0.1:{ollama.port}"
    server = probed["server"]
    assert (server["kind"], server["version"]) == ("ollama", "0.5.1")
    models = {m["name"]: m for m in server["models"]}
    assert models["qwen2.5-coder:1.5b-base"]["fim"] is True
    assert models["llama3.2:latest"]["fim"] is False and models["llama3.2:latest"]["tools"]
    assert models["nomic-embed-text:latest"]["embedding"] is True
    plan = report["plan"]
    instance = f"Ollama (Native) :{ollama.port}"
    assert [(p["name"], p["url"]) for p in plan["providers"]] == [(instance, ollama.url)]
    roles = {(a["role"], a["model"]) for a in plan["agents"]}
    assert roles == {
        ("completion", "qwen2.5-coder:1.5b-base"),
        ("chat", "qwen2.5-coder:7b"),
        ("chat", "llama3.2:latest"),
        ("refactor", "qwen2.5-coder:7b"),
        ("compression", "qwen2.5-coder:7b"),
    }
    assert {a["provider_instance"] for a in plan["agents"]} == {instance}
    assert {c["slot"] for c in plan["pipelines"]["changes"]} == {
        "code_completion",
        "chat_assistant",
        "quick_refactor",
        "chat_compression",
    }
    assert (report["written"], report["changes"], plan["writes"]) == (False, [], True)
    assert not (tmp_path / "config").exists()
    # The four /api/show bodies named the models in the order /api/tags listed them.
    shown = [r.json["model"] for r in ollama.requests if r.path == "/api/show"]
    assert shown == [m["name"] for m in server["models"]]


def test_yes_writes_keeps_comments_validates_and_a_rerun_changes_nothing(
    tmp_path: Path, ollama: ReplayServer
) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "pipelines.toml").write_text(USER_PIPELINES, encoding="utf-8")
    probe = f"127.0.0.1:{ollama.port}"
    _script_shows(ollama)
    result = _run(tmp_path, "setup", "--yes", probe=probe)

    assert result.returncode == 0, result.describe()
    assert "agents validate: ok" in result.stdout
    assert "quick_refactor keeps 'Claude Quick Refactor'" in result.stdout
    completion = f"Ollama :{ollama.port} Completion — qwen2.5-coder:1.5b-base"
    pipelines = (tmp_path / "config" / "pipelines.toml").read_text(encoding="utf-8")
    for line in USER_PIPELINES.splitlines():
        if line.startswith(("#", "quick_refactor")):
            assert line in pipelines  # comments (inline ones too) and the kept slot survive
    assert f'code_completion = [\n    "{completion}",\n    "Embedded Completion",\n]' in pipelines
    assert "updated" in result.stdout and "pipelines.code_completion" in result.stdout
    written = _files(tmp_path)
    assert len([f for f in written if f.startswith("agents/setup_")]) == 5
    assert [f for f in written if f.startswith("providers/")] == [
        f"providers/setup_ollama_native_{ollama.port}.toml"
    ]

    validate = _run(tmp_path, "agents", "validate")
    assert validate.returncode == 0, validate.describe()
    assert "0 error(s), 0 warning(s)" in validate.stderr
    render = _run(tmp_path, "agents", "render", completion)
    assert render.returncode == 0, render.describe()
    request = json.loads(render.stdout)
    assert request["url"] == f"{ollama.url}/api/generate"
    assert request["body"]["model"] == "qwen2.5-coder:1.5b-base" and "suffix" in request["body"]

    _script_shows(ollama)
    again = _run(tmp_path, "setup", "--yes", probe=probe)
    assert again.returncode == 0, again.describe()
    assert "nothing to change" in again.stdout
    assert _files(tmp_path) == written


def test_nothing_found_says_what_was_probed_and_how_to_add_a_provider(
    tmp_path: Path, unused_tcp_port: int
) -> None:
    result = _run(tmp_path, "setup", "--yes", probe=f"127.0.0.1:{unused_tcp_port}")

    assert result.returncode == 3, result.describe()
    assert f"127.0.0.1:{unused_tcp_port}  nothing listens" in result.stdout
    assert "No model server answered" in result.stdout
    assert "provider instance" in result.stdout and "secrets set" in result.stdout
    assert not (tmp_path / "config").exists()
    as_json = _run(tmp_path, "setup", "--json", probe=f"127.0.0.1:{unused_tcp_port}")
    assert as_json.returncode == 3
    assert json.loads(as_json.stdout)["probed"][0]["status"] == "closed"


def test_a_remote_probe_is_a_usage_error(tmp_path: Path) -> None:
    result = _run(tmp_path, "setup", "--probe", "192.168.1.20:11434")
    assert result.returncode == 2
    assert "only probes this machine" in result.stderr


def test_answering_n_at_the_prompt_writes_nothing(tmp_path: Path, ollama: ReplayServer) -> None:
    _script_shows(ollama)
    controller, terminal = pty.openpty()
    argv = [sys.executable, "-m", "qodeassist_lsp", "setup", "--probe", str(ollama.port)]
    process = subprocess.Popen(
        argv, env=_env(tmp_path), cwd=tmp_path, stdin=terminal, stdout=subprocess.PIPE, text=True
    )
    os.close(terminal)
    try:
        assert process.stdout is not None
        prompt = _read_until(process.stdout.fileno(), b"[y/N] ")
        assert b"Plan:" in prompt
        os.write(controller, b"n\n")
        rest = process.communicate(timeout=30)[0]
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert "Nothing written." in rest
    assert not (tmp_path / "config").exists()


def _read_until(fd: int, marker: bytes, timeout: float = 30.0) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while marker not in data:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no {marker!r} within {timeout} s; got {data!r}"
        chunk = os.read(fd, 4096)
        assert chunk, f"the command ended before {marker!r}; got {data!r}"
        data += chunk
    return data


def test_doctor_points_to_setup_when_a_local_server_goes_unused(
    tmp_path: Path, ollama: ReplayServer
) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "pipelines.toml").write_text(
        '[pipelines]\ncode_completion = []\nchat_assistant = []\nchat_compression = ""\n'
        'quick_refactor = ""\nnext_edit = []\n',  # no bundled Embedded Next Edit to start
        encoding="utf-8",
    )
    _script_shows(ollama)
    result = _run(tmp_path, "doctor", probe=f"127.0.0.1:{ollama.port}")

    assert f"Ollama on 127.0.0.1:{ollama.port} (4 model(s))" in result.stdout, result.describe()
    assert "Run `qodeassist-lsp setup`" in result.stdout


def test_lm_studio_and_vllm_are_told_apart_by_their_apis(tmp_path: Path) -> None:
    # Bodies in the shape of LM Studio's documented GET /api/v0/models and vLLM's /v1/models.
    lmstudio_models = {
        "object": "list",
        "data": [
            {
                "id": "qwen2.5-7b-instruct",
                "object": "model",
                "type": "llm",
                "publisher": "lmstudio-community",
                "arch": "qwen2",
                "compatibility_type": "gguf",
                "quantization": "Q4_K_M",
                "state": "loaded",
                "max_context_length": 32768,
            },
            {
                "id": "text-embedding-nomic-embed-text-v1.5",
                "object": "model",
                "type": "embeddings",
                "publisher": "nomic-ai",
                "arch": "nomic-bert",
                "compatibility_type": "gguf",
                "quantization": "Q4_K_M",
                "state": "not-loaded",
                "max_context_length": 2048,
            },
        ],
    }
    vllm_models = {
        "object": "list",
        "data": [
            {
                "id": "Qwen/Qwen2.5-Coder-1.5B",
                "object": "model",
                "created": 1735689600,
                "owned_by": "vllm",
                "root": "Qwen/Qwen2.5-Coder-1.5B",
                "parent": None,
                "max_model_len": 32768,
            }
        ],
    }
    with ReplayServer() as lmstudio, ReplayServer() as vllm:
        lmstudio.route("/api/v0/models", Reply.json(lmstudio_models))
        lmstudio.route("/v1/models", Reply.json({"object": "list", "data": []}))
        vllm.route("/v1/models", Reply.json(vllm_models))
        result = _run(
            tmp_path, "setup", "--json", "--probe", str(lmstudio.port), "--probe", str(vllm.port)
        )

    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    first, second = (p["server"] for p in report["probed"])
    assert (first["kind"], first["label"]) == ("lmstudio", "LM Studio")
    assert [m["embedding"] for m in first["models"]] == [False, True]
    assert (second["kind"], second["label"]) == ("openai", "vLLM")
    agents = {(a["role"], a["model"]): a for a in report["plan"]["agents"]}
    assert set(agents) == {
        ("chat", "qwen2.5-7b-instruct"),
        ("refactor", "qwen2.5-7b-instruct"),
        ("compression", "qwen2.5-7b-instruct"),
        ("completion", "Qwen/Qwen2.5-Coder-1.5B"),
    }
    completion = agents["completion", "Qwen/Qwen2.5-Coder-1.5B"]
    assert completion["provider_instance"] == f"vLLM :{vllm.port}"
    providers = {p["name"]: p["url"] for p in report["plan"]["providers"]}
    assert providers[f"vLLM :{vllm.port}"] == f"{vllm.url}/v1"
    local = {p["name"]: p["local"] for p in report["plan"]["providers"]}
    assert local[f"vLLM :{vllm.port}"] is True  # runs its models here: no debounce


def test_an_ollama_base_model_is_told_by_its_template_not_its_name(tmp_path: Path) -> None:
    # Shapes of Ollama's documented /api/tags and /api/show: a model created from a base GGUF
    # (`ollama create`) keeps a bare `{{ .Prompt }}` template and says "completion" like any.
    def show(template: str, family: str) -> Reply:
        details = {"format": "gguf", "family": family, "families": [family]}
        return Reply.json(
            {
                "template": template,
                "details": details,
                "capabilities": ["completion"],
                "model_info": {"general.architecture": family},
            }
        )

    tags = {
        "models": [
            {"name": "mygemma:270m", "model": "mygemma:270m", "size": 300_000_000},
            {"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 2_000_000_000},
        ]
    }
    chat_template = "{{- range .Messages }}<|{{ .Role }}|>{{ .Content }}{{ end }}<|assistant|>"
    with ReplayServer() as server:
        server.route("/api/version", Reply("ollama/version_docs.json"))
        server.route("/api/tags", Reply.json(tags))
        server.script(
            "/api/show",
            [show("{{ .Prompt }}", "gemma3"), show(chat_template, "llama")],
            method="POST",
        )
        result = _run(tmp_path, "setup", "--json", "--probe", str(server.port))

    assert result.returncode == 0, result.describe()
    report = json.loads(result.stdout)
    models = {m["name"]: m for m in report["probed"][0]["server"]["models"]}
    assert models["mygemma:270m"]["chat"] is False
    assert "template takes no messages" in models["mygemma:270m"]["evidence"]
    assert models["llama3.2:latest"]["chat"] is True
    chats = {a["model"] for a in report["plan"]["agents"] if a["role"] != "completion"}
    assert chats == {"llama3.2:latest"}
