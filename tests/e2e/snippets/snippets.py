"""Read each editor snippet with a real parser and turn it into an `Editor` for the tests.

Everything the server is started with — command, arguments, initialization options and the
settings the editor answers ``workspace/configuration`` from — comes from the snippet files
under ``editors/``; what the editor itself adds (capabilities, whether it sends a completion
context, what it pushes after start-up) follows that editor's source code.
"""

from __future__ import annotations

import tomllib
from typing import Any

from tests.e2e.snippets.conftest import EDITORS
from tests.e2e.snippets.editor_client import Editor, parse_jsonc

HELIX = EDITORS / "helix" / "languages.toml"
ZED_SETTINGS = EDITORS / "zed" / "settings.json"
ZED_EXTENSION = EDITORS / "zed" / "extension" / "extension.toml"
SUBLIME = EDITORS / "sublime" / "LSP.sublime-settings"
SERVER_NAME = "qodeassist"


def helix_config() -> dict[str, Any]:
    return tomllib.loads(HELIX.read_text(encoding="utf-8"))


def helix() -> Editor:
    """Helix sends ``config`` as initializationOptions, answers workspace/configuration from it
    (dotted section lookup) and pushes it once more in didChangeConfiguration after start-up
    (helix-term/src/application.rs)."""
    server = helix_config()["language-server"][SERVER_NAME]
    config = server.get("config")
    return Editor(
        name="helix",
        capabilities_file="helix_v25.07.json",
        command=[server["command"], *server.get("args", [])],
        initialization_options=config,
        configuration=config,
        did_change_configuration=config,
    )


def zed_settings() -> dict[str, Any]:
    return parse_jsonc(ZED_SETTINGS.read_text(encoding="utf-8"))


def zed() -> Editor:
    """Zed with editors/zed/extension: ``lsp.qodeassist.binary`` is the command,
    ``initialization_options`` are sent as they are, and the extension's workspace configuration
    (``{"qodeassist": settings or initialization options}``) is pushed after start-up and
    answers workspace/configuration by section."""
    lsp = zed_settings()["lsp"][SERVER_NAME]
    binary = lsp.get("binary") or {}
    options = lsp.get("initialization_options")
    section = lsp.get("settings") or options
    if isinstance(section, dict) and SERVER_NAME in section:
        section = section[SERVER_NAME]
    workspace = {SERVER_NAME: section} if section is not None else {}
    return Editor(
        name="zed",
        capabilities_file="zed_2025.json",
        command=[binary.get("path", "qodeassist-lsp"), *binary.get("arguments", [])],
        initialization_options=options,
        configuration=workspace,
        did_change_configuration=workspace,
    )


def sublime_settings() -> dict[str, Any]:
    return parse_jsonc(SUBLIME.read_text(encoding="utf-8"))


def sublime() -> Editor:
    """sublimelsp/LSP: ``command``, ``initializationOptions``; workspace/configuration and the
    didChangeConfiguration it sends (only when non-empty) come from ``settings``; it declares
    no completion contextSupport, so its completion requests carry no context
    (plugin/core/sessions.py)."""
    client = sublime_settings()["clients"][SERVER_NAME]
    settings = client.get("settings") or None
    return Editor(
        name="sublime",
        capabilities_file="sublime_lsp_v2.json",
        command=list(client["command"]),
        initialization_options=client.get("initializationOptions"),
        configuration=settings,
        did_change_configuration=settings,
        sends_completion_context=False,
    )


EDITOR_FACTORIES = {"helix": helix, "zed": zed, "sublime": sublime}
