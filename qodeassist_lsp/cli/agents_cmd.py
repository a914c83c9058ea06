"""``qodeassist-lsp agents list | validate | render``: inspecting the loaded agents."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from qodeassist_lsp.cli.common import (
    EXIT_CONFIG,
    EXIT_OK,
    CliError,
    agent_named,
    load,
    print_json,
    secrets_for,
)
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.definitions import toml_files
from qodeassist_lsp.config.fim_templates import describe, is_fim_agent
from qodeassist_lsp.config.paths import PROJECT_DIR_NAME
from qodeassist_lsp.config.pipelines import pipeline_specs
from qodeassist_lsp.config.problems import did_you_mean
from qodeassist_lsp.config.template_context import complete_context, synthetic_context
from qodeassist_lsp.config.templating import TemplateError
from qodeassist_lsp.core.agent import REDACTED, AgentFactory, AgentNotAvailable
from qodeassist_lsp.core.agent_catalog import agent_summaries
from qodeassist_lsp.mcp.definitions import MCP_FILE_NAME, load_definitions, read_mcp_file
from qodeassist_lsp.skills.discovery import discover, skill_roots
from qodeassist_lsp.skills.skill import SKILL_FILE, load_skill


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``agents`` command group to the top-level subparsers."""
    agents = commands.add_parser("agents", help="list, validate and render agent profiles")
    sub = agents.add_subparsers(dest="agents_command", metavar="ACTION", required=True)

    listing = sub.add_parser(
        "list", parents=[shared], help="every loaded agent with provider, model, pipelines"
    )
    listing.add_argument(
        "--pipeline",
        choices=[name for spec in pipeline_specs() for name in (spec.slot, spec.alias)],
        help="only the agents of one pipeline",
    )
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=list_agents)

    validate = sub.add_parser(
        "validate", parents=[shared], help="load and dry-render; report problems"
    )
    validate.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="agent files or folders to check (default: everything)",
    )
    validate.set_defaults(handler=validate_agents)

    render = sub.add_parser(
        "render", parents=[shared], help="print the HTTP request an agent would send"
    )
    render.add_argument("name", metavar="NAME", help="agent name (quote names with spaces)")
    render.add_argument(
        "--context",
        type=Path,
        metavar="FILE.json",
        help="the template ctx object (default: the synthetic context)",
    )
    render.set_defaults(handler=render_agent)


def list_agents(args: argparse.Namespace) -> int:
    """Print the loaded agents as a table or JSON."""
    config = load(args)
    rows = agent_summaries(config, args.pipeline)
    if args.json:
        print_json(rows)
        return EXIT_OK
    table = [("NAME", "PROVIDER", "MODEL", "PIPELINES", "CONTEXT", "CONCURRENT", "FLAGS")]
    for row in rows:
        flags = ",".join(
            flag
            for flag, on in (
                ("tools", row["tools"]),
                ("thinking", row["thinking"]),
                ("hidden", row["hidden"]),
                ("demo", row["demo"]),
            )
            if on
        )
        table.append(
            (
                row["name"],
                row["provider"],
                row["model"],
                ",".join(row["pipelines"]) or "-",
                str(row["contextTokens"] or "-"),
                "any" if row["maxConcurrent"] is None else str(row["maxConcurrent"]),
                flags or "-",
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(r, widths, strict=True)).rstrip())
    return EXIT_OK


