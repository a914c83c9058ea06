"""A throw-away user configuration that points the bundled agents at a `ReplayServer`, and a
runner for the real ``qodeassist-lsp`` command line as a subprocess.

Every provider instance a test may need is overridden by a user file with the bundled
instance's name and ``url = <server>/<prefix>`` (plus the path prefix the real API has, e.g.
``/v1`` for OpenAI), so the bundled agents talk to the loopback server unchanged. Each provider's
key variable holds `PLANTED_KEY`, a value no credential-shaped redaction pattern matches: only
redaction of the actual key keeps it out of logs and errors.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.lsp.sections import SECTIONS
from qodeassist_lsp.wire.protocols import WireProtocol

REPO_ROOT = Path(__file__).resolve().parents[2]

PLANTED_KEY = "planted-e2e-KEY-7c1f0a9b3d5e"
"""The fake API key of every provider; it must never show up anywhere but the auth header."""


_WITH_DEFAULT_SIGINT = (
    "import os, signal, sys;"
    "signal.signal(signal.SIGINT, signal.SIG_DFL);"
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT});"
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""Exec ``argv[1:]`` with SIGINT neither ignored nor blocked (both survive ``exec``)."""


@dataclass(frozen=True)
class Provider:
    """A bundled provider instance the tests re-point: its API, URL path prefix and key var."""

    client_api: str
    prefix: str
    key_env: str
    protocol: WireProtocol


PROVIDERS: dict[str, Provider] = {
    "Claude": Provider("Claude", "", "ANTHROPIC_API_KEY", WireProtocol.ANTHROPIC),
    "OpenAI (Chat Completions)": Provider(
        "OpenAI (Chat Completions)", "/v1", "OPENAI_API_KEY", WireProtocol.OPENAI_CHAT
    ),
    "OpenAI (Responses API)": Provider(
        "OpenAI (Responses API)", "/v1", "OPENAI_API_KEY", WireProtocol.OPENAI_RESPONSES
    ),
    "Google AI": Provider("Google AI", "/v1beta", "GEMINI_API_KEY", WireProtocol.GOOGLE),
    "Ollama (Native)": Provider("Ollama (Native)", "", "OLLAMA_API_KEY", WireProtocol.OLLAMA),
    "Mistral AI": Provider("Mistral AI", "", "MISTRAL_API_KEY", WireProtocol.MISTRAL),
    "Codestral": Provider("Codestral", "", "CODESTRAL_API_KEY", WireProtocol.MISTRAL),
    "llama.cpp": Provider("llama.cpp", "", "LLAMACPP_API_KEY", WireProtocol.LLAMACPP),
}

# User agents on top of the bundled wire bases. "(no tools)" agents never run a tool, so a CLI
# replay of a tool-call stream ends after the one recorded reply, whatever tools the CLI offers.
USER_AGENTS: dict[str, tuple[str, bool]] = {
    "E2E Claude (no tools)": ("Claude Base Chat", False),
    "E2E OpenAI (no tools)": ("OpenAI Base Chat", False),
    "E2E Responses (no tools)": ("OpenAI Base Responses", False),
    "E2E Gemini (no tools)": ("Google Base Chat", False),
    "E2E Ollama (no tools)": ("Ollama Base Chat", False),
    "E2E Mistral (no tools)": ("Mistral Base Chat", False),
    "E2E llama.cpp (no tools)": ("llama.cpp Base Chat", False),
}
USER_AGENT_MODEL = "e2e-model"


@dataclass
class CliResult:
    """One finished CLI run."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def events(self) -> list[dict[str, Any]]:
        """The ``--events jsonl`` objects printed on stdout."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    @property
    def error_lines(self) -> list[str]:
        """The ``qodeassist-lsp: …`` lines on stderr (the typed error), without log lines."""
        return [line for line in self.stderr.splitlines() if line.startswith("qodeassist-lsp: ")]

    def describe(self) -> str:
        """Everything about the run, for assertion messages."""
        tail = self.stderr[-4000:]
        return f"$ {' '.join(self.args)}\nexit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{tail}"


