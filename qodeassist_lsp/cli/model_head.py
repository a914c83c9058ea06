"""The embedded Gemma's fast-head copy: its output head requantized from Q8_0 to Q4_0.

Gemma 3 270M ties its output head to its token embeddings: a 262,144 × 640 matrix, 178 MB of
the published file's 253 MB in Q8_0, and llama.cpp reads all of it for every token it writes.
On a two-core machine that read is most of a token's time. In Q4_0 (94 MB), which llama.cpp's
CPU backend repacks into its interleaved AVX2/AVX-512 layout, a token takes about a fifth less
time (docs/embedded.md has the measurements, and what it costs in quality). The copy is
written once next to the assembled model, with an atomic rename; every byte but that tensor's
and the tensor table's is copied as is.

Why not ``gguf.GGUFReader``: it parses every metadata value into numpy views, 26 s for Gemma's
262,144-token vocabulary; this walks the header with ``struct`` (well under a second) and
copies the metadata as bytes. The quantisation is ``gguf.quants`` from llama.cpp's own Python
package: its port of ggml's reference Q4_0 code (``llama-quantize``'s without an imatrix).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from qodeassist_lsp.wire.errors import QodeAssistError

__all__ = ["HEAD_TENSOR", "HeadError", "fast_head", "fast_head_path"]

HEAD_TENSOR = "token_embd.weight"
"""Gemma's tied token embeddings, which are also its output head."""
_MAGIC = b"GGUF"
_ALIGNMENT_KEY = "general.alignment"
_ROWS_PER_STEP = 16384
"""Rows requantized at a time: 16,384 × 640 floats is 42 MB, not the whole 671 MB matrix."""
_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
"""GGUF value type → size in bytes (8 is a string, 9 an array)."""
_STRING, _ARRAY, _UINT32 = 8, 9, 4


class HeadError(QodeAssistError):
    """The file is not a GGUF this module can rewrite."""


@dataclass(frozen=True)
class _Tensor:
    name: bytes
    dims: tuple[int, ...]
    kind: int
    offset: int


@dataclass(frozen=True)
class _Layout:
    infos_at: int
    """Where the tensor table starts (everything before it is copied as is)."""
    data_at: int
    alignment: int
    tensors: tuple[_Tensor, ...]


def fast_head_path(source: Path) -> Path:
    """Where the fast-head copy of ``source`` is kept."""
    return source.with_name(f"{source.stem}.q4_0-head.gguf")


def fast_head(source: Path, log: Callable[[str], None] | None = None) -> Path:
    """Return the fast-head copy of ``source``, writing it first when missing or older.

    ``source`` is returned as is when its head is not Q8_0 (nothing to gain). Raises
    ``HeadError`` for a file that is not a well-formed GGUF and ``OSError`` when the copy
    cannot be written; ``ImportError`` when the ``gguf`` package is missing.
    """
    from gguf import GGMLQuantizationType

    target = fast_head_path(source)
    with contextlib.suppress(OSError):
        if target.stat().st_mtime >= source.stat().st_mtime:
            return target  # the atomic rename below means an existing copy is a complete one
    started = time.monotonic()
    if source.stat().st_size == 0:
        raise HeadError("the model file is empty")
    with source.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
        layout = _read_layout(view)
        head = next((t for t in layout.tensors if t.name == HEAD_TENSOR.encode()), None)
        if head is None or head.kind != GGMLQuantizationType.Q8_0:
            return source
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        try:
            with partial.open("wb") as sink:
                _write_copy(view, layout, head, sink)
                sink.flush()
                os.fsync(sink.fileno())
            os.replace(partial, target)
        finally:
            with contextlib.suppress(OSError):
                partial.unlink()
    if log is not None:
        log(
            f"wrote {target.name}: the output head in Q4_0 for faster tokens "
            f"({source.stat().st_size / 2**20:.0f} → {target.stat().st_size / 2**20:.0f} MiB, "
            f"{time.monotonic() - started:.1f} s, once)"
        )
    return target


