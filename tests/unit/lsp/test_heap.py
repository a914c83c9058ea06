"""freeze_long_lived: survivors of a load are frozen; a later load can still free them."""

from __future__ import annotations

import gc
import weakref

from qodeassist_lsp.lsp.heap import freeze_long_lived


class _Node:
    """An object in a reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


def test_survivors_are_frozen_and_a_reload_frees_what_it_replaced() -> None:
    try:
        kept = _Node()
        probe = weakref.ref(kept)
        freeze_long_lived()
        assert gc.get_freeze_count() > 0
        del kept  # the "configuration" is replaced: its cycle is garbage, but frozen
        gc.collect()
        assert probe() is not None  # frozen objects are skipped by collections
        freeze_long_lived()  # the next load unfreezes first
        assert probe() is None
    finally:
        gc.unfreeze()
