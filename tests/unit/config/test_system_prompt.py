import os
from pathlib import Path

import pytest

from qodeassist_lsp.config.system_prompt import (
    PromptPathRefused,
    PromptRoots,
    SystemPromptError,
    SystemPromptRenderer,
)


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
    refused = r"leads to .*outside the folders system prompts may read.*general\.allowed_roots"
    with pytest.raises(SystemPromptError, match=refused):
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


def test_check_paths_finds_refused_literals_in_every_branch(
    roots: PromptRoots, tmp_path: Path
) -> None:
    os.symlink(tmp_path / "outside/secret.txt", tmp_path / "config/linked.md")
    source = (
        '{% if language == "cpp" %}{{ read_file("${PROJECT_DIR}/../../x") }}{% endif %}\n'
        '{{ "${CONFIG_DIR}/../x" | read_file }}{{ read_file("${CONFIG_DIR}/linked.md") }}\n'
        '{{ read_file("${CONFIG_DIR}/mine.md") }}{{ read_file(some_variable) }}'
    )
    found = SystemPromptRenderer(roots).check_paths(source)
    assert len(found) == 3
    by_path = {
        next(p for p in ("/../../x", "config/../x", "linked.md") if p in m): m for m in found
    }
    assert "'..' is not allowed" in by_path["/../../x"]
    assert "'..' is not allowed" in by_path["config/../x"]
    assert "(it leads to " in by_path["linked.md"]
    assert "general.allowed_roots" in by_path["linked.md"]


def test_check_paths_skips_variables_unknown_here(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    renderer = SystemPromptRenderer(PromptRoots(tmp_path / "b"))
    assert renderer.check_paths("{{ read_file('${PROJECT_DIR}/../x') }}") == []


def test_a_fifo_is_refused_as_a_fifo(roots: PromptRoots, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "config/pipe.md")
    renderer = SystemPromptRenderer(roots)
    with pytest.raises(PromptPathRefused, match="is a FIFO, not a regular file"):
        renderer.render("{{ read_file('${CONFIG_DIR}/pipe.md') }}")
    assert renderer.check_paths("{{ read_file('${CONFIG_DIR}/pipe.md') }}") != []


def test_allowed_roots_widen_what_prompts_read(roots: PromptRoots, tmp_path: Path) -> None:
    path = str(tmp_path / "outside/secret.txt")
    with pytest.raises(PromptPathRefused):
        SystemPromptRenderer(roots).render("{{ read_file('" + path + "') }}")
    wider = PromptRoots(roots.bundled, roots.config_dir, roots.project_dir, (tmp_path / "outside",))
    assert SystemPromptRenderer(wider).render("{{ read_file('" + path + "') }}") == "secret"
