"""``qodeassist-lsp refactor FILE --range L1:C1-L2:C2 [--instruction TEXT] [--diff]``.

One quick refactor through the same ``RefactorService`` the language server uses, with the
instruction library of the configuration (``--instruction-id``). Lines and columns are 1-based;
columns count characters; ``L:C-L:C`` with equal ends inserts at that position. The new full
file text is printed (the file itself is never written), or a unified diff with ``--diff``.

An answer the guard refuses (prose, runaway repetition, a size far off, an unclosed fence, a
file that no longer parses or compiles, code moved out of its class, a definition lost) is not
printed as the new file: the diff and ``refused: <reason>`` go to stderr and the command exits
with 3, like any other "the model gave nothing usable" outcome (1 and 2 stay configuration and
usage errors). ``--force`` prints it anyway (with the reason on stderr) and exits 0. A range
ending at column 1 of a line selects whole lines and keeps the last line break.

While the model works, stderr says so: the demo notice when an offline demo model answers (as
``chat`` prints it), which agent is asked, when its answer starts, and the seconds waited (a
line rewritten every second on a terminal, a line every ``QUIET_TICK_S`` otherwise): a tiny
model on a slow CPU may take a minute or two, close to ``[refactor] request_timeout_s``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import re
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from qodeassist_lsp.cli.common import (
    EXIT_OK,
    EXIT_PROVIDER,
    EXIT_USAGE,
    CliError,
    load,
    print_launch_progress,
    read_source,
)
from qodeassist_lsp.cli.tool_kit import workbench_for
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.pipelines import QUICK_REFACTOR
from qodeassist_lsp.context.documents import offset_at
from qodeassist_lsp.context.positions import split_lines
from qodeassist_lsp.context.rules_files import RulesFinder, ignore_rule
from qodeassist_lsp.core.agent import AgentNotAvailable, demo_notice
from qodeassist_lsp.core.runtime import Runtime
from qodeassist_lsp.features.refactor.instructions import Instruction, load_instructions
from qodeassist_lsp.features.refactor.service import (
    RefactorRequest,
    RefactorResult,
    RefactorService,
)

_RANGE = re.compile(r"^(\d+):(\d+)-(\d+):(\d+)$")
TICK_S = 1.0
"""How often the seconds waited are rewritten on a terminal."""
QUIET_TICK_S = 15.0
"""How often a line says the refactor still runs when stderr is not a terminal."""


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``refactor`` command."""
    refactor = commands.add_parser(
        "refactor", parents=[shared], help="rewrite a range of a file with the refactor agent"
    )
    refactor.add_argument("file", type=Path, metavar="FILE")
    refactor.add_argument(
        "--range",
        required=True,
        metavar="L1:C1-L2:C2",
        help="1-based range, columns in characters (equal ends insert)",
    )
    refactor.add_argument("--instruction", metavar="TEXT", help="what to do with the code")
    refactor.add_argument(
        "--instruction-id", metavar="ID", help="an instruction of the library (file stem)"
    )
    refactor.add_argument("--diff", action="store_true", help="print a unified diff")
    refactor.add_argument(
        "--force",
        action="store_true",
        help="print a result the checks refused (prose, repetition, size, syntax, …) anyway",
    )
    refactor.set_defaults(handler=run_refactor)


def parse_range(value: str, text: str) -> tuple[int, int, int, int]:
    """Parse ``L1:C1-L2:C2`` (1-based) into a checked 0-based range of ``text``."""
    match = _RANGE.match(value.strip())
    if match is None:
        raise CliError(f"--range {value!r}: expected L1:C1-L2:C2, e.g. 3:1-5:10", EXIT_USAGE)
    l1, c1, l2, c2 = (int(group) for group in match.groups())
    lines = split_lines(text)
    for line, col in ((l1, c1), (l2, c2)):
        if not 1 <= line <= len(lines):
            raise CliError(f"--range: line {line} is outside the file (1–{len(lines)})")
        width = len(lines[line - 1].removesuffix("\r"))
        if not 1 <= col <= width + 1:
            raise CliError(f"--range: column {col} is outside line {line} (1–{width + 1})")
    if (l2, c2) < (l1, c1):
        raise CliError(f"--range {value!r}: the end is before the start", EXIT_USAGE)
    return l1 - 1, c1 - 1, l2 - 1, c2 - 1


def apply_result(text: str, result: RefactorResult) -> str:
    """Return ``text`` with the result's range replaced by its new text."""
    start = offset_at(text, result.start_line, result.start_character)
    end = offset_at(text, result.end_line, result.end_character)
    return text[:start] + result.new_text + text[end:]


