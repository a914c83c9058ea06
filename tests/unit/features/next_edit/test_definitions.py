"""The codebase index in next-edit prompts: the code behind the newest edit, from other files."""

from __future__ import annotations

from pathlib import Path

from qodeassist_lsp.context.codebase.model import Snippet, SymbolDefinition
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.context.edit_history import Hunk
from qodeassist_lsp.features.next_edit.definitions import changed_names
from qodeassist_lsp.features.next_edit.results import NextEditRequest
from qodeassist_lsp.features.next_edit.service import NextEditService
from tests.support.symbol_index import SymbolIndex
from tests.unit.features.next_edit.test_service import runtime

SCALE = SymbolDefinition(
    name="scale",
    kind="function",
    path="util/scaling.py",
    start_line=0,
    end_line=3,
    signature="def scale(value, factor, *, clamp=False):",
    summary='def scale(value, factor, *, clamp=False):\n    """Multiply value by factor."""',
)
LOCAL_AREA = SymbolDefinition(
    name="area",
    kind="function",
    path="geo.py",
    start_line=0,
    end_line=1,
    signature="def area(w, h):",
    summary="def area(w, h):",
)
CALLER = Snippet(
    path="report.py",
    start_line=4,
    end_line=6,
    kind="function",
    name="report",
    text="def report(w, h):\n    return area(w, h)",
    rank=-3.0,
)


IMPORT = Snippet(
    path="main.py",
    start_line=0,
    end_line=0,
    kind="lines",
    name=None,
    text="from geo import area",
    rank=-5.0,
)


def area_index() -> SymbolIndex:
    """The index next edits read: two definitions, and the two places that name ``area``."""
    return SymbolIndex(SCALE, LOCAL_AREA, root=Path("/p"), found={"area": [IMPORT, CALLER]})


def hunk(original: str, updated: str) -> Hunk:
    return Hunk(0, tuple(original.split("\n")), tuple(updated.split("\n")), 1.0, 1)


def test_a_rename_names_first_what_changed() -> None:
    names, signatures = changed_names(hunk("x = scale(v, 2)", "x = scale(v, factor=2)"))
    assert names == ["factor", "scale"]
    assert signatures == []
    assert changed_names(hunk("def area(w, h):", "def area(w, h, d):"))[1] == ["area"]


async def prompt_after(original: str, updated: str, index: SymbolIndex | None) -> str:
    store = DocumentStore()
    store.open("file:///p/geo.py", original, 1)
    store.change("file:///p/geo.py", updated, 2)
    backend = runtime()
    service = NextEditService(backend, store, codebase=lambda path: index)
    document = store.get("file:///p/geo.py")
    assert document is not None
    await service.suggest(NextEditRequest(document, 1, 0))
    return str(backend.sessions.session.sent[0])


async def test_a_changed_call_brings_the_called_functions_definition() -> None:
    before = "def area(w, h):\n    return scale(w * h, 2)\n"
    after = "def area(w, h):\n    return scale(w * h, 2, clamp=True)\n"
    prompt = await prompt_after(before, after, area_index())
    assert '<snippet path="util/scaling.py">\ndef scale(value, factor, *, clamp=False):' in prompt
    assert 'path="geo.py">\ndef area' not in prompt  # this file's own: in the window already


async def test_a_changed_signature_brings_its_callers_in_other_files() -> None:
    index = area_index()
    prompt = await prompt_after(
        "def area(w, h):\n    return w * h\n", "def area(w, h, d):\n    return w * h\n", index
    )
    assert "area" in index.searched
    assert "main.py" not in prompt  # an import is not a call
    assert '<snippet path="report.py">\ndef report(w, h):\n    return area(w, h)\n</snippet>' in (
        prompt
    )


async def test_without_an_index_the_prompt_is_as_before() -> None:
    before = "def area(w, h):\n    return scale(w * h, 2)\n"
    after = "def area(w, h):\n    return scale(w * h, 2, clamp=True)\n"
    prompt = await prompt_after(before, after, None)
    assert "<snippet" not in prompt
