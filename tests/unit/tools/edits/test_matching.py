"""Edit-block matching: exact, whitespace-tolerant, fuzzy within the threshold, refusals."""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz

from qodeassist_lsp.tools.edits.blocks import EditBlock, EditRefused
from qodeassist_lsp.tools.edits.matching import (
    AMBIGUITY_MARGIN,
    FUZZY_THRESHOLD,
    apply_blocks,
)

SOURCE = """\
import math


def total(items):
    result = 0
    for item in items:
        result += item.price
    return result


def count(items):
    n = 0
    for item in items:
        n += 1
    return n
"""


def test_exact_block_is_replaced_once():
    block = EditBlock("        result += item.price\n", "        result += item.price * item.qty\n")
    applied = apply_blocks(SOURCE, [block], "shop.py")
    assert applied.text == SOURCE.replace("item.price\n", "item.price * item.qty\n")
    assert [m.kind for m in applied.matches] == ["exact"]
    assert applied.notes() == []


def test_blocks_apply_in_order_each_against_the_result_of_the_previous():
    blocks = [
        EditBlock("import math\n", "import math\nimport sys\n"),
        EditBlock("import sys\n", "import os\n"),
    ]
    assert apply_blocks(SOURCE, blocks, "shop.py").text.startswith("import math\nimport os\n\n")


def test_whitespace_only_differences_match_and_keep_the_files_indentation():
    # The model lost the indentation and added trailing spaces: still the same lines.
    block = EditBlock(
        "for item in items:  \n    result += item.price\n",
        "for item in items:\n    result += item.price * 2\n",
    )
    applied = apply_blocks(SOURCE, [block], "shop.py")
    assert applied.matches[0].kind == "whitespace"
    assert "    for item in items:\n        result += item.price * 2\n    return result" in (
        applied.text
    )
    assert applied.notes() == ["block 1 matched ignoring whitespace"]


def test_one_changed_line_in_a_block_still_matches_fuzzily():
    # The model misremembered one token (price → cost): 96% similar, above the threshold.
    search = (
        "def total(items):\n    result = 0\n    for item in items:\n"
        "        result += item.cost\n    return result\n"
    )
    replace = "def total(items):\n    return sum(item.price for item in items)\n"
    applied = apply_blocks(SOURCE, [EditBlock(search, replace)], "shop.py")
    assert applied.matches[0].kind == "fuzzy"
    assert FUZZY_THRESHOLD <= applied.matches[0].score < 100
    assert "def total(items):\n    return sum(item.price for item in items)\n\n\ndef count" in (
        applied.text
    )
    assert "result" not in applied.text


def test_a_block_missing_one_short_line_matches_the_run_with_it():
    # `result = 0` is missing: the run one line longer is 93% similar.
    search = "def total(items):\n    for item in items:\n        result += item.price\n    return result\n"
    applied = apply_blocks(
        SOURCE, [EditBlock(search, "def total(items):\n    return 0\n")], "shop.py"
    )
    assert applied.matches[0].kind == "fuzzy"
    assert "import math\n\n\ndef total(items):\n    return 0\n\n\ndef count" in applied.text


def test_a_short_block_missing_a_line_is_too_different():
    # Three lines, one missing: 80% similar, so it is refused rather than guessed.
    search = "    result = 0\n    for item in items:\n    return result\n"
    with pytest.raises(EditRefused, match=r"closest lines are 5-6 \(81% similar"):
        apply_blocks(SOURCE, [EditBlock(search, "    return 0\n")], "shop.py")


def test_a_different_function_of_the_same_shape_must_not_match():
    # Structurally like count() but a different body: below the threshold, refused.
    search = "def size(items):\n    k = 0\n    for entry in items:\n        k += 2\n    return k\n"
    best = fuzz.ratio(
        search.strip(),
        "def count(items):\n    n = 0\n    for item in items:\n        n += 1\n    return n",
    )
    assert best < FUZZY_THRESHOLD
    with pytest.raises(EditRefused) as refused:
        apply_blocks(SOURCE, [EditBlock(search, "pass\n")], "shop.py")
    message = str(refused.value)
    assert "edit block 1 of 1 matches nothing in shop.py" in message
    assert "closest lines are 11-15" in message  # count()
    assert "   11| def count(items):" in message
    assert f"{FUZZY_THRESHOLD:.0f}% needed" in message


def test_a_block_that_matches_twice_exactly_is_ambiguous():
    block = EditBlock("    for item in items:\n", "    for item in reversed(items):\n")
    with pytest.raises(EditRefused, match=r"matches shop.py in 2 places \(lines 6, 13\)"):
        apply_blocks(SOURCE, [block], "shop.py")


def test_a_block_that_matches_twice_ignoring_whitespace_is_ambiguous():
    block = EditBlock("for item in items:\n", "for x in items:\n")
    text = "if a:\n    for item in items:  \n        pass\nfor item in  items:\n    pass\n"
    with pytest.raises(EditRefused, match="2 places when whitespace is ignored"):
        apply_blocks(text, [block], "a.py")


def test_two_near_identical_fuzzy_candidates_are_ambiguous():
    twin = "def f(a):\n    x = compute(a, 1)\n    y = x + 1\n    return y\n"
    text = twin + "\n\n" + twin.replace("f(a)", "g(a)")
    search = "def h(a):\n    x = compute(a, 1)\n    y = x + 1\n    return y\n"  # f or g?
    with pytest.raises(EditRefused, match="ambiguous") as refused:
        apply_blocks(text, [EditBlock(search, "pass\n")], "twins.py")
    assert "lines 1-4" in str(refused.value) and "lines 7-10" in str(refused.value)
    assert AMBIGUITY_MARGIN > 0


def test_empty_search_appends_and_an_empty_replace_removes_the_lines():
    appended = apply_blocks("a\nb", [EditBlock("", "c\n")], "x.txt")
    assert appended.text == "a\nb\nc\n" and appended.matches[0].kind == "append"
    removed = apply_blocks("a\n  b\nc\n", [EditBlock("b", "")], "x.txt")
    assert removed.text == "a\n  \nc\n"  # exact: only the text matched
    removed_lines = apply_blocks("a\n  b  \nc\n", [EditBlock("b\n", "")], "x.txt")
    assert removed_lines.text == "a\nc\n"  # whitespace match: whole lines go


def test_crlf_files_keep_their_line_breaks():
    text = "one\r\ntwo\r\nthree\r\n"
    applied = apply_blocks(text, [EditBlock("two\n", "2\n")], "w.txt")
    assert applied.text == "one\r\n2\r\nthree\r\n"


def test_an_edit_that_changes_nothing_is_refused():
    with pytest.raises(EditRefused, match="unchanged"):
        apply_blocks(SOURCE, [EditBlock("import math", "import math")], "shop.py")


def test_no_match_in_an_empty_file_says_so():
    with pytest.raises(EditRefused, match="matches nothing"):
        apply_blocks("", [EditBlock("x = 1\n", "x = 2\n")], "empty.py")
