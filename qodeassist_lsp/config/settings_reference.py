"""The settings reference: every key of ``settings.toml`` with its type, default and choices.

Read from the settings models themselves, for ``docs/settings.md``, editor schemas and the
loader's error messages, so the reference cannot drift from what is validated.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Annotated, Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from qodeassist_lsp.config.settings import Settings
from qodeassist_lsp.config.settings_types import USER_ONLY


@dataclasses.dataclass(frozen=True, slots=True)
class SettingInfo:
    """Reference data of one settings key, for documentation and editor schemas."""

    section: str
    key: str
    type: str
    default: str
    allowed: str
    description: str
    user_only: bool


def is_user_only(field: FieldInfo) -> bool:
    """Whether a field may only be set by the user, not by a project's settings file."""
    extra = field.json_schema_extra
    return isinstance(extra, dict) and extra.get(USER_ONLY) is True


def describe_settings(root: type[Settings] = Settings) -> list[SettingInfo]:
    """List every key of ``root`` (nested tables as ``section.table``) in declaration order."""
    infos: list[SettingInfo] = []
    for section, section_field in root.model_fields.items():
        model = section_field.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):
            _describe_model(model, section, infos)
    return infos


def _describe_model(model: type[BaseModel], section: str, out: list[SettingInfo]) -> None:
    nested: list[tuple[str, type[BaseModel]]] = []
    for key, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            nested.append((f"{section}.{key}", annotation))
            continue
        out.append(
            SettingInfo(
                section=section,
                key=key,
                type=type_name(annotation),
                default=default_text(field),
                allowed=allowed_text(field),
                description=field.description or "",
                user_only=is_user_only(field),
            )
        )
    for name, sub in nested:
        _describe_model(sub, name, out)


def type_name(annotation: Any) -> str:
    """Name a field type the way a TOML author thinks of it (``integer``, ``list of strings``)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin is Literal:
        return "string"
    if origin is list:
        (item,) = typing.get_args(annotation)
        return f"list of {type_name(item)}s"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(arg) for arg in typing.get_args(annotation))
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if annotation in names:
        return names[annotation]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    return str(annotation)


def default_text(field: FieldInfo) -> str:
    """Render the field's default as TOML."""
    value = field.get_default(call_default_factory=True)
    return _toml_value(value)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, BaseModel):
        pairs = (f"{k} = {_toml_value(v)}" for k, v in value.model_dump().items())
        return "{ " + ", ".join(pairs) + " }"
    return str(value)


def allowed_text(field: FieldInfo) -> str:
    """Describe the values a field accepts: a range, a choice, or "" for any value of its type."""
    choices = _literal_choices(field.annotation)
    if choices:
        return " | ".join(choices)
    low: object = None
    high: object = None
    min_length: int | None = None
    # pydantic stores Field(ge=…, le=…, min_length=…) as annotated-types markers.
    for item in field.metadata:
        low = getattr(item, "ge", low)
        high = getattr(item, "le", high)
        min_length = getattr(item, "min_length", min_length)
    if low is not None and high is not None:
        return f"{low}–{high}"
    if low is not None:
        return f"≥ {low}"
    if high is not None:
        return f"≤ {high}"
    if min_length:
        return "non-empty"
    return ""


def _literal_choices(annotation: Any) -> list[str]:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _literal_choices(typing.get_args(annotation)[0])
    if origin is Literal:
        return [str(arg) for arg in typing.get_args(annotation)]
    return []
