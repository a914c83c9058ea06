"""The ``[chat]`` section of ``settings.toml``: chat sessions, history and compression.

Declared beside the feature that reads it; the host registers it (``lsp/sections.py``).
"""

from __future__ import annotations

from typing import Final

from pydantic import Field

from qodeassist_lsp.config.settings_types import (
    USER_ONLY_EXTRA,
    ConnectTimeout,
    FirstByteTimeout,
    RequestTimeout,
    Section,
    SettingsSection,
)


class ChatSettings(Section):
    """``[chat]``: chat sessions, history and compression."""

    link_open_files: bool = Field(
        default=False,
        description="Link every open (non-ignored) document to the chat; its current content is "
        "re-sent with every message.",
    )
    autosave: bool = Field(default=True, description="Save the chat history after every answer.")
    history_dir: str = Field(
        default="",
        description="Where chat histories are stored; empty = `<data dir>/chat_history`.",
        json_schema_extra=USER_ONLY_EXTRA,
    )
    auto_compress: bool = Field(
        default=False,
        description="Summarise the chat into a new one before sending once it reaches "
        "`auto_compress_threshold` tokens (needs a `chat_compression` agent).",
    )
    auto_compress_threshold: int = Field(
        default=40000,
        ge=1000,
        le=10_000_000,
        description="Estimated tokens at which `auto_compress` kicks in.",
    )
    router_timeout_ms: int = Field(
        default=5000,
        ge=100,
        le=120_000,
        description='How long `agent: "auto"` waits for the `chat_router` agent\'s choice '
        "before the first chat agent answers instead.",
    )
    connect_timeout_s: ConnectTimeout = 10.0
    first_byte_timeout_s: FirstByteTimeout = 300.0
    request_timeout_s: RequestTimeout = 120.0


CHAT_SETTINGS: Final = SettingsSection("chat", ChatSettings)
"""The ``[chat]`` section, read as ``settings.section(CHAT_SETTINGS)``."""
