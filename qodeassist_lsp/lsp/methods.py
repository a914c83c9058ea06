"""Names of the custom LSP methods and commands (SPEC §4), defined once.

Which methods are custom is not listed: any method lsprotocol does not define gets its params
as a plain dict (``protocol.QodeProtocol``).
"""

from __future__ import annotations

STATUS = "qodeassist/status"
AGENTS_LIST = "qodeassist/agents/list"
REFACTOR_INSTRUCTIONS = "qodeassist/refactor/instructions"
CHAT_SEND = "qodeassist/chat/send"
CHAT_EVENT = "qodeassist/chat/event"
CHAT_CANCEL = "qodeassist/chat/cancel"
CHAT_LIST = "qodeassist/chat/list"
CHAT_GET = "qodeassist/chat/get"
CHAT_DELETE = "qodeassist/chat/delete"
CHAT_COMPRESS = "qodeassist/chat/compress"
CHAT_TOKENS = "qodeassist/chat/tokens"
CHAT_EDIT_FILE = "qodeassist/chat/editFile"
CHAT_PLAN_UPDATE = "qodeassist/chat/plan/update"
CHAT_PLAN_APPROVE = "qodeassist/chat/plan/approve"
CHAT_PLAN_RESUME = "qodeassist/chat/plan/resume"
CHAT_PLAN_CANCEL = "qodeassist/chat/plan/cancel"
CHECKPOINTS_LIST = "qodeassist/checkpoints/list"
CHECKPOINTS_RESTORE = "qodeassist/checkpoints/restore"
SETTINGS_GET = "qodeassist/settings/get"
SETTINGS_UPDATE = "qodeassist/settings/update"
SKILLS_LIST = "qodeassist/skills/list"
DID_MOVE_CURSOR = "qodeassist/didMoveCursor"
"""Client→server notification: where the caret rests (a hint for cache warming)."""
DIAGNOSTICS = "qodeassist/diagnostics"
"""Server→client request: the editor's diagnostics, for the ``diagnostics`` tool."""

INLINE_EDIT = "textDocument/copilotInlineEdit"
"""Next-edit suggestion, as Copilot's language server serves it (its clients work unchanged)."""
INLINE_EDIT_ALIAS = "qodeassist/inlineEdit"
DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit"
DID_FOCUS = "textDocument/didFocus"

CMD_ACCEPTED = "qodeassist.accepted"
CMD_NEXT_EDIT_ACCEPTED = "qodeassist.nextEditAccepted"
CMD_RELOAD = "qodeassist.reloadConfiguration"
CMD_REFACTOR = "qodeassist.refactor"
CMD_DOCTOR = "qodeassist.doctor"

CONFIG_SECTION = "qodeassist"
