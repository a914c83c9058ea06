"""Assemble the language server: the core handlers plus every feature's handlers."""

from __future__ import annotations

from qodeassist_lsp.lsp import (
    chat_handlers,
    completion_handlers,
    doctor_handlers,
    refactor_handlers,
    server,
    settings_handlers,
)
from qodeassist_lsp.lsp.backend import Backend
from qodeassist_lsp.lsp.server import QodeAssistServer


def create_server(backend: Backend | None = None) -> QodeAssistServer:
    """Build the server with every handler registered."""
    instance = QodeAssistServer(backend)
    server.register(instance)
    completion_handlers.register(instance)
    refactor_handlers.register(instance)
    chat_handlers.register(instance)
    doctor_handlers.register(instance)
    settings_handlers.register(instance)
    return instance
