"""The common prefix and suffix of two texts, compared in C-speed blocks.

What changed between a document's old and new text is what lies between their common ends: the
document store describes a full-text change with it, and the edit history finds a change's
lines with it, without splitting either text into lines.
"""

from __future__ import annotations

__all__ = ["common_ends"]


def _common_prefix(a: str, b: str) -> int:
    """Return the length of the common prefix of ``a`` and ``b`` (compared in C-speed blocks)."""
    size = min(len(a), len(b))
    pos = 0
    width = 4096
    # Compare blocks at C speed, halving the block at the first difference.
    while width:
        while pos < size and a[pos : pos + width] == b[pos : pos + width]:
            pos += width
        width //= 2
    return min(pos, size)


def common_ends(a: str, b: str) -> tuple[int, int]:
    """Return the lengths of the common prefix and suffix of ``a`` and ``b`` (not overlapping)."""
    prefix = _common_prefix(a, b)
    limit = min(len(a), len(b)) - prefix
    count = 0
    width = 4096
    la, lb = len(a), len(b)
    while width:
        while count < limit:
            step = min(width, limit - count)
            if a[la - count - step : la - count] != b[lb - count - step : lb - count]:
                break
            count += step
        width //= 2
    return prefix, count
