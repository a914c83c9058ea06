"""The extra-context ring: where chunks come from, dedupe, eviction, bounds and order."""

from __future__ import annotations

from qodeassist_lsp.context.documents import Document, DocumentStore, LineEdit
from qodeassist_lsp.features.completion.extra_context import Chunk, ExtraContextRing, ExtraFile


def lines(name: str, count: int, start: int = 0) -> str:
    return "".join(f"{name}_{i} = {i}\n" for i in range(start, start + count))


def setup(**kwargs: int) -> tuple[DocumentStore, ExtraContextRing]:
    store = DocumentStore()
    ring = ExtraContextRing(store, chunk_lines=kwargs.pop("chunk_lines", 8), **kwargs)
    store.add_listener(ring.on_document)
    return store, ring


def texts(chunks: list[Chunk] | tuple[Chunk, ...]) -> list[str]:
    return [c.text.split("\n", 1)[0] for c in chunks]


def test_an_opened_document_contributes_its_head_once() -> None:
    store, ring = setup()
    a = store.open("file:///p/a.py", lines("a", 20))
    store.open("file:///p/a.py", lines("a", 20))  # reopened: same chunk, not added again
    assert [(c.path, c.first_line) for c in ring.chunks] == [("/p/a.py", 0)]
    assert ring.chunks[0].text == lines("a", 8)
    cursor = store.open("file:///p/c.py", lines("c", 5))
    assert texts(ring.for_request(cursor, 0, cursor.text)) == ["a_0 = 0"]
    assert ring.for_request(a, 0, a.text) == []  # its own window holds the chunk: evicted


def test_documents_opened_before_the_ring_count() -> None:
    store = DocumentStore()
    store.open("file:///p/a.py", lines("a", 3))
    ring = ExtraContextRing(store)
    assert texts(ring.chunks) == ["a_0 = 0"]


def test_edits_become_a_chunk_once_the_user_completes_elsewhere() -> None:
    store, ring = setup()
    a = store.open("file:///p/a.py", lines("a", 40))
    b = store.open("file:///p/b.py", lines("b", 3))
    text = a.text.replace("a_20 = 20", "a_20 = 21")
    a = store.change(a.uri, text, 2, [LineEdit(20, "1", 1)])
    # Still typing in a: its edit must not churn the ring (the prompt's cached start).
    assert len(ring.for_request(a, 20, "")) == 2
    chunks = ring.for_request(b, 1, b.text)
    assert [(c.uri, c.first_line) for c in chunks] == [(a.uri, 0), (a.uri, 16)]
    assert "a_20 = 21" in chunks[-1].text
    assert ring.for_request(b, 1, b.text) == chunks  # taken once


def test_order_is_insertion_order_and_near_duplicates_replace_the_older() -> None:
    store, ring = setup()
    for name in ("x", "y", "z"):
        store.open(f"file:///p/{name}.py", lines(name, 8))
    assert texts(ring.chunks) == ["x_0 = 0", "y_0 = 0", "z_0 = 0"]
    store.open("file:///p/x.py", lines("x", 8))  # exactly the same: order kept
    assert texts(ring.chunks) == ["x_0 = 0", "y_0 = 0", "z_0 = 0"]
    # One line of eight changed (similarity 0.875) is a chunk of its own; one line of twenty
    # changed (0.95) is a near-duplicate and replaces the older chunk.
    store.open("file:///p/y.py", lines("y", 7) + "changed = 1\n")
    assert texts(ring.chunks) == ["x_0 = 0", "y_0 = 0", "z_0 = 0", "y_0 = 0"]
    _, ring = setup(chunk_lines=20)
    docs = [Document(f"file:///p/{n}.py", lines(n, 20), path=f"/p/{n}.py") for n in "xy"]
    for doc in docs:
        ring.add(doc, 0)
    ring.add(Document(docs[0].uri, lines("x", 19) + "changed = 1\n", path="/p/x.py"), 0)
    assert texts(ring.chunks) == ["y_0 = 0", "x_0 = 0"]
    assert "changed = 1" in ring.chunks[-1].text


def test_chunks_mostly_inside_the_cursor_window_are_evicted() -> None:
    store, ring = setup()
    store.open("file:///p/a.py", lines("a", 8))
    store.open("file:///p/b.py", lines("b", 8))
    cursor = store.open("file:///p/c.py", "")
    half = lines("a", 4)  # half of a's chunk: kept (only more than half evicts)
    assert texts(ring.for_request(cursor, 0, half)) == ["a_0 = 0", "b_0 = 0"]
    window = "def f():\n" + "".join(f"    {line}\n" for line in lines("b", 5).splitlines())
    assert texts(ring.for_request(cursor, 0, window)) == ["a_0 = 0"]
    assert texts(ring.chunks) == ["a_0 = 0"]  # evicted for good


def test_the_ring_is_bounded_by_count_and_tokens_oldest_first() -> None:
    store, ring = setup(max_chunks=2)
    for name in "abc":
        store.open(f"file:///p/{name}.py", lines(name, 8))
    assert texts(ring.chunks) == ["b_0 = 0", "c_0 = 0"]
    per_chunk = ring.chunks[0].tokens
    ring.configure(chunk_lines=8, max_chunks=5, max_tokens=per_chunk * 2 + 1)
    store.open("file:///p/d.py", lines("d", 8))
    assert texts(ring.chunks) == ["c_0 = 0", "d_0 = 0"]
    ring.configure(chunk_lines=8, max_chunks=1, max_tokens=10_000)
    assert texts(ring.chunks) == ["d_0 = 0"]


def test_moving_far_in_a_document_keeps_the_place_left() -> None:
    store, ring = setup()
    doc = store.open("file:///p/a.py", lines("a", 100))
    ring.clear()
    ring.for_request(doc, 50, "")
    ring.for_request(doc, 55, "")  # near: nothing new
    assert ring.chunks == ()
    chunks = ring.for_request(doc, 90, "")
    assert [c.first_line for c in chunks] == [48]  # around line 55, aligned to half a chunk
    assert "a_55 = 55" in chunks[0].text


def test_ignored_documents_and_a_zero_size_ring_contribute_nothing() -> None:
    store = DocumentStore()
    ring = ExtraContextRing(store, chunk_lines=8, is_ignored=lambda d: d.path.endswith(".env"))
    store.add_listener(ring.on_document)
    store.open("file:///p/.env", "SECRET=1\n")
    assert ring.chunks == ()
    ring.configure(chunk_lines=8, max_chunks=0, max_tokens=1024)
    cursor = store.open("file:///p/a.py", lines("a", 8))
    assert ring.chunks == () and ring.for_request(cursor, 0, "") == []


def test_blank_regions_make_no_chunk_and_extra_files_carry_a_header() -> None:
    store, ring = setup()
    store.open("file:///p/blank.py", "\n\n   \n")
    assert ring.chunks == ()
    store.open("file:///p/a.py", lines("a", 2))
    extra = ExtraFile.of(ring.chunks[0], "#")
    assert extra.as_metadata() == {
        "file_path": "/p/a.py",
        "content": "a_0 = 0\na_1 = 1\n",
        "header": "# /p/a.py\n",
    }
