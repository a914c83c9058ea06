"""The project's rules files in the language server: the refactor's finder and the status part.

One `RulesFinder` per server, over the editor's workspace folders and the workbench's
``.qodeassistignore`` rule; the refactor service reads the rules for its document through it,
and ``qodeassist/status`` lists the files in effect for the workspace under ``rules``. (The
chat's prompts get them from the chat service, `features.chat.service.ChatService.rules`.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qodeassist_lsp.context.rules_files import RulesFinder, ignore_rule
from qodeassist_lsp.lsp.feature import LanguageFeature

if TYPE_CHECKING:
    from qodeassist_lsp.lsp.server import QodeAssistServer


class RulesFeature(LanguageFeature):
    """The rules files of the editor's workspace: one finder, and the ``rules`` status."""

    status_key = "rules"

    def __init__(self, server: QodeAssistServer) -> None:
        self.server = server
        self.finder = RulesFinder(
            lambda: server.backend.settings.rules,
            server.workspace_folders,
            ignore_rule(lambda root: server.workbench().qodeassist_ignore(root)),
        )
        """Finds the rules files of a file (or the workspace) of this server."""

    def status(self) -> Any:
        """Return the ``rules`` part of ``qodeassist/status``: the files in effect, by path."""
        return self.finder.find().status(self.server.backend.settings.rules.max_chars)


def finder_of(server: QodeAssistServer) -> RulesFinder:
    """Return the rules finder of ``server``."""
    return server.feature_of(RulesFeature).finder


def setup(server: QodeAssistServer) -> None:
    """Add the rules feature to ``server``."""
    server.add_feature(RulesFeature(server))
