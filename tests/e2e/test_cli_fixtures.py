"""Every recorded provider body in ``tests/fixtures/wire/`` through the real CLI.

Each case runs ``python -m qodeassist_lsp chat --events jsonl`` (or ``models``) as a subprocess
against the loopback replay server, which streams the recorded bytes event by event with real
chunked framing. A subprocess costs ~0.8 s of start-up, so the module starts every selected case
up front, three at a time, against one server (each case under its own URL prefix and config
root), and the tests then check one case each. Every run has DEBUG logging on and a planted key
in the environment, and the last tests grep all of it for the key.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.replay_server import RecordedRequest, ReplayServer, Reply, fixture_bytes
from tests.support.wire_cases import (
    HTTP_ERRORS,
    MODEL_LISTS,
    STREAMS,
    TARGETS,
    HttpErrorCase,
    ModelListCase,
    StreamCase,
    all_fixtures,
    comparable,
    covered_fixtures,
    expected_events,
)
from tests.support.workspace import PLANTED_KEY, PROVIDERS, CliResult, Workspace, run_forked

EXIT_OK, EXIT_CONFIG, EXIT_USAGE, EXIT_PROVIDER = 0, 1, 2, 3


def exit_code(category: str) -> int:
    """SPEC §3: a configuration error (unknown model, …) exits 1, other failures 3."""
    return EXIT_CONFIG if category == "config" else EXIT_PROVIDER


@dataclass(frozen=True)
class SecretEcho:
    """A provider that echoes the caller's key back in an error (some do, partly masked)."""

    target: str
    status: int

    @property
    def id(self) -> str:
        return f"echo-{self.target}-{self.status}"


@dataclass(frozen=True)
class Job:
    """One CLI run: its arguments and what the server answers under the run's URL prefix."""

    id: str
    args: tuple[str, ...]
    scripts: tuple[tuple[str, tuple[Reply, ...]], ...] = ()
    extra_env: tuple[tuple[str, str], ...] = ()


SECRET_ECHOES = (SecretEcho("claude", 401), SecretEcho("openai", 401), SecretEcho("gemini", 400))
MISC = (
    # Plain mode: the answer streams to stdout as text.
    Job(
        "plain",
        ("chat", "--agent", "Claude Chat — Sonnet", "hi"),
        (("/v1/messages", (Reply("anthropic/stream_text_hello.sse", split="events"),)),),
    ),
    # No --agent: the first agent of pipelines.chat_assistant.
    Job(
        "default-agent",
        ("chat", "--events", "jsonl", "hi"),
        (("/v1/messages", (Reply("anthropic/stream_text_hello.sse", split=5),)),),
    ),
    Job("unknown-agent", ("chat", "--agent", "Claude Chat — Sonet", "hi")),
    Job("usage", ("chat",)),
    Job("unknown-provider", ("models", "Claud")),
    Job(
        "models-auth",
        ("models", "Claude"),
        (("/v1/models", (Reply("anthropic/error_http_401_authentication.json", status=401),)),),
    ),
)

CASES = (*STREAMS, *HTTP_ERRORS, *MODEL_LISTS, *SECRET_ECHOES, *MISC)


def case_id(case: Any) -> str:
    if isinstance(case, Job | SecretEcho):
        return case.id
    return case.fixture


