"""The seam every LSP feature plugs into: the lifecycle hooks the server calls.

A feature module (``completion_handlers``, ``refactor_handlers``, ``chat_handlers``) has a
``setup(server)`` function, listed once in ``app.FEATURES``, that registers its handlers and
custom methods and adds its `LanguageFeature` (esbonio's ``esbonio_setup`` and
``LanguageFeature``). The server then calls the hooks; it knows no feature by name. Each hook
call runs `isolated`: one feature that raises is logged and the others, and the shutdown, go on.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from qodeassist_lsp.config.configuration import Configuration
    from qodeassist_lsp.config.problems import ConfigProblem

log = logging.getLogger("qodeassist.server")


class LanguageFeature:
    """One feature's share of the server's lifecycle; every hook does nothing by default."""

    status_key: str | None = None
    """Key of this feature's part of ``qodeassist/status`` (None: it has none)."""

    async def initialized(self) -> None:
        """Prepare once the configuration is loaded (after ``initialized``)."""

    def reloaded(self, config: Configuration) -> None:
        """Forget what depended on the previous configuration."""

    def status(self) -> Any:
        """Return this feature's part of ``qodeassist/status`` (JSON)."""
        return None

    def config_problems(self, path: Path) -> list[ConfigProblem]:
        """Return the problems this feature found in the configuration file ``path``.

        The server publishes them, with the loader's, as that file's diagnostics.
        """
        return []

    async def aclose(self) -> None:
        """Stop everything in flight (``shutdown``)."""


@contextlib.contextmanager
def isolated(feature: LanguageFeature, hook: str) -> Iterator[None]:
    """Log an exception of ``feature``'s ``hook`` instead of letting it stop the other features."""
    try:
        yield
    except Exception:  # one broken feature must not stop the others' hooks or the shutdown
        log.exception("%s.%s failed; the other features go on", type(feature).__name__, hook)
