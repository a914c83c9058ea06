"""stdio: pipes are read on the event loop, anything else goes through pygls's own reader."""

from __future__ import annotations

import os
from pathlib import Path

from qodeassist_lsp.lsp.stdio import pipe_like


def test_pipes_are_read_on_the_loop_and_files_are_not(tmp_path: Path) -> None:
    read, write = os.pipe()
    try:
        with os.fdopen(read, "rb", closefd=False) as stream:
            assert pipe_like(stream)
    finally:
        os.close(read)
        os.close(write)
    with (tmp_path / "input").open("wb+") as stream:
        assert not pipe_like(stream)
