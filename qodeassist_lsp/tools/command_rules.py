"""Which programs a ``terminal`` command may run: the allow list, checked through the argv.

``[tools] terminal_allow_list`` names the programs the model may run. A name alone is not
enough: several listed programs run other programs through their options (``find -exec``,
``git -c alias.x=!cmd``, ``git -c core.fsmonitor=cmd``), and programs such as ``env``,
``timeout`` or ``xargs`` exist to run another one. So `checked_argv` reads the argv the way the
program will: a program that runs another runs only an allowed program (checked in turn), and
the options that would run an unlisted program, or that do what other tools must do (delete or
write files), are refused. The decision per program is the table in docs/tools.md. An empty
allow list turns every check off (the user allowed every program).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Final

from qodeassist_lsp.tools.base import ToolInputError


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


SETTING_HINT: Final = (
    "the user decides this with terminal_allow_list in [tools] of their settings.toml "
    "(see docs/tools.md; an empty list allows every program)"
)
TERMINAL_ENV: Final = {
    # No pager or editor ever runs: ":" is git's "no editor", "cat" its "no pager".
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_TERMINAL_PROMPT": "0",
}
"""Set for every ``terminal`` command."""

SHELLS: Final = _words("sh bash zsh dash ksh mksh fish csh tcsh ash busybox cmd powershell pwsh")
ELEVATORS: Final = _words("sudo doas su pkexec runas")
PACKAGE_RUNNERS: Final = _words("npx bunx pnpx")
_NPM_RUNS_PACKAGES: Final = frozenset({"exec", "x", "dlx", "create", "init", "innit"})

GIT_SAFE: Final = _words(
    """
    status log diff show blame annotate grep ls-files ls-tree rev-parse rev-list describe
    shortlog cat-file merge-base reflog branch tag add rm mv restore reset checkout switch
    commit stash init show-ref for-each-ref name-rev count-objects whatchanged diff-tree
    diff-files diff-index range-diff cherry-pick revert merge rebase notes version check-ignore
    check-attr var config
    """
)
_GIT_FLAGS: Final = _words(
    """
    --no-pager -P -p --paginate --no-replace-objects --literal-pathspecs --glob-pathspecs
    --noglob-pathspecs --icase-pathspecs --no-optional-locks --bare --version
    """
)
_GIT_VALUED: Final = ("--namespace=",)
# A repository's hooks, its file-system monitor and a bare repository the model could have
# written with the file tools (its config naming programs) never come into play.
_GIT_FORCED: Final = (
    *("-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}"),
    *("-c", "safe.bareRepository=explicit"),
)
_GIT_CONFIG_READS: Final = frozenset({"--get", "--get-all", "--get-regexp", "-l", "--list"})
_FIND_REFUSED: Final = {
    **dict.fromkeys(("-exec", "-execdir", "-ok", "-okdir"), "runs other programs"),
    "-delete": "deletes files (the delete_file tool does that, and can be undone)",
    **dict.fromkeys(("-fprint", "-fprint0", "-fprintf", "-fls"), "writes files"),
}
_AWK: Final = _words("awk gawk mawk nawk busybox-awk")
_GNU_SED: Final[bool] = sys.platform.startswith("linux")
_AWK_RUNS: Final = ("system", "|", "getline", "@load")


def _refuse(program: str, why: str) -> ToolInputError:
    return ToolInputError(f"{program}: {why}; {SETTING_HINT}")


def checked_argv(argv: Sequence[str], allow_list: Collection[str]) -> list[str]:
    """Return ``argv`` as it may run (maybe made safer), or raise ``ToolInputError`` saying why."""
    allowed = {name.lower() for name in allow_list}
    if not allowed:
        return list(argv)
    return _check(list(argv), allowed)


def _check(argv: list[str], allowed: set[str]) -> list[str]:
    program = argv[0]
    if program.lower() not in allowed:
        raise ToolInputError(
            f"{program!r} is not on the allow list ({', '.join(sorted(allowed))}); the user "
            "can add it to terminal_allow_list in [tools] of their settings.toml"
        )
    name = program.lower().removesuffix(".exe")
    if name in SHELLS:
        raise _refuse(program, "a shell runs whatever it is given, which cannot be checked")
    if name in ELEVATORS:
        raise _refuse(program, "runs programs as another user, which is never done")
    if name in PACKAGE_RUNNERS:
        raise _refuse(program, "downloads and runs packages that are not on the allow list")
    rule = _RULES.get(name)
    return rule(argv, allowed) if rule is not None else argv


# ----------------------------------------------------------------------------- runners
def _inner(argv: list[str], start: int, allowed: set[str]) -> list[str]:
    """Check the program a runner starts at ``argv[start]`` (nothing: the runner alone)."""
    if start >= len(argv):
        return argv
    return [*argv[:start], *_check(argv[start:], allowed)]


def _options_then_program(
    flags: str, valued: str, long_valued: tuple[str, ...] = ()
) -> Callable[[list[str], set[str]], list[str]]:
    """Return the rule of a runner: options (``valued`` take a value), then a program."""

    def rule(argv: list[str], allowed: set[str]) -> list[str]:
        index = 1
        while index < len(argv) and argv[index].startswith("-"):
            word = argv[index]
            if word == "--":
                index += 1
                break
            if word in long_valued or (len(word) == 2 and word[1] in valued):
                index += 1  # the value is the next word
            elif word.startswith("--") or word[1] in valued or all(c in flags for c in word[1:]):
                pass  # a flag, --name=value, or a value attached (-n5)
            else:
                raise _refuse(argv[0], f"the option {word!r} is not known to be safe")
            index += 1
        return _inner(argv, index, allowed)

    return rule


def _timeout_rule(argv: list[str], allowed: set[str]) -> list[str]:
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        index += 2 if argv[index] in ("-s", "-k", "--signal", "--kill-after") else 1
    return _inner(argv, index + 1, allowed)  # after the duration


def _env(argv: list[str], allowed: set[str]) -> list[str]:
    index = 1
    while index < len(argv):
        word = argv[index]
        short = word.startswith("-") and not word.startswith("--")
        if (short and "S" in word) or word.startswith("--split-string"):
            raise _refuse(argv[0], "-S splits a string into a command line that cannot be checked")
        if word in ("-u", "--unset", "-C", "--chdir"):
            index += 2
            continue
        if word.startswith("-") and word != "-":
            index += 1
            continue
        if "=" in word:
            raise _refuse(argv[0], "setting variables can change which program runs (PATH, GIT_*)")
        break
    return _inner(argv, index, allowed)


_xargs_options = _options_then_program(
    "0rtpxoiel", "dEILnPs", ("--delimiter", "--max-args", "--max-procs")
)


def _xargs(argv: list[str], allowed: set[str]) -> list[str]:
    if any(w.startswith(("-a", "--arg-file")) for w in argv[1:]):
        raise _refuse(argv[0], "-a reads the command's arguments from a file, unchecked")
    return _xargs_options(argv, allowed)


def _time(argv: list[str], allowed: set[str]) -> list[str]:
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        if argv[index] in ("-o", "--output") or argv[index].startswith("--output="):
            raise _refuse(argv[0], "-o writes a file")
        index += 2 if argv[index] in ("-f", "--format") else 1
    return _inner(argv, index, allowed)


# ----------------------------------------------------------------------------- programs
def _find(argv: list[str], allowed: set[str]) -> list[str]:
    for word in argv[1:]:
        why = _FIND_REFUSED.get(word)
        if why is not None:
            raise _refuse("find", f"{word} {why}")
    return argv


def _git(argv: list[str], allowed: set[str]) -> list[str]:
    index = 1
    while index < len(argv) and argv[index].startswith("-"):
        word = argv[index]
        if word in ("-c", "--config-env") or word.startswith(("--config-env=", "--exec-path=")):
            raise _refuse("git", f"{word.split('=')[0]} can make git run any program")
        if word == "-C":
            index += 2
            continue
        if word not in _GIT_FLAGS and not word.startswith(_GIT_VALUED):
            raise _refuse("git", f"the option {word!r} is not known to be safe")
        index += 1
    if index >= len(argv):
        return argv
    command, rest = argv[index], argv[index + 1 :]
    if command not in GIT_SAFE:
        raise _refuse(
            "git",
            f"'git {command}' is not run: it is not one of the git commands known to run no "
            "other program (aliases and git-<name> helper programs run other programs)",
        )
    if command == "config" and not _reads_config(rest):
        raise _refuse("git", "'git config' may only read settings (a setting can run programs)")
    if command == "rebase" and any(w in ("-x", "--exec") or w.startswith("--exec=") for w in rest):
        raise _refuse("git", "'git rebase --exec' runs other programs")
    if command == "init" and any(w.startswith("--template") for w in rest):
        raise _refuse("git", "'git init --template' copies hooks (programs) into the repository")
    if command == "grep" and any(w.startswith(("-O", "--open-files-in-pager")) for w in rest):
        raise _refuse("git", "'git grep -O' opens the files in another program")
    if any(word in ("-h", "--help") for word in rest):
        raise _refuse("git", "--help opens a manual viewer")
    return [argv[0], *_GIT_FORCED, *argv[1:]]


def _reads_config(rest: list[str]) -> bool:
    words = [w for w in rest if not w.startswith("-")]
    return bool(_GIT_CONFIG_READS.intersection(rest)) or (
        bool(words) and words[0] in ("get", "list")
    )


def _npm(argv: list[str], allowed: set[str]) -> list[str]:
    command = next((w for w in argv[1:] if not w.startswith("-")), "")
    if command in _NPM_RUNS_PACKAGES:
        raise _refuse(argv[0], f"'{argv[0]} {command}' downloads and runs packages")
    return argv


def _awk(argv: list[str], allowed: set[str]) -> list[str]:
    for word in argv[1:]:
        if word in ("-f", "-E", "-l", "--file", "--exec", "--load") or word.startswith(
            ("--file=", "--exec=", "--load=")
        ):
            raise _refuse(argv[0], f"{word} loads a program that cannot be checked")
        if any(mark in word for mark in _AWK_RUNS):
            raise _refuse(argv[0], "the program may run commands (system(), | or getline)")
    return argv


def _sed(argv: list[str], allowed: set[str]) -> list[str]:
    for word in argv[1:]:
        if word in ("-i", "-I", "--in-place") or word.startswith(("--in-place=", "-i")):
            raise _refuse(argv[0], f"{word} changes files (the edit_file tool does that)")
    if _GNU_SED:
        # GNU sed's sandbox refuses the e (run a command), w and r commands.
        return [argv[0], "--sandbox", *argv[1:]]
    return argv


def _tree(argv: list[str], allowed: set[str]) -> list[str]:
    if "-o" in argv[1:]:
        raise _refuse("tree", "-o writes a file")
    return argv


_RULES: Final[dict[str, Callable[[list[str], set[str]], list[str]]]] = {
    "find": _find,
    "git": _git,
    "env": _env,
    "timeout": _timeout_rule,
    "time": _time,
    "nice": _options_then_program("0123456789", "n", ("--adjustment",)),
    "nohup": _options_then_program("", ""),
    "stdbuf": _options_then_program("", "ioe"),
    "ionice": _options_then_program("t", "cnp"),
    "setsid": _options_then_program("cfw", ""),
    "xargs": _xargs,
    "npm": _npm,
    "pnpm": _npm,
    "yarn": _npm,
    "bun": _npm,
    "tree": _tree,
    "sed": _sed,
    **dict.fromkeys(_AWK, _awk),
}
