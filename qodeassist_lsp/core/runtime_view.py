"""What a feature service reads of the runtime: one protocol for completion, chat and refactor.

The services read it per request, never once at construction, so a configuration reload
(a new snapshot and session manager) reaches them without rebuilding anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.core.session_manager import SessionManager


class RuntimeView(Protocol):
    """The current configuration and session manager, read at every request (reload-safe)."""

    @property
    def configuration(self) -> Configuration:
        """The current configuration snapshot (agents, pipelines, settings)."""
        ...

    @property
    def sessions(self) -> SessionManager:
        """The current session manager."""
        ...
