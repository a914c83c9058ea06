"""Read ``settings.toml`` files and editor settings, validate them key by key, and layer them.

Layering, lowest first: defaults ← ``<config>/settings.toml`` ← ``<workspace>/.qodeassist/
settings.toml`` ← the editor's settings (``initializationOptions`` / ``workspace/configuration``).
Each layer is checked on its own so every problem names the file, line and key it came from; a
bad value is dropped (the lower layers' value or the default applies) and everything else in the
layer still counts. Nothing here raises on bad input: problems are returned as ``ConfigProblem``.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from qodeassist_lsp.config.merge import deep_merge
from qodeassist_lsp.config.paths import PROJECT_DIR_NAME
from qodeassist_lsp.config.problems import ConfigProblem, Severity, closest
from qodeassist_lsp.config.settings import (
    Settings,
)
from qodeassist_lsp.config.settings_reference import (
    allowed_text,
    default_text,
    is_user_only,
    type_name,
)
from qodeassist_lsp.config.toml_source import find_key_line

__all__ = [
    "EDITOR_SOURCE",
    "PROJECT_DIR_NAME",
    "SETTINGS_FILE_NAME",
    "SettingsLayer",
    "load_settings",
    "merge_settings",
    "project_settings_path",
    "read_settings_file",
    "snake_case",
    "user_settings_path",
]

SETTINGS_FILE_NAME: Final = "settings.toml"
"""File name of the settings file, in the config root and in a project's ``.qodeassist/``."""

EDITOR_SOURCE: Final = "editor settings"
"""How problems in the editor-supplied layer are located (it has no file)."""

_MAX_SHOWN: Final = 60


@dataclasses.dataclass(frozen=True, slots=True)
class SettingsLayer:
    """One source of settings values, in the section structure of ``settings.toml``."""

    data: Mapping[str, Any]
    source: str | None = None
    """File path or label used to locate problems."""
    text: str | None = None
    """The TOML text ``data`` was parsed from, used to find the line of a key."""
    trusted: bool = True
    """False for a project's own file: it may not set user-only keys (see ``USER_ONLY``)."""
    camel_case: bool = False
    """Accept ``camelCase`` keys and treat ``null`` as unset (editor settings are JSON)."""


def user_settings_path(config_dir: Path) -> Path:
    """Where the user's settings file lives in a config root."""
    return config_dir / SETTINGS_FILE_NAME


def project_settings_path(workspace_dir: Path) -> Path:
    """Where a project's settings overrides live."""
    return workspace_dir / PROJECT_DIR_NAME / SETTINGS_FILE_NAME


def load_settings(
    config_dir: Path | None,
    workspace_dir: Path | None = None,
    editor: object = None,
    model: type[Settings] = Settings,
) -> tuple[Settings, list[ConfigProblem]]:
    """Merge defaults, the user file, the project file and editor settings (in that order).

    ``model`` is `Settings.with_sections` of the features' sections (core sections only without).

    ``editor`` is the settings object the editor sent (``initializationOptions`` or the answer to
    ``workspace/configuration``), with the section structure of ``settings.toml``.
    """
    layers: list[SettingsLayer] = []
    problems: list[ConfigProblem] = []
    files = []
    if config_dir is not None:
        files.append((user_settings_path(config_dir), True))
    if workspace_dir is not None:
        files.append((project_settings_path(workspace_dir), False))
    for path, trusted in files:
        layer, read_problems = read_settings_file(path, trusted=trusted)
        problems.extend(read_problems)
        if layer is not None:
            layers.append(layer)
    if isinstance(editor, Mapping):
        layers.append(SettingsLayer(data=editor, source=EDITOR_SOURCE, camel_case=True))
    elif editor is not None:
        problems.append(
            ConfigProblem(
                "error",
                'editor settings must be an object of sections such as {"completion": {...}}, '
                f"not {_shown(editor)}; ignored",
                file=EDITOR_SOURCE,
            )
        )
    settings, merge_problems = merge_settings(layers, model)
    return settings, problems + merge_problems


