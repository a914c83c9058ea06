"""Post-processing: fences, prose, echoes, stop rules, whitespace, stream stopping."""

from __future__ import annotations

from typing import Any

import pytest

from qodeassist_lsp.features.completion.languages import LanguageTable
from qodeassist_lsp.features.completion.postprocess import (
    PostprocessOptions,
    Postprocessor,
    Processed,
    alternatives,
    inside_block,
)

TABLE = LanguageTable()


def post(**options: Any) -> Postprocessor:
    options.setdefault("is_fence_tag", TABLE.is_fence_tag)
    return Postprocessor(PostprocessOptions(**options))


def test_raw_keeps_text_but_chops_trailing_whitespace() -> None:
    p = post(output_handler="raw")
    assert p.process("```python\nx  \n```\n\n").text == "```python\nx\n```"


def test_auto_without_fence_is_plain_code() -> None:
    p = post()
    assert p.process("return a + b\n").text == "return a + b"  # trailing newline removed
    assert p.process("\n    return 1").text == "\n    return 1"  # a leading newline is code


def test_fenced_code_with_prose_becomes_comments() -> None:
    p = post(comment_prefix="#")
    raw = "Here is the code:\n```python\ndef f():\n    return 1\n```\nIt returns one."
    assert p.process(raw).text == "# Here is the code:\ndef f():\n    return 1\n# It returns one."


def test_lua_and_drop_prose() -> None:
    assert post(comment_prefix="--").process("Note\n```lua\nx = 1\n```").text == "-- Note\nx = 1"
    dropped = post(drop_prose=True).process("Sure!\n\n```cpp\nint x;\n```\nDone.")
    assert dropped.text == "int x;"


def test_unknown_fence_text_is_kept_as_code_and_known_tags_dropped() -> None:
    p = post()
    assert p.process("```x = 1\ny = 2\n```").text == "x = 1\ny = 2"
    assert p.process("```qml\nItem {}\n```").text == "Item {}"
    assert p.process("```python title=a.py\nx\n```").text == "x"


def test_force_treats_unfenced_text_as_prose() -> None:
    assert post(output_handler="force").process("just words").text == "// just words"


def test_unterminated_fence_keeps_code() -> None:
    assert post().process("```js\nconst a = 1;\nconst b").text == "const a = 1;\nconst b"


def test_prefix_echo_is_removed() -> None:
    p = post(line_before="    result = compute(")
    assert p.process("result = compute(a, b)").text == "a, b)"
    spaced = post(line_before="x = ")
    assert spaced.process("x = 5").text == "5"
    short = post(line_before="ab")
    assert short.process("ab cd").text == "ab cd"  # too short to call it an echo


def test_single_line_cut_and_prose_dropped() -> None:
    p = post(single_line=True)
    assert p.process("a + b\nmore()\n") == Processed("a + b", True)
    assert p.process("```py\nreturn x\nmore\n```").text == "return x"
    assert post(single_line=True, comment_prefix="#").process("Sure:\n```py\nx\n```").text == "x"


def test_after_a_finished_line_the_suggestion_is_the_next_line() -> None:
    p = post(single_line=True, next_line_at_end=True, line_before="x = f()", next_line="y()")
    assert p.process("\n    z = g(x)\n    w()\n") == Processed("\n    z = g(x)", True)
    assert p.process("\n    z = g(", final=False) == Processed("", False)  # still coming
    assert p.should_stop("\n") is False
    assert p.should_stop("\n    z = g(x)\n") is True
    assert p.process("\ny()\n").text == ""  # the model reached the code below
    assert p.process(" + 1\nmore()").text == " + 1"  # the line goes on: as before
    assert post(single_line=True, line_before="x = f()").process("\n    z()\n").text == ""


def test_after_a_finished_line_the_next_line_of_code_may_follow_blank_lines() -> None:
    p = post(single_line=True, next_line_at_end=True, line_before="x = f()", next_line="y()")
    assert p.process("\n\nlater()\nmore()") == Processed("\n\nlater()", True)
    assert p.process("\n\n\ndef g():\n").text == "\n\n\ndef g():"  # two: PEP 8's
    assert p.process("\n\n\n\nfar()\n") == Processed("", True)  # three: a new section
    assert p.should_stop("\n\n") is False  # the code is still to come
    assert p.should_stop("\n\n\n\n") is True
    assert p.should_stop("\n\n    later()\n") is True
    assert p.process("\n\ny()\n").text == ""  # the code below, after its blank line


def test_a_repeated_line_stops_before_the_repetition() -> None:
    p = post()
    processed = p.process("a()\nb()\nb()\nb()\nb()\n")
    assert processed == Processed("a()\nb()", True)
    assert p.process("\n\n\nx").text == "\n\n\nx"  # blank lines are not repetition
    assert p.process("f(g(\n  x\n))\n))").text == "f(g(\n  x\n))\n))"  # closers alone


