"""The project's rules files: discovery order, budget, switches, ignore, symlinks, deletion."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from qodeassist_lsp.config.settings import RulesSettings
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.context.rules_files import (
    RULES_LAYER,
    RulesCache,
    RulesFinder,
    ignore_rule,
    set_layer,
)
from qodeassist_lsp.core.system_prompt_builder import SystemPromptBuilder


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def finder(root: Path, settings: RulesSettings | None = None, **kw: object) -> RulesFinder:
    chosen = settings or RulesSettings()
    return RulesFinder(lambda: chosen, lambda: [root], **kw)  # type: ignore[arg-type]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root / "AGENTS.md", "root agents")
    write(root / "CLAUDE.md", "root claude")
    write(root / ".github/copilot-instructions.md", "copilot")
    write(root / ".qodeassist/rules/b.md", "rule b")
    write(root / ".qodeassist/rules/a.md", "rule a")
    write(root / ".qodeassist/rules/notes.txt", "not markdown")
    write(root / "pkg/AGENTS.md", "pkg agents")
    write(root / "pkg/sub/.qodeassist/rules/x.md", "sub rule")
    write(root / "pkg/sub/mod.py", "x = 1\n")
    write(root / "other/AGENTS.md", "other agents")
    return root


def test_nearest_first_root_last_copilot_at_the_root(tree: Path) -> None:
    found = finder(tree).find(tree / "pkg/sub/mod.py")
    assert [f.relative for f in found.files] == [
        "pkg/sub/.qodeassist/rules/x.md",
        "pkg/AGENTS.md",
        "AGENTS.md",
        "CLAUDE.md",
        ".qodeassist/rules/a.md",
        ".qodeassist/rules/b.md",
        ".github/copilot-instructions.md",
    ]
    layer = found.layer()
    assert layer.startswith("# Project rules (from .qodeassist/rules/*.md, AGENTS.md, CLAUDE.md")
    assert layer.index("## pkg/AGENTS.md\n\npkg agents") < layer.index("## AGENTS.md\n\nroot")
    assert "other agents" not in layer


def test_without_a_file_only_the_workspace_root(tree: Path) -> None:
    found = finder(tree).find()
    assert [f.relative for f in found.files][:2] == ["AGENTS.md", "CLAUDE.md"]
    assert "pkg agents" not in found.layer()


def test_a_file_outside_every_folder_gets_the_first_folders_root(
    tree: Path, tmp_path: Path
) -> None:
    found = finder(tree).find(write(tmp_path / "elsewhere/AGENTS.md", "far").parent / "f.py")
    assert "far" not in found.layer() and "root agents" in found.layer()


@pytest.mark.parametrize(
    ("switch", "gone"),
    [
        ("agents_md", "AGENTS.md"),
        ("claude_md", "CLAUDE.md"),
        ("copilot_instructions", ".github/copilot-instructions.md"),
        ("qodeassist_rules", ".qodeassist/rules/a.md"),
    ],
)
def test_each_source_can_be_switched_off(tree: Path, switch: str, gone: str) -> None:
    settings = RulesSettings(**{switch: False})
    files = finder(tree, settings).find(tree / "x.py").files
    assert gone not in [f.relative for f in files]
    assert all(f.source != switch for f in files)
    assert {f.source for f in files} == {
        "agents_md",
        "claude_md",
        "copilot_instructions",
        "qodeassist_rules",
    } - {switch}


def test_each_file_is_cut_at_max_file_chars_with_a_marker(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "a" * 500)
    found = finder(tmp_path, RulesSettings(max_file_chars=100)).find()
    only = found.files[0]
    assert only.truncated and only.chars == 500
    assert only.text.startswith("a" * 100 + "\n[… cut: AGENTS.md has 500 characters")
    assert "[rules] max_file_chars" in found.layer()


def test_the_total_budget_keeps_the_nearest_and_cuts_or_leaves_out_the_rest(
    tmp_path: Path,
) -> None:
    write(tmp_path / "deep/AGENTS.md", "n" * 150)
    write(tmp_path / "AGENTS.md", "r" * 150)
    write(tmp_path / "CLAUDE.md", "c" * 10)
    found = finder(tmp_path, RulesSettings(max_chars=200)).find(tmp_path / "deep/f.py")
    near, root, claude = found.files
    assert not near.truncated and near.text == "n" * 150
    assert root.truncated and root.text.startswith("r" * 50 + "\n[… cut")
    assert "[rules] max_chars" in root.text
    assert claude.omitted and claude.text == ""
    assert "[… left out, over the [rules] max_chars budget: CLAUDE.md]" in found.layer()
    assert found.to_json()[2] == {
        "path": "CLAUDE.md",
        "source": "claude_md",
        "chars": 10,
        "truncated": True,
        "omitted": True,
    }


def test_a_file_qodeassistignore_lists_is_skipped(tree: Path) -> None:
    write(tree / ".qodeassistignore", "CLAUDE.md\npkg/\n")
    filters: dict[Path, IgnoreFilter] = {}
    ignored = ignore_rule(lambda root: filters.setdefault(root, IgnoreFilter(root)))
    names = [f.relative for f in finder(tree, ignored=ignored).find(tree / "pkg/sub/m.py").files]
    assert "CLAUDE.md" not in names
    assert not any(name.startswith("pkg/") for name in names)
    assert "AGENTS.md" in names


def test_a_symlink_out_of_the_workspace_is_refused_and_told_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "ws"
    secret = write(tmp_path / "outside.md", "secret rules")
    root.mkdir()
    os.symlink(secret, root / "AGENTS.md")
    write(root / "CLAUDE.md", "kept")
    rules = finder(root)
    with caplog.at_level(logging.WARNING, logger="qodeassist.rules"):
        first = rules.find()
        rules.find()
    assert "secret" not in first.layer() and "kept" in first.layer()
    assert first.problems == (
        "AGENTS.md: a symlink that leads outside the workspace; it is left out",
    )
    assert len([r for r in caplog.records if "outside the workspace" in r.message]) == 1


def test_a_symlink_inside_the_workspace_is_followed(tmp_path: Path) -> None:
    write(tmp_path / "docs/rules.md", "shared rules")
    os.symlink(tmp_path / "docs/rules.md", tmp_path / "AGENTS.md")
    assert "shared rules" in finder(tmp_path).find().layer()


def test_not_utf8_is_a_problem_never_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"caf\xe9")
    write(tmp_path / "CLAUDE.md", "fine")
    rules = finder(tmp_path)
    with caplog.at_level(logging.WARNING, logger="qodeassist.rules"):
        found = rules.find()
        rules.find()
    assert [f.relative for f in found.files] == ["CLAUDE.md"]
    assert found.problems == ("AGENTS.md: is not UTF-8 (byte 3); save it as UTF-8 to use it",)
    assert len([r for r in caplog.records if "not UTF-8" in r.message]) == 1
    assert found.status(32_000) == {
        "files": [found.files[0].to_json()],
        "problems": list(found.problems),
        "maxChars": 32_000,
    }


def test_changed_files_are_read_again_and_deleted_ones_are_gone(tmp_path: Path) -> None:
    cache = RulesCache()
    rules = finder(tmp_path, cache=cache)
    path = write(tmp_path / "AGENTS.md", "version one")
    assert "version one" in rules.find().layer()
    write(path, "version two, longer")
    assert "version two, longer" in rules.find().layer()
    path.unlink()
    assert rules.find().files == ()
    assert rules.find().layer() == ""


def test_set_layer_adds_and_removes_the_rules_layer(tmp_path: Path) -> None:
    builder = SystemPromptBuilder()
    builder.set_layer("agent.system", "You are helpful.", 0)
    builder.set_layer("chat.context", "# Active project", 50)
    write(tmp_path / "AGENTS.md", "Use tabs.")
    set_layer(builder, finder(tmp_path).find())
    assert builder.names() == ["agent.system", RULES_LAYER, "chat.context"]
    assert "## AGENTS.md\n\nUse tabs." in builder.compose()
    (tmp_path / "AGENTS.md").unlink()
    set_layer(builder, finder(tmp_path).find())
    assert RULES_LAYER not in builder.names()


def test_no_folders_no_rules() -> None:
    rules = RulesFinder(RulesSettings, list)
    assert rules.find(Path("/x/y.py")).files == ()
