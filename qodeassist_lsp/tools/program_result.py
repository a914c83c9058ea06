"""``Finished``: what a program run for a tool did, and the text the tool answers with.

Both runners produce it: ``process.run_program`` here and an ACP client's terminal; the
workspace's ``ProgramRunner`` protocol returns it. It lives apart from ``process`` so that the
workspace can name it without importing the runner (which imports the tool base, which imports
the workspace).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Finished"]


@dataclass(frozen=True)
class Finished:
    """What a program did: its exit code (None when killed on timeout) and its output."""

    exit_code: int | None
    output: str
    dropped: int
    """Bytes of output beyond the cap that were not kept."""
    timed_out: bool = False

    def report(self, command: str, timeout_s: float, keep: str) -> str:
        """Return the text a tool answers with."""
        if self.timed_out:
            status = f"killed after {timeout_s:g} s (the time limit); output so far:"
        else:
            status = f"exit code {self.exit_code}"
        text = self.output
        if self.dropped:
            note = f"[{self.dropped} bytes of output not shown; only the {keep} is kept]"
            text = f"{note}\n{text}" if keep == "tail" else f"{text}\n{note}"
        return f"$ {command}\n({status})\n{text}".rstrip("\n")
