"""Chunker: definitions per language, class summaries, module lines, windows without a grammar."""

from __future__ import annotations

import textwrap

import pytest

from qodeassist_lsp.context.codebase.chunker import Chunker
from qodeassist_lsp.context.codebase.limits import IndexLimits

PYTHON = textwrap.dedent(
    '''\
    """Segments of text."""
    import os

    LIMIT = 3


    class Segment(Base):
        """A piece of text."""

        size: int = 0

        def __init__(self, text: str) -> None:
            self.text = text

        @property
        def length(self) -> int:
            return len(self.text)

        def split(self, at: int) -> "tuple[Segment, Segment]":
            """Split in two."""
            return Segment(self.text[:at]), Segment(self.text[at:])


    def parse_config(path):
        return open(path).read()
    '''
)


def _chunker(**limits: object) -> Chunker:
    return Chunker(IndexLimits(**limits))  # type: ignore[arg-type]


def test_python_definitions_methods_and_module_lines() -> None:
    result = _chunker().chunk("pkg/seg.py", PYTHON)
    chunks = [(c.kind, c.name, c.start_line, c.end_line) for c in result.chunks]
    assert chunks == [
        ("lines", None, 0, 3),
        ("class", "Segment", 6, 20),
        ("method", "Segment.__init__", 11, 12),
        ("method", "Segment.length", 14, 16),
        ("method", "Segment.split", 18, 20),
        ("function", "parse_config", 23, 24),
    ]
    symbols = {(s.container, s.name): s for s in result.symbols}
    split = symbols["Segment", "split"]
    assert split.kind == "method"
    assert split.signature == 'def split(self, at: int) -> "tuple[Segment, Segment]":'
    assert '"""Split in two."""' in split.summary
    assert symbols[None, "parse_config"].signature == "def parse_config(path):"


def test_a_class_chunk_shows_its_members_signatures_not_their_bodies() -> None:
    result = _chunker().chunk("seg.py", PYTHON)
    segment = next(s for s in result.symbols if s.name == "Segment")
    assert segment.signature == "class Segment(Base):"
    assert "def __init__(self, text: str) -> None:" in segment.summary
    assert "@property" in segment.summary
    assert "def split(self, at: int)" in segment.summary
    assert "size: int = 0" in segment.summary
    assert "self.text = text" not in segment.summary
    assert "return len" not in segment.summary
    class_chunk = next(c for c in result.chunks if c.kind == "class")
    assert "return len" not in class_chunk.text  # the method chunk has it, once


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        (
            "a.c",
            "struct Point { int x; };\nint add(int a, int b) {\n  return a + b;\n}\n",
            [("class", "Point", None), ("function", "add", None)],
        ),
        (
            "a.go",
            "package m\n\ntype S struct {\n\ta int\n}\n\nfunc (s *S) M(x int) int {\n\treturn 1\n}\n",
            [("class", "S", None), ("method", "M", "S")],
        ),
        (
            "a.js",
            "class A {\n  m(x) {\n    return x;\n  }\n}\nconst f = (x) => {\n  return x;\n};\n",
            [("class", "A", None), ("method", "m", "A"), ("function", "f", None)],
        ),
        (
            "a.ts",
            "export interface I {\n  a: number;\n}\nexport function g(): number {\n  return 1;\n}\n",
            [("class", "I", None), ("function", "g", None)],
        ),
        (
            "a.rs",
            "struct S { a: i32 }\nimpl S {\n    fn m(&self) -> i32 {\n        1\n    }\n}\n",
            [("class", "S", None), ("method", "m", "S")],
        ),
        (
            "a.cpp",
            "class A {\n public:\n  int m(int x) { return x; }\n};\nvoid A::f() {\n}\n",
            [("class", "A", None), ("method", "m", "A"), ("method", "f", "A")],
        ),
        (
            "A.java",
            "class A {\n  A() {}\n  void m() {\n  }\n}\n",
            [("class", "A", None), ("method", "A", "A"), ("method", "m", "A")],
        ),
    ],
)
def test_definitions_in_other_languages(path: str, text: str, expected: list[tuple]) -> None:
    result = _chunker().chunk(path, text)
    assert [(s.kind, s.name, s.container) for s in result.symbols] == expected
    assert all(s.signature and "\n" not in s.signature for s in result.symbols)


