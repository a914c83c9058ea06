from pathlib import Path

import pytest

from qodeassist_lsp.config.problems import ConfigProblem
from qodeassist_lsp.config.toml_source import find_key_line, read_toml

TEXT = '''name = "x"
# comment
[body]
stream = true
prompt = """
multi = "not a key"
"""
sampling.top_k = 3

[body.options]
temperature = 0
"quoted key" = 1

[match]
file_patterns = ["*.py"]
'''


def test_line_of_finds_keys_tables_dotted_and_quoted(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_text(TEXT)
    parsed = read_toml(path)
    assert not isinstance(parsed, ConfigProblem)
    assert parsed.line_of("name") == 1
    assert parsed.line_of("body") == 3
    assert parsed.line_of("body", "stream") == 4
    assert parsed.line_of("body", "multi") == 3  # inside a multi-line string: not a key
    assert parsed.line_of("body", "sampling", "top_k") == 8
    assert parsed.line_of("body", "sampling") == 8  # set by the dotted key, as in settings
    assert parsed.line_of("body", "options", "temperature") == 11
    assert parsed.line_of("body", "options", "quoted key") == 12
    assert parsed.line_of("match", "file_patterns") == 15
    assert parsed.line_of("match", "nope") == 14
    assert parsed.line_of("absent") is None


def test_decode_errors_carry_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\nthis is not toml\n')
    problem = read_toml(path)
    assert isinstance(problem, ConfigProblem)
    assert problem.line == 2
    assert problem.format().startswith(f"{path}:2: error: invalid TOML")


def test_invalid_utf8_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "bin.toml"
    path.write_bytes(b'name = "x"\nmodel = "\xff"\n')
    problem = read_toml(path)
    assert isinstance(problem, ConfigProblem)
    assert problem.line == 2
    assert "UTF-8" in problem.message


# -- find_key_line (settings files and agent profiles alike) ----------------------------------------------------------------------------

TOML = """\
# comment
top = 1
[completion]
debounce_ms = 3
"lines_before" = 4
text = '''
fake = 1
'''
[tools]
enabled.read_file = true
[tools.enabled]
edit_file = false
[[completion.custom_languages]]
name = "a"
[[completion.custom_languages]]
name = "b"
"""


@pytest.mark.parametrize(
    ("path", "line"),
    [
        (("completion",), 3),
        (("completion", "debounce_ms"), 4),
        (("completion", "lines_before"), 5),
        (("completion", "fake"), 3),
        (("tools", "enabled", "read_file"), 10),
        (("tools", "enabled", "edit_file"), 12),
        (("completion", "custom_languages", 1, "name"), 16),
        (("completion", "custom_languages", 0), 13),
        (("completion", "missing"), 3),
        (("nowhere", "x"), None),
    ],
)
def test_find_key_line(path: tuple[str | int, ...], line: int | None) -> None:
    assert find_key_line(TOML, path) == line
