"""Cache the code attrs compiles at import time, so the server answers ``initialize`` sooner.

Importing ``lsprotocol.types`` builds ~550 attrs classes, and for each attrs generates the source
of ``__init__``, ``__eq__``, ``__repr__``, ``__hash__`` … and ``compile()``s it: about 250 of the
~400 ms the import takes, most of the time from process start to the ``initialize`` answer. All
of those compiles go through ``attr._make._compile_and_eval``. While :func:`attrs_code_cache` is
active that function is replaced by one that first looks the code object up in a marshal file,
keyed by a SHA-1 of the generated source, its file name and the compile flags; a warm start
compiles nothing. The classes are the same: a cached code object is what ``compile()`` returns
for the same source, file name and flags, and it is evaluated with the same globals and locals.
A frozen (hashable) class's ``__hash__`` source embeds a per-process random number, so it never
hits and, if compiled under the cache, makes every start rewrite the file: wrap only imports
whose classes are not frozen (``lsprotocol.types`` has none; attrs' and cattrs' own do).

The file lives in the cache root (``$QODEASSIST_CACHE_DIR``, else the platform user cache dir),
is named after the interpreter's cache tag and the attrs version, starts with the interpreter's
bytecode magic number and holds only the entries the last run that compiled something used, so
it never grows without bound. It is replaced atomically. ``QODEASSIST_NO_STARTUP_CACHE=1`` turns
the cache off. Anything unexpected (no such attrs function, another signature, a missing,
corrupt or foreign file, a read-only directory) means a plain, uncached import. The file itself is
a :class:`~qodeassist_lsp.config.code_cache.CodeTable`, shared with the body-template cache.
"""

from __future__ import annotations
import __future__

import contextlib
import hashlib
import importlib
import inspect
import os
import sys
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qodeassist_lsp.config.code_cache import CodeTable, cache_file

_ATTRS_MODULE = "attr._make"
_TARGET = "_compile_and_eval"
_EXPECTED_PARAMETERS = ("script", "globs", "locs", "filename")


@dataclass
class CacheStats:
    """What one :func:`attrs_code_cache` block did (for tests and diagnostics)."""

    active: bool = False
    """The attrs compile function was replaced."""
    loaded: int = 0
    """Entries read from the cache file."""
    hits: int = 0
    """Code objects taken from the cache."""
    misses: int = 0
    """Code objects compiled because the cache lacked them."""
    written: bool = False
    """The cache file was rewritten on exit."""


def default_cache_path(env: Mapping[str, str] | None = None) -> Path | None:
    """Return the cache file for this interpreter and attrs, or ``None`` when disabled."""
    return cache_file("attrs-code", f"attrs-{_attrs_version()}", env)


@contextlib.contextmanager
def attrs_code_cache(path: Path | None) -> Iterator[CacheStats]:
    """While active, attrs takes its generated code objects from *path* (``None``: off)."""
    stats = CacheStats()
    make = _attrs_make() if path is not None else None
    original = getattr(make, _TARGET, None)
    if path is None or make is None or not _expected_signature(original):
        yield stats
        return
    assert original is not None  # checked by _expected_signature
    flags = _compile_flags(make)
    salt = f"{flags}\0{sys.flags.optimize}\0".encode()
    table = CodeTable(path)
    stats.loaded = table.loaded

    def compile_and_eval(
        script: str,
        globs: dict[str, Any] | None,
        locs: Mapping[str, object] | None = None,
        filename: str = "",
    ) -> None:
        if globs is None:  # would evaluate in the caller's namespace: leave that to attrs
            original(script, globs, locs, filename)
            return
        key = hashlib.sha1(
            salt
            + filename.encode("utf-8", "surrogatepass")
            + b"\0"
            + script.encode("utf-8", "surrogatepass"),
            usedforsecurity=False,
        ).digest()
        code = table.get(key, (types.CodeType,))
        if isinstance(code, types.CodeType):
            stats.hits += 1
        else:
            code = compile(script, filename, "exec", flags=flags, dont_inherit=True)
            table.add(key, code)
            stats.misses += 1
        eval(code, globs, locs)

    setattr(make, _TARGET, compile_and_eval)
    stats.active = True
    try:
        yield stats
    finally:
        if getattr(make, _TARGET, None) is compile_and_eval:
            setattr(make, _TARGET, original)
    stats.written = table.save()


def _attrs_make() -> types.ModuleType | None:
    try:
        return importlib.import_module(_ATTRS_MODULE)
    except ImportError:
        return None


def _expected_signature(function: object) -> bool:
    if not callable(function):
        return False
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return tuple(parameters) == _EXPECTED_PARAMETERS


def _compile_flags(make: types.ModuleType) -> int:
    """Return the flags attrs' own ``compile()`` inherits from its module's future imports."""
    if getattr(make, "annotations", None) is __future__.annotations:
        return int(__future__.annotations.compiler_flag)
    return 0


def _attrs_version() -> str:
    """Return the attrs version from its dist-info name (importlib.metadata costs ~50 ms)."""
    make = _attrs_make()
    location = getattr(make, "__file__", None)
    if location is None:
        return "unknown"
    site = Path(location).parent.parent
    try:
        names = sorted(os.listdir(site))
    except OSError:
        return "unknown"
    for name in names:
        if name.startswith("attrs-") and name.endswith(".dist-info"):
            return name.removeprefix("attrs-").removesuffix(".dist-info")
    return "unknown"
