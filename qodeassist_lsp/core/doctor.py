"""The doctor: probe every agent the pipelines name and say, per problem, how to fix it.

Per provider instance the model list is fetched once (reachable, key accepted, model present);
per agent one tiny real request is sent (time to first token, tokens per second, and for
fill-in-the-middle agents whether the model takes a suffix). Probes of different servers run in
parallel, each bounded by a timeout; the agents of one local server (or of an instance with
``max_concurrent``) are probed one at a time, so that a one-slot server is never made "busy" by
the doctor's own probes. What cannot be told is reported as ``not_checked``, never guessed.

A bundled agent that only a bundled pipeline default names, on a bundled instance, whose key is
missing or whose local server does not run, is a fallback nobody configured: it is reported as
``configured: false`` (not as a failure of the user's setup), with the fix that would enable it.
``qodeassist-lsp doctor`` and the ``qodeassist.doctor`` command both run this.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from qodeassist_lsp.config.definitions import Layer
from qodeassist_lsp.config.fim_templates import is_fim_agent
from qodeassist_lsp.config.pipelines import pipeline_specs
from qodeassist_lsp.config.problems import closest
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.template_context import complete_context
from qodeassist_lsp.config.templating import TemplateError
from qodeassist_lsp.core.agent import Agent, AgentNotAvailable
from qodeassist_lsp.core.doctor_fixes import (
    auth_fix,
    instance_file,
    model_fix,
    reach_fix,
    render_fix,
)
from qodeassist_lsp.core.provider import GenericProvider
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.wire.client import Timeouts
from qodeassist_lsp.wire.errors import CategorizedError, ErrorCategory, ErrorInfo
from qodeassist_lsp.wire.events import StreamError, TextDelta, ThinkingDelta, Usage
from qodeassist_lsp.wire.protocols import WireProtocol
from qodeassist_lsp.wire.retry import NO_RETRY

CheckState = Literal["ok", "problem", "busy", "not_checked", "not_applicable"]
CHECKS = ("reachable", "auth", "model", "fim", "probe")
_SUFFIX_FIELDS = frozenset({"suffix", "input_suffix"})
DEFAULT_TIMEOUT_S = 20.0
IDLE_POLL_S = 0.25
"""How often a server our previous probe kept busy is asked (``/slots``) whether it is free."""
PROBE_TOKENS = 16
"""The probe asks for at most this many tokens and stops reading after as many deltas."""

_PROBE_CONTEXT: dict[str, Any] = {
    "prefix": "def add(a, b):\n    return ",
    "suffix": "\n",
    "language": "python",
    "history": [{"role": "user", "content": "Reply with the single word OK."}],
}


@dataclass
class Problem:
    """One thing that is wrong with an agent, and the one-line fix."""

    check: str
    message: str
    fix: str

    def to_json(self) -> dict[str, str]:
        """Return the JSON form (see docs/cli.md)."""
        return {"check": self.check, "message": self.message, "fix": self.fix}


@dataclass
class AgentReport:
    """What the doctor found out about one agent."""

    name: str
    pipelines: list[str]
    provider: str = ""
    model: str = ""
    url: str = ""
    checks: dict[str, CheckState] = field(
        default_factory=lambda: dict.fromkeys(CHECKS, "not_checked")
    )
    first_token_ms: float | None = None
    tokens_per_second: float | None = None
    circuit: str = "closed"
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    configured: bool = True
    """False: a bundled fallback nobody set up (no key, no local server); not a failure."""

    @property
    def working(self) -> bool:
        """Whether the probe request succeeded (or met a busy server) and nothing is wrong."""
        return not self.problems and self.checks["probe"] in ("ok", "busy")

    def fail(self, check: str, message: str, fix: str) -> None:
        """Record a problem of ``check`` (once per check)."""
        if check in self.checks:
            self.checks[check] = "problem"
        if all(p.check != check for p in self.problems):
            self.problems.append(Problem(check, message, fix))

    def sorted_problems(self) -> list[Problem]:
        """Return the problems in the order of the checks (configuration first)."""
        order = ("config", *CHECKS)
        return sorted(self.problems, key=lambda p: order.index(p.check))

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form (see docs/cli.md)."""
        return {
            "name": self.name,
            "pipelines": self.pipelines,
            "provider": self.provider,
            "model": self.model,
            "url": self.url,
            "working": self.working,
            "checks": dict(self.checks),
            "firstTokenMs": self.first_token_ms,
            "tokensPerSecond": self.tokens_per_second,
            "circuit": self.circuit,
            "problems": [p.to_json() for p in self.sorted_problems()],
            "notes": list(self.notes),
            "configured": self.configured,
        }


