"""folder_lock: exclusive between holders, bounded waiting, and no file left in the folder."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from qodeassist_lsp.config.folder_lock import FolderLockTimeout, folder_lock


def test_a_second_holder_waits_and_times_out_with_a_clear_error(tmp_path: Path) -> None:
    with (
        folder_lock(tmp_path),
        pytest.raises(FolderLockTimeout, match="another writer"),
        folder_lock(tmp_path, timeout=0.1),
    ):
        pass  # pragma: no cover - never reached
    with folder_lock(tmp_path, timeout=0.1):  # released: free again
        pass
    assert list(tmp_path.iterdir()) == []


def test_holders_in_threads_never_overlap(tmp_path: Path) -> None:
    inside: list[int] = []
    overlaps: list[int] = []

    def hold(n: int) -> None:
        for _ in range(10):
            with folder_lock(tmp_path / "made"):
                inside.append(n)
                if len(inside) > 1:
                    overlaps.append(n)
                time.sleep(0.001)
                inside.remove(n)

    threads = [threading.Thread(target=hold, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == []
    assert list((tmp_path / "made").iterdir()) == []
