"""The doctor report as plain text: what ``qodeassist-lsp doctor`` prints and editors show."""

from __future__ import annotations

from typing import Any

from qodeassist_lsp.core.doctor import CHECKS, AgentReport, DoctorReport

_MARKS = {
    "ok": "ok",
    "problem": "FAIL",
    "busy": "busy",
    "not_checked": "not checked",
    "not_applicable": "n/a",
}


def format_report(report: DoctorReport) -> str:
    """Return the report as lines of text: pipelines, then one block per agent."""
    lines = []
    for slot, names in report.pipelines.items():
        if not names:
            lines.append(f"{slot}: off")
            continue
        verdict = "working" if report.pipeline_working(slot) else "NO WORKING AGENT"
        lines.append(f"{slot}: {verdict} ({', '.join(names)})")
    for agent in report.agents:
        lines.append("")
        lines.extend(format_agent(agent))
    if report.rules is not None:
        lines.append("")
        lines.extend(format_rules(report.rules))
    if report.codebase is not None:
        lines.append("")
        lines.extend(format_codebase(report.codebase))
    lines.append("")
    verdict = "all pipelines have a working agent" if report.ok else "some pipelines fail"
    unset = sum(not agent.configured for agent in report.agents)
    if unset:
        verdict += f" ({unset} bundled fallback(s) not configured, marked –)"
    lines.append(verdict)
    return "\n".join(lines) + "\n"


def format_agent(agent: AgentReport) -> list[str]:
    """Return the lines of one agent: header, checks, timings, problems with their fixes."""
    mark = "✓" if agent.working else "✗" if agent.configured else "–"
    head = f"{mark} {agent.name}"
    if agent.provider:
        head += f" — {agent.provider} / {agent.model}"
    if not agent.configured:
        # A fallback nobody chose: its reason and how to enable it, not a list of failed checks.
        lines = [f"{head}: not configured"]
        lines.extend(f"  {note}" for note in agent.notes)
        lines.extend(f"  to use it: {problem.fix}" for problem in agent.sorted_problems())
        return lines
    checks = ", ".join(f"{check} {_MARKS[agent.checks[check]]}" for check in CHECKS)
    lines = [head, f"  {checks}; circuit {agent.circuit}"]
    if agent.first_token_ms is not None:
        speed = f", {agent.tokens_per_second:g} tokens/s" if agent.tokens_per_second else ""
        lines.append(f"  first token after {agent.first_token_ms:g} ms{speed}")
    for problem in agent.sorted_problems():
        lines.append(f"  {problem.check}: {problem.message}")
        lines.append(f"    fix: {problem.fix}")
    lines.extend(f"  note: {note}" for note in agent.notes)
    return lines


def format_rules(rules: dict[str, Any]) -> list[str]:
    """Return the lines of the project's rules files in effect (``rules`` as the status has it)."""
    files, problems = rules.get("files", []), rules.get("problems", [])
    if not files and not problems:
        return ["project rules: none (AGENTS.md, CLAUDE.md, .github/copilot-instructions.md, "
                ".qodeassist/rules/*.md)"]  # fmt: skip
    lines = ["project rules (in the chat and refactor system prompts, nearest first):"]
    for found in files:
        note = (
            "; left out, over [rules] max_chars"
            if found["omitted"]
            else "; cut to fit [rules]"
            if found["truncated"]
            else ""
        )
        lines.append(f"  {found['path']} ({found['chars']} characters{note})")
    lines.extend(f"  problem: {problem}" for problem in problems)
    return lines


def format_codebase(part: dict[str, Any]) -> list[str]:
    """Return the lines of the codebase index (``part`` as ``qodeassist/status`` has it)."""
    state = part.get("state", "?")
    if state == "off":
        return ["codebase index: off ([codebase] enabled = false)"]
    counts = ""
    if "files" in part:
        counts = f" — {part['files']} files, {part.get('symbols', 0)} symbols"
    lines = [f"codebase index: {state}{counts}"]
    for folder in part.get("folders", []):
        size = folder.get("size", 0)
        where = f"database {_size(size)} at {folder['database']}" if folder.get("database") else ""
        head = f"  {folder['root']}: {folder.get('state', state)}"
        lines.append(f"{head}, {where}" if where else head)
        if folder.get("error"):
            lines.append(f"    error: {folder['error']}")
    return lines


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MiB"
    return f"{size / 1024:.0f} KiB"
