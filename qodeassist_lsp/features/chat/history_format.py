"""Chat history files: QodeAssist's v0.3 block format, and the import of v0.1/v0.2 files.

A file holds the messages (blocks as in the original: ``text``, ``thinking``, ``tool_use``,
``stored_image`` …), per-request usage, and our few additions the original ignores (``title``,
``agent``, ``linkedFiles``). Reading never fails on one bad block or message: it is skipped
and reported, so a chat written by a newer or older version still opens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from qodeassist_lsp.core.content import (
    Block,
    FileEditBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    StoredAttachmentBlock,
    StoredImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from qodeassist_lsp.core.events import camel_json
from qodeassist_lsp.wire.errors import QodeAssistError
from qodeassist_lsp.wire.parser import text_of

VERSION = "0.3"
LEGACY_VERSIONS = frozenset({"0.1", "0.2"})
_LEGACY_ROLES = {0: "system", 1: "user", 2: "assistant", 3: "tool", 4: "file_edit", 5: "thinking"}
_SIGNATURE_MARK = "\n[Signature:"


class HistoryFormatError(QodeAssistError, ValueError):
    """The file is not a chat history this version can read."""


@dataclass
class ChatFile:
    """Everything a chat history file stores."""

    messages: list[Message] = field(default_factory=list)
    title: str = ""
    agent: str = ""
    linked_files: list[str] = field(default_factory=list)
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    compressed_from: str | None = None
    compressed_at: str | None = None
    plan: dict[str, Any] | None = None
    """A plan-mode chat's plan (``features.chat.plan_state``), kept as stored."""


_CAMEL_BLOCKS = (TextBlock, ThinkingBlock, StoredImageBlock, StoredAttachmentBlock, FileEditBlock)
"""Blocks stored as their fields under camelCase names."""


def encode_block(block: Block) -> dict[str, Any] | None:
    """Return the v0.3 JSON object of ``block`` (``None`` for blocks never persisted)."""
    if isinstance(block, _CAMEL_BLOCKS):
        return camel_json(block, "type")
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "signature": block.data}
    if isinstance(block, ImageBlock):
        source = "url" if block.is_url else "base64"
        return {
            "type": "image",
            "data": block.data,
            "mediaType": block.media_type,
            "sourceType": source,
        }
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ToolResultBlock):
        encoded: dict[str, Any] = {
            "type": "tool_result",
            "toolUseId": block.tool_use_id,
            "result": block.content,
            "name": block.name,
        }
        if block.is_error:
            encoded["isError"] = True
        return encoded
    return None  # completion blocks are per-request context, never history


def encode_message(message: Message) -> dict[str, Any]:
    """Return the v0.3 JSON object of ``message``."""
    encoded: dict[str, Any] = {"role": message.role}
    if message.id:
        encoded["id"] = message.id
    encoded["blocks"] = [b for b in map(encode_block, message.blocks) if b is not None]
    return encoded


def encode(chat: ChatFile) -> str:
    """Return the file text of ``chat`` (always v0.3)."""
    data = {
        "version": VERSION,
        "title": chat.title,
        "agent": chat.agent,
        "linkedFiles": chat.linked_files,
        "messages": [encode_message(m) for m in chat.messages],
        "usage": chat.usage,
        "compressedFrom": chat.compressed_from,
        "compressedAt": chat.compressed_at,
    }
    if chat.plan is not None:
        data["plan"] = chat.plan
    return json.dumps(data, ensure_ascii=False, indent=1)


