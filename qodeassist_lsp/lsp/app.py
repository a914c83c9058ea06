"""Assemble the language server: the core handlers, then every feature, listed once.

Adding an LSP feature means a module with a ``setup(server)`` that registers its handlers,
custom methods and `feature.LanguageFeature`, and one line in `FEATURES`.
"""

from __future__ import annotations

from collections.abc import Callable

from qodeassist_lsp.lsp import (
    chat_handlers,
    completion_handlers,
    doctor_handlers,
    edit_handlers,
    mcp_handlers,
    next_edit_handlers,
    operation_handlers,
    plan_handlers,
    refactor_handlers,
    rules_handlers,
    server,
    settings_handlers,
    skill_handlers,
    tool_handlers,
)
from qodeassist_lsp.lsp.backend import Backend
from qodeassist_lsp.lsp.server import QodeAssistServer

FEATURES: tuple[Callable[[QodeAssistServer], None], ...] = (
    server.setup,
    completion_handlers.setup,
    next_edit_handlers.setup,
    refactor_handlers.setup,
    chat_handlers.setup,
    plan_handlers.setup,
    doctor_handlers.setup,
    settings_handlers.setup,
    mcp_handlers.setup,
    skill_handlers.setup,
    edit_handlers.setup,
    tool_handlers.setup,
    operation_handlers.setup,
    rules_handlers.setup,
)
"""The ``setup`` function of every part of the server, in registration order."""


def create_server(backend: Backend | None = None) -> QodeAssistServer:
    """Build the server with every feature set up."""
    instance = QodeAssistServer(backend)
    for setup in FEATURES:
        setup(instance)
    return instance
