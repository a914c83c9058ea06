"""wire.stdin: a pipe is read on the event loop, a file or ``/dev/null`` by a thread."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from qodeassist_lsp.wire.stdin import open_reader, pipe_like

WITHIN_S = 30


def test_pipes_are_read_on_the_loop_and_files_are_not(tmp_path: Path) -> None:
    read, write = os.pipe()
    try:
        assert pipe_like(read)
        with os.fdopen(read, "rb", closefd=False) as stream:
            assert pipe_like(stream)
    finally:
        os.close(read)
        os.close(write)
    with (tmp_path / "input").open("wb+") as stream:
        assert not pipe_like(stream)
        assert not pipe_like(stream.fileno())
    with open(os.devnull, "rb") as devnull:
        assert not pipe_like(devnull)
    assert not pipe_like(stream)  # closed: no descriptor to ask


async def test_a_file_is_read_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"first\n" + b"x" * 200_000 + b"\nlast")
    with path.open("rb") as stream:
        async with asyncio.timeout(WITHIN_S):
            reader = await open_reader(stream, 1 << 20)
            assert await reader.readline() == b"first\n"
            assert await reader.read() == b"x" * 200_000 + b"\nlast"
            assert reader.at_eof()


async def test_dev_null_ends_at_once() -> None:
    # The loop's pipe transport refused /dev/null and the read never ended.
    with os.fdopen(os.open(os.devnull, os.O_RDONLY), "rb") as devnull:
        async with asyncio.timeout(WITHIN_S):
            reader = await open_reader(devnull, 1 << 16)
            assert await reader.read() == b""


async def test_a_pipe_is_read_on_the_loop() -> None:
    read, write = os.pipe()
    with os.fdopen(read, "rb") as stream:
        async with asyncio.timeout(WITHIN_S):
            reader = await open_reader(stream, 1 << 16)
            os.write(write, b"one line\n")
            assert await reader.readline() == b"one line\n"
            os.close(write)
            assert await reader.read() == b""