def read_settings_file(
    path: Path, *, trusted: bool = True
) -> tuple[SettingsLayer | None, list[ConfigProblem]]:
    """Parse one settings file; a missing file is no layer and no problem."""
    source = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return None, [
            ConfigProblem(
                "error",
                f"cannot read the settings file ({reason}); it is ignored until it is a "
                "readable file",
                file=source,
            )
        ]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [
            ConfigProblem(
                "error",
                "the settings file is not valid UTF-8; save it as UTF-8 (it is ignored until then)",
                file=source,
                line=line,
            )
        ]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = re.search(r"\(at line (\d+), column \d+\)", message)
        detail = message[: match.start()].strip() if match else message
        return None, [
            ConfigProblem(
                "error",
                f"invalid TOML: {detail}; fix the syntax (the whole file is ignored until then)",
                file=source,
                line=int(match.group(1)) if match else None,
            )
        ]
    return SettingsLayer(data=data, source=source, text=text, trusted=trusted), []


def merge_settings(
    layers: Iterable[SettingsLayer], model: type[Settings] = Settings
) -> tuple[Settings, list[ConfigProblem]]:
    """Validate each layer, then apply the valid values in order over the defaults.

    Tables merge key by key; lists and scalars of a higher layer replace the lower value.
    """
    problems: list[ConfigProblem] = []
    merged: dict[str, Any] = {}
    for layer in layers:
        layer_problems: list[ConfigProblem] = []
        accepted = _Checker(layer, layer_problems, model).check(model, layer.data, ())
        merged = deep_merge(merged, dict(accepted))
        problems.extend(sorted(layer_problems, key=lambda p: p.line or 0))
    try:
        return model.model_validate(merged), problems
    except ValidationError as exc:  # pragma: no cover - every layer was validated on its own
        problems.append(
            ConfigProblem("error", f"settings could not be combined ({exc}); using defaults")
        )
        return model(), problems


