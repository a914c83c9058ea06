"""Next-edit prompts: the context, the format per model, and the chat-model prompt.

Three kinds of model are served. Any chat model gets the bundled prompt below: the recent
edits as ``original:``/``updated:`` blocks (Sweep found these beat unified diffs), snippets of
recently viewed files, the file's diagnostics, and the window with a cursor marker, and is asked
for the whole window back inside ``<updated>`` tags. Sweep's next-edit models and Zeta-style
models are raw-prompt models with formats of their own (``model_formats``). The format follows
from the model name (``sweep``, ``zeta`` in it) and an agent can name it with the tag
``next-edit-format:chat|sweep|zeta``.

``fit_to_window`` turns the lines of any format's answer into a rewrite of the whole window, so
that an edit never deletes what the model did not write: an answer without a non-blank line is
the window unchanged; one that is not a complete rewrite (no closing tag, far fewer lines than
the window) is malformed; one that stops before the window's end (a lazy or truncated rewrite)
gets the window's remaining lines back unchanged when the lines it ends with occur once in the
window, and is malformed otherwise (where it stopped is unknown).
"""

from __future__ import annotations

import difflib
import enum
import re
from dataclasses import dataclass, field
from typing import Final

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.context.edit_history import Hunk
from qodeassist_lsp.features.next_edit.window import Window

__all__ = [
    "CURSOR",
    "FORMAT_TAG",
    "DiagnosticNote",
    "EditEntry",
    "NextEditContext",
    "Prompt",
    "PromptFormat",
    "Snippet",
    "chat_prompt",
    "fit_to_window",
    "format_for",
    "parse_chat_answer",
    "plausible",
    "with_trailing_lines",
]

FORMAT_TAG: Final = "next-edit-format:"
CURSOR: Final = "<|cursor|>"
_UPDATED = re.compile(r"<updated>\n?(.*?)\n?</updated>", re.DOTALL)
_FENCE = re.compile(r"^```[^\n]*\n(.*?)\n?```\s*$", re.DOTALL)


class PromptFormat(enum.StrEnum):
    """The prompt and answer shape a next-edit model understands."""

    CHAT = "chat"
    SWEEP = "sweep"
    ZETA = "zeta"


def format_for(profile: AgentProfile) -> PromptFormat:
    """Return the agent's format: its ``next-edit-format:`` tag, else guessed from the model."""
    for tag in profile.tags:
        if tag.startswith(FORMAT_TAG):
            name = tag[len(FORMAT_TAG) :].strip().lower()
            if name in PromptFormat.__members__.values():
                return PromptFormat(name)
    model = profile.model.lower()
    if "sweep" in model:
        return PromptFormat.SWEEP
    if "zeta" in model:
        return PromptFormat.ZETA
    return PromptFormat.CHAT


@dataclass(frozen=True, slots=True)
class EditEntry:
    """One recent edit of some file, for the prompt."""

    path: str
    hunk: Hunk