def _expand(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(toml_files(path))
            files.extend(sorted(path.glob(f"*/{SKILL_FILE}")))
            if (path / SKILL_FILE).is_file():
                files.append(path / SKILL_FILE)
            if (path / MCP_FILE_NAME).is_file():
                files.append(path / MCP_FILE_NAME)
        elif path.is_file():
            files.append(path)
        else:
            raise CliError(f"{path}: no such file or folder")
    return [f.resolve() for f in files]


def validate_agents(args: argparse.Namespace) -> int:
    """Load and dry-render; print ``file:line: severity: message`` per problem.

    Skills and MCP servers are checked too: every discovered ``SKILL.md`` and both ``mcp.json``
    files without paths, the named ones with.
    """
    wanted = _expand(args.paths)
    skill_files = [f for f in wanted if f.name == SKILL_FILE]
    mcp_files = [f for f in wanted if f.name == MCP_FILE_NAME]
    wanted = [f for f in wanted if f.name not in (SKILL_FILE, MCP_FILE_NAME)]
    baseline = load(args, report=False)  # every problem is printed below, with its location
    known = {p.resolve() for directory in _layer_dirs(baseline) for p in toml_files(directory)}
    config = load(args, [f for f in wanted if f not in known], report=False) if wanted else baseline
    problems = config.problems
    if wanted or skill_files or mcp_files:
        names = {str(f) for f in wanted}
        problems = [p for p in problems if p.file and str(Path(p.file).resolve()) in names]
        for file in skill_files:
            problems = problems + load_skill(file.parent, "cli")[1]
        for file in mcp_files:
            project = file.parent.name == PROJECT_DIR_NAME
            problems = problems + read_mcp_file(file, "project" if project else "user")[1]
        wanted += skill_files + mcp_files
    else:
        paths = config.paths
        if config.settings.skills.enabled:
            roots = skill_roots(config.settings.skills, paths.config_root, paths.project)
            problems = problems + discover(roots).problems
        if config.settings.mcp.enable_clients:
            problems = problems + list(load_definitions(paths.config_root, paths.project).problems)
    for problem in problems:
        print(problem.format())
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    scope = (
        f"{len(wanted)} file(s)"
        if wanted
        else (f"{len(config.agents)} agents, {len(config.providers)} provider instances")
    )
    print(f"checked {scope}: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
    return EXIT_CONFIG if errors else EXIT_OK


def _layer_dirs(config: Configuration) -> list[Path]:
    paths = config.paths
    dirs = [
        paths.bundled / "agents",
        paths.bundled / "providers",
        paths.config_root / "agents",
        paths.config_root / "providers",
    ]
    if paths.project_config:
        dirs += [paths.project_config / "agents", paths.project_config / "providers"]
    return dirs


def render_agent(args: argparse.Namespace) -> int:
    """Print ``{"url", "headers", "body"}`` for one request of agent NAME (keys redacted).

    For a FIM agent, stderr names the model family whose template the prompt uses.
    """
    config = load(args)
    ctx: dict[str, Any] | None = None
    if args.context is not None:
        ctx = _read_context(args.context)
    factory = AgentFactory(config)
    try:
        agent = factory.create(agent_named(config, args.name))
    except AgentNotAvailable as exc:
        raise CliError(str(exc)) from exc
    provider = agent.provider
    has_key = secrets_for(config).get(provider.api_key_ref, provider.api_key_env or None)
    context = (
        complete_context(ctx, model=agent.model)
        if ctx is not None
        else synthetic_context(agent.model)
    )
    try:
        request = agent.build_request(context, REDACTED if has_key else None)
    except TemplateError as exc:
        raise CliError(f"agent {agent.name!r}: {exc}") from exc
    print_json(request.as_json())
    if ctx is None:
        print(
            "note: rendered with the synthetic validation context (sample prefix, suffix, images, "
            "tool calls and awkward characters), not from a real request; pass --context "
            "FILE.json to render your own",
            file=sys.stderr,
        )
    profile = agent.profile
    if is_fim_agent(agent.endpoint, profile.body, profile.tags):
        print(describe(agent.model, agent.endpoint, profile.body), file=sys.stderr)
    return EXIT_OK


def _read_context(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CliError(f"{path}: cannot read context file: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise CliError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise CliError(
            f"{path}: the context must be a JSON object like "
            '{"prefix": "…", "suffix": "…", "history": […]}'
        )
    known = set(complete_context())
    for key in data:
        if key not in known:
            # A key no template reads would render as if absent (`messages` gave `[]`): refuse.
            hint = _CONTEXT_ALIASES.get(key)
            hint = f"; did you mean {hint!r}?" if hint else did_you_mean(key, known)
            raise CliError(
                f"{path}: unknown context key {key!r}{hint} (the keys: {', '.join(sorted(known))};"
                " see docs/agent-template-context.md)"
            )
    return data


_CONTEXT_ALIASES = {
    "messages": "history",
    "conversation": "history",
    "system": "system_prompt",
    "files": "files_metadata",
}
"""Keys of other APIs' request shapes, and the ``ctx`` key that holds the same thing."""