class _Checker:
    """Validates one layer against the models, collecting problems and the values that passed."""

    def __init__(
        self, layer: SettingsLayer, problems: list[ConfigProblem], root: type[Settings]
    ) -> None:
        self._layer = layer
        self._problems = problems
        self._root = root

    def check(
        self, model: type[BaseModel], data: Mapping[str, Any], path: tuple[str, ...]
    ) -> dict[str, Any]:
        """Return the subset of ``data`` (snake_case keys) that ``model`` accepts."""
        fields = model.model_fields
        accepted: dict[str, Any] = {}
        for raw_key, value in data.items():
            key = snake_case(str(raw_key)) if self._layer.camel_case else str(raw_key)
            if value is None and self._layer.camel_case:
                continue
            field = fields.get(key)
            if field is None:
                if not path and not isinstance(value, Mapping):
                    self._outside_section(str(raw_key))
                else:
                    self._unknown(str(raw_key), fields, path)
                continue
            if not self._layer.trusted and is_user_only(field):
                self._warn(
                    f"{_dotted(path, key)} may only be set in the user settings file or the "
                    "editor settings, not by a project (it widens what the server may touch); "
                    "ignored",
                    (*path, key),
                )
                continue
            sub_model = _nested_model(field)
            if sub_model is None:
                accepted[key] = _snake_case_items(value) if self._layer.camel_case else value
            elif isinstance(value, Mapping):
                accepted[key] = self.check(sub_model, value, (*path, key))
            else:
                self._error(
                    f"{_table_name((*path, key))} must be a table of keys, not "
                    f"{_shown(value)}; ignored",
                    (*path, key),
                )
        return self._drop_invalid(model, accepted, path)

    def _drop_invalid(
        self, model: type[BaseModel], accepted: dict[str, Any], path: tuple[str, ...]
    ) -> dict[str, Any]:
        # Each round removes at least one key, so this ends after len(accepted) rounds at most.
        while True:
            try:
                model.model_validate(accepted)
            except ValidationError as exc:
                by_key: dict[str, list[dict[str, Any]]] = {}
                for error in exc.errors():
                    loc = error["loc"]
                    if loc and isinstance(loc[0], str) and loc[0] in accepted:
                        by_key.setdefault(loc[0], []).append(dict(error))
                if not by_key:
                    self._error(f"{_table_name(path)} is invalid ({exc}); ignored", path)
                    return {}
                for key, errors in by_key.items():
                    self._invalid_value(
                        model.model_fields[key], key, accepted.pop(key), errors, path
                    )
            else:
                return accepted

    def _invalid_value(
        self,
        field: FieldInfo,
        key: str,
        value: object,
        errors: list[dict[str, Any]],
        path: tuple[str, ...],
    ) -> None:
        reasons = []
        for error in errors:
            where = "".join(
                f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"][1:]
            ).lstrip(".")
            message = str(error["msg"]).removeprefix("Value error, ")
            message = message[:1].lower() + message[1:]
            reasons.append(f"{where}: {message}" if where else message)
        default = default_text(field)
        if len(default) > _MAX_SHOWN:
            default = "see docs/settings.md"
        location = (*path, key)
        # Point at the offending list item or nested key when the error is that precise.
        loc_with_item: tuple[str | int, ...] = (*location, *errors[0]["loc"][1:])
        self._error(
            f"{_dotted(path, key)} = {_shown(value)} is invalid: {'; '.join(reasons)}. "
            f"Expected {_expected(field)}; the value is ignored (default: {default})",
            location,
            line_path=loc_with_item,
        )

    def _unknown(
        self, raw_key: str, fields: Mapping[str, FieldInfo], path: tuple[str, ...]
    ) -> None:
        suggestion = closest(raw_key, fields)
        if not path:
            message = f"unknown section [{raw_key}] (ignored)"
            hint = f"; did you mean [{suggestion}]?" if suggestion else ""
            valid = ", ".join(f"[{name}]" for name in fields)
            self._warn(f"{message}{hint or f'; valid sections: {valid}'}", (raw_key,))
            return
        hint = f"; did you mean {suggestion!r}?" if suggestion else "; see docs/settings.md"
        self._warn(
            f"unknown key {raw_key!r} in {_table_name(path)} (ignored){hint}", (*path, raw_key)
        )

    def _outside_section(self, raw_key: str) -> None:
        homes = [
            name
            for name, field in self._root.model_fields.items()
            if (model := _nested_model(field)) is not None and raw_key in model.model_fields
        ]
        hint = f"; it belongs in [{homes[0]}]" if len(homes) == 1 else ""
        if len(homes) > 1:
            hint = "; it exists in " + ", ".join(f"[{home}]" for home in homes)
        self._warn(
            f"key {raw_key!r} is outside any section (ignored){hint or '; see docs/settings.md'}",
            (raw_key,),
        )

    def _warn(self, message: str, path: tuple[str, ...]) -> None:
        self._add("warning", message, path, path)

    def _error(
        self, message: str, path: tuple[str, ...], line_path: tuple[str | int, ...] | None = None
    ) -> None:
        self._add("error", message, path, line_path if line_path is not None else path)

    def _add(
        self,
        severity: Severity,
        message: str,
        path: tuple[str, ...],
        line_path: tuple[str | int, ...],
    ) -> None:
        line = None
        if self._layer.text is not None:
            line = find_key_line(self._layer.text, line_path)
        self._problems.append(
            ConfigProblem(
                severity,
                message,
                file=self._layer.source,
                line=line,
                key=".".join(path) or None,
            )
        )


def _expected(field: FieldInfo) -> str:
    """Say what a field accepts, e.g. "an integer in 0–10000" or "one of auto | force | raw"."""
    allowed = allowed_text(field)
    kind = type_name(field.annotation)
    if "|" in allowed:
        return f"one of {allowed}"
    if allowed == "non-empty":
        return f"a non-empty {kind}"
    article = "an" if kind[:1] in "aeiou" else "a"
    if not allowed:
        return f"{article} {kind}"
    return f"{article} {kind} in {allowed}" if "–" in allowed else f"{article} {kind} {allowed}"


def _nested_model(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def snake_case(name: str) -> str:
    """Return ``name`` in snake_case (editor settings arrive as camelCase JSON keys)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _snake_case_items(value: object) -> object:
    """Convert the keys of tables inside a list (e.g. ``custom_languages`` from JSON)."""
    if isinstance(value, list):
        return [
            {snake_case(str(k)): v for k, v in item.items()} if isinstance(item, Mapping) else item
            for item in value
        ]
    return value


def _dotted(path: tuple[str, ...], key: str) -> str:
    return ".".join((*path, key))


def _table_name(path: tuple[str, ...]) -> str:
    return "[" + ".".join(path) + "]"


def _shown(value: object) -> str:
    if isinstance(value, str):
        text = repr(value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, Mapping):
        text = "a table"
    else:
        text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"
