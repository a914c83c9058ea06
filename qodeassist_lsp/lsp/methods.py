"""Names of the custom LSP methods and commands (SPEC §4), defined once."""

from __future__ import annotations

STATUS = "qodeassist/status"
AGENTS_LIST = "qodeassist/agents/list"

CMD_ACCEPTED = "qodeassist.accepted"
CMD_RELOAD = "qodeassist.reloadConfiguration"

CONFIG_SECTION = "qodeassist"

CUSTOM_REQUESTS = frozenset({STATUS, AGENTS_LIST})
CUSTOM_NOTIFICATIONS: frozenset[str] = frozenset()
