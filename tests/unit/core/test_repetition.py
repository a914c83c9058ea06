"""RepetitionWatch: a line coming back three times within the window is a loop."""

from __future__ import annotations

from qodeassist_lsp.core.repetition import MIN_LINE_CHARS, REPEATS, WINDOW, RepetitionWatch

LINE = "The answer is forty-two, as always."


def feed_all(watch: RepetitionWatch, text: str, size: int = 7) -> bool:
    # Every piece is fed (no short-circuit), as a stream would deliver it.
    results = [watch.feed(text[i : i + size]) for i in range(0, len(text), size)]
    return any(results)


def test_a_line_repeated_is_seen_across_delta_boundaries() -> None:
    watch = RepetitionWatch()
    assert not feed_all(watch, f"{LINE}\n" * (REPEATS - 1))
    assert feed_all(watch, f"{LINE}\n")
    assert watch.looping_line == LINE
    assert watch.feed("anything")  # stays stopped


def test_a_repeated_paragraph_is_a_loop() -> None:
    paragraph = "".join(f"Sentence number {i} of the persona text.\n" for i in range(5))
    assert feed_all(RepetitionWatch(), paragraph * REPEATS)


def test_whitespace_differences_do_not_hide_a_loop() -> None:
    assert feed_all(RepetitionWatch(), f"{LINE}\n  {LINE}\n{LINE.replace(' ', '  ')}\n")


def test_short_lines_and_distant_repeats_are_not_loops() -> None:
    watch = RepetitionWatch()
    assert not feed_all(watch, "}\n" * 50 + "x" * (MIN_LINE_CHARS - 1) + "\n" * 5)
    spaced = "".join(
        f"{LINE}\n" + "".join(f"filler line number {i}-{j}\n" for j in range(WINDOW))
        for i in range(REPEATS)
    )
    assert not feed_all(RepetitionWatch(), spaced)


def test_an_unfinished_line_does_not_count_yet() -> None:
    watch = RepetitionWatch()
    assert not watch.feed(f"{LINE}\n{LINE}\n{LINE}")
    assert watch.feed("\n")
