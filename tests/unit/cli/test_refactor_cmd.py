"""``qodeassist-lsp refactor`` against the replay server standing in for the Embedded instance."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from qodeassist_lsp.cli.refactor_cmd import Progress
from tests.support.replay_server import ReplayServer, Reply
from tests.support.streams import chat_reply

CHAT = "/v1/chat/completions"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample.py"
    path.write_text("def add(a, b):\n    return a+b\n\nprint(add(1, 2))\n")
    return path


def messages(replay: ReplayServer) -> tuple[str, str]:
    sent = replay.last.json["messages"]
    system = next(m["content"] for m in sent if m["role"] == "system")
    user = [m["content"] for m in sent if m["role"] == "user"][-1]
    return system, user


def test_refactor_prints_the_new_file(run_cli, replay, sample) -> None:
    replay.script(CHAT, chat_reply("```python\n", "    return a + b\n", "```"))
    code, out, err = run_cli(
        "refactor", str(sample), "--range", "2:1-2:15", "--instruction", "space it"
    )
    assert code == 0, err
    assert out == "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n"
    system, user = messages(replay)
    assert user == "space it"
    assert "<selection_start>    return a+b<selection_end><cursor>" in system
    assert "# What to Generate:" in system


def test_refactor_diff_and_library_instruction(run_cli, replay, sample, config_dir) -> None:
    (config_dir / "instructions").mkdir()
    (config_dir / "instructions" / "tidy.toml").write_text('name = "Tidy"\nbody = "Tidy it."\n')
    replay.script(CHAT, chat_reply("    return a + b"))
    code, out, err = run_cli(
        "refactor", str(sample), "--range", "2:1-2:15", "--instruction-id", "tidy", "--diff"
    )
    assert code == 0, err
    assert "-    return a+b\n+    return a + b\n" in out
    assert out.startswith("--- a/")
    assert messages(replay)[1] == "Tidy it."


def test_refactor_default_instruction_is_the_library_default(run_cli, replay, sample) -> None:
    replay.script(CHAT, chat_reply("x = 1"))
    code, _out, err = run_cli("refactor", str(sample), "--range", "3:1-3:1")
    assert code == 0, err
    assert messages(replay)[1].startswith("Improve the selected code")


def test_refactor_insert_keeps_the_rest_of_the_line(run_cli, replay, sample) -> None:
    replay.script(CHAT, chat_reply("one\ntwo "))
    code, out, err = run_cli("refactor", str(sample), "--range", "4:1-4:1")
    assert code == 0, err
    # Inserted at the start of a non-empty line, the new block gets its own line: the existing
    # line is kept whole after it (the original deleted the rest of the line here).
    assert out.endswith("one\ntwo \nprint(add(1, 2))\n")


def test_refactor_insert_mid_line_continues_the_line(run_cli, replay, sample) -> None:
    replay.script(CHAT, chat_reply("x"))
    code, out, err = run_cli("refactor", str(sample), "--range", "4:6-4:6")
    assert code == 0, err
    assert out.endswith("printx(add(1, 2))\n")


def test_refactor_empty_answer_changes_nothing(run_cli, replay, sample) -> None:
    replay.script(CHAT, chat_reply("```\n```"))
    code, out, err = run_cli("refactor", str(sample), "--range", "2:1-2:15")
    assert code == 3 and out == ""
    assert "no usable code" in err


def test_refactor_provider_failure_exits_3(run_cli, replay, sample) -> None:
    replay.script(
        CHAT, Reply.json({"error": {"message": "model not loaded"}}, status=503, repeat=3)
    )
    code, _out, err = run_cli("refactor", str(sample), "--range", "2:1-2:15")
    assert code == 3 and "error" in err


@pytest.mark.parametrize(
    ("value", "message", "exit_code"),
    [
        ("2-3", "expected L1:C1-L2:C2", 2),  # malformed: a usage error
        ("a:b-c:d", "expected L1:C1-L2:C2", 2),
        ("2:5-1:1", "the end is before the start", 2),
        ("9:1-9:2", "line 9 is outside", 1),  # well-formed, but not in this file
        ("2:1-2:99", "column 99 is outside", 1),
    ],
)
def test_refactor_range_errors(run_cli, sample, value, message, exit_code) -> None:
    code, _out, err = run_cli("refactor", str(sample), "--range", value)
    assert code == exit_code and message in err


def test_refactor_unknown_instruction_id_is_a_user_error(run_cli, replay, sample) -> None:
    code, _out, err = run_cli(
        "refactor", str(sample), "--range", "2:1-2:2", "--instruction-id", "zz"
    )
    assert code == 1 and "unknown instruction 'zz'" in err


def test_refactor_missing_file(run_cli, tmp_path) -> None:
    code, _out, err = run_cli("refactor", str(tmp_path / "nope.py"), "--range", "1:1-1:1")
    assert code == 1 and "no such file" in err


NUMBERS = ", ".join(f"{i}.0" for i in range(1, 88))
"""Issue 15: what the embedded model answered to "Add type hints" on examples/fibonacci.py."""


def test_refused_answer_prints_reason_and_diff_and_exits_3(run_cli, replay, sample) -> None:
    replay.script(CHAT, chat_reply(NUMBERS))
    code, out, err = run_cli(
        "refactor", str(sample), "--range", "1:1-2:15", "--instruction", "Add type hints"
    )
    assert code == 3
    assert out == ""
    assert "repeats itself" in err and "--force" in err
    assert "-def add(a, b):\n" in err and f"+{NUMBERS}\n" in err


def test_force_prints_a_refused_answer(run_cli, replay, sample) -> None:
    replay.script(CHAT, chat_reply("def add(a, b):\n    return (a +"))
    code, out, err = run_cli(
        "refactor", str(sample), "--range", "1:1-2:15", "--instruction", "x", "--force", "--diff"
    )
    assert code == 0
    assert "syntax error" in err
    assert "+    return (a +\n" in out


@pytest.mark.parametrize("newline", ["", "\n"])
@pytest.mark.parametrize(
    ("span", "answer"),
    [
        ("1:1-3:1", "def add(a, b):\n    return a + b"),  # whole lines, to column 1 of line 3
        ("2:1-2:15", "    return a + b"),  # to the end of line 2
        ("2:5-2:15", "return a + b"),  # mid-line
    ],
)
def test_refactor_of_whole_lines_keeps_the_line_break(
    run_cli, replay, tmp_path, span, answer, newline
) -> None:
    # Issue 25: `--range 1:1-3:1` ends at column 1 of line 3 and gave `return a + bprint(…)`.
    path = tmp_path / "joined.py"
    path.write_text("def add(a, b):\n    return a+b\nprint(add(1, 2))\n")
    replay.script(CHAT, chat_reply(f"```python\n{answer}{newline}```"))
    code, out, err = run_cli("refactor", str(path), "--range", span)
    assert code == 0, err
    assert out == "def add(a, b):\n    return a + b\nprint(add(1, 2))\n"


def test_a_method_replaced_by_a_top_level_function_is_refused(run_cli, replay, tmp_path) -> None:
    # Issue 25: this exited 0 with a file that no longer compiled.
    path = tmp_path / "shapes.py"
    path.write_text(
        "class Box:\n    def area(self):\n        return self.w * self.h\n\n"
        "    def grow(self, k):\n        self.w *= k\n"
    )
    replay.script(CHAT, chat_reply("def helper(x):\n        return x * 2"))
    code, out, err = run_cli("refactor", str(path), "--range", "2:1-4:1", "--instruction", "tidy")
    assert code == 3 and out == ""
    assert "refused:" in err and "IndentationError" in err


def test_refactor_range_counts_a_cr_only_files_lines_as_editors_do(run_cli, tmp_path) -> None:
    path = tmp_path / "old_mac.py"
    path.write_bytes(b"x = 1\ry = 2\r")
    code, _out, err = run_cli("refactor", str(path), "--range", "5:1-5:2")
    assert code == 1 and "line 5 is outside the file (1–3)" in err


def test_refactor_on_a_demo_model_says_so_and_shows_its_progress(
    run_cli, replay, sample, config_dir
) -> None:
    # The bundled Embedded Instruct instance says demo = true; keep it so here.
    instruct = config_dir / "providers" / "embedded_instruct.toml"
    instruct.write_text(instruct.read_text() + "demo = true\n")
    replay.script(CHAT, chat_reply("    return a + b"))
    code, _out, err = run_cli("refactor", str(sample), "--range", "2:1-2:15")

    assert code == 0, err
    lines = err.splitlines()
    assert lines[0].startswith(
        "qodeassist-lsp: Embedded Quick Refactor runs an offline demo model"
    ), err
    assert "qodeassist-lsp: Refactoring with Embedded Quick Refactor…" in lines
    assert "qodeassist-lsp: Receiving the answer…" in lines
    assert lines[-1].startswith("qodeassist-lsp: finished after "), err


def test_the_progress_line_counts_the_seconds_of_the_current_phase() -> None:
    stream = io.StringIO()
    progress = Progress(stream, terminal=False)
    progress.phase("Refactoring with Embedded Quick Refactor…")
    assert progress.tick(73.6) == ("qodeassist-lsp: Refactoring with Embedded Quick Refactor: 73 s")


def test_refactor_gets_the_project_rules_nearest_to_the_file_first(
    run_cli, replay, tmp_path
) -> None:
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "AGENTS.md").write_text("Root rule 1a.\n")
    (project / "pkg/CLAUDE.md").write_text("Package rule 2b.\n")
    (project / ".qodeassistignore").write_text("pkg/sub/AGENTS.md\n")
    (project / "pkg/sub").mkdir()
    (project / "pkg/sub/AGENTS.md").write_text("Ignored rule 3c.\n")
    path = project / "pkg/sub/mod.py"
    path.write_text("def add(a, b):\n    return a+b\n")
    replay.script(CHAT, chat_reply("    return a + b"))
    code, _out, err = run_cli(
        "refactor", str(path), "--range", "2:1-2:15", "--project-dir", str(project)
    )
    assert code == 0, err
    system, _user = messages(replay)
    assert system.index("## pkg/CLAUDE.md\n\nPackage rule 2b.") < system.index(
        "## AGENTS.md\n\nRoot rule 1a."
    )
    assert "Ignored rule 3c." not in system  # .qodeassistignore lists it
