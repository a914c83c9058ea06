"""The permission question people read: the tool, the file, the diff or the command (issue 47)."""

from __future__ import annotations

from qodeassist_lsp.tools.permission_text import MAX_DETAIL_LINES, describe_call

EDITS = [
    {
        "search": "def mul(a, b):\n    return a * b\n",
        "replace": 'def mul(a, b):\n    """Multiply a and b."""\n    return a * b\n',
    }
]


def test_an_edit_is_shown_as_diff_lines_with_their_indentation() -> None:
    text = describe_call("edit_file", "write", {"path": "demo.py", "edits": EDITS})
    assert text.split("\n") == [
        "QodeAssist: the model wants to change files with the tool edit_file on demo.py. Allow it?",
        "-def mul(a, b):",
        "-    return a * b",
        "+def mul(a, b):",
        '+    """Multiply a and b."""',
        "+    return a * b",
    ]
    assert "\\n" not in text and '\\"' not in text  # no JSON escapes


def test_search_replace_text_blocks_are_numbered_and_an_append_is_said() -> None:
    edits = (
        "<<<<<<< SEARCH\n    a = 1\n=======\n    a = 2\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\n=======\n\tb = 3\n>>>>>>> REPLACE\n"
    )
    lines = describe_call("edit_file", "write", {"path": "x.py", "edits": edits}).split("\n")
    assert lines[1:] == [
        "@@ block 1 of 2 @@",
        "-    a = 1",
        "+    a = 2",
        "@@ block 2 of 2 @@",
        "@@ appended at the end of the file @@",
        "+\tb = 3",
    ]


def test_create_delete_and_the_command_line() -> None:
    created = describe_call("create_file", "write", {"path": "n.py", "content": "a\r\n  b\n"})
    assert created.split("\n")[1:] == ["+a", "+  b"] and "to create n.py" in created
    deleted = describe_call("delete_file", "write", {"path": "old.py"})
    assert deleted == (
        "QodeAssist: the model wants to change files with the tool delete_file to delete old.py. "
        "Allow it?"
    )
    run = describe_call("terminal", "execute", {"command": 'grep -n "a  b" x', "cwd": "src"})
    assert run.split("\n") == [
        "QodeAssist: the model wants to run a program with the tool terminal. Allow it?",
        '$ grep -n "a  b" x',
        "(in src)",
    ]


def test_other_tools_get_one_line_per_argument_and_long_text_is_cut() -> None:
    text = describe_call("memory_write", "write", {"text": "one\ntwo", "tags": ["a", "b"]})
    assert text.split("\n")[1:] == ["text: one", "    two", 'tags: ["a", "b"]']
    long = describe_call("mcp_tool", "read", {"q": "x" * 1000})
    assert long.split("\n")[-1] == "    … (400 of 1000 characters shown)" and len(long) < 600
    body = "\n".join(f"    line {i}" for i in range(100))
    many = describe_call("create_file", "write", {"path": "big.py", "content": body})
    lines = many.split("\n")
    assert len(lines) == 1 + MAX_DETAIL_LINES + 1
    assert lines[1] == "+    line 0" and lines[-1] == "… (60 more lines not shown)"


def test_bad_edit_arguments_still_give_a_question() -> None:
    text = describe_call("edit_file", "write", {"path": "x.py", "edits": 3})
    assert text.split("\n")[1:] == ["edits: 3"]
    assert describe_call("edit_file", "write", {}).startswith(
        "QodeAssist: the model wants to change files with the tool edit_file. Allow it?"
    )
