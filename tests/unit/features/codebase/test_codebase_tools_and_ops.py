"""``search_codebase``, ``find_definition``, the ``codebase/*`` operations and ``@codebase``."""

from __future__ import annotations

from pathlib import Path

import pytest

from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.context.codebase.model import Snippet
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.core.tools import ToolContext, ToolRegistry
from qodeassist_lsp.features.chat import mentions
from qodeassist_lsp.features.chat.files import FileAccess
from qodeassist_lsp.features.codebase.operations import CodebaseOff, operations
from qodeassist_lsp.features.codebase.service import CodebaseService, CodebaseSources
from qodeassist_lsp.features.codebase.settings import CodebaseSettings
from qodeassist_lsp.features.codebase.tools import contributor
from qodeassist_lsp.workbench.features import BoundOperation
from tests.unit.features.codebase.fake_index import FakeFactory


@pytest.fixture
async def service(tmp_path: Path) -> CodebaseService:
    root = tmp_path / "project"
    root.mkdir()
    (root / "parser.py").write_text(
        'def parse_config(text):\n    """Explain."""\n    return text\n'
    )
    (root / "app.py").write_text("def main():\n    return 1\n")
    (root / "secret.py").write_text("def parse_config_secret():\n    pass\n")
    (root / ".qodeassistignore").write_text("secret.py\n")
    current = [CodebaseSettings()]
    ignore = IgnoreFilter(root)
    service = CodebaseService(
        CodebaseSources(
            settings=lambda: current[0],
            folders=lambda: [root],
            data_root=lambda: tmp_path / "data",
            ignored=lambda p: ".qodeassistignore" if ignore.is_ignored(p) else None,
            factory=FakeFactory(),
        )
    )
    service.current = current  # type: ignore[attr-defined]
    await service.start()
    await service.settled()
    return service


async def test_search_codebase_gives_paths_lines_and_the_snippet(service: CodebaseService) -> None:
    registry = ToolRegistry()
    contributor(lambda: service)(registry, CHAT_ASSISTANT)
    assert [s.name for s in registry.specs()] == ["search_codebase", "find_definition"]
    assert registry.permission_of("search_codebase") == "read"
    out = await registry.execute("search_codebase", {"query": "parse_config"}, ToolContext())
    assert not out.is_error
    assert "parser.py:1-3" in out.content
    assert "def parse_config(text):" in out.content
    assert "secret" not in out.content
    missing = await registry.execute("search_codebase", {"query": "nowhere_at_all"})
    assert missing.content == "No snippet matches 'nowhere_at_all'."
    bad = await registry.execute("search_codebase", {"query": ""})
    assert bad.is_error and "query" in bad.content


async def test_find_definition_gives_the_place_and_signature(service: CodebaseService) -> None:
    registry = ToolRegistry()
    contributor(lambda: service)(registry, CHAT_ASSISTANT)
    out = await registry.execute("find_definition", {"symbol": "parse_config"})
    assert "function parse_config — parser.py:1-2" in out.content
    assert "def parse_config(text):" in out.content
    none = await registry.execute("find_definition", {"symbol": "nothing"})
    assert "No definition of 'nothing'" in none.content


async def test_no_tools_while_the_index_is_off(service: CodebaseService) -> None:
    service.current[0] = CodebaseSettings(enabled=False)  # type: ignore[attr-defined]
    registry = ToolRegistry()
    contributor(lambda: service)(registry, CHAT_ASSISTANT)
    assert len(registry) == 0


async def test_operations_answer_camel_case_with_one_based_lines(service: CodebaseService) -> None:
    ops = {op.name: BoundOperation("codebase", op) for op in operations(lambda: service)}
    found = await ops["search"].call({"query": "parse_config"})
    assert found["snippets"][0]["path"] == "parser.py"
    assert found["snippets"][0]["startLine"] == 1
    assert found["snippets"][0]["uri"].startswith("file://")
    definitions = await ops["definition"].call({"symbol": "parse_config"})
    assert definitions["definitions"][0]["endLine"] == 2
    status = await ops["status"].call(None)
    assert status["state"] == "ready"
    assert status["files"] == 2
    again = await ops["reindex"].call({"wait": True})
    assert again["state"] == "ready"
    service.current[0] = CodebaseSettings(enabled=False)  # type: ignore[attr-defined]
    with pytest.raises(CodebaseOff, match="enabled = true"):
        await ops["search"].call({"query": "x"})
    assert (await ops["status"].call({}))["state"] == "off"


async def test_codebase_mention_attaches_the_snippets(service: CodebaseService) -> None:
    root = service.search("parse_config")[0].root
    access = FileAccess(DocumentStore(), IgnoreFilter(root), root)
    seen: list[str] = []

    async def search(query: str) -> list[tuple[Path, Snippet]]:
        seen.append(query)
        return [(hit.path, hit.snippet) for hit in service.for_mention(query)]

    text = await mentions.expand_all(access, "Explain  @codebase parse_config", search)
    assert seen == ["Explain parse_config"]
    assert text.startswith("Explain   parse_config\n\nSnippets of the codebase")
    assert "[parser.py:1-3](file://" in text
    assert "def parse_config(text):" in text
    assert "secret" not in text


async def test_codebase_mention_never_attaches_an_ignored_file(service: CodebaseService) -> None:
    root = service.search("parse_config")[0].root
    access = FileAccess(DocumentStore(), IgnoreFilter(root), root)
    secret = service.search("parse_config")[0]
    from dataclasses import replace

    leaked = replace(secret.snippet, path="secret.py")

    async def search(_query: str) -> list[tuple[Path, Snippet]]:
        return [(root / "secret.py", leaked)]

    text = await mentions.expand_all(access, "@codebase parse", search)
    assert "secret" not in text
    assert "no snippet of the codebase index matches" in text


async def test_codebase_mention_without_an_index_stays_as_typed(tmp_path: Path) -> None:
    access = FileAccess(DocumentStore(), None, tmp_path)
    assert await mentions.expand_all(access, "@codebase where", None) == "@codebase where"
