"""Keep Python's cyclic garbage collector off the long-lived objects of a serving process.

Once the configuration is loaded, most of the heap is long-lived: the agents, their compiled
templates, pydantic models, pygls and lsprotocol. Every full (generation 2) collection walks
all of it again; measured in the benchmark's server, one took 49 ms, a pause any request
that arrived meanwhile waited out. `freeze_long_lived` collects what a load left behind and
then moves everything that survives into the permanent generation (``gc.freeze``), which
collections skip; only objects made later are walked. A reload first unfreezes, so the
configuration it replaces can be collected.

Only the ``serve`` command installs it: in a process that also runs other code (the tests),
frozen objects would never be collected.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_long_lived"]


def freeze_long_lived(_config: object = None) -> None:
    """Collect garbage, then exempt every surviving object from later collections."""
    gc.unfreeze()  # what the last load froze may be garbage now (a replaced configuration)
    gc.collect()
    gc.freeze()
