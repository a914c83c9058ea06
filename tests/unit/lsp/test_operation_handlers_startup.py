"""The language server registers the features' operations without building them first.

The codebase feature's row names its operations, so ``create_server`` registers
``qodeassist/codebase/*`` and builds the feature only at ``initialized``: no operation's
pydantic models are imported on the way to the ``initialize`` answer (about 100 ms of it).
"""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
from qodeassist_lsp.lsp.app import create_server
server = create_server()
registered = sorted(m for m in server.protocol.fm.features if m.startswith("qodeassist/codebase/"))
print(registered)
print("qodeassist_lsp.features.codebase.operations" in sys.modules, "pydantic" in sys.modules)
"""


def test_operations_are_registered_before_their_feature_is_built() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    assert out[0] == str(
        sorted(f"qodeassist/codebase/{op}" for op in ("definition", "reindex", "search", "status"))
    )
    assert out[1] == "False False"
