"""Where configuration, data and the bundled agents live.

The config root is ``$QODEASSIST_CONFIG_DIR`` or the platform user config dir; the data root
(chats, logs) is ``$QODEASSIST_DATA_DIR`` or the platform user data dir; the cache root (what
the server generates and may delete) is ``$QODEASSIST_CACHE_DIR`` or the platform user cache
dir. The bundled ``agents/``
tree ships inside the wheel as ``qodeassist_lsp/bundled_agents``; in a source checkout it is the
repository's ``agents/`` folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "qodeassist"
PROJECT_DIR_NAME = ".qodeassist"
IGNORE_FILE_NAME = ".qodeassistignore"


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """Return ``$QODEASSIST_CACHE_DIR`` or the platform user cache dir."""
    env = os.environ if env is None else env
    root = env.get("QODEASSIST_CACHE_DIR") or platformdirs.user_cache_dir(APP_NAME)
    return Path(root).expanduser()


def bundled_root() -> Path:
    """Return the bundled ``agents/`` directory (inside the wheel or in a source checkout)."""
    package_dir = Path(__file__).resolve().parent.parent
    for candidate in (package_dir / "bundled_agents", package_dir.parent / "agents"):
        if (candidate / "agents").is_dir():
            return candidate
    raise FileNotFoundError(
        f"bundled agents not found next to {package_dir}; reinstall qodeassist-lsp"
    )


@dataclass(frozen=True)
class ConfigPaths:
    """The directories one configuration load reads from."""

    config_root: Path
    """User configuration: providers/, agents/, pipelines.toml, settings.toml, …"""
    data_root: Path
    """User data: chat history, logs."""
    bundled: Path
    """The read-only bundled tree (providers/, agents/, personas/, pipelines.toml)."""
    project: Path | None = None
    """The workspace folder, whose ``.qodeassist/`` layers on top of the user config."""

    @classmethod
    def discover(
        cls, project: Path | None = None, env: dict[str, str] | None = None
    ) -> ConfigPaths:
        """Resolve the roots from the environment, falling back to the platform directories."""
        env = dict(os.environ) if env is None else env
        config = env.get("QODEASSIST_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME)
        data = env.get("QODEASSIST_DATA_DIR") or platformdirs.user_data_dir(APP_NAME)
        return cls(
            config_root=Path(config).expanduser(),
            data_root=Path(data).expanduser(),
            bundled=bundled_root(),
            project=project,
        )

    @property
    def project_config(self) -> Path | None:
        """The per-project ``.qodeassist/`` folder, when a project is known."""
        return self.project / PROJECT_DIR_NAME if self.project else None

    @property
    def personas(self) -> Path:
        """The bundled persona and task prompt files."""
        return self.bundled / "personas"