def test_a_file_without_a_grammar_is_cut_into_overlapping_windows() -> None:
    text = "".join(f"line {n}\n" for n in range(100))
    result = _chunker(window_lines=40, window_overlap=10).chunk("notes.md", text)
    assert [(c.start_line, c.end_line, c.kind) for c in result.chunks] == [
        (0, 39, "lines"),
        (30, 69, "lines"),
        (60, 99, "lines"),
    ]
    assert result.chunks[1].text.splitlines()[0] == "line 30"
    assert result.symbols == []


def test_a_language_turned_off_gets_windows() -> None:
    result = _chunker(languages=frozenset({"go"})).chunk("seg.py", PYTHON)
    assert {c.kind for c in result.chunks} == {"lines"}
    assert result.symbols == []


def test_a_long_definition_is_indexed_in_pieces_with_one_symbol() -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(30))
    result = _chunker(max_chunk_lines=10, window_overlap=2).chunk("long.py", "def f():\n" + body)
    pieces = [c for c in result.chunks if c.name == "f"]
    assert len(pieces) == 4
    assert pieces[0].start_line == 0
    assert pieces[-1].end_line == 30
    assert [s.name for s in result.symbols] == ["f"]


def test_broken_code_and_empty_text_do_not_raise() -> None:
    chunker = _chunker()
    assert chunker.chunk("empty.py", "").chunks == []
    broken = chunker.chunk("broken.py", "def f(:\n    pass\nclass\n")
    assert broken.chunks  # the lines are still searchable


def test_an_edited_file_parsed_from_its_last_tree_gives_what_a_fresh_parse_gives() -> None:
    import random

    rng = random.Random(45)
    incremental = _chunker()
    fresh = _chunker()
    text = PYTHON.replace("Segment", "Ségment")  # multi-byte characters: byte columns differ
    incremental.chunk("seg.py", text, incremental=True)
    pieces = ["x", "\n", "    def added(self) -> None:\n        pass\n", "é", "", "class C:\n"]
    for _ in range(40):
        start = rng.randrange(len(text) + 1)
        end = min(len(text), start + rng.randrange(6))
        text = text[:start] + rng.choice(pieces) + text[end:]
        assert incremental.chunk("seg.py", text, incremental=True) == fresh.chunk("seg.py", text)


def test_crlf_line_ends_give_the_same_chunks_without_carriage_returns() -> None:
    crlf = _chunker().chunk("seg.py", PYTHON.replace("\n", "\r\n"))
    assert crlf == _chunker().chunk("seg.py", PYTHON)


