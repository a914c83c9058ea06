"""The params of the file-edit and checkpoint methods, validated with pydantic (camelCase).

Kept out of ``edit_handlers`` (as ``chat_params`` is out of ``chat_handlers``) so that importing
the server does not import pydantic before ``initialize`` is answered.
"""

from __future__ import annotations

from typing import Literal

from qodeassist_lsp.lsp.chat_params import Params


class EditFileParams(Params):
    """``qodeassist/chat/editFile`` params."""

    chat_id: str
    edit_id: str
    action: Literal["apply", "undo", "reject"]


class CheckpointsListParams(Params):
    """``qodeassist/checkpoints/list`` params."""

    chat_id: str | None = None


class RestoreParams(Params):
    """``qodeassist/checkpoints/restore`` params."""

    checkpoint_id: str
