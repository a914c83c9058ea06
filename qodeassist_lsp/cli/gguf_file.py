"""Rewriting a GGUF model file: walk its header, swap some values and tensors, copy the rest.

The embedded Gemma's faster copies (``model_vocab``: its code vocabulary; ``model_head``: its
output head in Q4_0) each change one tensor and at most a few metadata values of a 253 MB
file. This walks the header with ``struct`` and copies every untouched byte as is.

Why not ``gguf.GGUFReader``: it parses every metadata value into numpy views, 26 s for Gemma's
262,144-token vocabulary; this walk takes well under a second. A copy is written once next to
its source, through a partial file and an atomic rename, so an existing copy is a whole one.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from qodeassist_lsp.wire.errors import QodeAssistError

__all__ = [
    "ARRAY",
    "SCALARS",
    "STRING",
    "Entry",
    "GgufError",
    "Layout",
    "NewTensor",
    "Tensor",
    "array_items",
    "nbytes",
    "read_layout",
    "rewrite",
    "row_count",
    "write_once",
]

_MAGIC = b"GGUF"
_ALIGNMENT_KEY = "general.alignment"
_HEADER = 24
"""Bytes before the metadata: magic, version, tensor count, metadata count."""
SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
"""GGUF value type → size in bytes (8 is a string, 9 an array)."""
STRING, ARRAY, _UINT32 = 8, 9, 4


class GgufError(QodeAssistError):
    """The file is not a GGUF this module can rewrite."""


@dataclass(frozen=True)
class Tensor:
    """One row of the tensor table: GGUF lists the row length (``dims[0]``) first."""

    name: bytes
    dims: tuple[int, ...]
    kind: int
    offset: int


@dataclass(frozen=True)
class Entry:
    """One metadata key and where its value's bytes are (type tag included)."""

    key: str
    at: int
    """Where the entry starts (its key's length)."""
    value_at: int
    """Where its value's type tag starts."""
    end: int


@dataclass(frozen=True)
class Layout:
    """Where a GGUF file's parts are."""

    entries: tuple[Entry, ...]
    infos_at: int
    """Where the tensor table starts."""
    data_at: int
    alignment: int
    tensors: tuple[Tensor, ...]

    def entry(self, key: str) -> Entry | None:
        """Return the metadata entry named ``key``, if any."""
        return next((e for e in self.entries if e.key == key), None)

    def tensor(self, name: str) -> Tensor | None:
        """Return the tensor named ``name``, if any."""
        return next((t for t in self.tensors if t.name == name.encode()), None)


@dataclass(frozen=True)
class NewTensor:
    """A tensor's replacement: its new dims and type, and what writes its bytes."""

    dims: tuple[int, ...]
    kind: int
    write: Callable[[BinaryIO], None]


def read_layout(view: mmap.mmap) -> Layout:
    """Walk the header, the metadata and the tensor table of the GGUF in ``view``."""
    try:
        if view[:4] != _MAGIC:
            raise GgufError("not a GGUF file")
        version, n_tensors, n_kv = struct.unpack_from("<IQQ", view, 4)
        if version < 2:
            raise GgufError(f"GGUF version {version} is too old")
        at = _HEADER
        alignment = 32
        entries = []
        for _ in range(n_kv):
            start = at
            key, at = _string(view, at)
            (kind,) = struct.unpack_from("<I", view, at)
            if key == _ALIGNMENT_KEY and kind == _UINT32:
                (alignment,) = struct.unpack_from("<I", view, at + 4)
            end = _skip_value(view, at + 4, kind)
            entries.append(Entry(key, start, at, end))
            at = end
        infos_at = at
        tensors = []
        for _ in range(n_tensors):
            name, at = _string(view, at)
            (n_dims,) = struct.unpack_from("<I", view, at)
            dims = struct.unpack_from(f"<{n_dims}Q", view, at + 4)
            at += 4 + 8 * n_dims
            kind, offset = struct.unpack_from("<IQ", view, at)
            at += 12
            tensors.append(Tensor(name.encode(), tuple(dims), kind, offset))
        layout = Layout(
            tuple(entries), infos_at, _aligned(at, alignment), alignment, tuple(tensors)
        )
        end = max((layout.data_at + t.offset + nbytes(t.dims, t.kind) for t in tensors), default=0)
    except (struct.error, UnicodeDecodeError, ValueError, KeyError) as exc:
        raise GgufError(f"malformed GGUF header ({exc})") from exc
    if end > len(view):
        raise GgufError(f"the file ends at byte {len(view)}, its tensors at {end} (truncated?)")
    return layout