def test_a_big_file_is_parsed_through_python_callbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    # tree-sitter holds the GIL through the parse of a bytestring; read through a callback it
    # lets the event loop's thread run between slices (a build must not stall the server)
    import qodeassist_lsp.context.codebase.chunker as chunker_module

    reads: list[int] = []
    original = chunker_module._slices

    def counting(source: bytes):  # type: ignore[no-untyped-def]
        read = original(source)

        def spy(offset: int, point: object) -> bytes:
            reads.append(offset)
            return read(offset, point)

        return spy

    monkeypatch.setattr(chunker_module, "_slices", counting)
    text = PYTHON * 200  # about 100 KB
    result = _chunker().chunk("big.py", text)
    assert len(reads) >= len(text.encode()) // chunker_module._SLICE_BYTES
    assert len([s for s in result.symbols if s.name == "parse_config"]) == 200


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        (
            "m.py",
            "DEFAULT_TIMEOUT = Timeout(timeout=5.0)\n"
            "__all__ = [\n    'a',\n]\n"
            "HeaderTypes = Union[str, bytes]\n"
            "Alias: TypeAlias = int\n"
            "type Pair = tuple[int, int]\n"
            "a, b = 1, 2\n"
            "obj.attr = 3\n"
            "def f():\n    local = 1\n"
            "f = wraps(f)\n"
            "class K:\n    FIELD = 1\n",
            [
                ("variable", "DEFAULT_TIMEOUT", 0, 0, "DEFAULT_TIMEOUT = Timeout(timeout=5.0)"),
                ("variable", "__all__", 1, 3, "__all__ = ["),
                ("variable", "HeaderTypes", 4, 4, "HeaderTypes = Union[str, bytes]"),
                ("type", "Alias", 5, 5, "Alias: TypeAlias = int"),
                ("type", "Pair", 6, 6, "type Pair = tuple[int, int]"),
                ("variable", "a", 7, 7, "a, b = 1, 2"),
                ("variable", "b", 7, 7, "a, b = 1, 2"),
            ],
        ),
        (
            "m.ts",
            "export const x = 1, y = 2;\nconst M = {};\nexport type T = string | number;\n"
            "const f = () => 1;\nfunction g() { const inner = 1; }\n",
            [
                ("variable", "x", 0, 0, "export const x = 1, y = 2;"),
                ("variable", "y", 0, 0, "export const x = 1, y = 2;"),
                ("variable", "M", 1, 1, "const M = {};"),
                ("type", "T", 2, 2, "export type T = string | number;"),
            ],
        ),
        (
            "m.c",
            "#define MAX 10\nstatic const int LIMIT = 5;\nint f(int);\ntypedef int myint;\n",
            [
                ("variable", "MAX", 0, 0, "#define MAX 10"),
                ("variable", "LIMIT", 1, 1, "static const int LIMIT = 5;"),
                ("type", "myint", 3, 3, "typedef int myint;"),
            ],
        ),
        (
            "m.go",
            "package p\nconst A = 1\nconst (\n\tB = 2\n)\nvar E = 5\ntype F int\n"
            "type S struct{ a int }\n",
            [
                ("variable", "A", 1, 1, "const A = 1"),
                ("variable", "B", 3, 3, "B = 2"),
                ("variable", "E", 5, 5, "var E = 5"),
                ("type", "F", 6, 6, "type F int"),
            ],
        ),
        (
            "m.rs",
            'const A: u32 = 1;\nstatic B: &str = "x";\ntype C = Vec<u8>;\n',
            [
                ("variable", "A", 0, 0, "const A: u32 = 1;"),
                ("variable", "B", 1, 1, 'static B: &str = "x";'),
                ("type", "C", 2, 2, "type C = Vec<u8>;"),
            ],
        ),
    ],
)
def test_top_level_assignments_constants_and_type_aliases_are_symbols(
    path: str, text: str, expected: list[tuple[str, str, int, int, str]]
) -> None:
    result = Chunker(IndexLimits()).chunk(path, text)
    found = [
        (s.kind, s.name, s.start_line, s.end_line, s.signature)
        for s in result.symbols
        if s.kind in ("variable", "type")
    ]
    assert found == expected
    assert all(s.container is None for s in result.symbols if s.kind == "variable")
    # symbols only: their lines are in the module's ``lines`` chunks already
    assert {c.kind for c in result.chunks} <= {"lines", "function", "method", "class"}


def test_an_assignments_signature_is_its_first_line_capped() -> None:
    text = (
        "TABLE = {"
        + ", ".join(f"'k{i}': {i}" for i in range(200))
        + "}\n"
        + "".join(f"X{i} = {i}\n" for i in range(3))
    )
    [table, *_] = Chunker(IndexLimits()).chunk("m.py", text).symbols
    assert table.name == "TABLE"
    assert len(table.signature) <= 200 and table.signature.endswith("…")
    assert len(table.summary) <= 600
