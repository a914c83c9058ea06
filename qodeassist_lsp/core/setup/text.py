"""What ``qodeassist-lsp setup`` prints: the findings, the plan, and what was written."""

from __future__ import annotations

from collections.abc import Sequence

from qodeassist_lsp.core.setup.apply import SetupResult
from qodeassist_lsp.core.setup.plan import RECIPES, chat_capable, completion_parent, known_model
from qodeassist_lsp.core.setup.probe import FoundServer, ProbeOutcome
from qodeassist_lsp.core.setup.proposals import SetupPlan

NOTHING_FOUND = """\
No model server answered on this machine. To use one:
  - start a local server (`ollama serve` and `ollama pull qwen2.5-coder:1.5b-base`, LM Studio's
    server, `llama-server -m model.gguf --port 8080`, vLLM …) and run setup again, or
  - point a provider instance at a remote or cloud server: write <config>/providers/NAME.toml
    (see docs/configuration.md, "Provider instances"), set its API key with
    `qodeassist-lsp secrets set NAME`, and name its agents in <config>/pipelines.toml.
The offline Embedded agents keep working meanwhile."""


def format_findings(outcomes: Sequence[ProbeOutcome]) -> str:
    """Return one line per probed target, then each found server's models."""
    lines = [f"Probed {len(outcomes)} port(s) on this machine:"]
    width = max((len(str(o.target)) for o in outcomes), default=0)
    for outcome in outcomes:
        lines.append(f"  {str(outcome.target).ljust(width)}  {outcome.detail}")
    for outcome in outcomes:
        if outcome.server is not None:
            lines.append("")
            lines.extend(format_server(outcome.server))
    return "\n".join(lines) + "\n"


def format_server(server: FoundServer) -> list[str]:
    """Return a header and one line per model: what it can serve, and why setup thinks so."""
    version = f" {server.version}" if server.version else ""
    lines = [f"{server.label}{version} on {server.target.base_url}:"]
    if not server.models:
        lines.append("  no models (load or pull one, then run setup again)")
    recipe = RECIPES[server.kind]
    for model in server.models:
        uses = []
        known = known_model(server, model)
        if known is not None:
            roles = ", ".join(known.agents)
            lines.append(
                f"  {model.name}: {roles} — the embedded demo model of {known.instance!r}, "
                f"configured like its bundled agents; {model.evidence}"
            )
            continue
        if completion_parent(model, recipe):
            uses.append("completion (FIM)")
        if chat_capable(model):
            uses.append("chat")
        what = ", ".join(uses) or ("embeddings, skipped" if model.embedding else "not used")
        why = f" — {model.evidence}" if model.evidence else ""
        lines.append(f"  {model.name}: {what}{why}")
    return lines


def format_plan(plan: SetupPlan) -> str:
    """Return the plan as lines of text: instances, agents, pipeline slots, notes."""
    lines = ["Plan:"]
    for provider in plan.providers:
        lines.append(
            f"  provider instance {provider.name!r}: extends {provider.extends!r}, "
            f"url {provider.url}"
            + (", demo = true (an offline demo model)" if provider.demo else "")
        )
        lines.append(f"    → {provider.file}")
    for agent in plan.agents:
        where = (
            f", provider_instance {agent.provider_instance!r}" if agent.provider_instance else ""
        )
        state = {"new": "new", "update": "update", "same": "already there"}[agent.state]
        lines.append(f"  {agent.role} agent {agent.name!r} [{state}]")
        lines.append(f"    extends {agent.extends!r}, model {agent.model!r}{where}")
        if agent.state != "same":
            lines.append(f"    → {agent.file}")
    if plan.slots:
        lines.append(f"  {plan.pipelines_file}:")
        for slot in plan.slots:
            lines.append(f"    {slot.slot}: {slot.before!r} → {slot.after!r}")
    lines.extend(f"  note: {note}" for note in plan.notes)
    if not plan.agents:
        lines.append("  nothing to configure: no model fits a pipeline")
    elif not plan.writes:
        lines.append("  nothing to change: the configuration already uses what was found")
    return "\n".join(lines) + "\n"


def format_result(result: SetupResult) -> str:
    """Return the files written (with their changed keys) and the validation verdict."""
    lines = ["Changed:"]
    for change in result.changes:
        keys = f" ({', '.join(change.keys)})" if change.keys else ""
        lines.append(f"  {change.action} {change.path}{keys}")
    for problem in result.problems:
        lines.append(f"  {problem.format()}")
    verdict = (
        f"agents validate: {len(result.errors)} error(s) in the written configuration"
        if result.errors
        else "agents validate: ok"
    )
    lines.append(verdict)
    return "\n".join(lines) + "\n"