def echo_body(target: str) -> bytes:
    provider = TARGETS[target].provider
    if PROVIDERS[provider].client_api == "Claude":
        payload: dict[str, Any] = {
            "type": "error",
            "error": {
                "type": "authentication_error",
                "message": f"invalid x-api-key {PLANTED_KEY}",
            },
        }
    elif provider == "Google AI":
        payload = {
            "error": {
                "code": 400,
                "message": f"API key not valid: {PLANTED_KEY}. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT",
            }
        }
    else:
        payload = {
            "error": {
                "message": f"Incorrect API key provided: {PLANTED_KEY}.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        }
    return json.dumps(payload, indent=4).encode()


def job_for(case: Any) -> Job:
    """The CLI run that replays ``case``."""
    if isinstance(case, Job):
        return case
    if isinstance(case, StreamCase):
        target = TARGETS[case.target]
        # Framing varies by case: event by event with a delay, 7-byte pieces, or one piece.
        framing = STREAMS.index(case) % 3
        if framing == 0:
            reply = Reply(case.fixture, split="events", delay=0.001)
        elif framing == 1:
            reply = Reply(case.fixture, split=7)
        else:
            reply = Reply(case.fixture)
        return Job(
            case.fixture,
            ("chat", "--agent", target.agent, "--events", "jsonl", "Hello there"),
            ((target.route, (reply,)),),
        )
    if isinstance(case, HttpErrorCase):
        target = TARGETS[case.target]
        reply = Reply(case.fixture, status=case.status, headers=case.headers, repeat=case.attempts)
        return Job(
            case.fixture,
            ("chat", "--agent", target.agent, "--events", "jsonl", "Hello there"),
            ((target.route, (reply,)),),
        )
    if isinstance(case, ModelListCase):
        route = PROVIDERS[case.provider].prefix + case.path
        replies = [Reply(case.fixture)]
        if case.next_page is not None:
            replies.append(Reply.json(case.next_page[1]))
        return Job(case.fixture, ("models", case.provider), ((route, tuple(replies)),))
    if isinstance(case, SecretEcho):
        target = TARGETS[case.target]
        reply = Reply(
            body=echo_body(case.target), status=case.status, content_type="application/json"
        )
        return Job(
            case.id,
            ("chat", "--agent", target.agent, "--events", "jsonl", "Hello there"),
            ((target.route, (reply,)),),
        )
    raise TypeError(case)


@dataclass
class Ran:
    """A finished job: the CLI result, the requests its prefix received, its workspace."""

    job: Job
    prefix: str
    result: CliResult
    requests: list[RecordedRequest]
    workspace: Workspace
    server: ReplayServer = field(repr=False)

    def fail(self, message: str = "") -> str:
        return f"{message}\n{self.result.describe()}"


class Batch:
    def __init__(self, runs: dict[str, Ran]) -> None:
        self.runs = runs

    def __getitem__(self, case: Any) -> Ran:
        return self.runs[job_for(case).id]


@pytest.fixture(scope="module")
def batch(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Batch]:
    """Run every selected case of this module concurrently, once."""
    wanted: dict[str, Job] = {}
    for item in request.session.items:
        if item.module is not request.module or "batch" not in getattr(item, "fixturenames", ()):
            continue
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "case" in callspec.params:
            wanted.setdefault(case_id(callspec.params["case"]), job_for(callspec.params["case"]))
        else:  # a test over every run (the secret scan): run every case
            wanted.update({case_id(c): job_for(c) for c in CASES})
    with ReplayServer() as server:
        prepared = []
        for index, job in enumerate(wanted.values()):
            prefix = f"/j{index}"
            root = tmp_path_factory.mktemp(f"job{index}")
            workspace = Workspace(root, server.url + prefix, extra_env=dict(job.extra_env))
            for path, replies in job.scripts:
                server.script(prefix + path, list(replies))
            prepared.append((job, prefix, workspace))
        results = run_forked([(ws, job.args) for job, _, ws in prepared])
        runs = {}
        for (job, prefix, ws), result in zip(prepared, results, strict=True):
            mine = [r for r in server.requests if r.path.startswith(prefix + "/")]
            runs[job.id] = Ran(job, prefix, result, mine, ws, server)
        yield Batch(runs)
    assert not server.errors, server.errors


def parametrize(cases: tuple[Any, ...]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", cases, ids=[case_id(c) for c in cases])


def single_terminal(ran: Ran) -> dict[str, Any]:
    """Check the jsonl stream's framing and return its terminal event."""
    events = ran.result.events
    assert events, ran.fail("no events")
    kinds = [e["kind"] for e in events]
    terminals = [k for k in kinds if k in ("finished", "failed", "cancelled")]
    assert len(terminals) == 1 and kinds[-1] in terminals, ran.fail(f"terminals {kinds}")
    ids = {e.get("requestId") for e in events}
    assert len(ids) == 1 and next(iter(ids)), ran.fail("every event carries the one requestId")
    return events[-1]


def the_error_line(ran: Ran, category: str) -> str:
    lines = ran.result.error_lines
    assert len(lines) == 1, ran.fail("one typed error line on stderr")
    assert lines[0].startswith(f"qodeassist-lsp: {category} error: "), ran.fail()
    return lines[0]


# --------------------------------------------------------------------------- coverage
def test_every_fixture_file_is_replayed() -> None:
    assert all_fixtures() - covered_fixtures() == set()
    assert covered_fixtures() - all_fixtures() == set()


# --------------------------------------------------------------------------- 200 streams
@parametrize(STREAMS)
def test_stream(batch: Batch, case: StreamCase) -> None:
    ran = batch[case]
    target = TARGETS[case.target]
    [sent] = ran.requests  # one reply, no tool continuation
    assert sent.method == "POST"
    assert sent.path == ran.prefix + target.route or (
        target.route.endswith("/") and sent.path.startswith(ran.prefix + target.route)
    ), sent.path
    assert isinstance(sent.json, dict), "the request body is JSON"
    terminal = single_terminal(ran)
    events = ran.result.events

    # The session events equal what the L0 parser makes of the recorded bytes.
    expected = expected_events(case)
    assert comparable(events, expected) == expected, ran.fail("events differ from the fixture")

    # And the hand-written facts of the fixture.
    kind, _, detail = case.end.partition(":")
    assert terminal["kind"] == kind, ran.fail()
    text = "".join(e["text"] for e in events if e["kind"] == "text")
    if case.text is not None:
        assert text == case.text, ran.fail("answer text")
    assert text.startswith(case.text_start), ran.fail("answer text")
    thinking = [e for e in events if e["kind"] == "thinking"]
    assert len(thinking) == case.thinking, ran.fail("thinking events")
    if case.signature_start:
        assert any(e["signature"].startswith(case.signature_start) for e in thinking), ran.fail()
    calls = [(e["name"], e["arguments"]) for e in events if e["kind"] == "toolCall"]
    assert calls == list(case.tools), ran.fail("tool calls")
    assert all(e["id"] for e in events if e["kind"] == "toolCall")
    results = [e for e in events if e["kind"] == "toolResult"]
    assert len(results) == case.unusable and not any(e["ok"] for e in results), "no tools ran"
    assert all("output token limit" in e["content"] for e in results), ran.fail("cut-off call")
    usage = [e for e in events if e["kind"] == "usage"]
    if case.usage is None:
        assert usage == [], ran.fail("the fixture reports no token counts")
    else:
        [only] = usage
        counts = (
            only["inputTokens"],
            only["outputTokens"],
            only["cachedTokens"],
            only["reasoningTokens"],
        )
        assert counts == case.usage, ran.fail("usage")
    if kind == "finished":
        assert terminal["stopReason"] == detail
        assert ran.result.returncode == EXIT_OK, ran.fail()
        assert ran.result.error_lines == [], ran.fail()
    else:
        assert terminal["error"]["category"] == detail, ran.fail()
        assert case.said in terminal["error"]["message"], ran.fail()
        assert ran.result.returncode == exit_code(detail), ran.fail()
        assert terminal["error"]["message"] in the_error_line(ran, detail)


# --------------------------------------------------------------------------- HTTP errors
@parametrize(HTTP_ERRORS)
def test_http_error(batch: Batch, case: HttpErrorCase) -> None:
    ran = batch[case]
    target = TARGETS[case.target]
    assert ran.result.returncode == exit_code(case.category), ran.fail()
    assert len(ran.requests) == case.attempts, ran.fail(f"{len(ran.requests)} requests")
    terminal = single_terminal(ran)
    assert [e["kind"] for e in ran.result.events] == ["failed"], ran.fail()
    error = terminal["error"]
    assert error["category"] == case.category, ran.fail()
    message = error["message"]
    assert case.said in message and f"HTTP {case.status}" in message, ran.fail()
    # Names the provider instance (the wire layer capitalises the first letter: "Llama.cpp").
    assert message[: len(target.provider)].lower() == target.provider.lower(), ran.fail()
    assert case.hint in message, ran.fail("says what to do")
    assert error.get("providerDetail") == fixture_bytes(case.fixture).decode(), ran.fail()
    assert message in the_error_line(ran, case.category)
    for command in re.findall(r"`(qodeassist-lsp [^`]+)`", message):
        # A command the message suggests must work when pasted into a shell.
        argv = shlex.split(command)
        assert argv[-1] == target.provider, ran.fail(f"{command!r} is not shell-safe")


# --------------------------------------------------------------------------- model lists
@parametrize(MODEL_LISTS)
def test_models(batch: Batch, case: ModelListCase) -> None:
    ran = batch[case]
    first = ran.requests[0]
    assert first.method == "GET"
    assert first.path.endswith(PROVIDERS[case.provider].prefix + case.path), first.path
    if case.fixture == "openai_chat/models_list_openapi_example.json":
        assert ran.result.returncode == EXIT_PROVIDER, ran.fail()
        assert ran.result.stdout == ""
        [line] = ran.result.error_lines
        assert line.startswith("qodeassist-lsp: provider error: ") and "not valid JSON" in line
        return
    assert ran.result.returncode == EXIT_OK, ran.fail()
    ids = case.ids
    if ids is None:  # Gemini: every model that supports generateContent, without "models/"
        models = json.loads(fixture_bytes(case.fixture))["models"]
        ids = tuple(
            m["name"].removeprefix("models/")
            for m in models
            if "generateContent" in m["supportedGenerationMethods"]
        )
    assert tuple(ran.result.stdout.splitlines()) == ids, ran.fail()
    if case.next_page is not None:
        assert len(ran.requests) == 2, ran.fail("follows the next page")
        query = {k: v[0] for k, v in ran.requests[1].query.items()}
        assert case.next_page[0].items() <= query.items(), query
    else:
        assert len(ran.requests) == 1


# --------------------------------------------------------------------------- modes and exit codes
@parametrize(MISC)
def test_cli_modes(batch: Batch, case: Job) -> None:
    ran = batch[case]
    result = ran.result
    if case.id == "plain":
        assert result.returncode == EXIT_OK, ran.fail()
        assert result.stdout == "Hello\n", ran.fail()
    elif case.id == "default-agent":
        assert result.returncode == EXIT_OK, ran.fail()
        assert [e["kind"] for e in result.events] == ["text", "usage", "finished"]
        [sent] = ran.requests
        assert (
            sent.json["model"] == "claude-sonnet-4-6"
        )  # "Claude Chat — Sonnet", first in the pipeline
    elif case.id == "unknown-agent":
        assert result.returncode == EXIT_CONFIG, ran.fail()
        assert ran.requests == []
        [line] = result.error_lines
        assert "Claude Chat — Sonet" in line and "Claude Chat — Sonnet" in line, "suggests the name"
    elif case.id == "usage":
        assert result.returncode == EXIT_USAGE, ran.fail()
        assert "usage:" in result.stderr
    elif case.id == "unknown-provider":
        assert result.returncode == EXIT_CONFIG, ran.fail()
        assert ran.requests == []
        assert "'Claude'" in result.stderr, "suggests the provider"
    elif case.id == "models-auth":
        assert result.returncode == EXIT_PROVIDER, ran.fail()
        [line] = result.error_lines
        assert line.startswith("qodeassist-lsp: auth error: Claude rejected the API key"), line
        assert "ANTHROPIC_API_KEY" in line


# --------------------------------------------------------------------------- secrets
@parametrize(SECRET_ECHOES)
def test_key_echoed_by_the_provider_is_redacted(batch: Batch, case: SecretEcho) -> None:
    ran = batch[case]
    assert ran.result.returncode == EXIT_PROVIDER, ran.fail()
    [sent] = ran.requests
    assert PLANTED_KEY in json.dumps(sent.header_list) + sent.target, "the key was sent"
    terminal = single_terminal(ran)
    assert terminal["kind"] == "failed"
    assert "***" in terminal["error"]["message"] + terminal["error"].get("providerDetail", "")
    assert PLANTED_KEY not in ran.result.stdout + ran.result.stderr, ran.fail("key leaked")


def test_no_secret_in_any_output_log_request_or_file(batch: Batch) -> None:
    assert len(batch.runs) == len(CASES)  # every case ran for this test
    leaks = []
    for ran in batch.runs.values():
        result = ran.result
        if " qodeassist.wire: " not in result.stderr and ran.requests:
            leaks.append(f"{ran.job.id}: no wire log on stderr (QODEASSIST_LOG_LEVEL=DEBUG)")
        for where, text in (
            ("stdout", result.stdout),
            ("stderr", result.stderr),
            ("files", ran.workspace.files_text()),
            *((f"request {r.index} (minus auth)", r.echo) for r in ran.requests),
        ):
            if PLANTED_KEY in text:
                leaks.append(f"{ran.job.id}: {where}")
    assert leaks == []


def test_debug_logs_show_the_request_and_its_id(batch: Batch) -> None:
    ran = batch[STREAMS[4]]  # anthropic/stream_text_hello.sse
    request_id = ran.result.events[0]["requestId"]
    assert f"[{request_id}] request body: " in ran.result.stderr, ran.fail()
    assert f"[{request_id}] finished: end_turn" in ran.result.stderr, ran.fail()


def test_workspace_files_hold_no_key(tmp_path: Path) -> None:
    # The configuration the runs use names key variables, never keys.
    workspace = Workspace(tmp_path, "http://127.0.0.1:9")
    assert PLANTED_KEY not in workspace.files_text()