def run_refactor(args: argparse.Namespace) -> int:
    """Refactor the range of FILE and print the new text or a diff."""
    path = args.file.resolve()
    text = read_source(path, keep_newlines=True)
    start_line, start_col, end_line, end_col = parse_range(args.range, text)
    config = load(args)
    request_args = (start_line, start_col, end_line, end_col, args.instruction)
    result = asyncio.run(_refactor(config, path, text, request_args, args.instruction_id))
    if result.outcome == "failed":
        error = result.error
        category = error.category if error is not None else "provider"
        code = EXIT_PROVIDER if category in ("auth", "network", "provider", "tool") else 1
        raise CliError(f"{category} error: {result.message}", code)
    if result.outcome == "refused":
        new_text = apply_result(text, result)
        if not args.force:
            sys.stderr.writelines(_diff(args.file, text, new_text))
            raise CliError(
                f"refused: {result.message}; the diff is above, --force prints it anyway",
                EXIT_PROVIDER,
            )
        print(f"qodeassist-lsp: --force: {result.message}", file=sys.stderr)
    elif result.outcome != "ok":
        raise CliError(f"nothing changed: {result.message}", EXIT_PROVIDER)
    new_text = apply_result(text, result)
    if args.diff:
        sys.stdout.writelines(_diff(args.file, text, new_text))
    else:
        sys.stdout.write(new_text)
    return EXIT_OK


def _diff(name: Path, old: str, new: str) -> list[str]:
    return list(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{name}", f"b/{name}"
        )
    )


async def _refactor(
    config: Configuration,
    path: Path,
    text: str,
    span: tuple[int, int, int, int, str | None],
    instruction_id: str | None,
) -> RefactorResult:
    runtime = Runtime(config, on_launch_progress=print_launch_progress)
    bench = workbench_for(runtime, config.paths.project or path.parent)
    document = bench.ports.documents.open(path.as_uri(), text, 1)
    library, problems = load_instructions(config.paths)
    for problem in problems:
        print(f"qodeassist-lsp: {problem.format()}", file=sys.stderr)
    service = RefactorService(
        runtime,
        bench.ports.documents,
        lambda: library,
        is_ignored=bench.ignored_document(),
        rules=RulesFinder(
            lambda: config.settings.rules,
            bench.ports.folders,
            ignore_rule(bench.qodeassist_ignore),
        ),
    )
    start_line, start_col, end_line, end_col, instruction = span
    progress = Progress(sys.stderr, sys.stderr.isatty())
    try:
        _tell_demo(runtime, _agent_of(config, library, instruction_id))
        request = RefactorRequest(
            document, start_line, start_col, end_line, end_col, instruction, instruction_id
        )
        ticker = asyncio.create_task(progress.run())
        try:
            return await service.refactor(request, progress.phase)
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            progress.end()
    finally:
        await runtime.aclose()


def _agent_of(config: Configuration, library: list[Instruction], instruction_id: str | None) -> str:
    """Return the agent the service will ask: the instruction's own, else quick_refactor's."""
    own = next((i.agent for i in library if i.id == instruction_id and i.agent), None)
    return own or config.pipelines.agent(QUICK_REFACTOR)


def _tell_demo(runtime: Runtime, name: str) -> None:
    try:
        agent = runtime.factory.create(name) if name else None
    except AgentNotAvailable:
        return  # the service reports it
    if agent is not None and agent.demo:
        print(f"qodeassist-lsp: {demo_notice(agent)}", file=sys.stderr)


class Progress:
    """What the refactor is doing, on stderr: its phases and the seconds waited."""

    def __init__(self, stream: TextIO, terminal: bool) -> None:
        self._stream = stream
        self._terminal = terminal
        self._started = time.monotonic()
        self._phase = "Starting"
        self._open = False

    def phase(self, message: str) -> None:
        """Print a phase of the service (``Refactoring with A…``, ``Receiving the answer…``)."""
        self._clear()
        self._phase = message.rstrip("…")
        self._stream.write(f"qodeassist-lsp: {message}\n")
        self._stream.flush()

    def tick(self, elapsed: float) -> str:
        """Return the line that says how long the refactor has run."""
        return f"qodeassist-lsp: {self._phase}: {int(elapsed)} s"

    async def run(self) -> None:
        """Show the seconds waited until cancelled."""
        interval = TICK_S if self._terminal else QUIET_TICK_S
        while True:
            await asyncio.sleep(interval)
            line = self.tick(time.monotonic() - self._started)
            if self._terminal:
                self._stream.write(f"\r{line}\x1b[K")
                self._open = True
            else:
                self._stream.write(f"{line}\n")
            self._stream.flush()

    def end(self) -> None:
        """Say how long it took (the terminal's seconds line is replaced)."""
        self._clear()
        self._stream.write(
            f"qodeassist-lsp: finished after {time.monotonic() - self._started:.0f} s\n"
        )
        self._stream.flush()

    def _clear(self) -> None:
        if self._open:
            self._stream.write("\r\x1b[K")
            self._open = False
