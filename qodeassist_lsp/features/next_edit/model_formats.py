"""Raw prompts of the open next-edit models: Sweep's and Zeta's, and their answers.

Sweep next-edit (sweepai/vscode-nes ``src/local/completions.ts``, zed ``sweep_prompt.rs``):
``<|file_sep|>`` sections — context files, ``{file}.diff`` with ``original:``/``updated:``
blocks, ``original/{file}`` (the window before the edits), ``current/{file}`` (the window now),
then ``updated/{file}``, after which the model writes the new window and stops at the next
``<|file_sep|>`` or ``</s>``.

Zeta 1 (zed ``crates/edit_prediction/src/zeta1.rs``): an instruction, the edits as "User
edited" unified-diff blocks, and the excerpt with ``<|editable_region_start|>``,
``<|editable_region_end|>`` and ``<|user_cursor_is_here|>`` markers; the answer repeats the
excerpt with the region rewritten. Here the editable region is the window.
"""

from __future__ import annotations

import difflib
from typing import Final

from qodeassist_lsp.features.next_edit.prompts import (
    NextEditContext,
    Prompt,
    fit_to_window,
)
from qodeassist_lsp.features.next_edit.window import Window

__all__ = ["parse_sweep_answer", "parse_zeta_answer", "sweep_prompt", "zeta_prompt"]

FILE_SEP: Final = "<|file_sep|>"
SWEEP_STOP: Final = (FILE_SEP, "</s>")
REGION_START: Final = "<|editable_region_start|>"
REGION_END: Final = "<|editable_region_end|>"
ZETA_CURSOR: Final = "<|user_cursor_is_here|>"
START_OF_FILE: Final = "<|start_of_file|>"
ZETA_INSTRUCTION: Final = (
    "You are a code completion assistant and your task is to analyze user edits and then "
    "rewrite an excerpt that the user provides, suggesting the appropriate edits within the "
    "excerpt, taking into account the cursor location."
)
ZETA_STOP: Final = (f"{REGION_END}\n```",)
SWEEP_DIFFS: Final = 3
"""Sweep's prompt carries at most this many of the newest hunks."""


def sweep_prompt(ctx: NextEditContext) -> Prompt:
    """Return Sweep's next-edit prompt for ``ctx``."""
    parts = [f"{FILE_SEP}{s.path}\n{s.text}\n" for s in ctx.snippets]
    for entry in ctx.edits[-SWEEP_DIFFS:]:
        hunk = entry.hunk
        original = "\n".join(hunk.original)
        updated = "\n".join(hunk.updated)
        parts.append(f"{FILE_SEP}{entry.path}.diff\noriginal:\n{original}\nupdated:\n{updated}\n")
    before = ctx.window_before or ctx.window.text
    parts.append(f"{FILE_SEP}original/{ctx.path}\n{before}\n")
    parts.append(f"{FILE_SEP}current/{ctx.path}\n{ctx.window.text}\n")
    parts.append(f"{FILE_SEP}updated/{ctx.path}\n")
    return Prompt("".join(parts), raw=True, stop=SWEEP_STOP)


def parse_sweep_answer(answer: str, window: Window) -> tuple[str, ...] | None:
    """Return the window Sweep wrote (up to its stop token), or None when it is malformed."""
    for stop in SWEEP_STOP:
        answer = answer.split(stop, 1)[0]
    return fit_to_window(tuple(answer.removesuffix("\n").split("\n")), window)


def _diff(path: str, original: tuple[str, ...], updated: tuple[str, ...], start: int) -> str:
    lines = difflib.unified_diff(
        list(original), list(updated), n=0, lineterm="", fromfile=path, tofile=path
    )
    body = [line for line in lines if not line.startswith(("---", "+++"))]
    # difflib numbers from the hunk's first line; the document's numbers say more.
    if body and body[0].startswith("@@"):
        body[0] = f"@@ -{start + 1},{len(original)} +{start + 1},{len(updated)} @@"
    return "\n".join(body)


def zeta_prompt(ctx: NextEditContext) -> Prompt:
    """Return the Zeta 1 prompt for ``ctx``."""
    events = [
        f'User edited "{entry.path}":\n```diff\n'
        f"{_diff(entry.path, entry.hunk.original, entry.hunk.updated, entry.hunk.start)}\n```"
        for entry in ctx.edits
    ]
    window = ctx.window
    head = f"{START_OF_FILE}\n" if window.first == 0 else ""
    excerpt = (
        f"```{ctx.path}\n{head}{REGION_START}\n{window.with_cursor(ZETA_CURSOR)}\n{REGION_END}\n```"
    )
    text = (
        f"### Instruction:\n{ZETA_INSTRUCTION}\n\n### User Edits:\n\n"
        + "\n\n".join(events)
        + f"\n\n### User Excerpt:\n\n{excerpt}\n\n### Response:\n"
    )
    return Prompt(text, raw=True, stop=ZETA_STOP)


def parse_zeta_answer(answer: str, window: Window) -> tuple[str, ...] | None:
    """Return the region a Zeta model rewrote, or None when its markers are missing."""
    start = answer.find(REGION_START)
    if start < 0:
        return None
    body = answer[start + len(REGION_START) :].removeprefix("\n")
    end = body.find(REGION_END)
    if end < 0:
        return None
    body = body[:end].removesuffix("\n").replace(ZETA_CURSOR, "")
    return fit_to_window(tuple(body.split("\n")), window)
