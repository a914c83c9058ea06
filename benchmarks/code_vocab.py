"""Make the bundled Gemma's code-token list (``qodeassist_lsp/cli/data/gemma3_code_tokens.bin``).

Run: .venv/bin/python benchmarks/code_vocab.py [--mib 60] [--common 40000] [--counts PATH]
     [--out PATH] [ROOT ...]

Not a test and not run by CI: the list is made once and shipped. Gemma's own tokenizer (the
published model, ``embedded serve --full-vocab``, its ``/tokenize``) reads up to ``--mib`` MiB
of source files, sorted then shuffled with seed 1, from roots that are not where the typing
replay samples its files (the virtualenv's site-packages and the standard library), so the
replay measures the list on code it was not made from:

- ``/usr/include`` (C and C++ headers), ``/usr/lib/python3/dist-packages`` (Debian's Python),
  ``/usr/lib/node_modules/npm`` (JavaScript, Markdown, JSON), ``/usr/share/doc`` (Markdown),
  ``/usr/share`` (shell scripts);
- ``editors/vscode/node_modules`` (TypeScript and JavaScript) after ``npm ci`` there.

Kept: every token seen; Gemma's ``--common`` most common ASCII tokens (its vocabulary ranks
tokens by merge order, the frequency in its own training data, which has the code and names no
corpus here holds: `` torch``, `` useState``, `` plt``); every vocabulary token inside one of
those (each step of the merges that build a kept token, so their text is tokenized as before:
llama.cpp's SentencePiece tokenizer only ever merges into tokens, all of them pieces of the
final ones); the byte, control (but the 6,242 ``<unusedN>``) and user-defined tokens. The list
carries the vocabulary's SHA-256. ``--counts`` keeps the corpus's token counts in a JSON file
(and reuses it when it exists), so the other choices can be tried without reading it again.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import mmap
import random
import re
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.typing_replay import free_port, start_model
from qodeassist_lsp.cli.embedded_model import ensure_model
from qodeassist_lsp.cli.gguf_file import read_layout
from qodeassist_lsp.cli.model_vocab import BUNDLED_LIST, TOKENS, CodeTokens

CORPUS = {
    "/usr/include": (".h", ".hpp", ".c", ".cc", ".cpp"),
    "/usr/lib/python3/dist-packages": (".py",),
    "/usr/lib/node_modules/npm": (".js", ".ts", ".md", ".json"),
    str(ROOT / "editors/vscode/node_modules"): (".ts", ".js"),
    "/usr/share/doc": (".md",),
    "/usr/share": (".sh",),
}
_NORMAL, _CONTROL, _USER, _BYTE = 1, 3, 4, 6
_MAX_CHARS = 100_000
"""Characters read per file: a huge generated file must not make up the corpus."""


def corpus(roots: dict[str, tuple[str, ...]], mib: int) -> list[Path]:
    """Files under ``roots``, sorted then shuffled with seed 1."""
    files = sorted(
        {p for root, suffixes in roots.items() for s in suffixes for p in Path(root).rglob("*" + s)}
    )
    random.Random(1).shuffle(files)
    return [p for p in files if p.is_file()]


def count(files: list[Path], port: int, mib: int) -> collections.Counter[int]:
    """How often each token id occurs in the first ``mib`` MiB of ``files``."""
    counts: collections.Counter[int] = collections.Counter()
    read = 0
    with httpx.Client(timeout=120) as client:
        for path in files:
            try:
                text = path.read_text(encoding="utf-8")[:_MAX_CHARS]
            except (OSError, UnicodeDecodeError):
                continue
            if not text.strip():
                continue
            reply = client.post(f"http://127.0.0.1:{port}/tokenize", json={"content": text})
            counts.update(reply.json()["tokens"])
            read += len(text)
            if read > mib * 2**20:
                break
    print(f"read {read / 2**20:.1f} MiB: {sum(counts.values()):,} tokens, {len(counts):,} distinct")
    return counts


def keep_list(model: Path, counts: collections.Counter[int], common: int) -> CodeTokens:
    """The tokens seen, the common ASCII ones, their pieces, and the byte/control/user tokens."""
    import numpy as np
    from gguf import GGUFReader

    fields = GGUFReader(model).fields
    strings = fields[TOKENS].contents()
    kinds = fields["tokenizer.ggml.token_type"].contents()
    scores = fields["tokenizer.ggml.scores"].contents()
    index = {s: i for i, s in enumerate(strings)}
    ascii_tokens = [
        token
        for token, text in enumerate(strings)
        if kinds[token] == _NORMAL and all(c.isascii() or c == "\u2581" for c in text)
    ]
    ascii_tokens.sort(key=lambda token: -scores[token])
    keep = np.zeros(len(strings), dtype=bool)
    for token in {*counts, *ascii_tokens[:common]}:
        text = strings[token]
        for a in range(len(text)):
            for b in range(a + 1, len(text) + 1):
                if (piece := index.get(text[a:b])) is not None:
                    keep[piece] = True
    for token, kind in enumerate(kinds):
        unused = kind == _CONTROL and re.fullmatch(r"<unused\d+>", strings[token])
        if kind in (_USER, _BYTE) or (kind == _CONTROL and not unused):
            keep[token] = True
    with model.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
        entry = read_layout(view).entry(TOKENS)
        assert entry is not None
        digest = hashlib.sha256(view[entry.value_at : entry.end]).hexdigest()
    return CodeTokens(digest, keep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="*", help="corpus folders (default: the list above)")
    parser.add_argument("--mib", type=int, default=60, help="MiB of source to read (60)")
    parser.add_argument(
        "--common", type=int, default=40_000, help="most common ASCII tokens kept (40000)"
    )
    parser.add_argument("--counts", type=Path, help="a JSON file of the corpus's token counts")
    parser.add_argument("--out", type=Path, default=ROOT / "qodeassist_lsp/cli/data" / BUNDLED_LIST)
    args = parser.parse_args()
    roots = {root: sum(CORPUS.values(), ()) for root in args.roots} if args.roots else CORPUS
    model = ensure_model()
    if args.counts is not None and args.counts.is_file():
        loaded = json.loads(args.counts.read_text(encoding="utf-8"))
        counts = collections.Counter({int(token): n for token, n in loaded.items()})
    else:
        port = free_port()
        server = start_model(port, "--full-vocab")
        try:
            counts = count(corpus(roots, args.mib), port, args.mib)
        finally:
            server.terminate()
            server.wait(30)
        if args.counts is not None:
            args.counts.write_text(json.dumps(counts), encoding="utf-8")
    tokens = keep_list(model, counts, args.common)
    args.out.write_bytes(tokens.to_bytes())
    print(f"kept {int(tokens.keep.sum()):,} of {len(tokens.keep):,} tokens → {args.out}")


if __name__ == "__main__":
    main()