@dataclass(frozen=True, slots=True)
class Snippet:
    """Some lines of a recently viewed file."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class DiagnosticNote:
    """One diagnostic of the current file, as the client sent it."""

    line: int
    severity: str
    message: str


@dataclass(frozen=True, slots=True)
class NextEditContext:
    """Everything a next-edit prompt is built from."""

    path: str
    """The current file, relative to the project when it is inside it."""
    language: str
    window: Window
    edits: tuple[EditEntry, ...] = ()
    """Recent edits, oldest first (the current file's and other open files')."""
    snippets: tuple[Snippet, ...] = ()
    diagnostics: tuple[DiagnosticNote, ...] = ()
    window_before: str = field(default="")
    """The window's text from before the edits inside it (Sweep's ``original/`` section)."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """A built prompt: a user message for chat models, or a raw prompt continued as is."""

    text: str
    raw: bool
    stop: tuple[str, ...] = ()


def _block(lines: tuple[str, ...]) -> str:
    return "\n".join(lines) if lines else "(nothing)"


def chat_prompt(ctx: NextEditContext) -> Prompt:
    """Return the user message that asks a chat model for the rewritten window."""
    parts: list[str] = []
    if ctx.snippets:
        parts.append("Recently viewed code:")
        for snippet in ctx.snippets:
            parts.append(f'<snippet path="{snippet.path}">\n{snippet.text}\n</snippet>')
    if ctx.edits:
        parts.append("The user's recent edits, oldest first:")
        for entry in ctx.edits:
            hunk = entry.hunk
            parts.append(
                f'<edit path="{entry.path}" line="{hunk.start + 1}">\noriginal:\n'
                f"{_block(hunk.original)}\nupdated:\n{_block(hunk.updated)}\n</edit>"
            )
    if ctx.diagnostics:
        parts.append("Diagnostics of the current file:")
        parts.extend(f"line {d.line + 1}: {d.severity}: {d.message}" for d in ctx.diagnostics)
    window = ctx.window
    parts.append(
        f"The code around the cursor in {ctx.path} (lines {window.first + 1}-{window.last + 1},"
        f" {CURSOR} marks the cursor):\n<original>\n{window.with_cursor(CURSOR)}\n</original>"
    )
    parts.append(
        "Rewrite the code between <original> and </original> with the next edit the user is "
        "most likely to make, continuing their recent edits. Keep every other line exactly as "
        "it is, leave out the cursor marker, and answer with only the rewritten code between "
        "<updated> and </updated>. If no edit is needed, give the code back unchanged."
    )
    return Prompt("\n\n".join(parts), raw=False)


def _strip_markers(text: str, markers: tuple[str, ...]) -> str:
    for marker in markers:
        text = text.replace(marker, "")
    return text


def parse_chat_answer(answer: str, window: Window) -> tuple[str, ...] | None:
    """Return the rewritten window of a chat model's answer, or None when it is malformed."""
    found = _UPDATED.search(answer)
    if found is None:
        return None
    body = found.group(1)
    fenced = _FENCE.match(body.strip("\n"))
    if fenced is not None:
        body = fenced.group(1)
    return fit_to_window(tuple(_strip_markers(body, (CURSOR,)).split("\n")), window)


def fit_to_window(lines: tuple[str, ...], window: Window) -> tuple[str, ...] | None:
    """Return the answer ``lines`` as a rewrite of the whole window, or None when malformed.

    No line with text: the window unchanged (an empty answer changes nothing, it never deletes
    the window). An answer that stops before the window's last lines gets them back unchanged
    when that is unambiguous, else None: a short answer never deletes the lines it left out.
    """
    if not any(line.strip() for line in lines):
        return window.lines
    padded = with_trailing_lines(lines, window)
    if not plausible(padded, window):
        return None
    written = _without_trailing(lines)
    own = _without_trailing(window.lines)
    rest = _left_out(written, own)
    if rest is None:
        return None
    if not rest:
        return padded
    return written + rest + window.lines[len(own) :]


def _left_out(written: tuple[str, ...], own: tuple[str, ...]) -> tuple[str, ...] | None:
    """Return the window's last lines an answer stopped before (none: it reached the end).

    None when that cannot be told: the answer's last lines are changed lines that stand for
    more window lines (deleted, or cut off?), or the unchanged lines it ends with occur more
    than once in the window (where did it stop?).
    """
    opcodes = difflib.SequenceMatcher(None, own, written, autojunk=False).get_opcodes()
    if not opcodes:
        return ()
    tag, first, last, start, end = opcodes[-1]
    if tag == "replace" and end - start < last - first:
        return None
    if tag != "delete":
        return ()
    if len(opcodes) < 2 or opcodes[-2][0] != "equal":
        return None
    run = own[opcodes[-2][1] : opcodes[-2][2]]
    found = sum(own[i : i + len(run)] == run for i in range(len(own) - len(run) + 1))
    return own[first:] if found == 1 else None


def with_trailing_lines(lines: tuple[str, ...], window: Window) -> tuple[str, ...]:
    """Give back the window's trailing empty lines that an answer dropped (not an edit)."""
    wanted = len(window.lines) - len(tuple(_without_trailing(window.lines)))
    kept = tuple(_without_trailing(lines))
    return kept + ("",) * max(wanted, len(lines) - len(kept))


def _without_trailing(lines: tuple[str, ...]) -> tuple[str, ...]:
    end = len(lines)
    while end and not lines[end - 1]:
        end -= 1
    return lines[:end]


def plausible(lines: tuple[str, ...], window: Window) -> bool:
    """Whether ``lines`` can be a rewrite of the window (not a fragment of it)."""
    return len(lines) * 2 >= len(window.lines)
