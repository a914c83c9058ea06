"""Properties every recorded stream must have: cut anywhere, corrupted, split, it never raises."""

from pathlib import Path

import pytest

from qodeassist_lsp.wire.errors import ErrorCategory
from qodeassist_lsp.wire.events import MessageStop, StreamError


def test_every_fixture_file_is_used_by_a_test(kit) -> None:
    tests = Path(__file__).parents[2]  # the wire tests, and e2e tests that replay a fixture
    scripts = [*Path(__file__).parent.glob("*.py"), *(tests / "e2e").rglob("*.py")]
    sources = "".join(p.read_text() for p in scripts)
    files = [p for p in kit.fixtures_dir.rglob("*") if p.is_file() and p.name != "SOURCES.md"]
    assert len(files) >= 60
    unused = [str(p.relative_to(kit.fixtures_dir)) for p in files if p.name not in sources]
    assert unused == []


def test_stream_ends_with_exactly_one_terminal_event(kit, stream_case) -> None:
    events = kit.replay_fixture(stream_case)
    assert events, stream_case
    assert isinstance(events[-1], MessageStop | StreamError)
    terminal = [e for e in events if isinstance(e, MessageStop)]
    final_errors = [e for e in events if isinstance(e, StreamError) and e.final]
    assert len(terminal) + len(final_errors) == 1
    assert all(
        e.error.category is ErrorCategory.TOOL for e in events if e.kind == "error" and not e.final
    )


@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.8])
def test_cut_stream_is_a_provider_error_never_an_exception(kit, stream_case, fraction) -> None:
    data = kit.bytes(stream_case)
    complete = kit.replay_fixture(stream_case)
    cut = data[: int(len(data) * fraction)]
    events = kit.run(kit.maker_for(kit.stream_cases[stream_case]), [cut])
    assert events, stream_case
    last = events[-1]
    if isinstance(last, MessageStop):
        # Chat Completions is complete at EOF once a finish_reason arrived, even without [DONE].
        assert b'"finish_reason":"' in cut and isinstance(complete[-1], MessageStop)
    else:
        assert isinstance(last, StreamError) and last.final, (stream_case, fraction)
        if isinstance(complete[-1], MessageStop):
            assert last.error.category is ErrorCategory.PROVIDER


def test_invalid_utf8_inside_the_stream_does_not_crash(kit, stream_case) -> None:
    data = bytearray(kit.bytes(stream_case))
    # Corrupt bytes inside string values, where a decoder would trip over them.
    for index in range(len(data) // 3, len(data), max(1, len(data) // 5)):
        if data[index : index + 1].isalpha():
            data[index] = 0xFF
    for label, pieces in kit.splits(bytes(data)):
        events = kit.run(kit.maker_for(kit.stream_cases[stream_case]), pieces)
        assert isinstance(events[-1], MessageStop | StreamError), label


def test_garbage_and_empty_bodies(kit) -> None:
    for key in sorted(kit.urls):
        for body in (b"", b"<html>502 Bad Gateway</html>", b"\x00\xff\xfe", b"\n\n\n"):
            events = kit.run(kit.maker_for(key), [body])
            assert len(events) == 1 and isinstance(events[0], StreamError), (key, body)
