"""The serving process's heap policy: no collections during start-up, a frozen heap after it."""

from __future__ import annotations

import gc
import time
import weakref

from qodeassist_lsp.lsp.heap import freeze_long_lived, hold_collection


class _Node:
    """An object in a reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


def test_survivors_are_frozen_and_a_reload_frees_what_it_replaced() -> None:
    try:
        hold_collection(limit_s=60)
        assert not gc.isenabled()  # start-up: no collections until the first load
        kept = _Node()
        probe = weakref.ref(kept)
        freeze_long_lived()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        del kept  # the "configuration" is replaced: its cycle is garbage, but frozen
        gc.collect()
        assert probe() is not None  # frozen objects are skipped by collections
        freeze_long_lived()  # the next load unfreezes first
        assert probe() is None
    finally:
        gc.unfreeze()
        gc.enable()


def test_the_collector_comes_back_even_if_nothing_ever_loads() -> None:
    try:
        timer = hold_collection(limit_s=0.05)
        assert not gc.isenabled()
        timer.join(5)
        deadline = time.monotonic() + 5
        while not gc.isenabled() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert gc.isenabled()
    finally:
        gc.enable()
