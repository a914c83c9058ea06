"""``LaunchError`` and the exit code a launched command uses for a problem the user must fix."""

from __future__ import annotations

from qodeassist_lsp.wire.errors import CategorizedError

EX_CONFIG = 1
"""Exit code of a launched command for a problem the user must fix (SPEC §3: 1 = config error).

Reported as a ``config`` error; any other non-zero exit is reported as ``network``."""


class LaunchError(CategorizedError):
    """A ``[launch]`` server could not be started, adopted or reached; ``info`` says why."""