def test_the_reported_completion_after_y_equals_loses_its_repeated_line() -> None:
    # `complete` on "x = 1\ny = " returned this, the last line twice.
    p = post(line_before="y = ")
    processed = p.process("2\nz = 3\nprint(x,y,z)\nprint(x,y,z)")
    assert processed == Processed("2\nz = 3\nprint(x,y,z)", True)
    assert p.should_stop("2\nz = 3\nprint(x,y,z)\nprint(x,y,z)\n")


def test_a_repeated_block_stops_before_the_repetition() -> None:
    p = post()
    looping = "total = 0\nfor x in xs:\n    total += x\nfor x in xs:\n    total += x\n"
    assert p.process(looping) == Processed("total = 0\nfor x in xs:\n    total += x", True)
    # an earlier line coming back later, not right after itself, is ordinary code
    assert p.process("i += 1\nf(i)\ni += 1\ng(i)").text == "i += 1\nf(i)\ni += 1\ng(i)"


def test_a_line_looping_within_itself_ends_after_the_first_copy() -> None:
    # The replay's lexer.py answer that ran to max_tokens (1.7 s) on Gemma 3 270M.
    looping = "(?u<10)d?([0-9]+)d?([0-9]+)d?([0-9]+)d?([0-9]+)d?([0-9"
    single = post(single_line=True)
    assert single.process(looping) == Processed("(?u<10)d?([0-9]+)", True)
    assert single.looping(looping) and single.should_stop(looping)
    assert post().process(f"x = 1\n{looping}\nmore()").text == "x = 1\n(?u<10)d?([0-9]+)"
    # Data repeats short or plain pieces: not a loop.
    for line in ("[0, 0, 0, 0, 0, 0, 0, 0]", "# " + "-" * 40, "=-=-=-=-=-=-=-=-", "ab ab"):
        assert not single.looping(line)
        assert single.process(line).text == line
    # Twice is not yet a loop: ``f(a), f(a)`` can be real code.
    assert not single.looping("call(a), call(a)")


def test_stops_at_the_line_below_the_cursor() -> None:
    p = post(next_line="    return total")
    processed = p.process("total += x\n    return total\n\ndef other():")
    assert processed == Processed("total += x", True)
    # the first line continues the cursor line: it may equal anything
    assert post(next_line="}").process("}\n}").text == "}"


def test_suffix_tail_trimmed_only_when_brackets_say_so() -> None:
    p = post(line_after=")")
    assert p.process("a,\n    b)").text == "a,\n    b"
    assert p.process("foo(\n    x)").text == "foo(\n    x)"  # balanced: the ) closes foo(
    assert post(line_after=")").process("x)").text == "x)"  # single line: overlap handles it


def test_partial_processing_uses_complete_lines_only() -> None:
    p = post()
    assert p.process("one\ntw", final=False).text == "one"
    assert p.process("no newline yet", final=False).text == ""


def test_should_stop() -> None:
    single = post(single_line=True)
    assert not single.should_stop("return x")
    assert single.should_stop("return x\n")
    assert not single.should_stop("```python\n")
    assert single.should_stop("```python\nreturn x\n")
    # a chat model's intro: wait for a fence for a few lines
    assert not single.should_stop("Here is the completion:\n")
    assert not single.should_stop("Here is the completion:\n\n")
    assert single.should_stop("Here is the completion:\nno fence\nstill none\n")
    assert post(single_line=True, output_handler="raw").should_stop("Here is:\n")
    # a line of code ending in a colon is an intro only where the answer starts the line
    assert not single.should_stop("Returns the result:\n")
    mid_line = post(single_line=True, line_before="    def encode(self) -> tuple[dict, ")
    assert mid_line.should_stop("bytes | None]:\n")
    assert not mid_line.should_stop("Here is the completion:\n")
    multi = post(next_line="}")
    assert not multi.should_stop("a();\nb();\n")
    assert multi.should_stop("a();\n}\n")


def test_alternatives() -> None:
    assert alternatives("a\nb\n\nc", 3) == ["a\nb\n\nc", "a\nb", "a"]
    assert alternatives("a\nb", 3) == ["a\nb", "a"]
    assert alternatives("one", 3) == ["one"]
    assert alternatives("a\nb\n\nc", 1) == ["a\nb\n\nc"]
    assert alternatives("", 3) == []


