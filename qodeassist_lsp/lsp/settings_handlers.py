"""``qodeassist/settings/get`` and ``update``: read and write a settings file from the editor.

The writing is ``config.settings_writer``'s (tomlkit, validated, atomic); after a write the
configuration is reloaded before the answer, so the next request already sees the change.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from qodeassist_lsp.lsp import methods
from qodeassist_lsp.lsp.server import QodeAssistServer

if TYPE_CHECKING:
    from qodeassist_lsp.config.settings_writer import Scope, SettingsFile


def _scope(params: dict[str, Any] | None) -> Scope:
    value = (params or {}).get("scope", "user")
    if value not in ("user", "project"):
        raise JsonRpcInvalidParams(f'scope must be "user" or "project", not {value!r}')
    return "project" if value == "project" else "user"


async def _file(ls: QodeAssistServer, scope: Scope) -> SettingsFile:
    from qodeassist_lsp.config.settings_writer import (
        SettingsFile,
        SettingsWriteError,
        settings_path,
    )

    await ls.backend.configuration()
    paths = ls.backend.paths
    assert paths is not None
    try:
        return SettingsFile(settings_path(scope, paths.config_root, paths.project), scope)
    except SettingsWriteError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None


def setup(server: QodeAssistServer) -> None:
    """Register the settings requests on ``server``."""

    @server.feature(methods.SETTINGS_GET)
    async def settings_get(ls: QodeAssistServer, params: dict[str, Any] | None) -> dict[str, Any]:
        from qodeassist_lsp.config.settings_writer import SettingsWriteError

        scope = _scope(params)
        settings = await _file(ls, scope)
        try:
            values = await asyncio.to_thread(settings.values)
        except SettingsWriteError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        config = await ls.backend.configuration()
        return {
            "scope": scope,
            "path": str(settings.path),
            "exists": settings.path.is_file(),
            "values": values,
            "effective": config.settings.model_dump(mode="json"),
        }

    @server.feature(methods.SETTINGS_UPDATE)
    async def settings_update(
        ls: QodeAssistServer, params: dict[str, Any] | None
    ) -> dict[str, Any]:
        from qodeassist_lsp.config.settings_writer import SettingsWriteError

        changes = (params or {}).get("changes")
        if not isinstance(changes, dict) or not changes:
            raise JsonRpcInvalidParams(
                'settings/update needs {"scope", "changes": {"section.key": value, ...}} '
                "(null removes a key)"
            )
        settings = await _file(ls, _scope(params))
        try:
            written = await asyncio.to_thread(settings.update, changes)
        except SettingsWriteError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        await ls.backend.reload()
        return {"written": str(written)}
