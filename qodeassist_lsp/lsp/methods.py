"""Names of the custom LSP methods and commands (SPEC §4), defined once."""

from __future__ import annotations

STATUS = "qodeassist/status"
AGENTS_LIST = "qodeassist/agents/list"
REFACTOR_INSTRUCTIONS = "qodeassist/refactor/instructions"

CMD_ACCEPTED = "qodeassist.accepted"
CMD_RELOAD = "qodeassist.reloadConfiguration"
CMD_REFACTOR = "qodeassist.refactor"

CONFIG_SECTION = "qodeassist"

CUSTOM_REQUESTS = frozenset({STATUS, AGENTS_LIST, REFACTOR_INSTRUCTIONS})
CUSTOM_NOTIFICATIONS: frozenset[str] = frozenset()
