from pathlib import Path

from qodeassist_lsp.config.problems import ConfigProblem
from qodeassist_lsp.config.toml_source import read_toml

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
