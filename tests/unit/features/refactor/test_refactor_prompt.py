"""The refactor system layer: markers, context window, what to generate, indentation."""

from __future__ import annotations

from qodeassist_lsp.context.documents import Document
from qodeassist_lsp.features.refactor.prompt import (
    Selection,
    build_refactor_layer,
    file_information,
    indentation_width,
)
from qodeassist_lsp.features.refactor.settings import RefactorSettings

TEXT = "l0\nl1\nclass A:\n    def f(self):\n        return 1\nl5\nl6\n"
DOC = Document("file:///p/a.py", TEXT, 3, "python", "/p/a.py")
NARROW = RefactorSettings(lines_before=1, lines_after=1)


def layer(sel: Selection, settings: RefactorSettings = NARROW, **kw: object) -> str:
    return build_refactor_layer(DOC, sel, settings, **kw)  # type: ignore[arg-type]


def test_selection_layer_exact_text() -> None:
    sel = Selection.of(DOC, 3, 4, 4, 16)
    assert layer(sel) == (
        "File information:\nLanguage: python (MIME: text/x-python)\nFile path: /p/a.py\n"
        "\n# Code Context with Position Markers\n"
        "class A:\n    <selection_start>def f(self):\n        return 1<selection_end><cursor>\nl5"
        "\n\n# What to Generate:"
        "\n- Generate ONLY the code that should REPLACE the selected text between "
        "<selection_start> and <selection_end> markers"
        "\n- Your output will completely replace the selected code"
        "\n\n## Indentation:"
        "\n- CRITICAL: The code to replace starts with 4 spaces of indentation"
        "\n- Your output MUST start with exactly 4 spaces (or equivalent tabs)"
        "\n- Each line in your output must maintain this base indentation"
        "\n- PRESERVE all indentation from the original code"
    )


def test_backward_selection_puts_cursor_first() -> None:
    sel = Selection.of(DOC, 4, 16, 3, 4, cursor_at_start=True)
    assert "<cursor><selection_start>def f(self):" in layer(sel)


def test_unindented_selection_only_preserve_note() -> None:
    text = layer(Selection.of(DOC, 2, 0, 2, 8))
    assert text.endswith("\n\n## Indentation:\n- PRESERVE all indentation from the original code")
    assert "CRITICAL" not in text


def test_insert_layer_exact_tail() -> None:
    sel = Selection.of(DOC, 4, 8, 4, 8)
    text = layer(sel, RefactorSettings(lines_before=0, lines_after=0))
    assert "\n# Code Context with Position Markers\n        <cursor>return 1\n\n" in text
    assert text.endswith(
        "\n\n# What to Generate:"
        "\n- Generate ONLY the code that should be INSERTED at the <cursor> position"
        "\n- Your output will be inserted at the cursor location"
        "\n\n## Indentation:"
        "\n- CRITICAL: Current line has 8 spaces of indentation"
        "\n- If generating multiline code, EVERY line must start with at least 8 spaces"
        "\n- If generating single-line code, it will be inserted inline (no indentation needed)"
    )


def test_insert_on_unindented_line_has_no_indentation_section() -> None:
    assert "## Indentation" not in layer(Selection.of(DOC, 0, 1, 0, 1))


def test_context_window_counts_lines() -> None:
    text = layer(Selection.of(DOC, 3, 4, 3, 16), RefactorSettings(lines_before=2, lines_after=2))
    assert "Markers\nl1\nclass A:\n    <selection_start>" in text
    assert "<cursor>\n        return 1\nl5\n\n# What" in text


def test_full_file() -> None:
    text = layer(Selection.of(DOC, 2, 0, 2, 0), RefactorSettings(read_full_file=True))
    assert "Markers\nl0\nl1\n<cursor>class A:" in text and "l6\n\n\n# What" in text


def test_open_files_only_when_enabled() -> None:
    other = Document("file:///p/b.py", "B = 1", 1, "python", "/p/b.py")
    sel = Selection.of(DOC, 0, 0, 0, 2)
    assert "User files context" not in layer(sel, open_files=[other])
    enabled = RefactorSettings(use_open_files=True)
    assert layer(sel, enabled, open_files=[other]).endswith(
        "\n\nUser files context:\nFile: /p/b.py\nB = 1\n\n"
    )


def test_tabs_count_four() -> None:
    assert indentation_width("\t  x") == 6
    assert indentation_width("x") == 0


def test_file_information_without_language_id() -> None:
    doc = Document("file:///p/m.cpp", "", 0, "", "/p/m.cpp")
    assert file_information(doc) == (
        "File information:\nLanguage: plaintext (MIME: text/x-c++src)\nFile path: /p/m.cpp\n"
    )


def test_selection_is_clamped_and_ordered() -> None:
    sel = Selection.of(DOC, 1, 99, 0, 0)
    assert (sel.start, sel.end) == (0, 5)


def test_a_cr_only_file_counts_its_lines_as_the_editor_does() -> None:
    cr = Document("file:///p/a.py", TEXT.replace("\n", "\r"), 3, "python", "/p/a.py")
    selection = Selection.of(cr, 3, 4, 3, 16)
    text = build_refactor_layer(cr, selection, RefactorSettings(lines_before=2, lines_after=2))
    assert "Markers\nl1\rclass A:\r    <selection_start>def f(self):" in text
    assert "<cursor>\r        return 1\rl5\n\n# What" in text
    assert "starts with 4 spaces of indentation" in text
