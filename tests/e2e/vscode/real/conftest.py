"""The extension in a real VS Code: code-server + Debian's Chromium, driven with Playwright.

Once per session: Chromium and ripgrep come from Debian (`tests.support.chromium`, apt as root), code-server from npm
(`tests.support.code_server`, cached in ``<repo>/.cache/code-server-<version>/``), the
extension is packaged as a .vsix (`packaged`) and installed into a throw-away extensions
folder, and code-server starts on a free loopback port. The extension starts the real server
(``python -m qodeassist_lsp serve``) with a configuration whose embedded providers point at a
loopback `ReplayServer`.

Each test gets a fresh workspace folder and a fresh page (a new extension host, so a new
server); a failing test leaves a screenshot in ``<repo>/.cache/vscode-artefacts/`` (the path is
in the failure report). When Chromium or code-server cannot be installed the tests fail with
the reason, never skip: a skipped real VS Code looks like a green run (as root with the Debian
mirror and the npm registry reachable, the fixtures install both).
At the end every process code-server started is stopped by pid, and the session fails if one
survived.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import chromium, code_server
from tests.support.replay_server import ReplayServer
from tests.support.streams import write_embedded_instances
from tests.support.vscode_page import Workbench
from tests.support.vscode_web import CodeServer

REPO_ROOT = Path(__file__).resolve().parents[4]
CACHE = REPO_ROOT / ".cache" / f"code-server-{code_server.VERSION}"
ARTEFACTS = REPO_ROOT / ".cache" / "vscode-artefacts"
DEBIAN = {
    "chromium": str(chromium.CHROMIUM),
    "ripgrep": "rg",
}
DOC = "def add(a, b):\n    return \n\nprint(add(1, 2))\n"
# No prefetch after an accept: the tests read the upstream requests they scripted. No word
# healing: they read the prompt as typed (tests/e2e/lsp/test_word_healing.py covers it).
SERVER_SETTINGS = (
    "[completion]\ndebounce_ms = 150\ndebounce_min_ms = 50\nprefetch_after_accept = false\n"
    "heal_words = false\n"
)
# The embedded chat with tools answers the chat (a write tool asks for permission first).
TOOL_AGENT = (
    'schema_version = 1\nextends = "Embedded Chat"\nname = "Tool Chat"\nenable_tools = true\n'
)
PIPELINES = '[pipelines]\nchat_assistant = ["Tool Chat", "Embedded Chat"]\n'


@dataclass
class VSCode:
    """The session's code-server, browser, loopback provider and server configuration."""

    server: CodeServer
    browser: Any
    replay: ReplayServer
    config: Path

    def output_channel(self) -> Path | None:
        """The QodeAssist output channel's file of the newest extension host."""
        channels = sorted(
            (self.server.user_data / "logs").glob("*/exthost*/*/QodeAssist.log"),
            key=lambda p: p.stat().st_mtime,
        )
        return channels[-1] if channels else None


def _settings(config: Path, data: Path) -> dict[str, Any]:
    return {
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "workbench.editor.enablePreview": False,
        "extensions.autoCheckUpdates": False,
        "extensions.autoUpdate": False,
        "update.mode": "none",
        "telemetry.telemetryLevel": "off",
        "files.autoSave": "off",
        # The suggest widget would hide the ghost text; VS Code's own word suggestions are noise.
        "editor.quickSuggestions": {"other": "off", "comments": "off", "strings": "off"},
        "editor.suggestOnTriggerCharacters": False,
        "editor.wordBasedSuggestions": "off",
        "qodeassist.trace.server": "messages",  # the LSP traffic in the output channel's log
        "qodeassist.server.path": sys.executable,
        "qodeassist.server.args": ["-m", "qodeassist_lsp", "serve"],
        "qodeassist.server.env": {
            "QODEASSIST_CONFIG_DIR": str(config),
            "QODEASSIST_DATA_DIR": str(data),
            "QODEASSIST_LOG_LEVEL": "DEBUG",
        },
    }


@pytest.fixture(scope="package")  # playwright's sync API keeps a loop running until it stops
def vscode(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[VSCode]:
    """code-server with the packaged extension installed, and a headless Chromium."""
    # $QODEASSIST_VSCODE_VSIX: a .vsix built beforehand (`npm run package`), to iterate faster.
    prebuilt = os.environ.get("QODEASSIST_VSCODE_VSIX")
    packaged = Path(prebuilt) if prebuilt else request.getfixturevalue("packaged")
    problem = chromium.ensure(DEBIAN)
    if problem:
        pytest.fail(f"no real VS Code: Debian packages missing ({problem})", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "no real VS Code: the playwright package is not installed (the test extra)",
            pytrace=False,
        )
    try:
        launcher = code_server.install(CACHE)
    except code_server.InstallError as error:
        pytest.fail(
            f"no real VS Code: code-server {code_server.VERSION} cannot be installed: {error}",
            pytrace=False,
        )
    root = tmp_path_factory.mktemp("code-server")
    config, data = root / "qodeassist-config", root / "qodeassist-data"
    data.mkdir()
    with ReplayServer() as replay:
        write_embedded_instances(config / "providers", replay.url)
        (config / "settings.toml").write_text(SERVER_SETTINGS)
        (config / "agents").mkdir()
        (config / "agents" / "tool_chat.toml").write_text(TOOL_AGENT)
        (config / "pipelines.toml").write_text(PIPELINES)
        env = {**os.environ, "HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "xdg")}
        server = CodeServer(launcher, root, env)
        server.write_settings(_settings(config, data))
        server.install_extension(packaged)
        server.start()
        playwright = sync_playwright().start()
        try:
            browser = playwright.chromium.launch(
                executable_path=str(chromium.CHROMIUM), args=list(chromium.LAUNCH_ARGS)
            )
            try:
                yield VSCode(server, browser, replay, config)
            finally:
                browser.close()
        finally:
            playwright.stop()
            survivors = server.stop()
            left = server.processes()
    assert not left, f"processes outlived the stop of code-server: {left}"
    # SIGTERM is enough for everything, file watchers and language servers included.
    assert not survivors, f"processes needed SIGKILL: {survivors}\n{server.tail()}"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the item, for the screenshot of a failure."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def workbench(
    vscode: VSCode, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Workbench]:
    """A fresh workspace folder with ``add.py``, open in a new page; the server is ready."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "add.py").write_text(DOC)
    vscode.replay.reset()
    context = vscode.browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    bench = Workbench(page, vscode.server.url, project)
    try:
        bench.load()
        yield bench
    finally:
        report = getattr(request.node, "report_call", None)
        if report is None or report.failed or os.environ.get("QODEASSIST_VSCODE_KEEP"):
            name = request.node.name.replace("/", "_")
            shot = bench.screenshot(ARTEFACTS / f"{name}.png")
            log = ARTEFACTS / f"{name}.code-server.log"
            shutil.copyfile(vscode.server.log, log)
            channel = vscode.output_channel()
            if channel:
                shutil.copyfile(channel, ARTEFACTS / f"{name}.QodeAssist.log")
            print(f"\nscreenshot of the failure: {shot}\ncode-server log: {log}")
        page.goto("about:blank")  # a graceful disconnect: code-server ends that extension host
        context.close()
