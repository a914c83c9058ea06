"""Edit blocks arrive as a JSON list or as SEARCH/REPLACE text; anything else is refused."""

from __future__ import annotations

import pytest

from qodeassist_lsp.tools.edits.blocks import EditBlock, EditRefused, parse_blocks


def test_a_list_of_objects_is_the_structured_shape():
    blocks = parse_blocks([{"search": "a\r\n", "replace": "b"}, {"search": "", "replace": "c"}])
    assert blocks == [EditBlock("a\n", "b"), EditBlock("", "c")]


def test_the_originals_old_and_new_content_are_accepted():
    assert parse_blocks({"old_content": "x", "new_content": "y"}) == [EditBlock("x", "y")]


def test_search_replace_text_blocks_are_parsed():
    text = (
        "<<<<<<< SEARCH\ndef f():\n    return 1\n=======\ndef f():\n    return 2\n"
        ">>>>>>> REPLACE\n\n<<<<<<< SEARCH\nx = 1\n=======\n>>>>>>> REPLACE\n"
    )
    assert parse_blocks(text) == [
        EditBlock("def f():\n    return 1\n", "def f():\n    return 2\n"),
        EditBlock("x = 1\n", ""),
    ]


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (None, "no edit blocks"),
        ([], "no edit blocks"),
        (["a"], "edit block 1 is not an object"),
        ([{"search": "a"}], 'edit block 1 needs string "search" and "replace"'),
        ("just some text", "no SEARCH/REPLACE block"),
    ],
)
def test_other_shapes_are_refused_with_the_expected_shape(value, fragment):
    with pytest.raises(EditRefused, match=fragment) as refused:
        parse_blocks(value)
    assert "SEARCH" in str(refused.value)