def _read_layout(view: mmap.mmap) -> _Layout:
    """Walk the header, the metadata and the tensor table of the GGUF in ``view``."""
    try:
        if view[:4] != _MAGIC:
            raise HeadError("not a GGUF file")
        version, n_tensors, n_kv = struct.unpack_from("<IQQ", view, 4)
        if version < 2:
            raise HeadError(f"GGUF version {version} is too old")
        at = 24
        alignment = 32
        for _ in range(n_kv):
            key, at = _string(view, at)
            (kind,) = struct.unpack_from("<I", view, at)
            if key == _ALIGNMENT_KEY and kind == _UINT32:
                (alignment,) = struct.unpack_from("<I", view, at + 4)
            at = _skip_value(view, at + 4, kind)
        infos_at = at
        tensors = []
        for _ in range(n_tensors):
            name, at = _string(view, at)
            (n_dims,) = struct.unpack_from("<I", view, at)
            dims = struct.unpack_from(f"<{n_dims}Q", view, at + 4)
            at += 4 + 8 * n_dims
            kind, offset = struct.unpack_from("<IQ", view, at)
            at += 12
            tensors.append(_Tensor(name.encode(), tuple(dims), kind, offset))
        layout = _Layout(infos_at, _aligned(at, alignment), alignment, tuple(tensors))
        end = max((layout.data_at + t.offset + _nbytes(t, t.kind) for t in tensors), default=0)
    except (struct.error, UnicodeDecodeError, ValueError, KeyError) as exc:
        raise HeadError(f"malformed GGUF header ({exc})") from exc
    if end > len(view):
        raise HeadError(f"the file ends at byte {len(view)}, its tensors at {end} (truncated?)")
    return layout


def _string(view: mmap.mmap, at: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", view, at)
    return view[at + 8 : at + 8 + length].decode("utf-8"), at + 8 + length


def _skip_value(view: mmap.mmap, at: int, kind: int) -> int:
    if kind in _SCALARS:
        return at + _SCALARS[kind]
    if kind == _STRING:
        length: int = struct.unpack_from("<Q", view, at)[0]
        return at + 8 + length
    if kind == _ARRAY:
        item: int
        count: int
        item, count = struct.unpack_from("<IQ", view, at)
        at += 12
        if item in _SCALARS:
            return at + count * _SCALARS[item]
        for _ in range(count):
            at = _skip_value(view, at, item)
        return at
    raise ValueError(f"unknown value type {kind}")


def _aligned(at: int, alignment: int) -> int:
    return at + (-at) % alignment


def _nbytes(tensor: _Tensor, kind: int) -> int:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    block, size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
    elements = 1
    for dim in tensor.dims:
        elements *= dim
    return elements // block * size


def _write_copy(view: mmap.mmap, layout: _Layout, head: _Tensor, sink: BinaryIO) -> None:
    """Write ``view``'s GGUF to ``sink`` with ``head`` in Q4_0 and the offsets moved to suit."""
    from gguf import GGMLQuantizationType

    q4_0 = int(GGMLQuantizationType.Q4_0)
    sink.write(view[: layout.infos_at])
    offset = 0
    placed = []
    for tensor in layout.tensors:
        kind = q4_0 if tensor is head else tensor.kind
        sink.write(struct.pack("<Q", len(tensor.name)) + tensor.name)
        sink.write(struct.pack(f"<I{len(tensor.dims)}Q", len(tensor.dims), *tensor.dims))
        sink.write(struct.pack("<IQ", kind, offset))
        placed.append((tensor, offset))
        offset = _aligned(offset + _nbytes(tensor, kind), layout.alignment)
    _pad_to(sink, layout.data_at)
    for tensor, at in placed:
        _pad_to(sink, layout.data_at + at)
        start = layout.data_at + tensor.offset
        if tensor is head:
            _requantize(view, start, tensor, sink)
        else:
            sink.write(view[start : start + _nbytes(tensor, tensor.kind)])


def _pad_to(sink: BinaryIO, at: int) -> None:
    sink.write(b"\0" * (at - sink.tell()))


def _requantize(view: mmap.mmap, start: int, tensor: _Tensor, sink: BinaryIO) -> None:
    """Write ``tensor``'s Q8_0 rows at ``start`` to ``sink`` in Q4_0, a slice of rows at a time."""
    import numpy as np
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize, quantize

    row_bytes = _nbytes(tensor, tensor.kind) // _row_count(tensor)
    rows = _row_count(tensor)
    for first in range(0, rows, _ROWS_PER_STEP):
        count = min(_ROWS_PER_STEP, rows - first)
        at = start + first * row_bytes
        block = np.frombuffer(view[at : at + count * row_bytes], dtype=np.uint8)
        values = dequantize(block.reshape(count, row_bytes), GGMLQuantizationType.Q8_0)
        sink.write(quantize(values, GGMLQuantizationType.Q4_0).tobytes())


def _row_count(tensor: _Tensor) -> int:
    """Rows of ``tensor``: GGUF lists the row length (``dims[0]``) first."""
    count = 1
    for dim in tensor.dims[1:]:
        count *= dim
    return count