def test_after_fresh_indentation_a_skipped_line_is_pulled_up_to_the_cursor() -> None:
    p = post(line_before="    ", single_line=True)
    assert not p.should_stop("\n")  # only a blank line so far: the code is still to come
    assert p.process("\n", final=False) == Processed("", False)
    assert p.process("\n\n    count = 0\n    more()\n") == Processed("count = 0", True)
    assert p.should_stop("\n    count = 0\n")
    multi = post(line_before="    ")
    assert multi.process("\n    a()\n    b()").text == "a()\n    b()"
    assert multi.process("a()\n\n    b()").text == "a()\n\n    b()"  # not leading: kept
    assert post(line_before="x = ").process("\n1").text == "\n1"  # not a fresh line


@pytest.mark.parametrize(
    ("before", "after", "below", "expected"),
    [
        ("    ", "", "    return x", True),  # a line inserted mid-block
        ("    ", "", "        deeper()", True),
        ("    x = ", "", "    return x", True),
        ("if ok:", "", "    body()", True),  # the block's body is already there
        ("    ", ")", "    return x", True),  # closing characters right of the cursor
        ("    ", "", "", False),  # a blank line below: new code may go on
        ("    ", "", "def g():", False),  # the block ends below
        ("    ", "", "}", False),
        ("    ", "", "    )", False),
        ("", "", "x = 1", True),
        ("f(", "a)", "x = 1", False),  # code right of the cursor: single-line anyway
    ],
)
def test_inside_block(before: str, after: str, below: str, expected: bool) -> None:
    assert inside_block(before, after, below) is expected


def test_a_line_indented_less_than_the_cursor_ends_the_block() -> None:
    p = post(line_before="        ")  # inside a loop body
    assert p.process("ret.add(e1)\n    return ret\n") == Processed("ret.add(e1)", True)
    assert p.should_stop("ret.add(e1)\n    return ret\n")
    assert p.process("a()\n        b()\n\n    c()").text == "a()\n        b()"
    brace = post(line_before="    ")
    assert brace.process("x();\n    y();\n}\nint z;").text == "x();\n    y();\n}"  # closer kept
    assert post().process("a()\nb()").text == "a()\nb()"  # at column 0 nothing is less
    assert post(line_before="    if x:").process(" y()\n    z()").text == " y()\n    z()"


def test_code_after_a_return_in_the_same_block_ends_the_suggestion() -> None:
    # Issue 46.3, HumanEval/59 through the server: the first line alone passed, the model's
    # unreachable lines after it broke the program.
    p = post(line_before="    ")
    assert p.process('return largest\n    """\n    return largest') == Processed(
        "return largest", True
    )
    assert p.should_stop('return largest\n    """\n')
    # A return in a nested block: the code after that block runs, and stays.
    nested = "if x:\n        return 1\n    return 2"
    assert p.process(nested).text == nested
    # Not a whole statement yet: its continuation lines stay.
    assert p.process("return (a +\n    b)").text == "return (a +\n    b)"
    assert p.process("raise ValueError(x)\n    y = 1").text == "raise ValueError(x)"
    assert post(line_before="").process("returns = 1\nx = 2").text == "returns = 1\nx = 2"


def test_a_single_line_answer_keeps_the_lines_that_close_its_brackets() -> None:
    # Issue 46.3: a call or list the model breaks over lines is one statement; its first line
    # alone does not parse.
    p = post(single_line=True, line_before="    ", comment_prefix="#")
    answer = "result = compute(a,\n                 b)\n    other()\n"
    assert p.process(answer) == Processed("result = compute(a,\n                 b)", True)
    assert not p.should_stop("result = compute(a,\n")  # still open: the stream goes on
    assert p.should_stop("result = compute(a,\n                 b)\n")
    # Brackets in strings and comments do not count; nor do those typed before the cursor,
    # closed by the answer or left open for the user (arguments written a line each).
    assert p.process('s = "(" + x\nmore()').text == 's = "(" + x'
    assert p.process("x = 1  # (see below\nmore()").text == "x = 1  # (see below"
    assert post(single_line=True, line_before="f(").process("a, b)\nmore()").text == "a, b)"
    assert post(single_line=True, line_before="x = f(").process("a,\n  b)").text == "a,"
    # Never closed within four lines: the first line alone, as before.
    never = "f(a,\n  b,\n  c,\n  d,\n  e,\n  g)"
    assert p.process(never) == Processed("f(a,", True)
    assert p.should_stop("f(a,\n  b,\n  c,\n  d,\n  e,\n")
    # The line below indented deeper already goes on with the statement (HumanEval/19's
    # ``value_map = {`` above its items): the first line alone.
    deeper = post(single_line=True, line_before="    ", next_line="        'zero': 0,")
    assert deeper.process("value_map = {\n        'one': 1}\n").text == "value_map = {"
    # Text right of the cursor: the overlap rules own the line, the first line alone.
    assert post(single_line=True, line_after=")").process("f(a,\n b").text == "f(a,"


