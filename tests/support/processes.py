"""Whether a process has exited, read from /proc (Linux): a zombie nobody reaped counts as gone."""

from __future__ import annotations

from pathlib import Path


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie waiting for its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"
