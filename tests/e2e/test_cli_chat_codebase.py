"""``qodeassist-lsp chat`` offers ``search_codebase`` over the workspace's index.

The real command against the replay server: the model calls ``search_codebase``, the call waits
for the index the command started building, and the model is given the defining module's
snippet — never the ``.qodeassistignore``d file's.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, tool_call_reply
from tests.support.wire_cases import TARGETS
from tests.support.workspace import Workspace

TARGET = TARGETS["openai"]
MARKER = "zebraquux"


def test_the_cli_chat_searches_the_codebase(tmp_path: Path, replay: ReplayServer) -> None:
    workspace = Workspace(tmp_path, replay.url)
    workspace.write(
        "agents/tools.toml",
        f'schema_version = 1\nextends = "{TARGET.agent}"\nname = "Tools"\nenable_tools = true\n',
    )
    project = workspace.project
    (project / "settings_parser.py").write_text(
        "def parse_settings_file(path):\n    return open(path).read()\n"
    )
    (project / "app.py").write_text("def run():\n    return parse_settings_file('a')\n")
    (project / ".qodeassistignore").write_text("private.py\n")
    (project / "private.py").write_text(f"def parse_settings_{MARKER}():\n    pass\n")
    replay.script(
        TARGET.route,
        [
            tool_call_reply("search_codebase", {"query": "parse settings file"}),
            chat_reply("Done."),
        ],
    )
    result = workspace.run("chat", "--agent", "Tools", "Where do we parse the settings file?")
    assert result.returncode == 0, result.describe()
    assert "[tool] search_codebase -> ok" in result.stderr, result.describe()
    second = [r for r in replay.requests if r.path.endswith(TARGET.route)][1]
    told = str(second.json["messages"][-1]["content"])
    assert "settings_parser.py:1-2" in told, told
    assert "def parse_settings_file(path):" in told, told
    assert MARKER not in told, told