def test_a_multi_line_answer_cut_inside_brackets_ends_at_its_last_whole_statement() -> None:
    # Issue 46.3: the 32-token cap cut HumanEval/10's answer inside a call.
    p = post(comment_prefix="#")
    capped = "if n < 0:\n    return x[:n] + x[n +"
    assert p.process(capped).text == "if n < 0:"
    assert p.process("total = f(a,\n          b)\nreturn g(").text == "total = f(a,\n          b)"
    assert p.process("items = [\n    1,\n    2,").text == "items = [\n    1,\n    2,"  # no end
    assert p.process("x = 1\ny = 2").text == "x = 1\ny = 2"
    assert p.process("x = 1\ny = (2\nz", final=False).text == "x = 1"  # shown while it streams
    # Text right of the cursor may close them.
    assert post(line_after=")").process("a,\n    g(b").text == "a,\n    g(b"


def test_a_multi_line_answer_does_not_end_on_a_line_that_needs_more() -> None:
    # Issue 46.3: HumanEval/107, the cap cut the answer after a ``for`` header and in an ``if``.
    p = post(comment_prefix="#")
    capped = "count = 0\nfor i in range(n):\n    if is_palindrome(i) and i % 2 =="
    assert p.process(capped).text == "count = 0"
    assert p.process("x = 1\nif x:\n    y = 2\nelse:").text == "x = 1\nif x:\n    y = 2"
    assert p.process("total = a +\n").text == "total = a +"  # the first line always stays
    lua = post(comment_prefix="--")
    assert lua.process("local n = 0\nfor i = 1, 3 do").text == "local n = 0"
    assert p.process("x = 1  # note:\ny = 2").text == "x = 1  # note:\ny = 2"


def test_a_first_line_that_cannot_precede_the_deeper_line_below_goes_on_to_one_that_can() -> None:
    # Issue 46.3: the line below is indented deeper, so the cursor's line must open a block;
    # the model wrote another statement first, then the block's header.
    p = post(single_line=True, line_before="    ", comment_prefix="#", next_line="        y(x)")
    answer = "total = 0\n    for x in xs:\n        y(x)\n"
    assert p.process(answer) == Processed("total = 0\n    for x in xs:", True)
    assert not p.should_stop("total = 0\n")  # the header may still come
    assert p.should_stop("total = 0\n    for x in xs:\n")
    # A first line that opens the block, or none found: the first line alone, as before.
    assert p.process("for x in xs:\n        y(x)\n").text == "for x in xs:"
    assert p.process("total = 0\n    return total\n    for x in xs:").text == "total = 0"
    assert p.process("total = 0\n        z = 1\n").text == "total = 0"
    assert p.process("a = 0\n    b = 0\n    c = 0\n    d = 0\n    e = 0\n").text == "a = 0"
    # C without braces, Lua and a statement left open count as opening.
    c = post(single_line=True, line_before="  ", comment_prefix="//", next_line="    f();")
    assert c.process("x++;\n  if (a)\n    f();").text == "x++;\n  if (a)"
    assert c.process("while (a < b)\n    f();").text == "while (a < b)"
    lua = post(single_line=True, line_before="", comment_prefix="--", next_line="  f()")
    assert lua.process("local n = 0\nfor i = 1, n do\n  f()").text == "local n = 0\nfor i = 1, n do"
    assert lua.process("x = a +\n  f()").text == "x = a +"
    js = post(single_line=True, line_before="  ", comment_prefix="//", next_line="    f(x);")
    assert (
        js.process("// each one\n  items.forEach((x) => {").text
        == "// each one\n  items.forEach((x) => {"
    )
    # A comment the model wrote first (HumanEval/103), then the header.
    comment = "# round it\n    n = int(n)\n    if n > m:\n        return -1"
    assert p.process(comment).text == "# round it\n    n = int(n)\n    if n > m:"
    # Nothing below, a line below at the cursor's level, or text right of the cursor: the
    # rule does not apply.
    assert post(single_line=True, line_before="    ").process(answer).text == "total = 0"
    same = post(single_line=True, line_before="    ", comment_prefix="#", next_line="    y(x)")
    assert same.process(answer).text == "total = 0"
    right = post(single_line=True, line_before="    ", line_after="x", next_line="        y(x)")
    assert right.process(answer).text == "total = 0"
    # Mid-line the user is writing the line: ``for x in xs`` stays theirs to end.
    mid = post(single_line=True, line_before="    for x in x", next_line="        y(x)")
    assert mid.process("s\n    for y in ys:\n").text == "s"
