"""The building blocks of the settings models: the base section, choice and timeout types.

Shared by ``settings`` and the features' own sections (``features/<name>/settings.py``), which
declare themselves as a `SettingsSection` so that config never imports a feature.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Final, Generic, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

USER_ONLY: Final = "user_only"
"""``json_schema_extra`` flag: the key widens what the server may touch, so a project's own
``.qodeassist/settings.toml`` (which arrives with a cloned repository) may not set it."""

USER_ONLY_EXTRA: Final[dict[str, Any]] = {USER_ONLY: True}


def lower_choice(value: object) -> object:
    """Make enum-like strings case-insensitive (``"Manual"`` and ``"DEBUG"`` are accepted)."""
    return value.lower() if isinstance(value, str) else value


CompletionMode = Annotated[Literal["automatic", "manual"], BeforeValidator(lower_choice)]
"""When completions are requested: while typing, or only when explicitly invoked."""
MultiLinePolicy = Annotated[Literal["always", "never", "smart"], BeforeValidator(lower_choice)]
"""Whether a completion may span several lines."""
OutputHandler = Annotated[Literal["auto", "force", "raw"], BeforeValidator(lower_choice)]
"""How model output is post-processed before it becomes a suggestion."""
LogLevel = Annotated[Literal["error", "warning", "info", "debug"], BeforeValidator(lower_choice)]
"""The least severe log level that is written."""


class Section(BaseModel):
    """Common configuration of every settings model."""

    # strict: TOML and JSON both carry real types, so "30" for a number is a mistake to report,
    # not to guess at.
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")


S = TypeVar("S", bound=Section)


@dataclass(frozen=True, slots=True)
class SettingsSection(Generic[S]):
    """A ``[name]`` table of ``settings.toml`` that a feature declares beside itself."""

    name: str
    model: type[S]


ConnectTimeout = Annotated[
    float,
    Field(
        ge=0.1,
        le=300,
        description="Seconds to wait for the TCP/TLS connection to the provider.",
    ),
]
"""Connection timeout of a feature's provider requests."""
FirstByteTimeout = Annotated[
    float,
    Field(
        ge=0,
        le=3600,
        description="Seconds to wait for the first byte of the answer after sending the request "
        "(covers model loading on local servers). 0 = no limit.",
    ),
]
"""Time-to-first-byte timeout of a feature's provider requests."""
RequestTimeout = Annotated[
    float,
    Field(
        ge=0,
        le=3600,
        description="Inactivity timeout: abort when the provider sends nothing for this many "
        "seconds while streaming. 0 = no limit.",
    ),
]
"""Streaming inactivity timeout of a feature's provider requests."""
