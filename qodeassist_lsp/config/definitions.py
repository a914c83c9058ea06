"""Layered TOML definitions with ``extends``: the machinery agents and providers share.

A definition is one TOML file naming one thing. Files come in layers (bundled, user, project);
each is read, gated on ``schema_version``, checked for unknown keys, and then ``extends`` chains
are resolved with the deep-merge rule. A broken file produces problems and is skipped; it never
stops the others from loading.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from qodeassist_lsp.config.merge import deep_merge
from qodeassist_lsp.config.problems import ConfigProblem, did_you_mean
from qodeassist_lsp.config.toml_source import TomlFile, read_toml

SUPPORTED_SCHEMA_VERSION = 1


class Layer(enum.StrEnum):
    """Where a definition came from; later layers sit on top of earlier ones."""

    BUNDLED = "bundled"
    USER = "user"
    PROJECT = "project"


@dataclass(frozen=True)
class Definition:
    """One parsed definition file, before ``extends`` is resolved."""

    name: str
    data: dict[str, Any]
    source: TomlFile
    layer: Layer


@dataclass(frozen=True)
class Resolved:
    """A definition with its ``extends`` chain merged in."""

    name: str
    data: dict[str, Any]
    source: TomlFile
    layer: Layer
    origins: dict[str, TomlFile] = field(default_factory=dict)
    """For each top-level key, the file that last set it (for error positions)."""
    chain: tuple[str, ...] = ()

    def problem(self, severity: str, message: str, *key_path: str) -> ConfigProblem:
        """Build a problem located at ``key_path`` in whichever file set that key."""
        origin = self.origins.get(key_path[0], self.source) if key_path else self.source
        return origin.problem(severity, message, *key_path)


@dataclass(frozen=True)
class DefinitionSchema:
    """What a kind of definition may contain."""

    kind: str
    """``agent`` or ``provider instance``, used in messages."""
    keys: frozenset[str]
    tables: Mapping[str, frozenset[str]]
    """Sub-keys allowed inside fixed tables such as ``[match]`` or ``[launch]``."""
    free_tables: frozenset[str] = frozenset()
    """Tables whose contents are free-form (``[body]``, ``extras``)."""
    max_depth: int = 32
    non_inherited: frozenset[str] = frozenset({"name", "abstract", "hidden", "extends"})


def toml_files(directory: Path | None) -> list[Path]:
    """Return the ``*.toml`` files of ``directory`` in alphabetical order (none if absent)."""
    if directory is None or not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix == ".toml" and p.is_file())


def read_definition(
    path: Path, layer: Layer, schema: DefinitionSchema, problems: list[ConfigProblem]
) -> Definition | None:
    """Read one definition file, recording problems; ``None`` when it cannot be used."""
    parsed = read_toml(path)
    if isinstance(parsed, ConfigProblem):
        problems.append(parsed)
        return None
    data = parsed.data
    version = data.get("schema_version", SUPPORTED_SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        problems.append(
            parsed.problem("error", "schema_version must be a positive integer", "schema_version")
        )
        return None
    if version > SUPPORTED_SCHEMA_VERSION:
        problems.append(
            parsed.problem(
                "error",
                f"schema_version {version} is newer than this qodeassist-lsp understands "
                f"({SUPPORTED_SCHEMA_VERSION}); upgrade with `pip install -U qodeassist-lsp`",
                "schema_version",
            )
        )
        return None
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(
            parsed.problem(
                "error", f'{schema.kind} has no name; add name = "…" at the top', "name", line=1
            )
        )
        return None
    problems.extend(_unknown_keys(parsed, schema))
    return Definition(name=name.strip(), data=data, source=parsed, layer=layer)


def _unknown_keys(source: TomlFile, schema: DefinitionSchema) -> Iterable[ConfigProblem]:
    for key, value in source.data.items():
        if key in schema.tables:
            if not isinstance(value, dict):
                yield source.problem("error", f"[{key}] must be a table", key)
                continue
            allowed = schema.tables[key]
            for sub in value:
                if sub not in allowed:
                    yield source.problem(
                        "warning", _unknown(f"{key}.{sub}", sub, allowed), key, sub
                    )
        elif key not in schema.keys and key not in schema.free_tables:
            yield source.problem("warning", _unknown(key, key, schema.keys), key)


def _unknown(shown: str, key: str, allowed: Iterable[str]) -> str:
    hint = did_you_mean(key, list(allowed))
    return f"unknown key {shown!r} is ignored{hint}"


def resolve_all(
    definitions: Mapping[str, Definition], schema: DefinitionSchema, problems: list[ConfigProblem]
) -> dict[str, Resolved]:
    """Resolve every ``extends`` chain; broken chains are reported and left out."""
    resolved: dict[str, Resolved] = {}
    failed: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> Resolved | None:
        if name in resolved:
            return resolved[name]
        if name in failed:
            return None
        definition = definitions[name]
        parent_name = definition.data.get("extends")
        if parent_name is None:
            result = Resolved(
                name,
                _own(definition),
                definition.source,
                definition.layer,
                dict.fromkeys(definition.data, definition.source),
                (name,),
            )
            resolved[name] = result
            return result
        error = _extends_error(definition, parent_name, trail, definitions, schema)
        parent = None
        if error is None:
            parent = visit(parent_name, (*trail, name))
            if parent is None:
                error = f"{schema.kind} {name!r} extends {parent_name!r}, which failed to load"
            elif len(parent.chain) > schema.max_depth:
                error = _too_deep(schema, name)
        if error is not None or parent is None:
            problems.append(definition.source.problem("error", error or "", "extends"))
            failed.add(name)
            return None
        inherited = {k: v for k, v in parent.data.items() if k not in schema.non_inherited}
        origins = {k: f for k, f in parent.origins.items() if k not in schema.non_inherited}
        origins.update(dict.fromkeys(definition.data, definition.source))
        result = Resolved(
            name,
            deep_merge(inherited, _own(definition)),
            definition.source,
            definition.layer,
            origins,
            (*parent.chain, name),
        )
        resolved[name] = result
        return result

    for name in definitions:
        visit(name, ())
    return resolved


def _own(definition: Definition) -> dict[str, Any]:
    data = dict(definition.data)
    data["name"] = definition.name
    return data


def _extends_error(
    definition: Definition,
    parent: Any,
    trail: tuple[str, ...],
    definitions: Mapping[str, Definition],
    schema: DefinitionSchema,
) -> str | None:
    kind, name = schema.kind, definition.name
    if not isinstance(parent, str) or not parent:
        return f"extends must be the name of another {kind}"
    if parent == name or parent in trail:
        loop = trail[trail.index(parent) :] if parent in trail else ()
        cycle = " -> ".join((*loop, name, parent))
        return f"{kind} {name!r} extends itself through a cycle ({cycle}); break the cycle"
    if len(trail) + 1 > schema.max_depth:
        return _too_deep(schema, name)
    if parent not in definitions:
        hint = did_you_mean(parent, list(definitions))
        return f"{kind} {name!r} extends unknown {kind} {parent!r}{hint}"
    return None


def _too_deep(schema: DefinitionSchema, name: str) -> str:
    return f"{schema.kind} {name!r}: extends chain deeper than {schema.max_depth}; flatten it"


def validation_problems(resolved: Resolved, exc: pydantic.ValidationError) -> list[ConfigProblem]:
    """Turn a pydantic error into problems located in the file that set each bad key."""
    out = []
    for error in exc.errors(include_url=False):
        path = tuple(str(part) for part in error["loc"])
        message = error["msg"]
        if error["type"] == "missing":
            message = f"{resolved.name!r} has no {path[-1]}; add it or extend an agent that sets it"
        elif path:
            message = f"{'.'.join(path)}: {message}"
        out.append(resolved.problem("error", message, *path))
    return out