@dataclass
class DoctorReport:
    """Every probed agent, and per pipeline whether one of its agents works."""

    agents: list[AgentReport]
    pipelines: dict[str, list[str]]
    rules: dict[str, Any] | None = None
    """The project's rules files in effect for the workspace (the door finds them), or None."""
    codebase: dict[str, Any] | None = None
    """The codebase index as the door knows it (``qodeassist/status``'s part), or None."""

    @property
    def ok(self) -> bool:
        """False when a pipeline that is switched on has no working agent."""
        return all(self.pipeline_working(slot) for slot, names in self.pipelines.items() if names)

    def pipeline_working(self, slot: str) -> bool:
        """Whether one of the agents of ``slot`` works."""
        by_name = {a.name: a for a in self.agents}
        return any(by_name[n].working for n in self.pipelines[slot] if n in by_name)

    def to_json(self) -> dict[str, Any]:
        """Return the report object of ``doctor --json`` and ``qodeassist.doctor``."""
        return {
            "ok": self.ok,
            "pipelines": [
                {"pipeline": slot, "agents": names, "working": self.pipeline_working(slot)}
                for slot, names in self.pipelines.items()
            ],
            "agents": [a.to_json() for a in self.agents],
            **({"rules": self.rules} if self.rules is not None else {}),
            **({"codebase": self.codebase} if self.codebase is not None else {}),
        }


@dataclass
class _ModelList:
    ids: list[str] | None = None
    error: ErrorInfo | None = None


def circuit_state(provider: GenericProvider) -> str:
    """Return the provider's circuit-breaker state (``closed``, ``open``, ``half_open``)."""
    return str(provider.breaker.snapshot().state)