def array_items(view: mmap.mmap, entry: Entry) -> tuple[int, int, int]:
    """``(item type, count, where the items start)`` of an array entry."""
    kind, item, count = struct.unpack_from("<IIQ", view, entry.value_at)
    if kind != ARRAY:
        raise GgufError(f"{entry.key} is not an array")
    return item, count, entry.value_at + 16


def nbytes(dims: tuple[int, ...], kind: int) -> int:
    """Bytes of a tensor of ``dims`` in GGML type ``kind``."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    block, size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
    elements = 1
    for dim in dims:
        elements *= dim
    return elements // block * size


def row_count(dims: tuple[int, ...]) -> int:
    """Rows of a tensor of ``dims`` (all dims but the first, the row length)."""
    count = 1
    for dim in dims[1:]:
        count *= dim
    return count


def rewrite(
    view: mmap.mmap,
    layout: Layout,
    sink: BinaryIO,
    *,
    values: Mapping[str, bytes] | None = None,
    tensors: Mapping[str, NewTensor] | None = None,
) -> None:
    """Write ``view``'s GGUF to ``sink`` with some values and tensors replaced.

    ``values`` maps a key to its new value's bytes (type tag first); ``tensors`` a tensor name
    to its replacement. Offsets in the tensor table are recomputed; all else is copied.
    """
    values, tensors = values or {}, tensors or {}
    sink.write(view[:_HEADER])
    for entry in layout.entries:
        new = values.get(entry.key)
        if new is None:
            sink.write(view[entry.at : entry.end])
        else:
            sink.write(view[entry.at : entry.value_at] + new)
    offset = 0
    placed = []
    for tensor in layout.tensors:
        replacement = tensors.get(tensor.name.decode())
        written = tensor if replacement is None else replacement
        dims, kind = written.dims, written.kind
        sink.write(struct.pack("<Q", len(tensor.name)) + tensor.name)
        sink.write(struct.pack(f"<I{len(dims)}Q", len(dims), *dims))
        sink.write(struct.pack("<IQ", kind, offset))
        placed.append((tensor, replacement, offset))
        offset = _aligned(offset + nbytes(dims, kind), layout.alignment)
    data_at = _aligned(sink.tell(), layout.alignment)
    _pad_to(sink, data_at)
    for tensor, replacement, at in placed:
        _pad_to(sink, data_at + at)
        if replacement is not None:
            replacement.write(sink)
        else:
            start = layout.data_at + tensor.offset
            sink.write(view[start : start + nbytes(tensor.dims, tensor.kind)])


def write_once(source: Path, target: Path, write: Callable[[mmap.mmap, BinaryIO], bool]) -> bool:
    """Write ``target`` from ``source`` unless it is already there and newer.

    ``write`` gets the source's bytes and the partial file; it returns False when there is
    nothing to write (then no file is left behind). Returns whether ``target`` can be served.
    """
    with contextlib.suppress(OSError):
        if target.stat().st_mtime >= source.stat().st_mtime:
            return True  # the atomic rename below means an existing copy is a complete one
    if source.stat().st_size == 0:
        raise GgufError("the model file is empty")
    with source.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        try:
            with partial.open("wb") as sink:
                if not write(view, sink):
                    return False
                sink.flush()
                os.fsync(sink.fileno())
            os.replace(partial, target)
        finally:
            with contextlib.suppress(OSError):
                partial.unlink()
    return True


def _string(view: mmap.mmap, at: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", view, at)
    return view[at + 8 : at + 8 + length].decode("utf-8"), at + 8 + length


def _skip_value(view: mmap.mmap, at: int, kind: int) -> int:
    if kind in SCALARS:
        return at + SCALARS[kind]
    if kind == STRING:
        length: int = struct.unpack_from("<Q", view, at)[0]
        return at + 8 + length
    if kind == ARRAY:
        item: int
        count: int
        item, count = struct.unpack_from("<IQ", view, at)
        at += 12
        if item in SCALARS:
            return at + count * SCALARS[item]
        for _ in range(count):
            at = _skip_value(view, at, item)
        return at
    raise ValueError(f"unknown value type {kind}")


def _aligned(at: int, alignment: int) -> int:
    return at + (-at) % alignment


def _pad_to(sink: BinaryIO, at: int) -> None:
    sink.write(b"\0" * (at - sink.tell()))