@dataclass
class Workspace:
    """Config and data roots whose providers point at ``base_url``."""

    root: Path
    base_url: str
    log_level: str = "DEBUG"
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.config.mkdir(parents=True, exist_ok=True)
        self.data.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        for name, provider in PROVIDERS.items():
            slug = "".join(c if c.isalnum() else "_" for c in name.lower())
            self.write(
                f"providers/{slug}.toml",
                f"""
                schema_version = 1
                name = {json.dumps(name)}
                client_api = {json.dumps(provider.client_api)}
                url = {json.dumps(self.provider_url(name))}
                api_key_ref = {json.dumps(f"qodeassist/providers/{name}")}
                api_key_env = {json.dumps(provider.key_env)}
                """,
            )
        for index, (name, (base, tools)) in enumerate(USER_AGENTS.items()):
            self.write(
                f"agents/e2e_{index}.toml",
                f"""
                schema_version = 1
                name = {json.dumps(name)}
                extends = {json.dumps(base)}
                model = {json.dumps(USER_AGENT_MODEL)}
                enable_tools = {"true" if tools else "false"}
                """,
            )
        self.write("pipelines.toml", '[pipelines]\nchat_assistant = ["Claude Chat — Sonnet"]\n')

    @property
    def config(self) -> Path:
        return self.root / "config"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def provider_url(self, name: str) -> str:
        """The URL provider instance ``name`` is re-pointed to."""
        return self.base_url + PROVIDERS[name].prefix

    def write(self, relative: str, text: str) -> Path:
        """Write ``text`` (dedented) to ``relative`` under the config root."""
        path = self.config / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    @property
    def env(self) -> dict[str, str]:
        """The environment of a CLI run: roots, planted keys, debug logs, no real keyring."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("QODEASSIST_") and not k.endswith("_API_KEY")
        }
        env.update(
            QODEASSIST_CONFIG_DIR=str(self.config),
            QODEASSIST_DATA_DIR=str(self.data),
            QODEASSIST_LOG_LEVEL=self.log_level,
            PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
            PYTHONIOENCODING="utf-8",
            NO_PROXY="*",
        )
        env.update({p.key_env: PLANTED_KEY for p in PROVIDERS.values()})
        env.update(self.extra_env)
        return env

    def command(self, *args: str) -> list[str]:
        """The argv that runs ``qodeassist-lsp *args`` with this interpreter."""
        return [sys.executable, "-m", "qodeassist_lsp", *args]

    def run(self, *args: str, timeout: float = 60.0) -> CliResult:
        """Run the CLI to completion."""
        argv = self.command(*args)
        done = subprocess.run(
            argv,
            env=self.env,
            cwd=self.project,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
            check=False,
        )
        return CliResult(argv[1:], done.returncode, done.stdout, done.stderr)

    def popen(self, *args: str, interruptible: bool = False) -> subprocess.Popen[str]:
        """Start the CLI with piped stdout/stderr (the caller waits for it).

        ``interruptible`` gives the CLI SIGINT's default disposition, as a terminal would, even
        when pytest itself runs with SIGINT ignored (a script's ``&`` job inherits that).
        """
        argv = self.command(*args)
        if interruptible:
            argv = [sys.executable, "-c", _WITH_DEFAULT_SIGINT, *argv]
        return subprocess.Popen(
            argv,
            env=self.env,
            cwd=self.project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def paths(self) -> ConfigPaths:
        """The roots for an in-process configuration load."""
        return ConfigPaths(
            config_root=self.config, data_root=self.data, bundled=bundled_root(), project=None
        )

    def load(self) -> Configuration:
        """Load this configuration in-process (bundled agents + the overrides above)."""
        config = load_configuration(self.paths(), (), None, SECTIONS)
        ours = [p.format() for p in config.problems if str(self.config) in (p.file or "")]
        assert not ours, ours
        return config

    def files_text(self) -> str:
        """Every file written under the config and data roots, as text (for secret scans)."""
        chunks = []
        for root in (self.config, self.data):
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    chunks.append(path.read_bytes().decode("utf-8", "replace"))
        return "\n".join(chunks)


def run_many(jobs: Sequence[tuple[Workspace, Sequence[str]]], workers: int = 3) -> list[CliResult]:
    """Run ``python -m qodeassist_lsp`` invocations concurrently (~1 s of start-up each)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(ws.run, *args) for ws, args in jobs]
        return [f.result() for f in futures]


FORKSERVER = Path(__file__).with_name("cli_forkserver.py")


def run_forked(
    jobs: Sequence[tuple[Workspace, Sequence[str]]], workers: int = 2, timeout: float = 300.0
) -> list[CliResult]:
    """Run CLI invocations as separate forked processes that skip the import cost.

    Each job is its own process running ``qodeassist_lsp.cli.main(argv)`` with the job's
    environment, working directory and stdout/stderr, as ``python -m qodeassist_lsp`` would;
    only the imports are shared (done once before forking). See `cli_forkserver`.
    """
    if not jobs:
        return []
    specs = []
    for index, (ws, args) in enumerate(jobs):
        out = ws.root / f"cli-{index}"
        specs.append(
            {
                "argv": list(args),
                "env": ws.env,
                "cwd": str(ws.project),
                "stdout": str(out) + ".stdout",
                "stderr": str(out) + ".stderr",
            }
        )
    env = dict(os.environ)
    env.update(PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring", PYTHONIOENCODING="utf-8")
    done = subprocess.run(
        [sys.executable, str(FORKSERVER)],
        input=json.dumps({"workers": workers, "jobs": specs}),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"the CLI fork server failed:\n{done.stderr}"
    codes = {}
    for line in done.stdout.splitlines():
        report = json.loads(line)
        codes[report["index"]] = report["exit"]
    assert len(codes) == len(specs), done.stdout + done.stderr
    results = []
    for index, spec in enumerate(specs):
        results.append(
            CliResult(
                ["qodeassist_lsp", *spec["argv"]],
                codes[index],
                Path(spec["stdout"]).read_text(encoding="utf-8"),
                Path(spec["stderr"]).read_text(encoding="utf-8"),
            )
        )
    return results


def without_keys(mapping: Mapping[str, str]) -> dict[str, str]:
    """``mapping`` minus the credential headers."""
    secret = {"authorization", "x-api-key", "x-goog-api-key", "api-key"}
    return {k: v for k, v in mapping.items() if k.lower() not in secret}