def decode_block(data: Any) -> Block:
    """Return the block of a v0.3 JSON object; raise ``ValueError`` for unknown or bad ones."""
    if not isinstance(data, dict):
        raise ValueError("a block must be an object")
    kind = data.get("type")
    try:
        if kind == "text":
            return TextBlock(_str(data["text"]))
        if kind == "thinking":
            return ThinkingBlock(_str(data["thinking"]), _str(data.get("signature", "")))
        if kind == "redacted_thinking":
            return RedactedThinkingBlock(_str(data.get("signature", data.get("data", ""))))
        if kind == "image":
            return ImageBlock(
                _str(data["data"]),
                _str(data.get("mediaType", "image/png")),
                is_url=data.get("sourceType") == "url",
            )
        if kind == "tool_use":
            arguments = data.get("input", {})
            if not isinstance(arguments, dict):
                raise ValueError("tool_use input must be an object")
            return ToolUseBlock(_str(data["id"]), _str(data["name"]), arguments)
        if kind == "tool_result":
            return ToolResultBlock(
                _str(data["toolUseId"]),
                _str(data.get("name", "")),
                _str(data.get("result", "")),
                bool(data.get("isError", False)),
            )
        if kind == "stored_image":
            return StoredImageBlock(
                _str(data["fileName"]),
                _str(data["storedPath"]),
                _str(data.get("mediaType", "image/png")),
            )
        if kind == "stored_attachment":
            return StoredAttachmentBlock(_str(data["fileName"]), _str(data["storedPath"]))
        if kind == "file_edit":
            return FileEditBlock(
                _str(data["editId"]),
                _str(data["filePath"]),
                _str(data.get("oldContent", "")),
                _str(data.get("newContent", "")),
                # Edits loaded from history can no longer be applied or undone.
                "archived",
                "Loaded from chat history",
            )
    except KeyError as exc:
        raise ValueError(f"{kind} block without {exc.args[0]!r}") from None
    raise ValueError(f"unknown block type {kind!r}")


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def decode(text: str) -> tuple[ChatFile, list[str]]:
    """Parse a history file of any supported version; return it and the warnings."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HistoryFormatError(f"not valid JSON (line {exc.lineno}): {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("messages", []), list):
        raise HistoryFormatError("not a chat history: expected an object with 'messages'")
    version = str(data.get("version", ""))
    warnings: list[str] = []
    if version == VERSION:
        messages = _decode_messages(data["messages"], warnings)
    elif version in LEGACY_VERSIONS:
        messages = _import_legacy(data["messages"], warnings)
    else:
        raise HistoryFormatError(f"Unsupported version {version!r} (this server reads 0.1–0.3)")
    chat = ChatFile(
        messages=messages,
        title=text_of(data.get("title")),
        agent=text_of(data.get("agent")),
        linked_files=[f for f in data.get("linkedFiles", []) or [] if isinstance(f, str)],
        usage=_usage(data.get("usage")),
        compressed_from=data.get("compressedFrom") or None,
        compressed_at=data.get("compressedAt") or None,
        plan=data["plan"] if isinstance(data.get("plan"), dict) else None,
    )
    return chat, warnings


def _usage(value: Any) -> dict[str, dict[str, int]]:
    if not isinstance(value, dict):
        return {}
    usage: dict[str, dict[str, int]] = {}
    for key, counts in value.items():
        if isinstance(counts, dict):
            usage[str(key)] = {k: int(v) for k, v in counts.items() if isinstance(v, int)}
    return usage


def _decode_messages(raw: list[Any], warnings: list[str]) -> list[Message]:
    messages: list[Message] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant", "system"):
            warnings.append(f"message {index}: skipped (no valid role)")
            continue
        if item["role"] == "system":
            continue  # system layers are rebuilt on every send
        blocks: list[Block] = []
        for block in item.get("blocks", []) or []:
            try:
                blocks.append(decode_block(block))
            except ValueError as exc:
                warnings.append(f"message {index}: block skipped: {exc}")
        if blocks:
            messages.append(Message(item["role"], tuple(blocks), text_of(item.get("id"))))
    return messages


def _import_legacy(raw: list[Any], warnings: list[str]) -> list[Message]:
    """Convert v0.1/v0.2 flat rows; consecutive assistant pieces merge into one message."""
    messages: list[Message] = []

    def add(role: str, blocks: list[Block], message_id: str = "") -> None:
        last = messages[-1] if messages else None
        if role == "assistant" and last is not None and last.role == "assistant":
            messages[-1] = Message("assistant", (*last.blocks, *blocks), last.id or message_id)
        elif role == "user" and last is not None and last.role == "user" and _only_results(blocks):
            messages[-1] = Message("user", (*last.blocks, *blocks), last.id)
        else:
            messages.append(Message(role, tuple(blocks), message_id))  # type: ignore[arg-type]

    for index, row in enumerate(raw):
        if not isinstance(row, dict):
            warnings.append(f"message {index}: skipped (not an object)")
            continue
        role = _LEGACY_ROLES.get(row.get("role"), row.get("role"))  # type: ignore[arg-type]
        content = row.get("content", "")
        content = content if isinstance(content, str) else ""
        row_id = text_of(row.get("id"))
        if role == "user":
            blocks: list[Block] = [TextBlock(content)] if content else []
            blocks += _legacy_attachments(row)
            if blocks:
                add("user", blocks)
        elif role == "assistant":
            if content:
                add("assistant", [TextBlock(content)], row_id)
        elif role == "thinking":
            add("assistant", [_legacy_thinking(row, content)], row_id)
        elif role == "tool":
            call_id = row_id or f"legacy_{index}"
            name = text_of(row.get("toolName")) or "tool"
            arguments = row.get("toolArguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    arguments = {"raw": arguments}
            if not isinstance(arguments, dict):
                arguments = {}
            result = row.get("toolResult", content)
            add("assistant", [ToolUseBlock(call_id, name, arguments)], row_id)
            add("user", [ToolResultBlock(call_id, name, result if isinstance(result, str) else "")])
        elif role == "file_edit":
            add("assistant", [TextBlock(content)] if content else [], row_id)
        elif role != "system":
            warnings.append(f"message {index}: skipped (unknown role {row.get('role')!r})")
    return [m for m in messages if m.blocks]


def _only_results(blocks: list[Block]) -> bool:
    return bool(blocks) and all(isinstance(b, ToolResultBlock) for b in blocks)


def _legacy_thinking(row: dict[str, Any], content: str) -> Block:
    signature = text_of(row.get("signature"))
    if _SIGNATURE_MARK in content:
        content, _, rest = content.partition(_SIGNATURE_MARK)
        signature = signature or rest.rstrip().rstrip("]").strip()
    if row.get("isRedacted"):
        return RedactedThinkingBlock(signature)
    return ThinkingBlock(content, signature)


def _legacy_attachments(row: dict[str, Any]) -> list[Block]:
    blocks: list[Block] = []
    for attachment in row.get("attachments", []) or []:
        if isinstance(attachment, dict):
            name = text_of(attachment.get("filename") or attachment.get("fileName"))
            stored = text_of(attachment.get("storedPath"))
            text = text_of(attachment.get("content"))
            if stored:
                blocks.append(StoredAttachmentBlock(name or stored, stored))
            elif text:
                blocks.append(TextBlock(f"File: {name}\n```\n{text}\n```"))
    for image in row.get("images", []) or []:
        if isinstance(image, dict) and image.get("storedPath"):
            blocks.append(
                StoredImageBlock(
                    text_of(image.get("fileName")) or "image",
                    text_of(image.get("storedPath")),
                    text_of(image.get("mediaType")) or "image/png",
                )
            )
    return blocks
