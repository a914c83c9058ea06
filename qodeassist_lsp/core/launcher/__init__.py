"""Start, adopt, watch and stop the local model server of a provider instance (``[launch]``).

The package is split by what each part holds: ``supervisor`` (the ``ProviderLauncher`` state
machine), ``spawn`` (command line and attached/detached spawn), ``server_process`` (a started
server and how it is stopped), ``probe`` (the readiness probe), ``run_files`` (lock and pid files:
one server per machine user), ``processes`` (the platform-specific signals) and
``errors``. The names other packages use are re-exported here.
"""

from __future__ import annotations

from qodeassist_lsp.core.launcher.errors import EX_CONFIG, LaunchError
from qodeassist_lsp.core.launcher.run_files import default_run_dir
from qodeassist_lsp.core.launcher.spawn import OWNER_PID_ENV, resolve_command
from qodeassist_lsp.core.launcher.supervisor import LauncherState, ProviderLauncher

__all__ = [
    "EX_CONFIG",
    "OWNER_PID_ENV",
    "LaunchError",
    "LauncherState",
    "ProviderLauncher",
    "default_run_dir",
    "resolve_command",
]
