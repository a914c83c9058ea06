"""Prefix/suffix windows, licence headers, the cursor and the completion.context layer."""

from __future__ import annotations

import random
import re
from pathlib import Path

from qodeassist_lsp.context.documents import Document, DocumentStore, LineEdit
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.features.completion.context_builder import (
    _NAME,
    _YEAR,
    HEAD_LIMIT,
    Cursor,
    HeaderCache,
    _comments_licence_like,
    _licence_like,
    _starts_word,
    build_context,
    context_layer,
    find_license_header,
    stepped,
)
from qodeassist_lsp.features.completion.languages import LanguageTable
from qodeassist_lsp.features.completion.settings import CompletionSettings

TABLE = LanguageTable()
LINES = "".join(f"line{i}\n" for i in range(10))


def doc(text: str, path: str = "/p/a.py") -> Document:
    return Document("file://" + path, text, 1, "python", path)


def cursor_at(text: str, marker: str = "|") -> tuple[str, Cursor]:
    offset = text.index(marker)
    text = text.replace(marker, "", 1)
    return text, Cursor.at(text, offset)


def test_cursor_parts() -> None:
    text, cursor = cursor_at("a\nfoo(|x)\r\nb")
    assert (cursor.line, cursor.character) == (1, 4)
    assert (cursor.line_before, cursor.line_after) == ("foo(", "x)")
    assert cursor.next_line(text) == "b"
    assert Cursor.at_position(text, 1, 4, cursor.offset) == cursor
    text, cursor = cursor_at("x|\n\n  \n  y\n")
    assert cursor.next_line(text) == "  y"
    text, cursor = cursor_at("last|")
    assert cursor.next_line(text) == "" and cursor.line_after == ""


def test_lines_window_includes_the_cursor_line_in_both() -> None:
    text = LINES
    offset = text.index("line5") + 3
    cursor = Cursor.at(text, offset)
    ctx = build_context(doc(text), cursor, CompletionSettings(lines_before=2, lines_after=1))
    assert ctx.prefix == "line3\nline4\nlin"
    assert ctx.suffix == "e5\nline6"
    ctx = build_context(doc(text), cursor, CompletionSettings(lines_before=0, lines_after=0))
    assert (ctx.prefix, ctx.suffix) == ("lin", "e5")
    big = build_context(doc(text), cursor, CompletionSettings(lines_before=99, lines_after=99))
    assert big.prefix + big.suffix == text


def test_full_file() -> None:
    text = LINES
    cursor = Cursor.at(text, 17)
    ctx = build_context(doc(text), cursor, CompletionSettings(read_full_file=True))
    assert (ctx.prefix, ctx.suffix) == (text[:17], text[17:])


def test_token_budget_interleaves_and_hands_over_spare_budget() -> None:
    text = "".join(f"{i:07d}\n" for i in range(100))  # 8 chars = 2 tokens a line
    cursor = Cursor.at(text, text.index("0000050"))
    settings = CompletionSettings(max_context_tokens=20, prefix_ratio=0.5)
    ctx = build_context(doc(text), cursor, settings)
    assert ctx.prefix.count("\n") == 5 and ctx.suffix.count("\n") == 4
    assert ctx.prefix.startswith("0000045") and ctx.suffix.endswith("0000054")
    near_end = Cursor.at(text, text.index("0000098"))
    ctx = build_context(doc(text), near_end, settings)
    # the suffix hits the end of the file: its spare share goes to the prefix
    assert ctx.suffix == "0000098\n0000099\n"
    assert ctx.prefix.count("\n") == 7


def test_token_budget_with_ratio() -> None:
    text = "".join(f"{i:07d}\n" for i in range(100))
    cursor = Cursor.at(text, text.index("0000050"))
    ctx = build_context(doc(text), cursor, CompletionSettings(max_context_tokens=40))
    assert ctx.prefix.count("\n") == 15
    assert ctx.suffix.count("\n") == 4


