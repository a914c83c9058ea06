"""The unified diff of a file edit."""

from __future__ import annotations

from qodeassist_lsp.tools.edits.diff import unified_diff


def test_a_change_is_a_unified_diff_with_a_and_b_labels():
    diff = unified_diff("a\nb\nc\n", "a\nB\nc\n", "pkg/x.py")
    assert diff == "--- a/pkg/x.py\n+++ b/pkg/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"


def test_creation_and_deletion_diff_against_dev_null():
    assert unified_diff(None, "new\n", "n.py").startswith("--- /dev/null\n+++ b/n.py\n")
    assert unified_diff("old\n", None, "o.py").startswith("--- a/o.py\n+++ /dev/null\n")


def test_a_missing_final_newline_is_marked():
    diff = unified_diff("x", "y", "f")
    assert diff.endswith("-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n")
