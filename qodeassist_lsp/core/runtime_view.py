"""What a feature service reads of the runtime: one protocol for completion, chat and refactor.

The services read it per request, never once at construction, so a configuration reload
(a new snapshot and session manager) reaches them without rebuilding anything. Two classes
implement it: ``core.runtime.Runtime`` (the command line) and the server's ``lsp.backend.Backend``,
which owns a ``Runtime`` and answers for it before the first configuration has loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.config.settings import Settings
    from qodeassist_lsp.core.session_manager import SessionManager


class RuntimeView(Protocol):
    """The current configuration and session manager, read at every request (reload-safe)."""

    @property
    def loaded(self) -> bool:
        """Whether a configuration has loaded (``configuration`` may be read)."""
        ...

    @property
    def configuration(self) -> Configuration:
        """The current configuration snapshot (agents, pipelines, settings)."""
        ...

    @property
    def sessions(self) -> SessionManager:
        """The current session manager."""
        ...

    @property
    def settings(self) -> Settings:
        """The current settings (the defaults until the first configuration has loaded)."""
        ...
