"""The conversation content model: messages made of typed content blocks.

These are the single representation of a conversation, from the history a session owns to the
``ctx.history`` templates see and (later) the chat files on disk. Blocks are frozen dataclasses
with a ``type`` tag matching the serialised name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class TextBlock:
    """Plain text."""

    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True)
class ThinkingBlock:
    """Model reasoning; replayed to the provider only when it carries a signature."""

    thinking: str
    signature: str = ""
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class RedactedThinkingBlock:
    """Encrypted reasoning the provider asks to get back verbatim."""

    data: str
    type: Literal["redacted_thinking"] = "redacted_thinking"


@dataclass(frozen=True)
class ImageBlock:
    """An image: base64 ``data`` with ``media_type``, or a URL when ``is_url``."""

    data: str
    media_type: str = "image/png"
    is_url: bool = False
    type: Literal["image"] = "image"


@dataclass(frozen=True)
class ToolUseBlock:
    """The model asked to run tool ``name`` with ``input``."""

    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    signature: str = ""
    """Gemini's thought signature of the call, returned verbatim on the next request."""
    type: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True)
class ToolResultBlock:
    """The result of running a tool, sent back in the next request."""

    tool_use_id: str
    name: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True)
class CompletionBlock:
    """Code-completion context: becomes ``ctx.prefix`` / ``ctx.suffix``, never history text."""

    prefix: str
    suffix: str = ""
    single_line: bool = False
    """Only one line of the answer is used (``ctx.single_line``)."""
    avoid: tuple[str, ...] = ()
    """Tokens the answer must not contain: a wrong first answer's first token (``ctx.avoid``)."""
    healed_word: str = ""
    """The half-typed word cut off the prefix, which the answer must start with."""
    type: Literal["completion"] = "completion"


@dataclass(frozen=True)
class StoredImageBlock:
    """An attached image copied beside the chat; loaded as an image when sent."""

    file_name: str
    stored_path: str
    media_type: str = "image/png"
    type: Literal["stored_image"] = "stored_image"


@dataclass(frozen=True)
class StoredAttachmentBlock:
    """An attached text file copied beside the chat; loaded as text when sent."""

    file_name: str
    stored_path: str
    type: Literal["stored_attachment"] = "stored_attachment"


@dataclass(frozen=True)
class FileEditBlock:
    """A proposed edit of a workspace file (kept in the history, never sent to a model)."""

    edit_id: str
    file_path: str
    old_content: str
    new_content: str
    status: str = "archived"
    status_message: str = ""
    type: Literal["file_edit"] = "file_edit"


Block = (
    TextBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ImageBlock
    | ToolUseBlock
    | ToolResultBlock
    | CompletionBlock
    | StoredImageBlock
    | StoredAttachmentBlock
    | FileEditBlock
)
StoredBlock = StoredImageBlock | StoredAttachmentBlock


@dataclass(frozen=True)
class Message:
    """One turn: a role and its blocks; assistant messages carry the request id."""

    role: Role
    blocks: tuple[Block, ...]
    id: str = ""

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        """Return the tool calls of this message, in order."""
        return [b for b in self.blocks if isinstance(b, ToolUseBlock)]


def user_text(text: str) -> tuple[Block, ...]:
    """Return the blocks of a plain user message."""
    return (TextBlock(text),)