LICENCE = """/*
 * Copyright (C) 2024 Jane Doe
 * Licensed under the GPL.
 */
// helpers follow
#include <x.h>

int main() {
"""


def test_licence_header_found_and_skipped() -> None:
    c_lang = TABLE.detect("/p/a.c")
    header = find_license_header(LICENCE, c_lang)
    assert header is not None
    assert LICENCE[: header.end].endswith("// helpers follow\n")
    text = LICENCE + "    return 0;\n}\n"
    cursor = Cursor.at(text, text.index("return"))
    ctx = build_context(doc(text, "/p/a.c"), cursor, CompletionSettings(), header)
    assert ctx.prefix.startswith("#include <x.h>")
    assert "Copyright" not in ctx.prefix


def test_cursor_inside_the_header() -> None:
    header = find_license_header(LICENCE, TABLE.detect("/p/a.c"))
    assert header is not None
    cursor = Cursor.at(LICENCE, LICENCE.index("Licensed"))
    ctx = build_context(doc(LICENCE, "/p/a.c"), cursor, CompletionSettings(lines_after=2), header)
    assert ctx.prefix == " * "
    assert ctx.suffix == "#include <x.h>\n"


def test_licence_detection_rules() -> None:
    py = TABLE.detect("/a.py")
    assert find_license_header("# Copyright 2020 ACME\nimport os\n", py) is not None
    assert find_license_header("# (c) Jane Doe\nx = 1\n", py) is not None
    assert find_license_header("# Written 2021 by Jane Doe\n", py) is not None  # year + name
    assert find_license_header("# just a comment\nx = 1\n", py) is None
    assert find_license_header("# copyright, no year or name\n", py) is None
    # a trailing comment after code is not a header block
    assert find_license_header("x = 1  # Copyright 2020 ACME\n", py) is None
    # `#` is not a comment in C: an #include line never hides the code
    assert find_license_header("#include <a> // x\n", TABLE.detect("/a.c")) is None
    # unknown languages accept every syntax (the original's regex)
    header = find_license_header("#!/bin/x\n# Copyright 2020 ACME\n\nbody\n", None)
    assert header is not None and header.start == 0


def test_years_and_names_count_only_where_a_word_starts() -> None:
    py = TABLE.detect("/a.py")
    assert find_license_header("# Written 2021 by Jane Doe\n", py) is not None
    assert find_license_header("# Written x2021 by _Jane Doe\n", py) is None
    assert find_license_header("# Written (2021) by xJane Doe Smith\n", py) is not None


def test_the_word_start_check_agrees_with_a_leading_word_boundary() -> None:
    rng = random.Random(11)
    pieces = ["John", "Smith", "x", "A.", " ", "\n", "_", "1999", "2024", "20", "é", "Ölaf", "(c)"]
    year, name = re.compile(r"\b(?:19|20)\d{2}\b"), re.compile(r"\b[A-Z][a-z.]+ [A-Z][a-z.]+\b")
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        assert _starts_word(_YEAR, text) == (year.search(text) is not None), text
        assert _starts_word(_NAME, text) == (name.search(text) is not None), text


def test_many_comments_without_a_licence_are_ruled_out_together() -> None:
    c_lang = TABLE.detect("/p/a.c")
    code = "\n".join(f"// step {i}" if i % 3 else f"int v{i} = f({i});" for i in range(600))
    assert len(code) < HEAD_LIMIT
    assert find_license_header(code, c_lang) is None
    text = code + "\n\n// Copyright 2020 ACME\nint main;\n"
    header = find_license_header(text, c_lang)
    assert header is not None and text[header.start :].startswith("// Copyright 2020 ACME")


def test_comments_checked_one_by_one_agree_with_the_comments_joined() -> None:
    rng = random.Random(7)
    pieces = ["# ", "// ", "Copyright", "(c)", "2021", "1999", "Jane", "Doe", "x", " ", "_", "é"]
    for _ in range(2000):
        comments = [
            "".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
            for _ in range(rng.randrange(5))
        ]
        joined = _licence_like("\n".join(comments))
        assert _comments_licence_like(tuple(comments)) == joined, comments


