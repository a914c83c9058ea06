"""The code-vocabulary copy: the vocabulary, its per-token arrays and rows cut to a list."""

from __future__ import annotations

import hashlib
import mmap
from pathlib import Path
from typing import Any

import pytest

gguf = pytest.importorskip("gguf", reason="the local extra brings the gguf package")
np = pytest.importorskip("numpy")

from qodeassist_lsp.cli.embedded_model import with_code_vocab  # noqa: E402
from qodeassist_lsp.cli.gguf_file import GgufError, read_layout  # noqa: E402
from qodeassist_lsp.cli.model_vocab import (  # noqa: E402
    TOKENS,
    CodeTokens,
    bundled_code_tokens,
    code_vocab,
    code_vocab_path,
)
from tests.unit.cli.conftest import ServedModel  # noqa: E402

Q8_0 = gguf.GGMLQuantizationType.Q8_0
VOCAB = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"tok{i}" for i in range(296)] + ["é", "▁end"]


def write_model(path: Path) -> None:
    """A small Gemma-like GGUF: a vocabulary with scores, types and ids; per-token rows."""
    rng = np.random.default_rng(3)
    writer = gguf.GGUFWriter(str(path), arch="gemma3")
    writer.add_uint32("gemma3.context_length", 2048)
    writer.add_array(TOKENS, VOCAB)
    writer.add_array("tokenizer.ggml.scores", [float(-i) for i in range(len(VOCAB))])
    writer.add_array("tokenizer.ggml.token_type", [3, 3, 3, 2] + [1] * (len(VOCAB) - 4))
    writer.add_uint32("tokenizer.ggml.bos_token_id", 2)
    writer.add_uint32("tokenizer.ggml.eos_token_id", 1)
    writer.add_uint32("tokenizer.ggml.unknown_token_id", 3)
    writer.add_string("general.name", "tiny")
    rows = rng.standard_normal((len(VOCAB), 64)).astype(np.float32)
    writer.add_tensor("token_embd.weight", gguf.quants.quantize(rows, Q8_0), raw_dtype=Q8_0)
    writer.add_tensor("blk.0.attn_q.weight", rng.standard_normal((3, 64)).astype(np.float32))
    writer.add_tensor("output_norm.weight", rng.standard_normal(64).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def fingerprint(path: Path) -> str:
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
        entry = read_layout(view).entry(TOKENS)
        assert entry is not None
        return hashlib.sha256(view[entry.value_at : entry.end]).hexdigest()


def keeping(path: Path, ids: list[int]) -> CodeTokens:
    keep = np.zeros(len(VOCAB), dtype=bool)
    keep[ids] = True
    return CodeTokens(fingerprint(path), keep)


def contents(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    reader = gguf.GGUFReader(path)
    fields = {n: f.contents() for n, f in reader.fields.items() if not n.startswith("GGUF.")}
    return fields, {t.name: t for t in reader.tensors}


def test_the_vocabulary_and_its_rows_are_cut_to_the_list(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    write_model(source)
    kept = [0, 1, 2, 3, 7, 150, 300, 301]
    logged: list[str] = []

    tokens = keeping(source, kept)
    target = code_vocab(source, logged.append, tokens)

    assert target == code_vocab_path(source, tokens)
    assert target == tmp_path / f"model.code-vocab-{tokens.digest}.gguf"
    (before, tensors_before), (after, tensors_after) = contents(source), contents(target)
    assert after[TOKENS] == [VOCAB[i] for i in kept]
    assert after["tokenizer.ggml.scores"] == pytest.approx([-float(i) for i in kept])
    assert after["tokenizer.ggml.token_type"] == [3, 3, 3, 2, 1, 1, 1, 1]
    for key in ("bos_token_id", "eos_token_id", "unknown_token_id"):
        assert after[f"tokenizer.ggml.{key}"] == before[f"tokenizer.ggml.{key}"]  # 0–3 kept
    cut = {k: v for k, v in after.items() if not k.startswith("tokenizer.ggml.")}
    assert cut == {k: v for k, v in before.items() if not k.startswith("tokenizer.ggml.")}
    head, original = tensors_after["token_embd.weight"], tensors_before["token_embd.weight"]
    assert head.tensor_type == Q8_0 and list(head.shape) == [64, len(kept)]
    assert np.array_equal(head.data, original.data[kept])
    for name in ("blk.0.attn_q.weight", "output_norm.weight"):
        assert bytes(tensors_after[name].data) == bytes(tensors_before[name].data)
    assert len(logged) == 1 and "8 tokens of code" in logged[0]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_special_token_ids_are_renumbered(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    write_model(source)
    tokens = keeping(source, [1, 2, 3, 9])  # <pad> (0) dropped: <eos> becomes 0

    fields, _ = contents(code_vocab(source, tokens=tokens))

    assert fields["tokenizer.ggml.eos_token_id"] == 0
    assert fields["tokenizer.ggml.bos_token_id"] == 1
    assert fields["tokenizer.ggml.unknown_token_id"] == 2


def test_a_list_that_drops_a_special_token_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    write_model(source)

    tokens = keeping(source, [0, 2, 3, 9])
    with pytest.raises(GgufError, match="eos_token_id"):
        code_vocab(source, tokens=tokens)
    assert not code_vocab_path(source, tokens).exists()


def test_another_vocabulary_is_served_whole_and_the_log_says_why(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    write_model(source)
    wrong = CodeTokens("0" * 64, np.ones(len(VOCAB), dtype=bool))
    with pytest.raises(GgufError, match="not the one"):
        code_vocab(source, tokens=wrong)
    logged: list[str] = []

    assert with_code_vocab(source, logged.append) == source  # the bundled list is Gemma's
    assert "serving the full vocabulary" in logged[0] and "not the one" in logged[0]
    assert list(tmp_path.iterdir()) == [source]


def test_the_bundled_list_is_for_a_262144_token_vocabulary() -> None:
    tokens = bundled_code_tokens()

    assert len(tokens.keep) == 262_144 and len(tokens.vocab_sha256) == 64
    assert tokens.keep[:4].all()  # <pad> <eos> <bos> <unk>
    assert 40_000 < tokens.keep.sum() < 100_000
    again = CodeTokens.from_bytes(tokens.to_bytes())
    assert again.vocab_sha256 == tokens.vocab_sha256 and np.array_equal(again.keep, tokens.keep)


@pytest.mark.parametrize(
    ("flags", "served"),
    [
        ([], "model.code-vocab-{}.gguf"),
        (["--full-vocab"], "model.gguf"),
        (["--fast-head"], "model.code-vocab-{}.q4_0-head.gguf"),
    ],
)
def test_serve_loads_the_code_vocabulary_unless_told_not_to(
    monkeypatch: pytest.MonkeyPatch,
    served_model: ServedModel,
    tmp_path: Path,
    flags: list[str],
    served: str,
) -> None:
    from qodeassist_lsp.cli import model_vocab

    source = tmp_path / "model.gguf"
    write_model(source)
    tokens = keeping(source, [0, 1, 2, 3, 5, 8])
    monkeypatch.setattr(model_vocab, "bundled_code_tokens", lambda: tokens)

    assert served_model(source, flags).name == served.format(tokens.digest)


def test_prepare_writes_the_code_vocabulary_copy_ahead_of_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from qodeassist_lsp.cli import embedded_cmd, main, model_vocab

    source = tmp_path / "model.gguf"
    write_model(source)
    tokens = keeping(source, [0, 1, 2, 3, 5, 8])
    monkeypatch.setattr(model_vocab, "bundled_code_tokens", lambda: tokens)
    monkeypatch.setattr(embedded_cmd, "ensure_model", lambda: source)
    monkeypatch.setattr(embedded_cmd, "ensure_instruct_model", lambda **kw: tmp_path / "i.gguf")

    assert main(["embedded", "prepare"]) == 0

    out, err = capsys.readouterr()
    copy = code_vocab_path(source, tokens)
    assert out.split() == [str(source), str(copy), str(tmp_path / "i.gguf")]
    assert "6 tokens of code" in err and copy.is_file()


def test_a_new_list_writes_a_new_copy_and_deletes_the_older_ones(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    write_model(source)
    old, new = keeping(source, [0, 1, 2, 3, 5]), keeping(source, [0, 1, 2, 3, 6])
    older = code_vocab(source, tokens=old)
    (tmp_path / f"{older.stem}.q4_0-head.gguf").write_bytes(b"its fast-head copy")

    newer = code_vocab(source, tokens=new)

    assert newer != older and newer.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([source.name, newer.name])
    assert code_vocab(source, tokens=new) == newer  # written once
