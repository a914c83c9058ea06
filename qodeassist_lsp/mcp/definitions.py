"""The MCP servers a user or a project lists in ``mcp.json``, read into typed definitions.

Both files use Claude Desktop's shape, ``{"mcpServers": {"<name>": {...}}}``, and may be JSONC
(``//`` and ``/* */`` comments, trailing commas): QodeAssist wrote a commented template that
plain JSON could not read. An entry is stdio when it has a ``command`` (or ``type``/``transport``
says ``stdio``), legacy HTTP+SSE when ``type``/``transport`` is ``sse``, otherwise streamable
HTTP. A bad entry is a `ConfigProblem` located at ``file:line``; the other entries still load.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from qodeassist_lsp.config.paths import PROJECT_DIR_NAME
from qodeassist_lsp.config.problems import ConfigProblem

MCP_FILE_NAME = "mcp.json"
"""The file name, in the config root and in a project's ``.qodeassist/``."""

Transport = Literal["stdio", "http", "sse"]
Origin = Literal["user", "project"]

_TRANSPORT_NAMES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_KNOWN_KEYS = frozenset(
    {"type", "transport", "command", "args", "env", "cwd", "url", "headers", "enable", "enabled"}
)
_IGNORED_KEYS = frozenset({"spec", "description", "disabled", "timeout", "alwaysAllow"})


@dataclass(frozen=True)
class ConnectionLimits:
    """Timeouts of one server connection (from ``[mcp]``)."""

    connect_timeout_s: float = 15.0
    call_timeout_s: float = 60.0
    ping_interval_s: float = 30.0
    extra_paths: Sequence[str] = ()


@dataclass(frozen=True)
class ServerDefinition:
    """One MCP server to connect to."""

    name: str
    transport: Transport
    origin: Origin
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    file: str = ""
    line: int | None = None

    def fingerprint(self) -> str:
        """Hash what the server runs or reaches: an approval covers exactly this definition."""
        shape = {
            "transport": self.transport,
            "command": self.command,
            "args": list(self.args),
            "env": dict(self.env),
            "cwd": self.cwd,
            "url": self.url,
            "headers": dict(self.headers),
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()

    def describe(self) -> str:
        """One line saying what starting this server does (for the approval question)."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return f"{self.transport} {self.url}"


@dataclass(frozen=True)
class McpFiles:
    """Every server definition found, user ones first, and the problems met."""

    servers: tuple[ServerDefinition, ...] = ()
    problems: tuple[ConfigProblem, ...] = ()


def load_definitions(config_root: Path, project: Path | None) -> McpFiles:
    """Read ``<config>/mcp.json``, then ``<project>/.qodeassist/mcp.json``.

    A project entry may not replace a user entry of the same name (it is reported and skipped).
    """
    servers: dict[str, ServerDefinition] = {}
    problems: list[ConfigProblem] = []
    files: list[tuple[Path, Origin]] = [(config_root / MCP_FILE_NAME, "user")]
    if project is not None:
        files.append((project / PROJECT_DIR_NAME / MCP_FILE_NAME, "project"))
    for path, origin in files:
        found, file_problems = read_mcp_file(path, origin)
        problems.extend(file_problems)
        for server in found:
            if server.name in servers:
                problems.append(
                    ConfigProblem(
                        "warning",
                        f"MCP server {server.name!r} is already defined in "
                        f"{servers[server.name].file}; this definition is ignored",
                        file=server.file,
                        line=server.line,
                        key=server.name,
                    )
                )
                continue
            servers[server.name] = server
    return McpFiles(tuple(servers.values()), tuple(problems))


def read_mcp_file(path: Path, origin: Origin) -> tuple[list[ServerDefinition], list[ConfigProblem]]:
    """Parse one ``mcp.json``; a missing file is no servers and no problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError) as exc:
        return [], [ConfigProblem("error", f"cannot read MCP servers: {exc}", file=str(path))]
    try:
        data = json.loads(strip_jsonc(text))
    except json.JSONDecodeError as exc:
        message = f"invalid JSON: {exc.msg} (column {exc.colno}); no MCP server of it is loaded"
        return [], [ConfigProblem("error", message, file=str(path), line=exc.lineno)]
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        message = 'expected an object {"mcpServers": {"<name>": {...}}}; no server loaded'
        return [], [ConfigProblem("error", message, file=str(path), line=1)]
    servers: list[ServerDefinition] = []
    problems: list[ConfigProblem] = []
    for name, entry in entries.items():
        line = _line_of_key(text, name)
        try:
            servers.append(_definition(name, entry, origin, str(path), line))
        except ValueError as exc:
            problems.append(
                ConfigProblem(
                    "error", f"MCP server {name!r}: {exc}", file=str(path), line=line, key=name
                )
            )
    return servers, problems


def _definition(
    name: str, entry: Any, origin: Origin, file: str, line: int | None
) -> ServerDefinition:
    if not isinstance(entry, dict):
        raise ValueError("must be an object with a `command` or a `url`")
    if not name.strip():
        raise ValueError("the server name is empty")
    unknown = sorted(set(entry) - _KNOWN_KEYS - _IGNORED_KEYS)
    if unknown:
        raise ValueError(
            f"unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KNOWN_KEYS))}"
        )
    transport = _transport(entry)
    command, url = entry.get("command", ""), entry.get("url", "")
    if transport == "stdio" and (not isinstance(command, str) or not command.strip()):
        raise ValueError("a stdio server needs a non-empty string `command`")
    if transport != "stdio" and (not isinstance(url, str) or not re.match(r"https?://", url)):
        raise ValueError(f"an {transport} server needs a `url` starting with http:// or https://")
    enabled = entry.get("enable", entry.get("enabled", True))
    if not isinstance(enabled, bool):
        raise ValueError("`enable` must be true or false")
    cwd = entry.get("cwd", "")
    if not isinstance(cwd, str):
        raise ValueError("`cwd` must be a string")
    return ServerDefinition(
        name=name,
        transport=transport,
        origin=origin,
        command=command if transport == "stdio" else "",
        args=tuple(_strings(entry.get("args", []), "args")),
        env=_string_map(entry.get("env", {}), "env"),
        cwd=cwd,
        url=url if transport != "stdio" else "",
        headers=_string_map(entry.get("headers", {}), "headers"),
        enabled=enabled,
        file=file,
        line=line,
    )


def _transport(entry: Mapping[str, Any]) -> Transport:
    declared = entry.get("transport", entry.get("type"))
    if declared is None:
        return "stdio" if "command" in entry and "url" not in entry else "http"
    found = _TRANSPORT_NAMES.get(str(declared).lower())
    if found is None:
        raise ValueError(f"unknown transport {declared!r}; use stdio, http or sse")
    return found


def _strings(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"`{key}` must be a list of strings")
    return value


def _string_map(value: Any, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"`{key}` must be an object of string values")
    return dict(value)


def _line_of_key(text: str, name: str) -> int | None:
    match = re.search(re.escape(json.dumps(name)) + r"\s*:", text)
    return text.count("\n", 0, match.start()) + 1 if match else None


_JSONC_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def strip_jsonc(text: str) -> str:
    """Turn JSONC into JSON, keeping every line and column where it was.

    Comments and trailing commas become spaces, so a parse error still points at the user's text.
    """

    def blank(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith('"'):
            return token
        return re.sub(r"[^\n]", " ", token)

    # Twice: a trailing comma is only seen once the comment after it is gone.
    return _JSONC_TOKEN.sub(blank, _JSONC_TOKEN.sub(blank, text))
