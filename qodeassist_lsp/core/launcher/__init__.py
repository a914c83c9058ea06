"""Start, adopt, watch and stop the local model server of a provider instance (``[launch]``).

One module per part (docs/architecture.md lists them); the names other packages use are
re-exported here.
"""

from __future__ import annotations

from qodeassist_lsp.core.launcher.errors import EX_CONFIG, LaunchError
from qodeassist_lsp.core.launcher.spawn import OWNER_PID_ENV
from qodeassist_lsp.core.launcher.supervisor import LauncherState, ProviderLauncher

__all__ = [
    "EX_CONFIG",
    "OWNER_PID_ENV",
    "LaunchError",
    "LauncherState",
    "ProviderLauncher",
]
