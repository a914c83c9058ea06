"""The embedded Gemma's code-vocabulary copy: its output head cut to the tokens code is made of.

Gemma 3 270M has a 262,144-token vocabulary for 140 languages, and its output head (tied to
its token embeddings) has a row for each: llama.cpp reads all 178 MB of it for every token it
writes, most of a token's time on a CPU. Source code, with its comments and docs, needs about
a quarter of those tokens. The copy served by default keeps only the rows (and vocabulary
entries) listed in ``data/gemma3_code_tokens.bin``, which ``benchmarks/code_vocab.py`` made:
every token seen when Gemma's own tokenizer read 60 MiB of C, Python, JavaScript, TypeScript,
Markdown and shell; Gemma's 40,000 most common ASCII tokens; every token a merge passes through
on the way to one of those (so such text is tokenized exactly as before); the byte, control
and user-defined tokens. A written token takes about half the time, and answers on sampled
code stay the same (docs/embedded.md has the measurements).
What is cut: words of other scripts and rare words are read and written in smaller pieces.

The list fits one vocabulary only; it carries the SHA-256 of the vocabulary it was made from,
and any other model is served as it is. The copy's name carries a digest of the list, so a
release with a new list writes a new copy (and deletes the older ones).
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from qodeassist_lsp.cli.gguf_file import (
    ARRAY,
    SCALARS,
    STRING,
    GgufError,
    Layout,
    NewTensor,
    array_items,
    nbytes,
    read_layout,
    rewrite,
    row_count,
    write_once,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["CodeTokens", "bundled_code_tokens", "code_vocab", "code_vocab_path"]

TOKENS = "tokenizer.ggml.tokens"
_PER_TOKEN = ("tokenizer.ggml.scores", "tokenizer.ggml.token_type")
"""Metadata arrays with one item per token, cut like the vocabulary."""
_PER_TOKEN_TENSORS = ("token_embd.weight", "output.weight")
"""Tensors with one row per token: the embeddings (Gemma's head too) and an untied head."""
_TOKEN_ID_KEY = ("tokenizer.ggml.", "_token_id")
_UINT32 = 4
BUNDLED_LIST = "gemma3_code_tokens.bin"


@dataclass(frozen=True)
class CodeTokens:
    """Which tokens of one vocabulary to keep, and that vocabulary's fingerprint."""

    vocab_sha256: str
    """SHA-256 of the GGUF bytes of the ``tokenizer.ggml.tokens`` array it was made from."""
    keep: npt.NDArray[np.bool_]
    """One flag per token id of that vocabulary."""

    @classmethod
    def from_bytes(cls, data: bytes) -> CodeTokens:
        """Read the list's file format: the hex SHA-256, a newline, then a bitmap of ids."""
        import numpy as np

        digest, _, bits = data.partition(b"\n")
        return cls(digest.decode("ascii"), np.unpackbits(np.frombuffer(bits, np.uint8)) == 1)

    @property
    def digest(self) -> str:
        """A short fingerprint of the list, in the copy's file name (a new list, a new copy)."""
        return hashlib.sha256(self.to_bytes()).hexdigest()[:12]

    def to_bytes(self) -> bytes:
        """Return the list in its file format."""
        import numpy as np

        return self.vocab_sha256.encode("ascii") + b"\n" + np.packbits(self.keep).tobytes()


def bundled_code_tokens() -> CodeTokens:
    """Return the list made for the bundled Gemma 3's vocabulary (shipped with this package)."""
    data = resources.files("qodeassist_lsp.cli").joinpath("data", BUNDLED_LIST).read_bytes()
    return CodeTokens.from_bytes(data)


def code_vocab_path(source: Path, tokens: CodeTokens) -> Path:
    """Where the copy of ``source`` cut to ``tokens`` is kept."""
    return source.with_name(f"{source.stem}.code-vocab-{tokens.digest}.gguf")


def code_vocab(
    source: Path,
    log: Callable[[str], None] | None = None,
    tokens: CodeTokens | None = None,
) -> Path:
    """Return the code-vocabulary copy of ``source``, writing it first when missing or older.

    Raises ``GgufError`` for a file that is not a well-formed GGUF or whose vocabulary is not
    the one ``tokens`` (by default the bundled list) was made for, ``OSError`` when the copy
    cannot be written, ``ImportError`` when the ``gguf`` package is missing.
    """
    tokens = tokens or bundled_code_tokens()
    target = code_vocab_path(source, tokens)
    started = time.monotonic()
    kept: list[int] = []

    def write(view: mmap.mmap, sink: BinaryIO) -> bool:
        layout = read_layout(view)
        ids, count = _ids(view, layout, tokens)
        values = {TOKENS: _strings(view, layout, ids)}
        values |= {key: _fixed_items(view, layout, key, ids, count) for key in _PER_TOKEN}
        values |= _token_ids(view, layout, ids)
        rows = {
            name: _rows(view, layout, name, ids, count)
            for name in _PER_TOKEN_TENSORS
            if layout.tensor(name) is not None
        }
        rewrite(view, layout, sink, values=values, tensors=rows)
        kept.append(len(ids))
        return True

    write_once(source, target, write)
    if kept:
        _remove_older_copies(source, target)
    if kept and log is not None:
        log(
            f"wrote {target.name}: Gemma with the {kept[0]:,} tokens of code of its "
            f"{len(tokens.keep):,}, for faster tokens ({source.stat().st_size / 2**20:.0f} → "
            f"{target.stat().st_size / 2**20:.0f} MiB, {time.monotonic() - started:.1f} s, once)"
        )
    return target


def _remove_older_copies(source: Path, target: Path) -> None:
    """Delete copies made from older lists (and their fast-head copies): 130 MB each."""
    for older in source.parent.glob(f"{source.stem}.code-vocab-*.gguf"):
        if not older.name.startswith(target.stem):
            with contextlib.suppress(OSError):
                older.unlink()


def _ids(view: mmap.mmap, layout: Layout, tokens: CodeTokens) -> tuple[npt.NDArray[np.int64], int]:
    """Return the kept token ids and the vocabulary's size, once it is known to be ``tokens``'s."""
    import numpy as np

    entry = layout.entry(TOKENS)
    if entry is None:
        raise GgufError("the model has no vocabulary")
    if hashlib.sha256(view[entry.value_at : entry.end]).hexdigest() != tokens.vocab_sha256:
        raise GgufError("the model's vocabulary is not the one the code-token list was made for")
    count = array_items(view, entry)[1]
    ids = np.flatnonzero(tokens.keep)
    return ids[ids < count], count


def _strings(view: mmap.mmap, layout: Layout, ids: npt.NDArray[np.int64]) -> bytes:
    """Return the vocabulary array's value bytes with only ``ids`` left."""
    entry = layout.entry(TOKENS)
    assert entry is not None  # _ids checked it
    item, count, at = array_items(view, entry)
    if item != STRING:
        raise GgufError(f"{TOKENS} is not an array of strings")
    spans = []
    for _ in range(count):
        (length,) = struct.unpack_from("<Q", view, at)
        spans.append((at, at + 8 + length))
        at += 8 + length
    kept = b"".join(view[start:end] for start, end in (spans[i] for i in ids))
    return struct.pack("<IIQ", ARRAY, STRING, len(ids)) + kept


def _fixed_items(
    view: mmap.mmap, layout: Layout, key: str, ids: npt.NDArray[np.int64], tokens: int
) -> bytes:
    """Return a per-token array of fixed-size items with only ``ids`` left."""
    import numpy as np

    entry = layout.entry(key)
    if entry is None:
        raise GgufError(f"the model has no {key}")
    item, count, at = array_items(view, entry)
    size = SCALARS.get(item)
    if size is None or count != tokens:
        raise GgufError(f"{key} does not hold one number per token")
    items = np.frombuffer(view, np.uint8, count * size, at).reshape(count, size)
    return struct.pack("<IIQ", ARRAY, item, len(ids)) + items[ids].tobytes()


def _token_ids(view: mmap.mmap, layout: Layout, ids: npt.NDArray[np.int64]) -> dict[str, bytes]:
    """Renumber the special-token ids (``tokenizer.ggml.*_token_id``); each must be kept."""
    import numpy as np

    values = {}
    for entry in layout.entries:
        if not (entry.key.startswith(_TOKEN_ID_KEY[0]) and entry.key.endswith(_TOKEN_ID_KEY[1])):
            continue
        kind, old = struct.unpack_from("<II", view, entry.value_at)
        if kind != _UINT32:
            continue
        new = int(np.searchsorted(ids, old))
        if new == len(ids) or ids[new] != old:
            raise GgufError(f"the code-token list drops {entry.key} ({old})")
        values[entry.key] = struct.pack("<II", _UINT32, new)
    return values


def _rows(
    view: mmap.mmap, layout: Layout, name: str, ids: npt.NDArray[np.int64], tokens: int
) -> NewTensor:
    """Return ``name``'s rows of the kept ids, in the tensor's own type."""
    import numpy as np

    tensor = layout.tensor(name)
    assert tensor is not None
    rows = row_count(tensor.dims)
    if rows != tokens:
        raise GgufError(f"{name} has {rows} rows, not one per token")
    row_bytes = nbytes(tensor.dims, tensor.kind) // rows
    start = layout.data_at + tensor.offset

    def write(sink: BinaryIO) -> None:
        matrix = np.frombuffer(view, np.uint8, rows * row_bytes, start).reshape(rows, row_bytes)
        sink.write(matrix[ids].tobytes())

    return NewTensor((*tensor.dims[:-1], len(ids)), tensor.kind, write)
