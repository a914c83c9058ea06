"""The embedded Gemma's fast-head copy: its output head requantized from Q8_0 to Q4_0.

Gemma 3 270M ties its output head to its token embeddings: a 262,144 × 640 matrix, 178 MB of
the published file's 253 MB in Q8_0, and llama.cpp reads all of it for every token it writes
(44 MB in the code-vocabulary copy, ``model_vocab``, which this can requantize in turn). In
Q4_0, which llama.cpp's CPU backend repacks into its interleaved AVX2/AVX-512 layout, a token
takes less time (docs/embedded.md has the measurements, and what it costs in quality). Every
byte but that tensor's and the tensor table's is copied as is (``gguf_file``).

The quantisation is ``gguf.quants`` from llama.cpp's own Python package: its port of ggml's
reference Q4_0 code (``llama-quantize``'s without an imatrix).
"""

from __future__ import annotations

import mmap
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from qodeassist_lsp.cli.gguf_file import (
    NewTensor,
    Tensor,
    nbytes,
    read_layout,
    rewrite,
    row_count,
    write_once,
)

__all__ = ["HEAD_TENSOR", "fast_head", "fast_head_path"]

HEAD_TENSOR = "token_embd.weight"
"""Gemma's tied token embeddings, which are also its output head."""
_ROWS_PER_STEP = 16384
"""Rows requantized at a time: 16,384 × 640 floats is 42 MB, not the whole 671 MB matrix."""


def fast_head_path(source: Path) -> Path:
    """Where the fast-head copy of ``source`` is kept."""
    return source.with_name(f"{source.stem}.q4_0-head.gguf")


def fast_head(source: Path, log: Callable[[str], None] | None = None) -> Path:
    """Return the fast-head copy of ``source``, writing it first when missing or older.

    ``source`` is returned as is when its head is not Q8_0 (nothing to gain). Raises
    ``GgufError`` for a file that is not a well-formed GGUF and ``OSError`` when the copy
    cannot be written; ``ImportError`` when the ``gguf`` package is missing.
    """
    from gguf import GGMLQuantizationType

    q4_0 = int(GGMLQuantizationType.Q4_0)
    target = fast_head_path(source)
    started = time.monotonic()
    written = False

    def write(view: mmap.mmap, sink: BinaryIO) -> bool:
        nonlocal written
        layout = read_layout(view)
        head = layout.tensor(HEAD_TENSOR)
        if head is None or head.kind != GGMLQuantizationType.Q8_0:
            return False
        start = layout.data_at + head.offset
        requantized = NewTensor(head.dims, q4_0, lambda out: _requantize(view, start, head, out))
        rewrite(view, layout, sink, tensors={HEAD_TENSOR: requantized})
        written = True
        return True

    if not write_once(source, target, write):
        return source
    if written and log is not None:
        log(
            f"wrote {target.name}: the output head in Q4_0 for faster tokens "
            f"({source.stat().st_size / 2**20:.0f} → {target.stat().st_size / 2**20:.0f} MiB, "
            f"{time.monotonic() - started:.1f} s, once)"
        )
    return target


def _requantize(view: mmap.mmap, start: int, tensor: Tensor, sink: BinaryIO) -> None:
    """Write ``tensor``'s Q8_0 rows at ``start`` to ``sink`` in Q4_0, a slice of rows at a time."""
    import numpy as np
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize, quantize

    rows = row_count(tensor.dims)
    row_bytes = nbytes(tensor.dims, tensor.kind) // rows
    for first in range(0, rows, _ROWS_PER_STEP):
        count = min(_ROWS_PER_STEP, rows - first)
        at = start + first * row_bytes
        block = np.frombuffer(view[at : at + count * row_bytes], dtype=np.uint8)
        values = dequantize(block.reshape(count, row_bytes), GGMLQuantizationType.Q8_0)
        sink.write(quantize(values, GGMLQuantizationType.Q4_0).tobytes())
