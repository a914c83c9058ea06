"""Definitions from the codebase index in completion prompts, with a fake index.

The names near the cursor and the file's imports are looked up once per line; names defined in
the current file are skipped; the definitions fit their token budget, come after the ring's
chunks for agents that send the extra context and in front of the prefix, as comments, for the
others; keys typed on one line give the same block (the model server's prompt cache).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from qodeassist_lsp.context.codebase.model import SymbolDefinition
from qodeassist_lsp.features.completion import codebase_context
from qodeassist_lsp.features.completion.codebase_context import (
    CodebaseContext,
    compact,
    identifiers_near,
    imported_names,
)
from tests.support.symbol_index import SymbolIndex
from tests.unit.features.completion.test_completion_service import (
    Harness,
    completer_agent,
    harness,
    until,
)
from tests.unit.features.completion.test_completion_warming import RING_AGENT

__all__ = ["completer_agent", "harness"]  # the fixture, imported for the tests below

ROOT = Path("/proj")
SEGMENT = SymbolDefinition(
    name="Segment",
    kind="class",
    path="text/segment.py",
    start_line=3,
    end_line=40,
    signature="class Segment:",
    summary="class Segment:\n    def split(self, at: int) -> list[Segment]: ...\n"
    "    def join(self, other: Segment) -> Segment: ...",
)
LOAD = SymbolDefinition(
    name="load",
    kind="function",
    path="io/loading.py",
    start_line=0,
    end_line=9,
    signature="def load(path: str) -> Segment:",
    summary='def load(path: str) -> Segment:\n    """Read a segment from ``path``."""',
)
SPLIT = SymbolDefinition(
    name="split",
    kind="method",
    path="text/segment.py",
    start_line=5,
    end_line=8,
    signature="def split(self, at: int) -> list[Segment]:",
    summary="def split(self, at: int) -> list[Segment]: ...",
    container="Segment",
)
LOCAL = SymbolDefinition(
    name="render",
    kind="function",
    path="a.py",
    start_line=0,
    end_line=2,
    signature="def render(s):",
    summary="def render(s):",
)
ELSEWHERE_RENDER = SymbolDefinition(
    name="render",
    kind="function",
    path="ui/render.py",
    start_line=0,
    end_line=2,
    signature="def render(s, width):",
    summary="def render(s, width):",
)


def test_the_chain_and_the_call_being_typed_come_first() -> None:
    assert identifiers_near("    x = Segment.", [])[0] == "Segment"
    assert identifiers_near("    x = text.Segment.sp", [])[:2] == ["Segment", "text"]
    assert identifiers_near("    y = load(path, ", [])[0] == "load"
    assert identifiers_near("    y = load(open(p), ", [])[0] == "load"


def test_the_word_being_typed_keywords_and_strings_are_not_names() -> None:
    names = identifiers_near("    return Segm", ['    if ok and "Quoted" in seen:'])
    assert names == ["seen", "ok"]  # not "Segm" (incomplete), "return", "if", "Quoted"


def test_nearer_lines_come_before_farther_ones() -> None:
    names = identifiers_near("    y = ", ["first = Alpha()", "second = Beta()"])
    assert names == ["Beta", "second", "Alpha", "first"]  # right to left, line by line


def test_imported_names_of_python_and_javascript() -> None:
    head = (
        "import os.path as osp\n"
        "from text.segment import Segment, join as glue\n"
        "from io.loading import (\n    load,  # the loader\n    save,\n)\n"
        "import Widget, { render, type Props } from './ui'\n"
        '#include "segment.h"\n'
    )
    assert imported_names(head) == ["Segment", "glue", "load", "save", "Widget", "render", "Props"]


def test_a_class_shows_its_public_members_signatures_on_one_line_each() -> None:
    summary = (
        'class Response:\n    """An HTTP response.\n\n    Long text.\n    """\n'
        "    def __init__(\n        self,\n        status: int,\n    ) -> None:\n"
        "    def _prepare(self) -> None:\n    @property\n    def text(self) -> str:\n"
        "    @text.setter\n    def text(self, value: str) -> None:\n"
    )
    assert compact(summary, "class") == (
        "class Response:\n    def __init__(self, status: int) -> None:\n    def text(self) -> str:"
    )


def test_a_function_keeps_the_first_line_of_its_docstring() -> None:
    summary = 'def load(\n    path: str,\n) -> Segment:\n    """Read it.\n\n    More.\n    """\n'
    assert compact(summary, "function") == 'def load(path: str) -> Segment:\n    """Read it."""'


def test_a_name_only_imported_shows_one_line() -> None:
    ctx, _ = context(SEGMENT)
    text = "from text.segment import Segment\n\n\n\n\nx = "
    found = ctx.definitions(
        uri="file:///proj/a.py",
        path="/proj/a.py",
        text=text,
        line=5,
        line_start=len(text) - 4,
        line_before="x = ",
        budget=256,
    )
    assert found.as_files() == [("text/segment.py", "class Segment:")]


def context(*definitions: SymbolDefinition) -> tuple[CodebaseContext, SymbolIndex]:
    index = SymbolIndex(*definitions, root=ROOT)
    return CodebaseContext(lambda path: index if path.is_relative_to(ROOT) else None), index


def ask(ctx: CodebaseContext, text: str, budget: int = 256) -> list[str]:
    """The names of the definitions for a cursor at ``|`` in /proj/a.py."""
    offset = text.index("|")
    text = text.replace("|", "")
    start = text.rfind("\n", 0, offset) + 1
    found = ctx.definitions(
        uri="file:///proj/a.py",
        path="/proj/a.py",
        text=text,
        line=text.count("\n", 0, offset),
        line_start=start,
        line_before=text[start:offset],
        budget=budget,
    )
    return [item.name for item in found.items]


def test_names_defined_in_this_file_and_bare_method_names_are_skipped() -> None:
    ctx, _ = context(SEGMENT, SPLIT, LOCAL, ELSEWHERE_RENDER, LOAD)
    text = "from io.loading import load\n\ndef go(s):\n    render(s)\n    s.split(3)\n    x = |\n"
    assert ask(ctx, text) == ["load"]  # render is this file's; split is only a method
    assert ask(ctx, "x = Segment.|") == ["Segment"]


def test_the_most_relevant_definition_is_last_and_the_budget_holds() -> None:
    ctx, _ = context(SEGMENT, LOAD)
    text = "from io.loading import load\n\nx = Segment.|"
    assert ask(ctx, text) == ["load", "Segment"]  # Segment (being typed) nearest the cursor
    assert ask(ctx, text, budget=50) == ["Segment"]  # load does not fit beside it
    assert ask(ctx, text, budget=10) == []


def test_keys_typed_on_one_line_reuse_the_lookup() -> None:
    ctx, index = context(SEGMENT, LOAD)
    first = ask(ctx, "x = Segment.|")
    for typed in ("x = Segment.s|", "x = Segment.sp|", "x = Segment.spl|"):
        assert ask(ctx, typed) == first
    assert len(index.asked) == 1


def test_no_index_no_definitions() -> None:
    ctx = CodebaseContext(lambda path: None)
    assert ask(ctx, "x = Segment.|") == []
    assert ask(CodebaseContext(), "x = Segment.|") == []


# -- through the completion service: what goes upstream ---------------------------------------
# -- the file block: what prefix-only agents get ---------------------------------------------
IMPORTS = "from io.loading import load\nfrom text.segment import Segment\n\n"


def block(ctx: CodebaseContext, text: str, budget: int = 256) -> str:
    """The file block of /proj/a.py with ``text``."""
    found = ctx.file_block(
        uri="file:///proj/a.py", path="/proj/a.py", text=text, budget=budget, comment_prefix="#"
    )
    return found.text


def test_the_file_block_shows_what_the_file_imports_as_code_under_file_headers() -> None:
    ctx, _ = context(SEGMENT, LOAD, LOCAL)
    text = IMPORTS + "s = Segment(load('a'))\nt = Segment(1)\nx = "
    # Segment is used most: its file comes last, nearest the file's own lines.
    assert block(ctx, text) == (
        "# file: io/loading.py\n"
        "def load(path) -> Segment:\n"
        "# file: text/segment.py\n"
        "class Segment:\n"
        "    def split(self, at) -> list[Segment]: ...\n"
        "    def join(self, other) -> Segment: ...\n"
        "# file: a.py\n"
    )


CLIENT = SymbolDefinition(
    name="Client",
    kind="class",
    path="net/client.py",
    start_line=0,
    end_line=30,
    signature="class Client(Base):",
    summary='class Client(Base):\n    """A client."""\n'
    "    def __init__(\n        self,\n        url: str | URL,\n        *,\n"
    '        timeout: Timeout = Timeout(5.0, pool=None),\n        sep: str = ", ",\n'
    "        **kwargs: dict[str, int],\n    ) -> None:\n"
    "        self.url = url\n    def get(self, path: str) -> Response: ...\n"
    "    def close(self) -> None: ...",
)
SEND = SymbolDefinition(
    name="send",
    kind="function",
    path="net/client.py",
    start_line=31,
    end_line=40,
    signature="async def send(request: Request, /, *args: Any) -> None:",
    summary='async def send(request: Request, /, *args: Any) -> None:\n    """Send it."""\n    ...',
)


def test_the_file_block_shows_signatures_without_annotations_and_a_class_s_constructor() -> None:
    ctx, _ = context(CLIENT, SEND)
    text = "from net.client import Client, send\n\nc = Client(1)\nsend(c)\n"
    # Dense, not whole: every name for few tokens (no members, docstrings or annotations).
    assert block(ctx, text) == (
        "# file: net/client.py\n"
        "async def send(request, /, *args):\n"
        "class Client(Base):\n"
        '    def __init__(self, url, *, timeout=Timeout(5.0, pool=None), sep=", ", **kwargs):\n'
        "    def get(self, path) -> Response: ...\n"
        "    def close(self): ...\n"
        "# file: a.py\n"
    )


def test_the_most_used_imports_are_looked_up_when_a_file_imports_many() -> None:
    ctx, index = context(SEGMENT)
    many = ", ".join(f"name_{n}" for n in range(codebase_context.MAX_NAMES + 6))
    text = f"from io.names import {many}\nfrom text.segment import Segment\n\n"
    text += "a = Segment(1)\nb = Segment(2)\n"
    # Imported last but used most: looked up, not cut by the import order.
    assert "class Segment:" in block(ctx, text)
    assert index.asked[0][0] == "Segment"


def test_the_file_block_is_the_same_on_every_line_and_key_of_the_file() -> None:
    ctx, index = context(SEGMENT, LOAD)
    text = IMPORTS + "def go():\n    s = Segment(load('a'))\n"
    first = block(ctx, text)
    for typed in ("    return s.", "    return s.spl", "x = load(", "\n\nclass A(Segment):\n"):
        text += typed
        assert block(ctx, text) == first
    assert len(index.asked) == 1  # looked up once for the file


def test_the_file_block_is_made_again_when_the_imports_change() -> None:
    ctx, index = context(SEGMENT, LOAD)
    text = "from text.segment import Segment\n\nx = Segment(1)\n"
    assert "def load" not in block(ctx, text)
    changed = "from io.loading import load\n" + text
    assert "def load(path) -> Segment:" in block(ctx, changed)
    assert len(index.asked) == 2
    ctx.forget("file:///proj/a.py")  # closed: looked up again when it opens
    block(ctx, changed)
    assert len(index.asked) == 3


def test_the_file_block_is_made_again_when_another_file_is_indexed_anew() -> None:
    ctx, index = context(SEGMENT, LOAD)
    text = IMPORTS + "s = Segment(load('a'))\n"
    assert "mode" not in block(ctx, text)
    # this file's own updates (typing here) keep the block: no lookup
    index.changes.append("/proj/a.py")
    block(ctx, text)
    assert len(index.asked) == 1
    # the other module's function gained a parameter and was indexed: the next block shows it
    index.table = (
        SEGMENT,
        dataclasses.replace(LOAD, summary="def load(path: str, mode: str = 'r') -> Segment:"),
    )
    index.changes.append("/proj/io/loading.py")
    assert "def load(path, mode='r') -> Segment:" in block(ctx, text)
    assert len(index.asked) == 2
    index.changes.append("/proj/a.py")
    block(ctx, text)
    assert len(index.asked) == 2


def test_the_lookup_near_the_cursor_is_made_again_when_the_index_changes() -> None:
    ctx, index = context(SEGMENT, LOAD)
    assert ask(ctx, "x = load(|") == ["load"]
    assert ask(ctx, "x = load(|") == ["load"]
    assert len(index.asked) == 1
    index.changes.append("/proj/io/loading.py")
    ask(ctx, "x = load(|")
    assert len(index.asked) == 2


def test_keys_below_the_imports_do_not_parse_them_again(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx, _ = context(SEGMENT, LOAD)
    text = "from io.loading import (\n    load,\n)\nfrom text.segment import Segment\n\n"
    first = block(ctx, text + "# important: x\n")
    assert "def load" in first and "class Segment" in first
    parsed: list[str] = []
    real = codebase_context.imported_names
    monkeypatch.setattr(
        codebase_context, "imported_names", lambda head: parsed.append(head) or real(head)
    )
    for typed in ("# important: xy\n", "# important: xyz\n", "s = Segment(load(1))\n"):
        assert block(ctx, text + typed) == first
    assert parsed == []


def test_the_file_block_holds_its_budget() -> None:
    ctx, _ = context(SEGMENT, LOAD)
    text = IMPORTS + "s = Segment(load('a'))\nt = Segment(1)\n"
    whole = block(ctx, text)
    for budget in (20, 12, 8):
        small = CodebaseContext(ctx.lookup)
        found = small.file_block(
            uri="file:///proj/a.py", path="/proj/a.py", text=text, budget=budget, comment_prefix="#"
        )
        assert found.tokens <= budget, (budget, found.text)
        assert len(found.text) < len(whole)
    assert block(CodebaseContext(ctx.lookup), text, budget=20) == (
        "# file: text/segment.py\nclass Segment:\n# file: a.py\n"
    )  # the most used first; load does not fit
    assert block(CodebaseContext(ctx.lookup), text, budget=36) == (
        "# file: io/loading.py\ndef load(path) -> Segment:\n"
        "# file: text/segment.py\nclass Segment:\n# file: a.py\n"
    )  # every name before any class's members
    client = context(CLIENT)[0]
    text = "from net.client import Client\n\nc = Client(1)\n"
    assert (
        block(client, text, budget=20)
        == "# file: net/client.py\nclass Client(Base):\n# file: a.py\n"
    )
    # a class is cut to its header when its constructor does not fit


def test_no_index_no_imports_no_block() -> None:
    assert block(CodebaseContext(lambda path: None), IMPORTS) == ""
    assert block(context(SEGMENT)[0], "import sys\n\nx = Segment(1)\n") == ""


async def test_a_prefix_only_agent_gets_the_file_block_before_the_prefix(
    harness: Harness,
) -> None:
    index = SymbolIndex(SEGMENT, root=ROOT)
    harness.service.codebase = lambda path: index
    harness.use(codebase_context_in_prefix=True)
    head = "from text.segment import Segment\n\n"
    expected = (
        "# file: text/segment.py\nclass Segment:\n"
        "    def split(self, at) -> list[Segment]: ...\n"
        "    def join(self, other) -> Segment: ...\n# file: a.py\n"
    )
    for text in ("parts = Segment.|", "parts = Segment.split(3)\nother = |", "x = 1\ny|"):
        harness.answer("split(3)\n")
        await harness.complete(head + text)
    prompts = [body["prompt"] for body in harness.bodies]
    # The same block on every line and key: llama.cpp's prompt cache keeps it.
    assert prompts == [
        expected + head + "parts = Segment.",
        expected + head + "parts = Segment.split(3)\nother =",  # healed
        expected + head + "x = 1\ny",
    ]
    assert len(index.asked) == 1


async def test_the_warm_up_on_opening_reads_the_file_block_first(harness: Harness) -> None:
    harness.service.codebase = lambda path: SymbolIndex(SEGMENT, root=ROOT)
    harness.use(codebase_context_in_prefix=True, warm_idle_ms=5_000, warm_cursor_window=True)
    harness.hold()
    text = "from text.segment import Segment\n\n\ndef halves(s):\n    return s\n"
    harness.open(text)
    await until(lambda: len(harness.bodies) == 1, seconds=1.0)  # the open's warm-up
    warm = harness.bodies[0]["prompt"]
    assert warm.startswith("# file: text/segment.py\nclass Segment:\n"), warm
    assert warm.endswith("# file: a.py\n" + text)
    harness.scripts[0].send("x")
    await until(harness.scripts[0].closed.is_set)
    harness.answer("Segment(1)\n")
    await harness.complete("from text.segment import Segment\n\n\ndef halves(s):\n    return |")
    block_end = warm.index("# file: a.py\n") + len("# file: a.py\n")
    # The first request reuses the block (and the lines above) from the model's cache.
    assert harness.bodies[1]["prompt"].startswith(warm[: block_end + 30])


async def test_the_settings_turn_it_off(harness: Harness) -> None:
    harness.service.codebase = lambda path: SymbolIndex(SEGMENT, root=ROOT)
    text = "from text.segment import Segment\nparts = Segment.|"
    harness.use(codebase_context=False, codebase_context_in_prefix=True)
    harness.answer("split(3)\n")
    await harness.complete(text)
    harness.use(codebase_context_in_prefix=False)
    harness.answer("split(3)\n")
    await harness.complete(text + "\n")
    assert [body["prompt"] for body in harness.bodies] == [text.replace("|", "")] * 2


class TestAnExtraContextAgent:
    """An agent whose prompt starts with ``ctx.files_metadata`` (the ring)."""

    @pytest.fixture
    def completer_agent(self) -> str:
        return RING_AGENT

    async def test_gets_them_after_the_ring_within_its_budget(self, harness: Harness) -> None:
        harness.service.codebase = lambda path: SymbolIndex(SEGMENT, root=ROOT)
        chunks = ["".join(f"value_{n}_{i} = {i}\n" for i in range(20)) for n in range(3)]
        for n, chunk in enumerate(chunks):
            harness.open(chunk, uri=f"file:///proj/c{n}.py")
        harness.use(extra_context_tokens=240)  # three chunks of 78 tokens fit, not with Segment
        harness.answer("split(3)\n")
        await harness.complete("parts = Segment.|")
        prompt = harness.bodies[0]["prompt"]
        # The oldest chunks stay first (the cached start); the newest one made room.
        assert prompt.startswith(chunks[0] + chunks[1] + "class Segment:\n    def split")
        assert prompt.endswith("-> Segment: ...parts = Segment.")
