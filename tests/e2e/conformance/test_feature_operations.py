"""A feature added in a fixture reaches every door with no door code (issue 44, item 2).

The fixture is a package on the server's ``PYTHONPATH``: a pydantic request and result, an
``echo/reverse`` operation answering the text reversed and the workspace folder count, an
``echo/busy`` one raising an error of the tree, and its one registration line, an entry point
of group ``qodeassist_lsp.features``. Each door — the LSP server over stdio
(``qodeassist/echo/reverse``), the ACP agent (``_qodeassist/echo/reverse``, an extension method)
and the HTTP API (``POST /v1/qodeassist/echo/reverse``) — is the real process and answers the
same: the result; params the request model refuses, naming the field; an unknown operation
named as such; the operation's own error through the one error table. A plugin that fails to
import is logged and left out while the door keeps serving. The plugin's own ``[echo]`` settings
section reaches it (``echo/greet``) and is checked like the core ones; ``GET /health`` shows its
status part as ``qodeassist/status`` does.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from acp import RequestError

from tests.e2e.acp.conftest import Editor, agent_env, running_agent
from tests.e2e.conformance.doors import http_server, lsp_server, make_home
from tests.support.replay_server import ReplayServer

PLUGIN = '''
"""A feature of the tests: echo/reverse, echo/busy, echo/greet and its [echo] section."""

from pydantic import BaseModel

from qodeassist_lsp.config.settings_types import Section, SettingsSection
from qodeassist_lsp.core.operations import Feature, FeatureServices, FeatureSpec, Operation
from qodeassist_lsp.wire.errors import ErrorKind, QodeAssistError


class EchoSettings(Section):
    greeting: str = "hello"


SETTINGS = SettingsSection("echo", EchoSettings)


class ReverseRequest(BaseModel):
    text: str


class ReverseResult(BaseModel):
    text: str
    folders: int


class Empty(BaseModel):
    pass


class Greeting(BaseModel):
    text: str


class Busy(QodeAssistError):
    error_kind = ErrorKind.BUSY


def build(services: FeatureServices) -> Feature:
    calls = []

    async def reverse(request: ReverseRequest) -> ReverseResult:
        calls.append(request.text)
        return ReverseResult(text=request.text[::-1], folders=len(services.folders()))

    async def busy(request: Empty) -> Empty:
        raise Busy("the echo is busy: try again later")

    async def greet(request: Empty) -> Greeting:
        return Greeting(text=services.view.configuration.settings.section(SETTINGS).greeting)

    return Feature(
        operations=(
            Operation(name="reverse", request=ReverseRequest, result=ReverseResult, run=reverse),
            Operation(name="busy", request=Empty, result=Empty, run=busy),
            Operation(name="greet", request=Empty, result=Greeting, run=greet),
        ),
        status=lambda: {"calls": len(calls)},
    )


SPEC = FeatureSpec(name="echo", build=build, settings=SETTINGS)
'''

ENTRY_POINTS = """
[qodeassist_lsp.features]
echo = qa_echo_plugin:SPEC
broken = qa_broken_plugin:SPEC
"""

TEXT = "Grüße 👋 abc"
REVERSED = TEXT[::-1]


@pytest.fixture
def home(tmp_path: Path, replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The conformance home, with the echo plugin (and a broken one) on the doors' path."""
    root = make_home(tmp_path / "home", replay)
    plugins = tmp_path / "plugins"
    (plugins / "qa_echo_plugin").mkdir(parents=True)
    (plugins / "qa_echo_plugin/__init__.py").write_text(PLUGIN, encoding="utf-8")
    (plugins / "qa_broken_plugin.py").write_text("raise ImportError('this plugin is broken')\n")
    info = plugins / "qa_echo_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: qa-echo-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(plugins), *([path] if path else [])]))
    return root


# -- LSP ---------------------------------------------------------------------------------------
async def test_lsp(home: Path) -> None:
    async with asyncio.timeout(60), lsp_server(home) as lsp:
        good = await lsp.request("qodeassist/echo/reverse", {"text": TEXT})
        assert good.get("result") == {"text": REVERSED, "folders": 1}, good

        bad = await lsp.request("qodeassist/echo/reverse", {"text": 42})
        assert bad["error"]["code"] == -32602, bad
        assert "text" in bad["error"]["message"], bad

        unknown = await lsp.request("qodeassist/echo/nope", {"text": TEXT})
        assert unknown["error"]["code"] == -32601, unknown
        assert "qodeassist/echo/nope" in unknown["error"]["message"], unknown

        busy = await lsp.request("qodeassist/echo/busy", {})
        assert busy["error"]["code"] == -32600, busy
        assert "the echo is busy" in busy["error"]["message"], busy

        status = await lsp.request("qodeassist/status", {})  # loaded: an operation was answered
        assert status["result"]["echo"] == {"calls": 1}, status

        again = await lsp.request("qodeassist/echo/reverse", {"text": "ab"})
        assert again.get("result") == {"text": "ba", "folders": 1}, again


