"""``qodeassist/settings/get`` and ``update``: read and write a settings file from the editor.

The writing is ``config.settings_writer``'s (tomlkit, validated, atomic); after a write the
configuration is reloaded before the answer, so the next request already sees the change. A
change the writer refuses (``SettingsWriteError``, a ``ValueError`` of the error tree) is
answered -32602 with its message (``lsp.errors``); nothing is written.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.server import QodeAssistServer

if TYPE_CHECKING:
    from qodeassist_lsp.config.settings_writer import Scope, SettingsFile
    from qodeassist_lsp.lsp.params import SettingsParams, SettingsUpdateParams


async def _file(ls: QodeAssistServer, scope: Scope) -> SettingsFile:
    # Imported on first use: the writer brings pydantic's settings models and tomlkit, part of
    # the 450-650 ms of feature imports measured before `initialize` (see chat_handlers).
    from qodeassist_lsp.config.settings_writer import SettingsFile, settings_path
    from qodeassist_lsp.lsp.sections import SETTINGS_MODEL

    await ls.backend.runtime()
    paths = ls.backend.paths
    assert paths is not None
    path = settings_path(scope, paths.config_root, paths.project)
    return SettingsFile(path, scope, SETTINGS_MODEL)


async def settings_get(ls: QodeAssistServer, args: SettingsParams) -> dict[str, Any]:
    """Answer a settings file's values and the effective settings."""
    scope = args.scope
    settings = await _file(ls, scope)
    values = await asyncio.to_thread(settings.values)
    config = ls.backend.configuration
    return {
        "scope": scope,
        "path": str(settings.path),
        "exists": settings.path.is_file(),
        "values": values,
        "effective": config.settings.model_dump(mode="json"),
    }


async def settings_update(ls: QodeAssistServer, args: SettingsUpdateParams) -> dict[str, Any]:
    """Write changes to a settings file, then reload the configuration."""
    settings = await _file(ls, args.scope)
    written = await asyncio.to_thread(settings.update, args.changes)
    await ls.backend.reload()
    return {"written": str(written)}


def setup(server: QodeAssistServer) -> None:
    """Register the settings requests on ``server``."""
    server.feature(methods.SETTINGS_GET)(settings_get)
    server.feature(methods.SETTINGS_UPDATE)(settings_update)
