"""The ``ctx`` object body templates render against: its complete shape and the synthetic one.

``complete_context`` fills every documented key so templates never meet a missing one (a typo
in a template is then a load-time error, not a silent empty value). ``synthetic_context`` is the
hostile context every concrete agent must render to valid JSON at load time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_NASTY = 'quote " backslash \\ newline \n tab \t unicode ü 漢字 🚀 </code_context> {{ not }}'


def normalise_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """Return a history item with ``role``, ``content``, ``images`` and ``content_blocks``."""
    blocks = list(message.get("content_blocks") or [])
    content = message.get("content")
    if not blocks and isinstance(content, str) and content:
        blocks = [{"type": "text", "text": content}]
    if not isinstance(content, str):
        content = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    images = message.get("images")
    if images is None:
        images = [
            {k: b.get(k) for k in ("data", "media_type", "is_url")}
            for b in blocks
            if b.get("type") == "image"
        ]
    return {
        "role": message.get("role", "user"),
        "content": content,
        "images": list(images),
        "content_blocks": blocks,
    }


def complete_context(partial: Mapping[str, Any] | None = None, model: str = "") -> dict[str, Any]:
    """Return ``partial`` with every documented ``ctx`` key present."""
    given = dict(partial or {})
    ctx: dict[str, Any] = {
        "system_prompt": given.pop("system_prompt", None) or "",
        "prefix": given.pop("prefix", None),
        "suffix": given.pop("suffix", None),
        "single_line": bool(given.pop("single_line", False)),
        "avoid": [str(text) for text in given.pop("avoid", None) or []],
        "healed_word": str(given.pop("healed_word", None) or ""),
        "language": given.pop("language", None) or "",
        "model": given.pop("model", None) or model,
        "files_metadata": list(given.pop("files_metadata", None) or []),
        "history": [normalise_message(m) for m in given.pop("history", None) or []],
    }
    ctx.update(given)
    return ctx


def synthetic_context(model: str = "synthetic-model") -> dict[str, Any]:
    """Return the hostile context load-time validation renders every concrete agent against."""
    tool_input = {"path": 'src/a "b".py', "note": _NASTY}
    history = [
        {
            "role": "user",
            "content_blocks": [
                {"type": "text", "text": f"First question: {_NASTY}"},
                {
                    "type": "image",
                    "data": "iVBORw0KGgo=",
                    "media_type": "image/png",
                    "is_url": False,
                },
                {
                    "type": "image",
                    "data": 'https://example.com/a.png?x="1"',
                    "media_type": "image/png",
                    "is_url": True,
                },
            ],
        },
        {
            "role": "assistant",
            "content_blocks": [
                {
                    "type": "thinking",
                    "thinking": f"Signed thought {_NASTY}",
                    "signature": "sig+/==",
                },
                {"type": "thinking", "thinking": f"Unsigned reasoning {_NASTY}", "signature": ""},
                {"type": "redacted_thinking", "data": "RWRhY3RlZA=="},
                {"type": "text", "text": f"Let me read it. {_NASTY}"},
                {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": tool_input},
            ],
        },
        {
            "role": "user",
            "content_blocks": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "name": "read_file",
                    "content": f"file text {_NASTY}",
                    "is_error": False,
                }
            ],
        },
        {"role": "assistant", "content_blocks": [{"type": "text", "text": f"Answer {_NASTY}"}]},
        {"role": "user", "content_blocks": [{"type": "text", "text": f"Follow-up {_NASTY}"}]},
    ]
    return complete_context(
        {
            "system_prompt": f"System prompt {_NASTY}",
            "prefix": f'def f(x):\n    s = "{_NASTY}"\n    return ',
            "suffix": f"\n\nprint(f('\\\\'))  # {_NASTY}\n",
            "language": "python",
            "files_metadata": [
                {
                    "file_path": 'src/other "file".py',
                    "content": _NASTY,
                    "header": '# src/other "file".py\n',
                }
            ],
            "history": history,
        },
        model=model,
    )
