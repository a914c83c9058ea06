"""Cut next-edit cases out of a git repository's history (how next_edit_data/ was made).

Run: .venv/bin/python benchmarks/next_edit_cases.py GIT_DIR REPO_NAME > cases.jsonl

Every non-merge commit that changes one Python file in exactly two small places (at most 3
lines a side each, at most 8 unchanged lines between them, neither whitespace-only) becomes a
case with a next edit: the upper change is the user's edit, the lower one the edit the server
should suggest. A commit that changes one Python file in exactly one small place becomes a
case without one (the user made the only change; the right answer is no suggestion). Each case
keeps an excerpt of the file (12 lines around the changes), not the file.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from typing import Any

CONTEXT = 12
MAX_SIDE = 3
MAX_GAP = 8


def git(git_dir: str, *args: str) -> str:
    """Return the output of ``git --git-dir GIT_DIR args``."""
    done = subprocess.run(
        ["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else ""


def changes(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    """The non-equal opcodes (i1, i2, j1, j2) from ``old`` to ``new``."""
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def small(old: list[str], new: list[str], change: tuple[int, int, int, int]) -> bool:
    """Whether ``change`` is small and more than whitespace."""
    i1, i2, j1, j2 = change
    if i2 - i1 > MAX_SIDE or j2 - j1 > MAX_SIDE:
        return False
    return "".join(old[i1:i2]).split() != "".join(new[j1:j2]).split()


def case(
    old: list[str], new: list[str], found: list[tuple[int, int, int, int]], source: dict[str, str]
) -> dict[str, Any]:
    """Build one case from the parent's and the commit's lines and their changes."""
    first = found[0]
    i1, i2, j1, j2 = first
    after_user = old[:i1] + new[j1:j2] + old[i2:]
    low = max(0, i1 - CONTEXT)
    high_old = min(len(old), found[-1][1] + CONTEXT)
    delta = (j2 - j1) - (i2 - i1)
    cursor_line = j2 - 1 if j2 > j1 else j1
    expected = None
    if len(found) == 2:
        shift = len(new) - len(old)
        expected = "".join(new[low : high_old + shift])
    return {
        "id": f"{source['commit'][:10]}:{source['path']}",
        "source": source,
        "before": "".join(old[low:high_old]),
        "after_user": "".join(after_user[low : high_old + delta]),
        "cursor": {
            "line": cursor_line - low,
            "character": len(new[cursor_line].rstrip("\n")) if cursor_line < len(new) else 0,
        },
        "expected": expected,
    }


def main() -> None:
    """Print the cases of the repository at ``argv[1]`` (named ``argv[2]``) as JSON lines."""
    git_dir, repo = sys.argv[1], sys.argv[2]
    for commit in git(git_dir, "log", "--no-merges", "--format=%H").split():
        parent = git(git_dir, "rev-parse", f"{commit}^").strip()
        if not parent:
            continue
        files = git(git_dir, "diff", "--name-only", parent, commit).split()
        if len(files) != 1 or not files[0].endswith(".py"):
            continue
        path = files[0]
        old = git(git_dir, "show", f"{parent}:{path}").splitlines(keepends=True)
        new = git(git_dir, "show", f"{commit}:{path}").splitlines(keepends=True)
        if not old or len(old) > 2000:
            continue
        found = changes(old, new)
        if not 1 <= len(found) <= 2 or not all(small(old, new, c) for c in found):
            continue
        if len(found) == 2 and found[1][0] - found[0][1] > MAX_GAP:
            continue
        source = {"repo": repo, "commit": commit, "parent": parent, "path": path}
        print(json.dumps(case(old, new, found, source)))


if __name__ == "__main__":
    main()
