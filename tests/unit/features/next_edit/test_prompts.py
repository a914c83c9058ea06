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
    format_for,
    parse_chat_answer,
)
from qodeassist_lsp.features.next_edit.window import window_around

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
