"""The fast-head copy: one tensor requantized Q8_0 → Q4_0, everything else as it was."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

gguf = pytest.importorskip("gguf", reason="the local extra brings the gguf package")
np = pytest.importorskip("numpy")

from qodeassist_lsp.cli.embedded_model import with_fast_head  # noqa: E402
from qodeassist_lsp.cli.gguf_file import GgufError  # noqa: E402
from qodeassist_lsp.cli.model_head import HEAD_TENSOR, fast_head, fast_head_path  # noqa: E402
from tests.unit.cli.conftest import ServedModel  # noqa: E402

Q4_0 = gguf.GGMLQuantizationType.Q4_0
Q8_0 = gguf.GGMLQuantizationType.Q8_0


def write_model(path: Path, head_type: object = Q8_0, rows: int = 70) -> None:
    """A small Gemma-like GGUF: metadata with a string array, a quantized head, other tensors."""
    rng = np.random.default_rng(7)
    writer = gguf.GGUFWriter(str(path), arch="gemma3")
    writer.add_uint32("gemma3.context_length", 2048)
    writer.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(300)] + ["é", ""])
    writer.add_array("tokenizer.ggml.scores", [float(i) for i in range(302)])
    writer.add_string("general.name", "tiny")
    head = rng.standard_normal((rows, 64)).astype(np.float32)
    if head_type == Q8_0:
        writer.add_tensor(HEAD_TENSOR, gguf.quants.quantize(head, Q8_0), raw_dtype=Q8_0)
    else:
        writer.add_tensor(HEAD_TENSOR, head)
    writer.add_tensor("blk.0.attn_q.weight", rng.standard_normal((3, 64)).astype(np.float32))
    other = gguf.quants.quantize(rng.standard_normal((5, 64)).astype(np.float32), Q8_0)
    writer.add_tensor("blk.0.ffn_up.weight", other, raw_dtype=Q8_0)
    writer.add_tensor("output_norm.weight", rng.standard_normal(64).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def tensors(path: Path) -> dict[str, Any]:
    return {t.name: t for t in gguf.GGUFReader(path).tensors}


def fields(path: Path) -> dict[str, Any]:
    return {
        name: field.contents()
        for name, field in gguf.GGUFReader(path).fields.items()
        if not name.startswith("GGUF.")
    }


def test_the_head_is_requantized_and_the_rest_copied(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    write_model(source, rows=16384 + 70)  # more rows than one step: the slices join up
    logged: list[str] = []

    target = fast_head(source, logged.append)

    assert target == fast_head_path(source) == tmp_path / "model.q4_0-head.gguf"
    before, after = tensors(source), tensors(target)
    assert list(after) == list(before)
    head, original = after[HEAD_TENSOR], before[HEAD_TENSOR]
    assert head.tensor_type == Q4_0
    assert list(head.shape) == list(original.shape)
    expected = gguf.quants.quantize(gguf.quants.dequantize(original.data, Q8_0), Q4_0)
    assert np.array_equal(head.data, expected)
    for name in ("blk.0.attn_q.weight", "blk.0.ffn_up.weight", "output_norm.weight"):
        assert after[name].tensor_type == before[name].tensor_type
        assert bytes(after[name].data) == bytes(before[name].data)
    assert fields(target) == fields(source)
    assert target.stat().st_size < source.stat().st_size
    assert len(logged) == 1 and "Q4_0" in logged[0]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_the_copy_is_written_once_and_again_for_a_newer_model(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    write_model(source)
    target = fast_head(source)
    written = target.stat().st_mtime_ns
    logged: list[str] = []

    assert fast_head(source, logged.append) == target
    assert target.stat().st_mtime_ns == written and logged == []

    later = target.stat().st_mtime + 5
    os.utime(source, (later, later))
    fast_head(source, logged.append)
    assert target.stat().st_mtime_ns != written and len(logged) == 1


def test_a_head_that_is_not_q8_0_is_served_as_it_is(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    write_model(source, head_type=None)

    assert fast_head(source) == source
    assert not fast_head_path(source).exists()


def test_a_file_that_is_not_gguf_is_refused_and_served_as_it_is(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    source.write_bytes(b"not a model at all" * 10)
    with pytest.raises(GgufError):
        fast_head(source)
    source.write_bytes(b"GGUF" + b"\3\0\0\0" + b"\xff" * 20)  # counts past the end
    with pytest.raises(GgufError):
        fast_head(source)
    logged: list[str] = []

    assert with_fast_head(source, logged.append) == source
    assert "published head" in logged[0] and "malformed" in logged[0]
    assert list(tmp_path.iterdir()) == [source]


@pytest.mark.parametrize(
    ("flags", "served"),
    [
        ([], "model.gguf"),  # its vocabulary is not Gemma's: no code-vocabulary copy
        (["--full-vocab"], "model.gguf"),
        (["--fast-head"], "model.q4_0-head.gguf"),
    ],
)
def test_serve_loads_the_fast_head_only_when_asked(
    served_model: ServedModel, tmp_path: Path, flags: list[str], served: str
) -> None:
    source = tmp_path / "model.gguf"
    write_model(source)

    assert served_model(source, flags).name == served


def test_an_empty_or_truncated_model_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    source.write_bytes(b"")
    with pytest.raises(GgufError, match="empty"):
        fast_head(source)
    write_model(tmp_path / "whole.gguf")
    source.write_bytes((tmp_path / "whole.gguf").read_bytes()[:-100])
    with pytest.raises(GgufError, match="truncated"):
        fast_head(source)
    assert not fast_head_path(source).exists()
