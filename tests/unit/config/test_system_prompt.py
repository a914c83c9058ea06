import os
from pathlib import Path

import pytest

from qodeassist_lsp.config.system_prompt import PromptRoots, SystemPromptError, SystemPromptRenderer


@pytest.fixture
def roots(tmp_path: Path) -> PromptRoots:
    for name in ("bundled/personas", "config", "project/docs", "outside"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "bundled/personas/p.md").write_text("Persona\nline2\nline3")
    (tmp_path / "config/mine.md").write_text("Mine")
    (tmp_path / "project/docs/RULES.md").write_text("Rules")
    (tmp_path / "outside/secret.txt").write_text("secret")
    return PromptRoots(tmp_path / "bundled", tmp_path / "config", tmp_path / "project")


def test_helpers_and_variables(roots: PromptRoots) -> None:
    r = SystemPromptRenderer(roots)
    text = r.render(
        '{{ read_file(":/personas/p.md") | head_lines(1) }}|{{ read_file("${CONFIG_DIR}/mine.md") }}'
        '|{{ read_file("${PROJECT_DIR}/docs/RULES.md") }}|{{ read_dir("${PROJECT_DIR}/docs") }}'
        '|{{ file_exists("docs/none.md") }}|{{ basename("a/b.py") }} {{ dirname("a/b.py") }} '
        '{{ ext("a/b.py") }} {{ upper(language) }}',
        language="python",
    )
    assert text == "Persona|Mine|Rules|['RULES.md']|False|b.py a py PYTHON"


@pytest.mark.parametrize(
    "path",
    ["${PROJECT_DIR}/../outside/secret.txt", "/etc/passwd", ":/../outside/secret.txt"],
)
def test_escapes_are_refused(roots: PromptRoots, path: str) -> None:
    with pytest.raises(SystemPromptError):
        SystemPromptRenderer(roots).render("{{ read_file('" + path + "') }}")


def test_symlink_escape_is_refused(roots: PromptRoots, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside/secret.txt", tmp_path / "project/link.txt")
    with pytest.raises(SystemPromptError, match="outside the allowed folders"):
        SystemPromptRenderer(roots).render("{{ read_file('${PROJECT_DIR}/link.txt') }}")


def test_unresolved_project_dir(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    r = SystemPromptRenderer(PromptRoots(tmp_path / "b"))
    assert r.render("{{ file_exists('${PROJECT_DIR}/x') }}") == "False"
    with pytest.raises(SystemPromptError, match="needs an open project"):
        r.render("{{ read_file('${PROJECT_DIR}/x') }}")


def test_syntax_error_is_reported(roots: PromptRoots) -> None:
    with pytest.raises(SystemPromptError, match="syntax error"):
        SystemPromptRenderer(roots).render("{% if %}")


def test_include_is_disabled_in_system_prompts(roots: PromptRoots) -> None:
    with pytest.raises(SystemPromptError):
        SystemPromptRenderer(roots).render('{% include "personas/p.md" %}')
