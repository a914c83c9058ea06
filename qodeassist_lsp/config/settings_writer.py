"""Write ``settings.toml`` files: set and unset keys, keeping the user's comments and order.

``config set`` / ``config unset`` and the ``qodeassist/settings/update`` request come here. The
file is edited through tomlkit, so comments, key order and formatting survive. Every change is
validated exactly as the loader validates the file (``merge_settings``) before anything is
written, and the write is atomic (a temporary file renamed over the old one): a refused change
or a crash mid-write leaves the previous file as it was. The whole read-modify-write holds the
folder's lock (`config.folder_lock`: no lock file is left in the user's folder), so writers in
other processes (two ``config set`` at once, a server's settings update) lose no change.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
from pydantic import BaseModel
from tomlkit.container import Container
from tomlkit.items import Table

from qodeassist_lsp.config.atomic import write_text_atomically
from qodeassist_lsp.config.folder_lock import FolderLockTimeout, folder_lock
from qodeassist_lsp.config.problems import closest
from qodeassist_lsp.config.settings import Settings
from qodeassist_lsp.config.settings_loader import (
    SettingsLayer,
    merge_settings,
    project_settings_path,
    snake_case,
    user_settings_path,
)
from qodeassist_lsp.wire.errors import QodeAssistError

Scope = Literal["user", "project"]
LOCK_TIMEOUT_S = 10.0
"""How long a write waits for another writer of the same folder before it is refused."""


class SettingsWriteError(QodeAssistError, ValueError):
    """A settings change was refused (unknown key, invalid value, unreadable file)."""


def settings_path(scope: Scope, config_root: Path, project: Path | None) -> Path:
    """Return the settings file of ``scope``; the project scope needs a workspace folder."""
    if scope == "user":
        return user_settings_path(config_root)
    if project is None:
        raise SettingsWriteError(
            "there is no project to write to: open a workspace folder (or pass --project DIR)"
        )
    return project_settings_path(project)


def parse_key(key: str, root: type[Settings] = Settings) -> tuple[str, ...]:
    """Split a dotted key (``completion.mode``, camelCase accepted) and check it is a setting.

    Only leaf keys are accepted: a whole section cannot be replaced by one value.
    """
    parts = tuple(snake_case(part.strip()) for part in key.split("."))
    if not key.strip() or any(not part for part in parts):
        raise SettingsWriteError(f"{key!r} is not a settings key like 'completion.mode'")
    model: type[BaseModel] = root
    for index, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            where = ".".join(parts[:index]) or "the top level"
            hint = closest(part, model.model_fields)
            suggestion = f"; did you mean {hint!r}?" if hint else "; see docs/settings.md"
            raise SettingsWriteError(f"unknown settings key {part!r} in {where}{suggestion}")
        annotation = field.annotation
        is_section = isinstance(annotation, type) and issubclass(annotation, BaseModel)
        last = index == len(parts) - 1
        if is_section and last:
            keys = ", ".join(annotation.model_fields)  # type: ignore[union-attr]
            raise SettingsWriteError(
                f"{'.'.join(parts)} is a section; name one of its keys: {keys}"
            )
        if not is_section and not last:
            raise SettingsWriteError(f"{'.'.join(parts[: index + 1])} has no sub-keys")
        if is_section:
            model = annotation  # type: ignore[assignment]
    return parts


def parse_value(text: str) -> Any:
    """Read a command-line value as a TOML value (``true``, ``42``, ``["a"]``), else a string."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def format_value(value: Any) -> str:
    """Show a value as it would be written in TOML (strings bare, for shell scripts)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return str(tomlkit.item(value).as_string())


def effective_value(settings: Settings, parts: tuple[str, ...]) -> Any:
    """Return the JSON-ready value of ``parts`` in ``settings``."""
    value: Any = settings.model_dump(mode="json")
    for part in parts:
        value = value[part]
    return value


@dataclass(frozen=True)
class SettingsFile:
    """One ``settings.toml`` (user or project) that can be read and changed in place."""

    path: Path
    scope: Scope = "user"
    model: type[Settings] = Settings
    """The settings model the file is checked against (`Settings.with_sections`)."""

    def read_document(self) -> tomlkit.TOMLDocument:
        """Return the parsed document (empty when the file does not exist yet)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return tomlkit.document()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise SettingsWriteError(
                f"{self.path}: cannot read the settings file ({reason})"
            ) from exc
        try:
            return tomlkit.parse(text)
        except tomlkit.exceptions.ParseError as exc:
            raise SettingsWriteError(
                f"{self.path}:{exc.line}: invalid TOML ({exc}); fix the syntax first, "
                "nothing was changed"
            ) from exc

    def values(self) -> dict[str, Any]:
        """Return the file's own tables as plain data (not merged with defaults)."""
        return self.read_document().unwrap()

    def update(self, changes: Mapping[str, Any]) -> Path:
        """Apply ``{dotted key: value}`` (``None`` unsets), validate, and write atomically."""
        if not changes:
            raise SettingsWriteError("no changes given")
        try:
            with folder_lock(self.path.parent, LOCK_TIMEOUT_S):
                return self._update(changes)
        except FolderLockTimeout as exc:
            raise SettingsWriteError(f"{exc}; nothing was written to {self.path}") from None

    def _update(self, changes: Mapping[str, Any]) -> Path:
        document = self.read_document()
        changed: list[tuple[str, ...]] = []
        for key, value in changes.items():
            parts = parse_key(key, self.model)
            changed.append(parts)
            if value is None:
                _remove(document, parts)
            else:
                _assign(document, parts, value)
        text = tomlkit.dumps(document)
        self._validate(text, changed)
        write_text_atomically(self.path, text)
        return self.path

    def _validate(self, text: str, changed: list[tuple[str, ...]]) -> None:
        data = tomllib.loads(text)
        layer = SettingsLayer(
            data=data, source=str(self.path), text=text, trusted=self.scope == "user"
        )
        _, problems = merge_settings([layer], self.model)
        keys = {".".join(parts) for parts in changed}
        refused = [p for p in problems if p.key in keys]
        if refused:
            # The loader's "the value is ignored (default: …)" tail is not true of a refusal.
            reasons = "; ".join(p.message.split("; the value is ignored")[0] for p in refused)
            raise SettingsWriteError(f"{reasons}. Nothing was written to {self.path}")


def _assign(document: tomlkit.TOMLDocument, parts: tuple[str, ...], value: Any) -> None:
    container: Container | Table = document
    for part in parts[:-1]:
        existing = container.get(part)
        if existing is None:
            container.add(part, tomlkit.table())
            existing = container[part]
        if not isinstance(existing, (Table, Container)):
            raise SettingsWriteError(
                f"{part} is a value in the settings file, not a table; fix the file by hand"
            )
        container = existing
    container[parts[-1]] = value


def _remove(document: tomlkit.TOMLDocument, parts: tuple[str, ...]) -> None:
    container: Any = document
    for part in parts[:-1]:
        container = container.get(part)
        if not isinstance(container, dict):
            return
    if parts[-1] in container:
        del container[parts[-1]]
