"""Embedded head A/B: Gemma as published against a faster copy, on sampled code (not a test).

Run: .venv/bin/python benchmarks/embedded_head.py [--variant code-vocab|fast-head|both]
     [--seed N] [--files 8] [--lines 30] [--json]

Starts two embedded servers (``qodeassist-lsp embedded serve``, 2 threads each): Gemma as
published (``--full-vocab``: all 262,144 rows of its output head, in Q8_0) and a variant:
``code-vocab`` (the default server: the head cut to the tokens of code,
``qodeassist_lsp/cli/model_vocab.py``), ``fast-head`` (``--full-vocab --fast-head``: the whole
head in Q4_0, ``model_head.py``) or ``both`` (``--fast-head``). Files are sampled afresh from
what is installed here (``replay_sources``, seeded, the seed printed; Python, Lua, C and
JavaScript in turn). For up to ``--lines`` non-trivial lines per file from line 41 on, it sends
the same request to both servers, one after the other, alternating which goes first, so both
see the machine in the same minute (runs of one server at a time, minutes apart, swing too much
on a shared machine to compare). A request is the line's first two characters after its
indentation, with up to 80 lines before it (the Embedded Completion agent's window), greedy and
seeded, at most 24 tokens, stopped at the line end, with the prompt cache on.

Prints, per server: the median time per written token (llama.cpp's ``predicted_ms`` /
``predicted_n``) and its ratio to the published head's per request, prompt reading per token,
the edit similarity of the completed line to the real one (as the typing replay computes it),
exact lines, and how many answers are identical between the two.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.replay_sources import LANGUAGES, sample
from benchmarks.typing_replay import edit_similarity, free_port, start_model

VARIANTS = {
    "code-vocab": (),
    "fast-head": ("--full-vocab", "--fast-head"),
    "both": ("--fast-head",),
}
"""The variant's ``embedded serve`` flags."""
WINDOW = 80
"""Lines before the cursor, as the bundled Embedded Completion agent sends."""


def requests_for(path: Path, lines: int) -> list[tuple[str, str]]:
    """(prompt, the rest of the real line) for up to ``lines`` lines of ``path`` from line 41."""
    text = path.read_text(encoding="utf-8", errors="replace").split("\n")
    out = []
    for number in range(41, len(text)):
        line = text[number]
        if len(line.strip()) < 4:
            continue
        indent = len(line) - len(line.lstrip())
        before = "\n".join(text[max(0, number - WINDOW) : number])
        out.append((f"{before}\n{line[: indent + 2]}", line[indent + 2 :]))
        if len(out) == lines:
            break
    return out


async def ask(client: httpx.AsyncClient, port: int, prompt: str) -> dict[str, Any]:
    body = {
        "prompt": prompt,
        "n_predict": 24,
        "temperature": 0,
        "seed": 42,
        "stop": ["\n"],
        "cache_prompt": True,
    }
    reply = (await client.post(f"http://127.0.0.1:{port}/completion", json=body)).json()
    timings = reply["timings"]
    return {
        "text": reply["content"],
        "tokens": timings["predicted_n"],
        "generate_ms": timings["predicted_ms"],
        "prompt_tokens": timings["prompt_n"],
        "prompt_ms": timings["prompt_ms"],
    }


def per_token(answer: dict[str, Any]) -> float | None:
    return answer["generate_ms"] / answer["tokens"] if answer["tokens"] else None


async def run(args: argparse.Namespace) -> dict[str, Any]:
    files = sample(args.seed, args.files, 120, list(LANGUAGES))
    ports = {"published": free_port(), "fast": free_port()}
    models = {
        "published": await asyncio.to_thread(start_model, ports["published"], "--full-vocab"),
        "fast": await asyncio.to_thread(start_model, ports["fast"], *VARIANTS[args.variant]),
    }
    answers: dict[str, list[dict[str, Any]]] = {name: [] for name in ports}
    try:
        async with httpx.AsyncClient(timeout=120) as client:
            turn = 0
            for source in files:
                for prompt, expected in requests_for(source.path, args.lines):
                    order = list(ports) if turn % 2 == 0 else list(reversed(ports))
                    turn += 1
                    for name in order:
                        answer = await ask(client, ports[name], prompt)
                        answer["expected"] = expected
                        answers[name].append(answer)
    finally:
        for model in models.values():
            model.terminate()
            model.wait(30)
    return {"seed": args.seed, "files": [f.origin for f in files], "answers": answers}


def summary(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    answers = result["answers"]
    published, fast = answers["published"], answers["fast"]
    ratios = [
        f / p
        for a, b in zip(fast, published, strict=True)
        if (f := per_token(a)) is not None and (p := per_token(b)) is not None
    ]
    identical = sum(a["text"] == b["text"] for a, b in zip(fast, published, strict=True))
    rows = {}
    for name, items in answers.items():
        speeds = [s for a in items if (s := per_token(a)) is not None]
        prompt_tokens = sum(a["prompt_tokens"] for a in items)
        rows[name] = {
            "requests": len(items),
            "ms_per_token": round(statistics.median(speeds), 1),
            "prompt_ms_per_token": round(sum(a["prompt_ms"] for a in items) / prompt_tokens, 2),
            "similarity": round(
                100
                * statistics.mean(
                    edit_similarity(a["text"].strip(), a["expected"].strip()) for a in items
                ),
                2,
            ),
            "exact": sum(a["text"].strip() == a["expected"].strip() for a in items),
            "identical": identical,
        }
    rows["fast"]["ratio"] = round(statistics.median(ratios), 3)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--variant", choices=list(VARIANTS), default="code-vocab", help="what to compare"
    )
    parser.add_argument("--seed", type=int, default=None, help="file sampling seed (random)")
    parser.add_argument("--files", type=int, default=8, help="sampled files (8)")
    parser.add_argument("--lines", type=int, default=30, help="lines asked per file (30)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1_000_000)
    print(f"seed {args.seed}", file=sys.stderr)
    result = asyncio.run(run(args))
    rows = summary(result)
    if args.json:
        print(json.dumps({"seed": args.seed, "files": result["files"], "rows": rows}, indent=1))
        return
    print(
        f"Embedded head A/B ({args.variant}), seed {args.seed}, "
        f"{rows['fast']['requests']} requests each:\n"
    )
    print(
        "| served | ms a token (median) | × published, per request | prompt ms a token "
        "| edit sim % | exact | identical answers |"
    )
    print("|---|---|---|---|---|---|---|")
    labels = {"published": "as published (--full-vocab)", "fast": args.variant}
    for name, label in labels.items():
        row = rows[name]
        print(
            f"| {label} | {row['ms_per_token']} | {row.get('ratio', 1.0)} "
            f"| {row['prompt_ms_per_token']} | {row['similarity']} | {row['exact']} "
            f"| {row['identical']} |"
        )
    print("\nfiles: " + ", ".join(result["files"]))


if __name__ == "__main__":
    main()