# -- ACP ---------------------------------------------------------------------------------------
async def test_acp(home: Path) -> None:
    async with asyncio.timeout(60), running_agent(home, Editor()) as conn:
        good = await conn.ext_method("qodeassist/echo/reverse", {"text": TEXT})
        assert good == {"text": REVERSED, "folders": 1}, good

        with pytest.raises(RequestError) as bad:
            await conn.ext_method("qodeassist/echo/reverse", {"text": 42})
        assert bad.value.code == -32602, bad.value
        assert "text" in str(bad.value.data), bad.value.data

        with pytest.raises(RequestError) as unknown:
            await conn.ext_method("qodeassist/echo/nope", {"text": TEXT})
        assert unknown.value.code == -32601, unknown.value
        assert "no operation 'nope'" in str(unknown.value.data), unknown.value.data

        with pytest.raises(RequestError) as busy:
            await conn.ext_method("qodeassist/echo/busy", {})
        assert busy.value.code == -32600, busy.value
        assert "the echo is busy" in str(busy.value.data), busy.value.data

        again = await conn.ext_method("qodeassist/echo/reverse", {"text": "ab"})
        assert again == {"text": "ba", "folders": 1}, again
    log = (home / "agent.log").read_text(encoding="utf-8")
    assert "feature broken (qa_broken_plugin:SPEC) failed to import; left out" in log, log[-2000:]


# -- HTTP --------------------------------------------------------------------------------------
async def test_http(home: Path) -> None:
    async with asyncio.timeout(60), http_server(home) as http:
        good = await http.post("/v1/qodeassist/echo/reverse", json={"text": TEXT})
        assert good.status_code == 200, good.text
        assert good.json() == {"text": REVERSED, "folders": 1}

        bad = await http.post("/v1/qodeassist/echo/reverse", json={"text": 42})
        assert bad.status_code == 400, bad.text
        assert "text" in bad.json()["error"]["message"], bad.text

        unknown = await http.post("/v1/qodeassist/echo/nope", json={"text": TEXT})
        assert unknown.status_code == 404, unknown.text
        assert "no operation 'nope'" in unknown.json()["error"]["message"], unknown.text

        busy = await http.post("/v1/qodeassist/echo/busy", json={})
        assert busy.status_code == 409, busy.text
        assert "the echo is busy" in busy.json()["error"]["message"], busy.text

        anonymous = await http.post(
            "/v1/qodeassist/echo/reverse",
            json={"text": TEXT},
            headers={"Authorization": "Bearer wrong"},
        )
        assert anonymous.status_code == 401, anonymous.text

        again = await http.post("/v1/qodeassist/echo/reverse", json={"text": "ab"})
        assert again.json() == {"text": "ba", "folders": 1}, again.text

        health = (await http.get("/health")).json()  # the feature table's parts, as the LSP's
        assert health["echo"] == {"calls": 2}, health
        assert "codebase" in health, health


# -- a feature's own settings section ----------------------------------------------------------
async def test_a_plugin_reads_its_settings_section(home: Path) -> None:
    with (home / "config/settings.toml").open("a", encoding="utf-8") as settings:
        settings.write('\n[echo]\ngreeting = "grüß dich"\n')
    async with asyncio.timeout(60), lsp_server(home) as lsp:
        greeting = await lsp.request("qodeassist/echo/greet", {})
        assert greeting.get("result") == {"text": "grüß dich"}, greeting


def test_a_bad_value_in_a_plugins_section_is_named(home: Path) -> None:
    with (home / "config/settings.toml").open("a", encoding="utf-8") as settings:
        settings.write('\n[echo]\ngreeting = 42\ncolour = "red"\n')
    done = subprocess.run(
        [sys.executable, "-m", "qodeassist_lsp", "agents", "validate"],
        env=agent_env(home),
        cwd=home / "project",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    out = done.stdout + done.stderr
    assert "echo.greeting = 42 is invalid" in out, out
    assert "unknown key 'colour' in [echo]" in out, out
    assert "unknown section [echo]" not in out, out
