"""Changing a provider instance from the command line: ``providers override NAME KEY=VALUE``.

A bundled instance lives inside the installed package and is read-only; it is changed by a file
of the same name in ``<config>/providers/`` that says ``extends = "<its own name>"`` and sets
only the keys it changes (see ``providers``). An instance defined in the user's or the project's
own file is changed in that file. Files are edited through tomlkit (comments and order survive)
and written atomically; the configuration is then loaded again, and a change that does not load
is undone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from qodeassist_lsp.config.atomic import write_atomic, write_text_atomically
from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.definitions import Layer
from qodeassist_lsp.config.paths import ConfigPaths
from qodeassist_lsp.config.problems import ConfigProblem, did_you_mean
from qodeassist_lsp.config.providers import PROVIDER_SCHEMA, ProviderInstance
from qodeassist_lsp.config.settings_writer import parse_value
from qodeassist_lsp.wire.errors import QodeAssistError

OVERRIDABLE = sorted(PROVIDER_SCHEMA.keys - {"schema_version", "name", "extends", "abstract"})
"""The keys ``providers override`` sets."""
_HEADER = (
    "Changes the provider instance {name!r}: `extends` its own name, so only the keys below\n"
    "differ from it. Written by `qodeassist-lsp providers override`; edit freely."
)


class OverrideError(QodeAssistError, ValueError):
    """An override that cannot be written: unknown key, bad value, unreadable file."""


@dataclass(frozen=True)
class OverrideResult:
    """The file written and the keys it now sets."""

    path: Path
    keys: tuple[str, ...]


def parse_assignments(items: list[str]) -> dict[str, Any]:
    """Read ``KEY=VALUE`` items (VALUE a TOML value, else a string)."""
    values: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise OverrideError(f"{item!r} is not KEY=VALUE (e.g. url=http://localhost:11434)")
        if key not in OVERRIDABLE:
            raise OverrideError(
                f"{key!r} is not a provider instance key{did_you_mean(key, OVERRIDABLE)}; "
                f"one of: {', '.join(OVERRIDABLE)}"
            )
        values[key] = text.strip() if key == "url" else parse_value(text.strip())
    return values


def override_path(instance: ProviderInstance, config_root: Path) -> Path:
    """Return the file that changes ``instance``: its own, else a same-name user file."""
    if instance.layer is not Layer.BUNDLED and instance.source is not None:
        return instance.source
    stem = instance.source.stem if instance.source is not None else _slug(instance.name)
    path = config_root / "providers" / f"{stem}.toml"
    number = 1
    # Never edit another instance's file that happens to have the bundled file's name.
    while path.exists() and _name_in(path) not in (None, instance.name):
        number += 1
        path = path.with_name(f"{stem}_{number}.toml")
    return path


def write_override(
    instance: ProviderInstance, paths: ConfigPaths, values: dict[str, Any]
) -> OverrideResult:
    """Set ``values`` on ``instance`` in the user's file; undo it when it does not load."""
    path = override_path(instance, paths.config_root)
    try:
        before: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
    except (OSError, UnicodeDecodeError) as exc:
        raise OverrideError(f"{path}: cannot read it ({exc})") from exc
    try:
        document = tomlkit.parse(before) if before is not None else tomlkit.document()
    except tomlkit.exceptions.ParseError as exc:
        raise OverrideError(f"{path}:{exc.line}: invalid TOML ({exc}); fix it first") from exc
    if before is None:
        for line in _HEADER.format(name=instance.name).splitlines():
            document.add(tomlkit.comment(line))
        document["schema_version"] = 1
        document["name"] = instance.name
        document["extends"] = instance.name
    for key, value in values.items():
        document[key] = value
    write_text_atomically(path, tomlkit.dumps(document))
    problems = _problems_of(paths, path)
    if any(p.severity == "error" for p in problems):
        if before is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, before.encode("utf-8"))
        shown = "; ".join(p.format() for p in problems)
        raise OverrideError(f"not written, the change does not load: {shown}")
    keys = tuple(k for k in document if k not in ("schema_version", "name", "extends"))
    return OverrideResult(path, keys)


def _problems_of(paths: ConfigPaths, path: Path) -> list[ConfigProblem]:
    config = load_configuration(paths)
    target = str(path.resolve())
    return [p for p in config.problems if p.file and str(Path(p.file).resolve()) == target]


def _name_in(path: Path) -> str | None:
    try:
        name = tomlkit.parse(path.read_text(encoding="utf-8")).get("name")
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.ParseError):
        return ""
    return str(name) if name is not None else None


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_") or "provider"
