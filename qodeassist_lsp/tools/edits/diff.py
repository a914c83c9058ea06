"""The unified diff of a ``fileEdit`` event: ``a/``, ``b/`` labels, ``/dev/null`` for absence."""

from __future__ import annotations

import difflib

CONTEXT_LINES = 3


def unified_diff(old: str | None, new: str | None, label: str) -> str:
    """Return the unified diff from ``old`` to ``new`` of the file ``label`` (None: absent)."""
    before = (old or "").splitlines(keepends=True)
    after = (new or "").splitlines(keepends=True)
    lines = difflib.unified_diff(
        before,
        after,
        "/dev/null" if old is None else f"a/{label}",
        "/dev/null" if new is None else f"b/{label}",
        n=CONTEXT_LINES,
    )
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:  # the file's last line has no line break
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
