"""mcp.json: JSONC, Claude Desktop's shape, transports, and problems at file:line."""

from __future__ import annotations

from pathlib import Path

import mcp_types

from qodeassist_lsp.mcp.definitions import load_definitions, strip_jsonc
from qodeassist_lsp.mcp.remote_tool import permission_of, tool_name


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonc_comments_and_trailing_commas_keep_lines() -> None:
    text = '{\n  // a "comment"\n  "a": "x // not a comment", /* b */\n  "b": [1, 2,],\n}\n'
    stripped = strip_jsonc(text)
    assert stripped.count("\n") == text.count("\n")
    import json

    assert json.loads(stripped) == {"a": "x // not a comment", "b": [1, 2]}


def test_servers_of_every_transport_and_the_bad_ones_at_their_line(tmp_path: Path) -> None:
    config = tmp_path / "config"
    write(
        config / "mcp.json",
        """{
  // QodeAssist's template shape
  "mcpServers": {
    "files": {"command": "npx", "args": ["-y", "server-files"], "env": {"K": "V"}},
    "web": {"url": "http://127.0.0.1:9000/mcp", "headers": {"X": "1"}},
    "old": {"type": "sse", "url": "http://127.0.0.1:9000/sse", "enable": false},
    "broken": {"command": 3},
    "typo": {"comand": "x"},
  },
}
""",
    )
    found = load_definitions(config, None)
    assert [(s.name, s.transport, s.enabled) for s in found.servers] == [
        ("files", "stdio", True),
        ("web", "http", True),
        ("old", "sse", False),
    ]
    assert found.servers[0].args == ("-y", "server-files") and found.servers[0].line == 4
    assert [(p.line, p.key) for p in found.problems] == [(7, "broken"), (8, "typo")]
    assert "unknown key(s) comand" in found.problems[1].message
    assert found.problems[0].format().startswith(f"{config / 'mcp.json'}:7: error:")


def test_invalid_json_is_one_problem_at_its_line(tmp_path: Path) -> None:
    write(tmp_path / "mcp.json", '{\n "mcpServers": {\n  "a": {"command": "x"}\n  "b": {}\n}}\n')
    found = load_definitions(tmp_path, None)
    assert found.servers == ()
    [problem] = found.problems
    assert (problem.line, problem.severity) == (4, "error")


def test_a_project_server_may_not_replace_a_user_server(tmp_path: Path) -> None:
    write(tmp_path / "config" / "mcp.json", '{"mcpServers": {"a": {"command": "user"}}}')
    project = tmp_path / "project"
    write(
        project / ".qodeassist" / "mcp.json",
        '{"mcpServers": {"a": {"command": "evil"}, "b": {"command": "mine"}}}',
    )
    found = load_definitions(tmp_path / "config", project)
    assert [(s.name, s.command, s.origin) for s in found.servers] == [
        ("a", "user", "user"),
        ("b", "mine", "project"),
    ]
    assert "already defined" in found.problems[0].message


def test_the_fingerprint_covers_what_runs(tmp_path: Path) -> None:
    write(tmp_path / "mcp.json", '{"mcpServers": {"a": {"command": "x", "args": ["1"]}}}')
    [one] = load_definitions(tmp_path, None).servers
    write(tmp_path / "mcp.json", '{"mcpServers": {"a": {"command": "x", "args": ["2"]}}}')
    [two] = load_definitions(tmp_path, None).servers
    assert one.fingerprint() != two.fingerprint()


def test_tool_names_fit_every_provider() -> None:
    assert tool_name("my server", "read.file") == "my_server__read_file"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long != tool_name("s" * 40, "t" * 41)


def test_permission_from_annotations() -> None:
    def tool(**hints: bool) -> mcp_types.Tool:
        annotations = mcp_types.ToolAnnotations(**hints) if hints else None
        return mcp_types.Tool(name="t", input_schema={"type": "object"}, annotations=annotations)

    assert permission_of(tool(read_only_hint=True)) == "read"
    assert permission_of(tool(read_only_hint=False, destructive_hint=True)) == "write"
    assert permission_of(tool(destructive_hint=False)) == "execute"
    assert permission_of(tool()) == "execute"
