"""Turning a conversation into the ``ctx`` object body templates render against.

The rules of the original (behaviour §5.3): a completion block supplies ``prefix``/``suffix``
and is not history; thinking without a signature is never replayed (OpenAI-style reasoning);
messages left with only thinking are dropped; tool calls without a result and results without a
call (orphans) are dropped; a tool result carries the name of its call. Stored attachments are
loaded through the session's content loader (a placeholder when they cannot be read), file
edits stay out of requests, and pinned blocks (linked files) lead the last user message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from qodeassist_lsp.config.template_context import complete_context
from qodeassist_lsp.core.content import (
    Block,
    CompletionBlock,
    FileEditBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    StoredAttachmentBlock,
    StoredBlock,
    StoredImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

ContentLoader = Callable[[StoredBlock], Block]
"""Turns a stored attachment into the block sent (``ImageBlock`` or ``TextBlock``); may raise."""


def unavailable(block: StoredBlock) -> TextBlock:
    """Return the placeholder sent for a stored attachment that cannot be loaded."""
    kind = "Image" if isinstance(block, StoredImageBlock) else "Attachment"
    return TextBlock(f"[{kind} unavailable: {block.file_name}]")


def _load(block: Block, loader: ContentLoader | None) -> Block:
    if not isinstance(block, (StoredImageBlock, StoredAttachmentBlock)):
        return block
    if loader is None:
        return unavailable(block)
    try:
        return loader(block)
    except OSError:
        return unavailable(block)


def _with_pinned(messages: Sequence[Message], pinned: Sequence[Block]) -> list[Message]:
    """Put ``pinned`` at the start of the last user message that is not only tool results."""
    result = list(messages)
    if not pinned:
        return result
    for index in range(len(result) - 1, -1, -1):
        message = result[index]
        if message.role != "user" or any(isinstance(b, CompletionBlock) for b in message.blocks):
            continue
        if not message.blocks or not isinstance(message.blocks[0], ToolResultBlock):
            result[index] = Message("user", (*pinned, *message.blocks), message.id)
            return result
    result.append(Message("user", tuple(pinned)))
    return result


def assemble_context(
    messages: Sequence[Message],
    system_prompt: str = "",
    *,
    model: str = "",
    language: str = "",
    files_metadata: Iterable[dict[str, str]] = (),
    loader: ContentLoader | None = None,
    pinned: Sequence[Block] = (),
) -> dict[str, Any]:
    """Return the complete template ``ctx`` for ``messages``."""
    messages = _with_pinned(messages, pinned)
    prefix: str | None = None
    suffix: str | None = None
    single_line = False
    avoid: list[str] = []
    healed_word = ""
    used = {b.id for m in messages for b in m.blocks if isinstance(b, ToolUseBlock)}
    answered = {b.tool_use_id for m in messages for b in m.blocks if isinstance(b, ToolResultBlock)}
    names = {b.id: b.name for m in messages for b in m.blocks if isinstance(b, ToolUseBlock)}
    history = []
    for message in messages:
        completion = next((b for b in message.blocks if isinstance(b, CompletionBlock)), None)
        if completion is not None:
            prefix, suffix = completion.prefix, completion.suffix
            single_line = completion.single_line
            avoid = list(completion.avoid)
            healed_word = completion.healed_word
            continue
        blocks = [
            _block(_load(b, loader), names)
            for b in message.blocks
            if _replayable(b, used=used, answered=answered)
        ]
        if not blocks or all(b["type"] in ("thinking", "redacted_thinking") for b in blocks):
            continue
        history.append({"role": message.role, "content_blocks": blocks})
    return complete_context(
        {
            "system_prompt": system_prompt,
            "prefix": prefix,
            "suffix": suffix,
            "single_line": single_line,
            "avoid": avoid,
            "healed_word": healed_word,
            "language": language,
            "files_metadata": list(files_metadata),
            "history": history,
        },
        model=model,
    )


def _replayable(block: Block, *, used: set[str], answered: set[str]) -> bool:
    if isinstance(block, ThinkingBlock):
        return bool(block.signature)
    if isinstance(block, RedactedThinkingBlock):
        return bool(block.data)
    if isinstance(block, ToolUseBlock):
        return block.id in answered
    if isinstance(block, ToolResultBlock):
        return block.tool_use_id in used
    return not isinstance(block, (CompletionBlock, FileEditBlock))


_SENT = (TextBlock, ThinkingBlock, RedactedThinkingBlock, ImageBlock, ToolUseBlock, ToolResultBlock)


def _block(block: Block, names: dict[str, str]) -> dict[str, Any]:
    """Return ``block`` as ``ctx.history`` shows it: its ``type``, then its fields by name."""
    if not isinstance(block, _SENT):
        raise TypeError(f"{type(block).__name__} is not sent to providers")
    sent: dict[str, Any] = {"type": block.type}
    sent |= {f.name: getattr(block, f.name) for f in dataclasses.fields(block) if f.name != "type"}
    if isinstance(block, ToolUseBlock) and not block.signature:
        del sent["signature"]
    if isinstance(block, ToolResultBlock):
        sent["name"] = names.get(block.tool_use_id, block.name)
    return sent
