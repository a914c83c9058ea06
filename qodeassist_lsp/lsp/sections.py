"""The settings sections the features declare, registered once beside ``app.FEATURES``.

Each feature declares its ``[section]`` of ``settings.toml`` in its own ``settings`` module;
whatever loads the configuration (the server, the CLI) passes this list on, so config never
imports a feature and the settings reference covers every registered section.
"""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.config.settings import Settings, SettingsSection
from qodeassist_lsp.features.chat.settings import CHAT_SETTINGS
from qodeassist_lsp.features.codebase.settings import CODEBASE_SETTINGS
from qodeassist_lsp.features.completion.settings import COMPLETION_SETTINGS
from qodeassist_lsp.features.next_edit.settings import NEXT_EDIT_SETTINGS
from qodeassist_lsp.features.refactor.settings import REFACTOR_SETTINGS
from qodeassist_lsp.workbench.features import settings_sections

SECTIONS: tuple[SettingsSection[Any], ...] = settings_sections(
    (COMPLETION_SETTINGS, CHAT_SETTINGS, REFACTOR_SETTINGS, NEXT_EDIT_SETTINGS, CODEBASE_SETTINGS)
)
"""Every feature's settings section, in the order of the settings reference; then those the
feature table's rows declare (a plugin's ``FeatureSpec(settings=...)``)."""

SETTINGS_MODEL: type[Settings] = Settings.with_sections(SECTIONS)
"""The full ``settings.toml`` model: the core sections and every feature's."""
