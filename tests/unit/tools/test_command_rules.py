"""command_rules: the decision table of docs/tools.md, one row per case."""

from __future__ import annotations

import shlex

import pytest

from qodeassist_lsp.tools import command_rules
from qodeassist_lsp.tools.base import ToolInputError
from qodeassist_lsp.tools.command_rules import checked_argv

USER_LIST = ["git", "find", "sed", "awk", "npm", "npx", "sudo", "env", "xargs", "time", "tree",
             "timeout", "nice", "python", "make", "bash", "ls"]  # fmt: skip


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("sed -i s/a/b/ f", "changes files"),
        ("sed --in-place=.bak s/a/b/ f", "changes files"),
        ("awk 'BEGIN { system(\"id\") }'", "may run commands"),
        ("awk '{ print | \"sh\" }'", "may run commands"),
        ("awk -f prog.awk", "loads a program"),
        ("npx cowsay", "downloads and runs packages"),
        ("npm exec cowsay", "downloads and runs packages"),
        ("npm init react-app x", "downloads and runs packages"),
        ("sudo ls", "as another user"),
        ("bash script.sh", "a shell runs whatever"),
        ("env -S 'ls -l'", "cannot be checked"),
        ("env -iS 'ls -l'", "cannot be checked"),
        ("xargs -a args.txt git", "from a file"),
        ("env GIT_PAGER=x git log", "setting variables"),
        ("time -o out ls", "writes a file"),
        ("tree -o out", "writes a file"),
        ("git help log", "'git help' is not run"),
        ("git log --help", "manual viewer"),
        ("git push origin main", "'git push' is not run"),
        ("git fetch --upload-pack=x origin", "'git fetch' is not run"),
        ("git submodule foreach ls", "'git submodule' is not run"),
        ("git config core.pager less", "may only read settings"),
        ("git config set core.fsmonitor x", "may only read settings"),
        ("git --exec-path=/tmp log", "can make git run any program"),
        ("git init --template=hooks sub", "copies hooks"),
        ("git -x log", "not known to be safe"),
        ("git --git-dir=crafted log", "not known to be safe"),
        ("find . -fprint out", "writes files"),
        ("find . -ok rm {} ;", "runs other programs"),
        ("xargs -n 1 rm", "'rm' is not on the allow list"),
        ("nice -n 5 rm x", "'rm' is not on the allow list"),
    ],
)
def test_refused(command: str, why: str) -> None:
    with pytest.raises(ToolInputError) as refused:
        checked_argv(shlex.split(command), USER_LIST)
    assert why in str(refused.value)
    assert "terminal_allow_list" in str(refused.value)


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("ls -la", "ls -la"),
        ("python -c 'print(1)'", "python -c print(1)"),  # listed interpreters run code
        ("make test", "make test"),  # a listed build tool runs its recipes
        ("npm run test", "npm run test"),
        ("env", "env"),
        ("env -i ls", "env -i ls"),
        ("xargs -0 -n 2 ls", "xargs -0 -n 2 ls"),
        ("timeout -s KILL 5 ls", "timeout -s KILL 5 ls"),
        ("git config --get user.name", None),
        ("git -C src --no-pager log -p", None),
    ],
)
def test_allowed(command: str, runs: str | None) -> None:
    argv = checked_argv(shlex.split(command), USER_LIST)
    if runs is not None:
        assert argv == shlex.split(runs)


def test_git_runs_without_hooks_or_fsmonitor_and_sed_in_its_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    git = checked_argv(["git", "commit", "-m", "x"], USER_LIST)
    assert git[:5] == ["git", "-c", "core.fsmonitor=false", "-c", git[4]]
    assert git[4].startswith("core.hooksPath=")
    assert git[5:] == ["-c", "safe.bareRepository=explicit", "commit", "-m", "x"]
    monkeypatch.setattr(command_rules, "_GNU_SED", True)
    assert checked_argv(["sed", "s/a/b/"], USER_LIST) == ["sed", "--sandbox", "s/a/b/"]


def test_an_empty_list_checks_nothing() -> None:
    assert checked_argv(["bash", "-c", "rm -rf x"], []) == ["bash", "-c", "rm -rf x"]
