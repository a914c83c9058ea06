"""A marshal file of compiled code objects, shared by the start-up caches.

Two things the server compiles on every start are cached in the cache root: the code attrs
generates for lsprotocol's classes (``lsp/startup_cache.py``) and the Jinja code of the agents'
``[body]`` templates (``config/templating.py``). Both keep their code objects in one
:class:`CodeTable`: a dict read once from a file that starts with the interpreter's bytecode magic
number, looked up by a hash key, and written back atomically (a temporary file renamed over the
old one) only when something had to be compiled. The file then holds the entries this run used,
plus at most ``keep_unused`` older ones, so it never grows without bound.
``QODEASSIST_NO_STARTUP_CACHE=1`` turns both caches off. Anything unexpected (a missing, corrupt,
foreign or old file, a read-only directory) is an empty table or an unwritten file, never an error:
a cache is never worth failing the server's start for.
"""

from __future__ import annotations

import importlib.util
import logging
import marshal
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from qodeassist_lsp.config.atomic import write_atomic
from qodeassist_lsp.config.paths import cache_root

_log = logging.getLogger(__name__)

DISABLE_ENV: Final = "QODEASSIST_NO_STARTUP_CACHE"
"""Environment variable that turns the start-up caches off when set to ``1``."""

MISSING: Final = object()
"""What :meth:`CodeTable.get` returns for a key the table lacks."""


def cache_disabled(env: Mapping[str, str] | None = None) -> bool:
    """Return whether ``QODEASSIST_NO_STARTUP_CACHE`` turns the start-up caches off."""
    env = os.environ if env is None else env
    return env.get(DISABLE_ENV, "").strip() not in ("", "0")


def cache_file(kind: str, versions: str, env: Mapping[str, str] | None = None) -> Path | None:
    """Return ``<cache root>/<kind>-<cache tag>-<versions>.marshal``, or ``None`` when off.

    ``versions`` names the library versions the cached code depends on (``attrs-25.3.0``); the
    interpreter's cache tag, since bytecode depends on it.
    """
    if cache_disabled(env):
        return None
    tag = sys.implementation.cache_tag
    if not tag:  # the interpreter keeps no bytecode caches (it may be None): neither do we
        return None
    return cache_root(env) / f"{kind}-{tag}-{versions}.marshal"


class CodeTable:
    """Entries read from one marshal file; written back with those used if any were added.

    ``path=None`` is a table that is always empty and never written. Safe to share between
    threads: several may look up, add and save at once.
    """

    def __init__(self, path: Path | None, keep_unused: int = 0) -> None:
        self.path = path
        self._keep_unused = keep_unused
        self._stored = read_table(path) if path is not None else {}
        self._used: dict[bytes, object] = {}
        self._added = 0
        self._lock = threading.Lock()
        self.loaded = len(self._stored)
        """Entries read from the file."""
        self.hits = 0
        """Lookups the file answered."""

    @property
    def added(self) -> int:
        """Entries compiled and added since the table was read or last saved."""
        return self._added

    def get(self, key: bytes, kinds: tuple[type, ...]) -> object:
        """Return the stored value of ``key`` if it is one of ``kinds``, else :data:`MISSING`."""
        with self._lock:
            value = self._used.get(key, MISSING)
            if value is MISSING:
                value = self._stored.get(key, MISSING)
            if value is MISSING or not isinstance(value, kinds):
                return MISSING
            self._used[key] = value
            self.hits += 1
            return value

    def add(self, key: bytes, value: object) -> None:
        """Record a freshly compiled ``value`` (a code object, or anything marshal writes)."""
        with self._lock:
            self._used[key] = value
            self._added += 1

    def save(self) -> bool:
        """Write the table back if anything was added; return whether the file was written."""
        with self._lock:
            if self.path is None or not self._added:
                return False
            table = dict(self._used)
            spare = self._keep_unused
            for key, value in self._stored.items():
                if spare <= 0:
                    break
                if key not in table:
                    table[key] = value
                    spare -= 1
            written = write_table(self.path, table)
            if written:
                self._added = 0
            return written


def read_table(path: Path) -> dict[bytes, object]:
    """Return the dict stored in ``path``, or an empty one for a missing or foreign file."""
    magic = importlib.util.MAGIC_NUMBER
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(magic):
        return {}
    try:
        table = marshal.loads(memoryview(data)[len(magic) :])
    except Exception:  # EOFError, ValueError, TypeError … on a truncated or foreign file
        return {}
    if not isinstance(table, dict):
        return {}
    return {key: value for key, value in table.items() if isinstance(key, bytes)}


def write_table(path: Path, table: Mapping[bytes, object]) -> bool:
    """Replace ``path`` atomically with ``table``; return ``False`` (logged) when that fails."""
    try:
        write_atomic(path, importlib.util.MAGIC_NUMBER + marshal.dumps(dict(table)))
    except Exception as error:  # a cache is never worth failing the server's start for
        _log.debug("start-up cache not written to %s: %s", path, error)
        return False
    return True
