"""``memory add | list | search | forget`` and a secret refused, through the real parser."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.cli.conftest import RunCli


def test_add_list_search_forget(run_cli: RunCli, tmp_path: Path) -> None:
    code, out, err = run_cli("memory", "add", "Use", "tabs", "in", "Makefiles", "--json")
    assert code == 0, err
    [entry] = json.loads(out)
    assert (entry["text"], entry["scope"], entry["source"]) == (
        "Use tabs in Makefiles",
        "global",
        "cli",
    )
    assert run_cli("memory", "add", "--project", "The tests run with pytest")[0] == 0
    assert (tmp_path / ".qodeassist/memory.json").is_file()
    code, out, _ = run_cli("memory", "list")
    assert "Use tabs in Makefiles" in out and "The tests run with pytest" in out
    code, out, _ = run_cli("memory", "list", "--project")
    assert "Use tabs" not in out and "The tests run with pytest" in out
    code, out, _ = run_cli("memory", "search", "makefile", "tabs")
    assert code == 0 and entry["id"] in out and "pytest" not in out
    code, out, _ = run_cli("memory", "forget", entry["id"])
    assert code == 0 and f"forgot {entry['id']}" in out
    assert "Use tabs" not in run_cli("memory", "list")[1]
    code, _, err = run_cli("memory", "forget", entry["id"])
    assert code == 1 and "no memory entry" in err


def test_a_secret_is_refused_with_exit_1(run_cli: RunCli, tmp_path: Path) -> None:
    code, _, err = run_cli("memory", "add", "token: Bearer abcdefghijklmnop")
    assert code == 1 and "looks like a secret" in err and "secrets set" in err
    assert run_cli("memory", "list")[1].strip() == "no memory entries"
    assert not (tmp_path / "data/memory.json").exists()


def test_the_text_is_the_rest_of_the_line_as_typed(run_cli: RunCli, tmp_path: Path) -> None:
    # Issue 43: docs/cli.md's example failed with "unrecognized arguments: -n 2".
    code, out, err = run_cli("memory", "add", "--project", "The tests run with pytest -n 2")
    assert code == 0, err
    code, out, err = run_cli(
        "memory", "add", "--project", "The", "tests", "run", "with", "pytest", "-n", "2"
    )
    assert code == 0, err
    assert "The tests run with pytest -n 2" in out
    stored = json.loads((tmp_path / ".qodeassist/memory.json").read_text(encoding="utf-8"))
    assert [e["text"] for e in stored["entries"]] == ["The tests run with pytest -n 2"] * 2
    code, out, _ = run_cli("memory", "search", "pytest", "-n", "2", "--json")
    assert code == 0 and len(json.loads(out)) == 2


def test_valueless_options_are_read_after_the_text(run_cli: RunCli, tmp_path: Path) -> None:
    code, out, err = run_cli("memory", "add", "We use pytest, never unittest", "--project")
    assert code == 0, err
    assert "project" in out and "--project" not in out
    assert (tmp_path / ".qodeassist/memory.json").is_file()


def test_no_text_is_a_usage_error(run_cli: RunCli) -> None:
    code, _, err = run_cli("memory", "add", "--project")
    assert code == 2 and "give the TEXT" in err


def test_no_lock_file_is_left_beside_the_memory(run_cli: RunCli, tmp_path: Path) -> None:
    # Issue 43: a `memory.json.lock` stayed beside `memory.json` for ever.
    assert run_cli("memory", "add", "Use tabs in Makefiles")[0] == 0
    assert run_cli("memory", "add", "--project", "Deploys go through staging")[0] == 0
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["memory.json"]
    assert sorted(p.name for p in (tmp_path / ".qodeassist").iterdir()) == ["memory.json"]
