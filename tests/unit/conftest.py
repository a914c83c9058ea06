"""A throw-away configuration tree: a tiny bundled root, a user config root and a project."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import Configuration, load_configuration
from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.lsp.sections import SECTIONS

BASE_AGENT = """
schema_version = 1
name = "Wire Base"
abstract = true
provider_instance = "Local"
endpoint = "/v1/chat/completions"

[body]
stream = true
messages = '''
[
{% if ctx.system_prompt %}{"role": "system", "content": {{ ctx.system_prompt | tojson }}},{% endif %}
{% for m in ctx.history %}
{"role": {{ m.role | tojson }}, "content": {{ m.content | tojson }}},
{% endfor %}
]
'''
"""

CHAT_AGENT = """
name = "Chat"
extends = "Wire Base"
model = "m1"
tags = ["chat"]

[body]
temperature = 0.2
"""

PROVIDER = """
name = "Local"
client_api = "OpenAI Compatible"
url = "http://127.0.0.1:9999/v1"
api_key_env = "TEST_LOCAL_KEY"
# A model server on this machine: an OpenAI-compatible API on loopback is otherwise remote.
local = true
"""


@dataclass
class ConfigTree:
    """Helpers to write files into the tree and load it."""

    root: Path

    @property
    def paths(self) -> ConfigPaths:
        return ConfigPaths(
            config_root=self.root / "config",
            data_root=self.root / "data",
            bundled=self.root / "bundled",
            project=self.root / "project",
        )

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    def load(self, *extra: Path) -> Configuration:
        return load_configuration(self.paths, list(extra), None, SECTIONS)

    def messages(self, config: Configuration) -> list[str]:
        return [p.format() for p in config.problems]


@pytest.fixture
def tree(tmp_path: Path) -> ConfigTree:
    t = ConfigTree(tmp_path)
    t.write("bundled/providers/local.toml", PROVIDER)
    t.write("bundled/agents/wire_base.toml", BASE_AGENT)
    t.write("bundled/agents/chat.toml", CHAT_AGENT)
    t.write("bundled/personas/p.md", "You are a persona.\n")
    t.write("bundled/pipelines.toml", '[pipelines]\nchat_assistant = ["Chat"]\n')
    (tmp_path / "config").mkdir()
    (tmp_path / "project").mkdir()
    return t