class Doctor:
    """Probes the agents of a runtime's pipelines."""

    def __init__(self, runtime: Runtime, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self._runtime = runtime
        self._timeout = timeout
        self._config_root = runtime.configuration.paths.config_root
        self._timeouts = Timeouts(
            connect=min(10.0, timeout), first_byte=timeout, inactivity=timeout
        )

    async def run(self) -> DoctorReport:
        """Probe every pipeline agent in parallel and return the report."""
        config = self._runtime.configuration
        pipelines = {s.slot: list(config.pipelines.roster(s)) for s in pipeline_specs()}
        names = list(dict.fromkeys(n for roster in pipelines.values() for n in roster))
        reports: list[AgentReport] = []
        agents: dict[str, Agent] = {}
        for name in names:
            report = AgentReport(name, config.pipelines.pipelines_of(name))
            reports.append(report)
            try:
                agent = self._runtime.factory.create(name)
            except AgentNotAvailable as exc:
                report.fail(
                    "config", str(exc), "run `qodeassist-lsp agents validate` and fix what it says"
                )
                continue
            agents[name] = agent
            report.provider, report.model = agent.provider.name, agent.model
            report.url = agent.provider.url
        providers = {a.provider.name: a.provider for a in agents.values()}
        lists = dict(
            zip(
                providers,
                await asyncio.gather(*(self._list(p) for p in providers.values())),
                strict=True,
            )
        )
        by_name = {r.name: r for r in reports}
        servers: dict[str, list[Agent]] = {}
        for name, agent in agents.items():
            servers.setdefault(server_key(agent.provider, name), []).append(agent)

        async def probe_in_turn(group: list[Agent]) -> None:
            for index, agent in enumerate(group):
                listing = lists[agent.provider.name]
                await self._probe_agent(agent, by_name[agent.name], listing, after_own=index > 0)

        await asyncio.gather(*(probe_in_turn(group) for group in servers.values()))
        return DoctorReport(reports, pipelines)

    def _fallback(self, agent: Agent) -> bool:
        """Whether ``agent`` is a bundled default nobody chose: bundled agent, instance, slot."""
        config = self._runtime.configuration
        profile = config.agents.get(agent.name)
        instance = config.providers.get(agent.provider.name)
        if profile is None or instance is None or agent.name in config.overrides:
            return False
        if profile.layer is not Layer.BUNDLED or instance.layer is not Layer.BUNDLED:
            return False
        bundled = config.paths.bundled.resolve()
        origins = config.pipelines.origins
        return all(
            slot in origins and Path(origins[slot][0]).resolve().is_relative_to(bundled)
            for slot in config.pipelines.pipelines_of(agent.name)
        )

    def _unconfigured(self, agent: Agent, report: AgentReport, why: str) -> None:
        report.configured = False
        report.notes.append(
            f"not configured: a bundled fallback of {', '.join(report.pipelines)} ({why}); "
            "set it up as the fix says to use it, or leave it: the pipeline skips it"
        )

    async def _list(self, instance: ProviderInstance) -> _ModelList:
        provider = self._runtime.provider(instance.name)
        try:
            async with asyncio.timeout(self._timeout):
                return _ModelList(ids=await provider.list_models(self._timeouts))
        except CategorizedError as exc:
            return _ModelList(error=exc.info)
        except TimeoutError:
            return _ModelList(error=self._timed_out(instance.name))

    def _timed_out(self, provider: str) -> ErrorInfo:
        return ErrorInfo(
            ErrorCategory.NETWORK, f"{provider} did not answer within {self._timeout:g} s"
        )

    async def _probe_agent(
        self, agent: Agent, report: AgentReport, listing: _ModelList, after_own: bool = False
    ) -> None:
        """Judge the listing, then send the probe; ``after_own``: a probe of ours just ran."""
        provider = self._runtime.provider(agent.provider.name)
        report.circuit = circuit_state(provider)
        fim = sends_fim(agent)
        report.checks["fim"] = "not_checked" if fim else "not_applicable"
        missing = provider.missing_key()
        if missing is not None:
            # Nothing was sent (the model list was refused unsent too): a missing key is not a
            # network problem, however offline the machine is.
            report.fail("auth", missing.message, auth_fix(provider))
            if self._fallback(agent):
                self._unconfigured(agent, report, "no API key is set")
            else:
                report.notes.append("nothing was sent: the provider needs an API key first")
            return
        key = provider.api_key()
        self._judge_listing(agent, report, listing)
        if report.problems:
            if report.configured:
                report.notes.append("the test request was not sent: fix the problems above first")
            return
        if await provider.busy() and not (after_own and await self._idle(provider)):
            # Its one slot is taken: a probe would queue behind that request and time out.
            self._busy(report)
            return
        await self._request(agent, provider, key, report, fim)

    async def _idle(self, provider: GenericProvider) -> bool:
        """Wait (within the timeout) for the slot our previous probe held; False if it stays busy.

        llama.cpp frees a slot whose stream was closed only when it next writes a token (or, in
        a prompt, at the next batch): the next probe of that server would otherwise meet it.
        """
        deadline = time.monotonic() + self._timeout
        while await provider.busy():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(IDLE_POLL_S)  # /slots has no event to wait on
        return True

    @staticmethod
    def _busy(report: AgentReport) -> None:
        report.checks["probe"] = "busy"
        report.notes.append(
            "busy: the server is serving another request (or still loading its model), so it "
            "was not timed; this is not a failure: run the doctor again when it is idle"
        )

    def _judge_listing(self, agent: Agent, report: AgentReport, listing: _ModelList) -> None:
        provider = self._runtime.provider(agent.provider.name)
        if listing.ids is not None:
            report.checks["reachable"] = report.checks["auth"] = "ok"
            if model_listed(agent.model, listing.ids):
                report.checks["model"] = "ok"
            else:
                near = closest(agent.model, listing.ids)
                hint = f" (closest: {near!r})" if near else ""
                report.fail(
                    "model",
                    f"model {agent.model!r} is not in the {len(listing.ids)} models "
                    f"{agent.provider.name} offers{hint}",
                    model_fix(agent, self._config_root),
                )
            return
        error = listing.error
        assert error is not None
        if error.category == ErrorCategory.AUTH:
            report.checks["reachable"] = "ok"
            report.fail("auth", error.message, auth_fix(provider))
        elif error.category == ErrorCategory.NETWORK:
            report.fail("reachable", error.message, reach_fix(agent, self._config_root))
            instance = agent.provider
            if instance.is_loopback and instance.launch is None and self._fallback(agent):
                self._unconfigured(agent, report, f"no server runs at {instance.url}")
                return
        elif error.category == ErrorCategory.CONFIG:
            where = instance_file(agent.provider, self._config_root)
            report.fail("config", error.message, f"fix the [launch] table in {where}")
        else:
            report.checks["reachable"] = "ok"
            # 404 and friends: the server answers but has no model list here; say so.
            report.notes.append(
                f"model list unavailable ({error.message}); model presence not checked"
            )

    async def _request(
        self,
        agent: Agent,
        provider: GenericProvider,
        key: str | None,
        report: AgentReport,
        fim: bool,
    ) -> None:
        try:
            request = agent.build_request(complete_context(_PROBE_CONTEXT, model=agent.model), key)
        except TemplateError as exc:
            report.fail("config", f"the agent's [body] failed: {exc}", render_fix(agent))
            return
        body = probe_body(request.body, agent.api.protocol)
        request = type(request)(request.url, request.headers, body)
        tokens = 0
        usage = 0
        started = time.monotonic()
        first: float | None = None
        error: ErrorInfo | None = None
        try:
            async with asyncio.timeout(self._timeout):
                stream = provider.stream(
                    request, timeouts=self._timeouts, retry=NO_RETRY, request_id="doctor"
                )
                async with contextlib.aclosing(stream) as batches:
                    async for batch in batches:
                        for event in batch:
                            if isinstance(event, TextDelta | ThinkingDelta):
                                first = first or time.monotonic()
                                tokens += 1
                            elif isinstance(event, Usage):
                                usage = max(usage, event.output_tokens)
                            elif isinstance(event, StreamError) and event.final:
                                error = event.error
                        if error is not None or tokens >= PROBE_TOKENS:
                            break
        except CategorizedError as exc:
            error = exc.info
        except TimeoutError:
            error = self._timed_out(agent.provider.name)
        ended = time.monotonic()
        # 503: llama.cpp is still loading; a timeout on a server whose slots are all taken.
        if error is not None and (
            error.status == 503
            or (error.category == ErrorCategory.NETWORK and await provider.busy())
        ):
            self._busy(report)
            return
        if error is not None:
            self._judge_error(agent, provider, report, error, fim)
            return
        report.checks["probe"] = "ok"
        if fim:
            report.checks["fim"] = "ok"
        if first is None:
            report.notes.append("the test request succeeded but the model sent no text")
            return
        report.first_token_ms = round((first - started) * 1000, 1)
        count = max(usage, tokens)
        if count > 1 and ended > first:
            report.tokens_per_second = round((count - 1) / (ended - first), 1)

    def _judge_error(
        self,
        agent: Agent,
        provider: GenericProvider,
        report: AgentReport,
        error: ErrorInfo,
        fim: bool,
    ) -> None:
        report.checks["probe"] = "problem"
        if error.category == ErrorCategory.AUTH:
            report.fail("auth", error.message, auth_fix(provider))
        elif error.category == ErrorCategory.NETWORK:
            report.fail("reachable", error.message, reach_fix(agent, self._config_root))
        elif fim and error.status == 400:
            report.fail(
                "fim",
                f"the fill-in-the-middle request was refused: {error.message}",
                "use a base/code model that supports FIM, or a chat-style completion agent",
            )
        elif error.status == 404 and report.checks["model"] != "ok":
            report.fail("model", error.message, model_fix(agent, self._config_root))
        else:
            report.fail("probe", error.message, render_fix(agent))


def server_key(instance: ProviderInstance, agent: str) -> str:
    """Return what the probes of ``agent`` queue on: its server, when that serves few at once.

    A local server (llama.cpp's one slot, Ollama) or an instance with ``max_concurrent`` takes
    its probes one at a time; a remote API takes them in parallel (one key per agent).
    """
    if instance.api.process:
        return f"process {instance.name}"
    if instance.concurrency_limit is None:
        return f"agent {agent}"
    parts = urlsplit(instance.url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = "loopback" if instance.is_loopback else (parts.hostname or "")
    return f"server {host}:{port}"


def sends_fim(agent: Agent) -> bool:
    """Whether the agent's request is fill-in-the-middle: `is_fim_agent`, or a suffix field.

    Broader than `is_fim_agent`, which decides whether an instruct model is refused (DeepSeek's
    and OpenAI's instruct models take ``suffix``): here a 400 to a request with a ``suffix`` or
    ``input_suffix`` field means the server refused its FIM part.
    """
    body = agent.profile.body
    return is_fim_agent(agent.endpoint, body, agent.profile.tags) or bool(
        _SUFFIX_FIELDS & body.keys()
    )


def model_listed(model: str, ids: list[str]) -> bool:
    """Whether ``model`` is in ``ids`` (Ollama's implicit ``:latest`` tag counted)."""
    return model in ids or (":" not in model and f"{model}:latest" in ids)


def probe_body(body: Mapping[str, Any], protocol: WireProtocol) -> dict[str, Any]:
    """Return ``body`` with its output-length limits lowered to ``PROBE_TOKENS``.

    Only limits the body already has are lowered (adding one some models reject would make
    the probe fail where real requests work); reading stops after that many deltas anyway.
    Anthropic needs ``max_tokens``; its extended thinking is dropped (it needs a larger one).
    """
    result = dict(body)
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens", "n_predict"):
        if isinstance(result.get(key), int):
            result[key] = min(result[key], PROBE_TOKENS)
    if protocol == WireProtocol.ANTHROPIC:
        result["max_tokens"] = PROBE_TOKENS
        result.pop("thinking", None)
    for table, key in (("options", "num_predict"), ("generationConfig", "maxOutputTokens")):
        section = result.get(table)
        if isinstance(section, dict) and isinstance(section.get(key), int):
            result[table] = {**section, key: min(section[key], PROBE_TOKENS)}
    return result
