"""Adaptive debounce with an injected clock."""

from __future__ import annotations

import pytest

from qodeassist_lsp.features.completion.debounce import AdaptiveDebouncer
from qodeassist_lsp.features.completion.settings import CompletionSettings


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def typed(debouncer: AdaptiveDebouncer, clock: Clock, interval_s: float, keys: int) -> None:
    for _ in range(keys):
        clock.now += interval_s
        debouncer.note_keystroke()


def test_fixed_delay_when_not_adaptive_and_zero_when_invoked() -> None:
    clock = Clock()
    debouncer = AdaptiveDebouncer(clock)
    settings = CompletionSettings(adaptive_debounce=False, debounce_ms=350)
    typed(debouncer, clock, 0.05, 5)
    assert debouncer.delay_ms(settings) == 350
    assert debouncer.remaining_s(settings, invoked=True) == 0.0


def test_delay_follows_rhythm_within_bounds() -> None:
    clock = Clock()
    debouncer = AdaptiveDebouncer(clock)
    settings = CompletionSettings(debounce_ms=400, debounce_min_ms=100)
    assert debouncer.delay_ms(settings) == 400  # nothing learnt yet: the upper bound
    typed(debouncer, clock, 0.06, 10)
    assert debouncer.typical_interval_ms == pytest.approx(60)
    assert debouncer.delay_ms(settings) == pytest.approx(180)
    assert debouncer.delay_ms(settings, eager=True) == pytest.approx(100)  # clamped low
    typed(debouncer, clock, 0.3, 30)
    assert debouncer.delay_ms(settings) == 400  # slow typist: clamped high


def test_pauses_do_not_count_and_elapsed_time_is_deducted() -> None:
    clock = Clock()
    debouncer = AdaptiveDebouncer(clock)
    settings = CompletionSettings(debounce_ms=400, debounce_min_ms=50)
    typed(debouncer, clock, 0.05, 5)
    typed(debouncer, clock, 30.0, 1)  # a long pause is not rhythm
    assert debouncer.typical_interval_ms == pytest.approx(50)
    assert debouncer.remaining_s(settings) == pytest.approx(0.15)
    clock.now += 0.1
    assert debouncer.remaining_s(settings) == pytest.approx(0.05)
    clock.now += 1.0
    assert debouncer.remaining_s(settings) == 0.0


def test_min_above_max_is_clamped_to_max() -> None:
    clock = Clock()
    debouncer = AdaptiveDebouncer(clock)
    settings = CompletionSettings(debounce_ms=100, debounce_min_ms=300)
    typed(debouncer, clock, 0.01, 5)
    assert debouncer.delay_ms(settings) == 100


def test_reading_pauses_between_bursts_do_not_slow_the_rhythm() -> None:
    clock = Clock()
    debouncer = AdaptiveDebouncer(clock)
    settings = CompletionSettings(debounce_ms=350, debounce_min_ms=100)
    for _ in range(6):  # two keys 125 ms apart, then most of a second reading the suggestion
        typed(debouncer, clock, 0.125, 2)
        typed(debouncer, clock, 0.9, 1)
    # A mean would say 383 ms per key (and wait the full 350 ms); the keys say 125.
    assert debouncer.typical_interval_ms == pytest.approx(125)
    assert debouncer.delay_ms(settings) == 350  # 3 x 125, capped
    assert debouncer.delay_ms(settings, eager=True) == pytest.approx(187.5)


def test_two_key_bursts_with_reading_pauses_follow_the_keys_not_the_cap() -> None:
    # Issue 27: two keys 125 ms apart, ~800 ms reading the suggestion, again. Every burst has
    # one reading pause and one key interval, so a median over both sits near 460 ms and the
    # delay at its cap; the reading pause is not typing rhythm.
    clock = Clock()
    debouncer = AdaptiveDebouncer(clock)
    settings = CompletionSettings(debounce_ms=350, debounce_min_ms=100)
    debouncer.note_keystroke()
    for _ in range(12):
        typed(debouncer, clock, 0.8, 1)
        typed(debouncer, clock, 0.125, 1)
    assert debouncer.typical_interval_ms == pytest.approx(125)
    assert debouncer.delay_ms(settings, eager=True) == pytest.approx(187.5)


def test_the_key_after_a_shown_answer_starts_a_new_burst() -> None:
    clock = Clock()
    debouncer = AdaptiveDebouncer(clock)
    settings = CompletionSettings(debounce_ms=350, debounce_min_ms=100)
    for _ in range(8):  # three keys 100 ms apart, the answer shown, 450 ms reading it
        typed(debouncer, clock, 0.1, 1)
        debouncer.note_answer_shown()
        typed(debouncer, clock, 0.45, 1)
        typed(debouncer, clock, 0.1, 1)
    assert debouncer.typical_interval_ms == pytest.approx(100)
    assert debouncer.delay_ms(settings) == pytest.approx(300)


def test_a_model_on_this_machine_gets_the_local_delay() -> None:
    clock = [0.0]
    debouncer = AdaptiveDebouncer(clock=lambda: clock[0])
    settings = CompletionSettings(debounce_ms=300, local_debounce_ms=40)
    debouncer.note_keystroke()
    assert debouncer.remaining_s(settings, local=True) == pytest.approx(0.04)
    assert debouncer.remaining_s(settings) == pytest.approx(0.3)
    assert debouncer.delay_ms(CompletionSettings(debounce_ms=20), local=True) == 0
    assert (
        debouncer.delay_ms(CompletionSettings(debounce_ms=20, local_debounce_ms=90), local=True)
        == 20
    )