def test_first_qualifying_block_wins_and_adjacent_lines_merge() -> None:
    py = TABLE.detect("/a.py")
    text = "# module docs\n\n# Copyright 2020 ACME\n# more text\n\nx = 1\n"
    header = find_license_header(text, py)
    assert header is not None
    assert text[header.start : header.end] == "# Copyright 2020 ACME\n# more text\n"


def test_header_cache_reuses_while_head_unchanged() -> None:
    cache = HeaderCache()
    py = TABLE.detect("/a.py")
    first = doc("# Copyright 2020 ACME\nx\n")
    assert cache.get(first, py) is not None
    assert cache.get(Document(first.uri, first.text + "y\n"), py) is not None
    assert cache.get(Document(first.uri, "x\n"), py) is None
    cache.forget(first.uri)


def test_context_layer(tmp_path: Path) -> None:
    (tmp_path / ".qodeassistignore").write_text("secret.py\n", encoding="utf-8")
    ignore = IgnoreFilter(tmp_path)
    store = DocumentStore()
    me = store.open(f"file://{tmp_path}/me.py", "x = 1\n", 1, "python")
    other = f"file://{tmp_path}/other.py"
    store.open(other, "a = 1\nb = 2\n", 1, "python")
    store.change(other, "a = 10\nb = 2\n", 2, [LineEdit(0, "0")])
    secret = f"file://{tmp_path}/secret.py"
    store.open(secret, "token = 1\n", 1, "python")
    store.change(secret, "token = 12\n", 2, [LineEdit(0, "2")])
    store.change(me.uri, "x = 12\n", 2, [LineEdit(0, "2")])

    store.open(f"file://{tmp_path}/untouched.py", "u = 1\n", 1, "python")
    checked: list[str] = []

    def ignored(d: Document) -> bool:
        checked.append(d.uri)
        return bool(d.path) and ignore.is_ignored(d.path)

    layer = context_layer(
        me,
        mime="text/x-python",
        settings=CompletionSettings(),
        store=store,
        is_ignored=ignored,
    )
    assert layer.startswith(
        f"\nFile information:\nLanguage: python (MIME: text/x-python)\nFile path: {tmp_path}/me.py"
    )
    assert "Recent Project Changes Context:\na = 10\n" in layer
    assert "token" not in layer and "x = 12" not in layer
    assert "User files context" not in layer
    assert checked == [other, secret]  # documents without changes need no ignore check
    layer = context_layer(
        me,
        mime="text/x-python",
        settings=CompletionSettings(use_open_files_context=True, use_recent_changes=False),
        store=store,
        is_ignored=ignored,
    )
    assert f"User files context:\nFile: {tmp_path}/other.py\na = 10\nb = 2\n" in layer
    assert f"File: {tmp_path}/untouched.py\nu = 1\n" in layer
    assert "Recent Project Changes" not in layer and "token" not in layer


def test_the_lines_window_starts_in_steps_so_a_prompt_cache_is_reused() -> None:
    text = "".join(f"l{i}\n" for i in range(200))
    settings = CompletionSettings(lines_before=50, lines_after=0)
    starts = []
    for line in range(60, 84):
        cursor = Cursor.at(text, text.index(f"l{line}\n"))
        prefix = build_context(doc(text), cursor, settings).prefix
        first = int(prefix.split("\n", 1)[0][1:])
        assert 50 <= line - first < 50 + 12  # lines_before, plus less than one step (50 // 4)
        assert first % 12 == 0
        starts.append(first)
    assert len(set(starts)) == 3  # 24 lines typed down, the start moved twice
    assert stepped(5, 50) == 50 and stepped(100, 7) == 7  # near the top, or a small window


def test_line_below() -> None:
    text, cursor = cursor_at("a|\r\n  b\r\nc")
    assert cursor.line_below(text) == "  b"
    text, cursor = cursor_at("a\nlast|")
    assert cursor.line_below(text) == ""
