"""Next-edit prompts: the format per agent, the three prompt shapes and their answers."""

from __future__ import annotations

from qodeassist_lsp.config.agent_profile import AgentProfile
from qodeassist_lsp.context.documents import Document
from qodeassist_lsp.context.edit_history import EditHistory
from qodeassist_lsp.features.next_edit.model_formats import (
    parse_sweep_answer,
    parse_zeta_answer,
    sweep_prompt,
    zeta_prompt,
)
from qodeassist_lsp.features.next_edit.prompts import (
    DiagnosticNote,
    EditEntry,
    NextEditContext,
    PromptFormat,
    Snippet,
    chat_prompt,
    fit_to_window,
    format_for,
    parse_chat_answer,
)
from qodeassist_lsp.features.next_edit.window import Window, window_around

BEFORE = "def area(w, h):\n    return w * h\n\nprint(area(2, 3))\n"
AFTER = BEFORE.replace("def area(w, h)", "def area(w, h, d)")


def profile(model: str, tags: list[str] | None = None) -> AgentProfile:
    return AgentProfile(
        name="A", provider_instance="P", model=model, tags=tags or [], body={"x": 1}
    )


def context() -> NextEditContext:
    history = EditHistory()
    history.record("u", BEFORE, AFTER)
    window = window_around(Document("u", AFTER), 0, 17)
    return NextEditContext(
        path="geo.py",
        language="python",
        window=window,
        edits=tuple(EditEntry("geo.py", h) for h in history.hunks("u")),
        snippets=(Snippet("main.py", "from geo import area"),),
        diagnostics=(DiagnosticNote(1, "error", "d is unused"),),
        window_before=window.before_edits(history.hunks("u")),
    )


def test_the_format_follows_the_tag_then_the_model_name() -> None:
    assert format_for(profile("qwen2.5-coder:7b")) is PromptFormat.CHAT
    assert format_for(profile("sweep-next-edit-1.5b")) is PromptFormat.SWEEP
    assert format_for(profile("zeta:7b")) is PromptFormat.ZETA
    assert format_for(profile("my-finetune", ["next-edit-format:Zeta"])) is PromptFormat.ZETA
    assert format_for(profile("sweep-x", ["next-edit-format:chat"])) is PromptFormat.CHAT


def test_the_chat_prompt_has_original_updated_blocks_and_the_cursor() -> None:
    prompt = chat_prompt(context())
    assert not prompt.raw
    text = prompt.text
    assert "original:\ndef area(w, h):\nupdated:\ndef area(w, h, d):" in text
    assert "def area(w, h, d)<|cursor|>:" in text
    assert '<snippet path="main.py">\nfrom geo import area\n</snippet>' in text
    assert "line 2: error: d is unused" in text
    assert text.index("<snippet") < text.index("<edit") < text.index("<original>")


def test_a_chat_answer_is_the_updated_block_or_nothing() -> None:
    window = context().window
    rewritten = AFTER.replace("w * h", "w * h * d")
    answer = f"Sure!\n<updated>\n```python\n{rewritten.rstrip()}<|cursor|>\n```\n</updated>"
    lines = parse_chat_answer(answer, window)
    assert lines is not None and "\n".join(lines) == rewritten
    assert parse_chat_answer(f"<updated>\n{rewritten}", window) is None  # unclosed: truncated
    assert parse_chat_answer("<updated>\nx = 1\n</updated>", window) is None  # a fragment


def test_the_sweep_prompt_sections_and_answer() -> None:
    ctx = context()
    prompt = sweep_prompt(ctx)
    assert prompt.raw and prompt.stop == ("<|file_sep|>", "</s>")
    assert prompt.text.startswith("<|file_sep|>main.py\nfrom geo import area\n")
    assert "<|file_sep|>geo.py.diff\noriginal:\ndef area(w, h):\nupdated:\n" in prompt.text
    assert f"<|file_sep|>original/geo.py\n{BEFORE.rstrip()}\n\n" in prompt.text + "\n"
    assert f"<|file_sep|>current/geo.py\n{AFTER}" in prompt.text
    assert prompt.text.endswith("<|file_sep|>updated/geo.py\n")
    rewritten = AFTER.replace("area(2, 3)", "area(2, 3, 4)")
    lines = parse_sweep_answer(rewritten + "<|file_sep|>", ctx.window)
    assert lines is not None and "\n".join(lines) == rewritten


def test_the_zeta_prompt_markers_and_answer() -> None:
    ctx = context()
    prompt = zeta_prompt(ctx)
    assert "### User Edits:" in prompt.text and "### Response:" in prompt.text
    assert "```diff\n@@ -1,1 +1,1 @@\n-def area(w, h):\n+def area(w, h, d):\n```" in prompt.text
    assert "<|start_of_file|>\n<|editable_region_start|>\n" in prompt.text
    assert "def area(w, h, d)<|user_cursor_is_here|>:" in prompt.text
    rewritten = AFTER.replace("area(2, 3)", "area(2, 3, 4)")
    answer = f"```geo.py\n<|editable_region_start|>\n{rewritten}<|editable_region_end|>\n```"
    lines = parse_zeta_answer(answer, ctx.window)
    assert lines is not None and "\n".join(lines) == rewritten
    assert parse_zeta_answer("no markers", ctx.window) is None


LONG = "\n".join(
    ["def area(w, h):", "    return w * h", ""] + [f"v{i} = area({i})" for i in range(3, 30)]
)


def long_window(text: str = LONG) -> Window:
    return window_around(Document("u", text + "\n"), 10, 0)  # lines 0-20


def test_an_answer_that_stops_early_keeps_the_rest_of_the_window() -> None:
    window = long_window()
    short = [line.replace("v4 = area", "v4 = surface") for line in window.lines[:11]]
    fitted = fit_to_window(tuple(short), window)
    assert fitted == (*short, *window.lines[11:])
    # What reaches the window's end is taken as it is: a deletion in the middle, an insertion.
    without_5 = window.lines[:5] + window.lines[6:]
    assert fit_to_window(without_5, window) == without_5
    added = (*window.lines, "v21 = area(21)")
    assert fit_to_window(added, window) == added


def test_an_early_stop_that_cannot_be_placed_is_malformed() -> None:
    lines = LONG.split("\n")
    lines[8] = lines[15] = "print()"
    window = long_window("\n".join(lines))
    # Changed line 7, then "print()" (lines 8 and 15): where did it stop?
    assert fit_to_window((*window.lines[:7], "v7 = surface(7)", "print()"), window) is None
    # Its last line changed and it stopped: did it delete lines 11-20 or was it cut off?
    assert fit_to_window((*window.lines[:10], "v10 = surface(10)"), window) is None
    # Changing the window's last line is no stop.
    last = (*window.lines[:20], "v20 = surface(20)")
    assert fit_to_window(last, window) == last


def test_an_empty_answer_is_the_window_unchanged_in_every_format() -> None:
    window = window_around(Document("u", "x = 1\n"), 0, 0)
    assert fit_to_window(("",), window) == window.lines
    assert parse_chat_answer("<updated>\n</updated>", window) == window.lines
    assert parse_chat_answer("<updated>\n  \n</updated>", window) == window.lines
    assert parse_sweep_answer("<|file_sep|>", window) == window.lines
    zeta = "<|editable_region_start|>\n<|editable_region_end|>\n```"
    assert parse_zeta_answer(zeta, window) == window.lines
