"""Provider instances: which server to talk to, with which ``client_api``, and how to start it.

Bundled instances ship in ``agents/providers``; a user or project file with the same ``name``
replaces the bundled one (unlike agents). Such a file that says ``extends = "<its own name>"``
instead changes only the keys it sets: it extends the definition of that name in the layer below
(the override ``qodeassist-lsp providers override NAME url=…`` writes). ``extends`` and
``abstract`` otherwise work as for agents, with a maximum depth of 16.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pydantic

from qodeassist_lsp.config.client_apis import CLIENT_APIS, MODEL_SERVER_APIS, ClientApi
from qodeassist_lsp.config.definitions import (
    Definition,
    DefinitionSchema,
    Layer,
    Resolved,
    read_definition,
    resolve_all,
    toml_files,
    validation_problems,
)
from qodeassist_lsp.config.merge import deep_merge
from qodeassist_lsp.config.problems import ConfigProblem, closest
from qodeassist_lsp.wire.urls import is_loopback_host

_STRICT = pydantic.ConfigDict(extra="ignore", frozen=True, strict=True)


class LaunchConfig(pydantic.BaseModel):
    """How to start a local model server for an instance (``[launch]``)."""

    model_config = _STRICT

    command: str = pydantic.Field(min_length=1)
    """Program to run; ``${VAR}`` expands from ``[launch.env]``, PROVIDER_NAME, the environment."""
    args: list[str] = []
    cwd: str | None = None
    """Working directory; the user's home when absent."""
    ready_url: str | None = None
    """Polled with GET until it answers 2xx; an already answering server is adopted."""
    ready_timeout_s: float = pydantic.Field(default=30.0, ge=1.0)
    auto_start: bool = False
    """Start the server on demand when an agent of this instance is first used."""
    detach: bool = False
    """Leave the server running when qodeassist-lsp exits."""
    env: dict[str, str] = {}


class ProviderInstance(pydantic.BaseModel):
    """A resolved, concrete provider instance."""

    model_config = _STRICT

    schema_version: int = 1
    name: str
    client_api: str
    description: str = ""
    url: str = ""
    """The server's base URL (HTTP ``client_api`` values; a process one has ``command``)."""
    command: tuple[str, ...] = ()
    """A process ``client_api``'s program and arguments; its first item is looked up on PATH."""
    env: dict[str, str] = {}
    """Extra environment of the ``command`` process (``[env]``)."""
    package: str = ""
    """The npm package that provides ``command`` (named when the program is missing)."""
    max_processes: int = pydantic.Field(default=4, ge=1)
    """How many ``command`` processes (one per chat) stay running; the oldest is closed."""
    max_concurrent: int = pydantic.Field(default=0, ge=0)
    """How many pool requests it serves at once; 0: the default (``concurrency_limit``)."""
    api_key_ref: str = ""
    """Opaque id of the (first) key in the secrets store (env var, ``.env`` or OS keyring)."""
    api_key_env: str = ""
    """Environment variable that holds the (first) key; checked first."""
    api_key_refs: tuple[str, ...] = ()
    """Every ``api_key_ref`` when the TOML gives a list (key rotation); empty otherwise."""
    api_key_envs: tuple[str, ...] = ()
    """Every ``api_key_env`` when the TOML gives a list (key rotation); empty otherwise."""
    demo: bool = False
    """It serves a tiny offline demo model: a chat says so once and points at a real one."""
    local: bool | None = None
    """Whether the model runs on this machine; unset: decided by `is_local`."""
    extras: dict[str, Any] = {}
    launch: LaunchConfig | None = None
    source: Path | None = None
    layer: Layer = Layer.BUNDLED

    @pydantic.model_validator(mode="before")
    @classmethod
    def _key_lists(cls, data: Any) -> Any:
        """Accept ``api_key_ref`` / ``api_key_env`` as lists: the first stays the plain value."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for key in ("api_key_ref", "api_key_env"):
            value = data.get(key)
            if isinstance(value, list):
                if not all(isinstance(item, str) for item in value):
                    raise ValueError(f"{key} must be a string or a list of strings")
                data[key] = value[0] if value else ""
                data[f"{key}s"] = tuple(value)
        return data

    @property
    def key_slots(self) -> list[tuple[str, str]]:
        """Return the ``(api_key_ref, api_key_env)`` pair of every key, in rotation order.

        Lists pair up by position; a plain string (or a shorter list) leaves the rest empty.
        """
        refs = self.api_key_refs or ((self.api_key_ref,) if self.api_key_ref else ())
        envs = self.api_key_envs or ((self.api_key_env,) if self.api_key_env else ())
        count = max(len(refs), len(envs))
        return [
            (refs[i] if i < len(refs) else "", envs[i] if i < len(envs) else "")
            for i in range(count)
        ]

    @pydantic.field_validator("client_api")
    @classmethod
    def _known_api(cls, value: str) -> str:
        if value not in CLIENT_APIS:
            suggestion = closest(value, list(CLIENT_APIS))
            hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
            raise ValueError(
                f"unknown client_api {value!r}{hint}; use one of: " + ", ".join(CLIENT_APIS)
            )
        return value

    @pydantic.field_validator("command", mode="before")
    @classmethod
    def _argv(cls, value: Any) -> Any:
        """Accept the TOML list as the argv tuple."""
        return tuple(value) if isinstance(value, list) else value

    @pydantic.field_validator("url")
    @classmethod
    def _valid_url(cls, value: str) -> str:
        if not value:
            return value  # a process client_api has none; `_url_or_command` checks the pair
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"url {value!r} must be an http:// or https:// URL with a host")
        return value.rstrip("/")

    @pydantic.model_validator(mode="after")
    def _url_or_command(self) -> ProviderInstance:
        """Require a ``url`` of an HTTP ``client_api``, a ``command`` of a process one."""
        if self.api.process and not (self.command and self.command[0]):
            raise ValueError(
                f"client_api {self.client_api!r} starts a program: give its argv as "
                'command = ["program", "arg", ...]'
            )
        if not self.api.process and not self.url:
            raise ValueError(
                f"client_api {self.client_api!r} needs url = an http:// or https:// URL with a host"
            )
        return self

    @property
    def api(self) -> ClientApi:
        """The ``client_api`` facts of this instance."""
        return CLIENT_APIS[self.client_api]

    @property
    def concurrency_limit(self) -> int | None:
        """The agent pool's limit: ``max_concurrent``, else 1 on this machine, else none."""
        if self.max_concurrent:
            return self.max_concurrent
        return 1 if self.is_local else None

    @property
    def is_local(self) -> bool:
        """Whether the model runs on this machine (no debounce, one request at a time).

        ``local`` decides when set. Otherwise: a local program, or a loopback URL of a server
        the instance ``[launch]``es or of a model server's API (`MODEL_SERVER_APIS`); any other
        API on a loopback URL may be a proxy to a billed service and counts as remote.
        """
        if self.local is not None:
            return self.local
        if self.api.process:
            return True
        return self.is_loopback and (
            self.launch is not None or self.client_api in MODEL_SERVER_APIS
        )

    @property
    def is_loopback(self) -> bool:
        """Whether the URL points at this machine (a local program always does)."""
        if self.api.process:
            return True
        return is_loopback_host(urlsplit(self.url).hostname or "")


PROVIDER_SCHEMA = DefinitionSchema(
    kind="provider instance",
    keys=frozenset(
        {
            "schema_version",
            "name",
            "client_api",
            "description",
            "url",
            "command",
            "package",
            "max_processes",
            "max_concurrent",
            "api_key_ref",
            "api_key_env",
            "demo",
            "local",
            "extends",
            "abstract",
        }
    ),
    tables={
        "launch": frozenset(
            {
                "command",
                "args",
                "cwd",
                "ready_url",
                "ready_timeout_s",
                "auto_start",
                "detach",
                "env",
            }
        )
    },
    free_tables=frozenset({"extras", "env"}),
    max_depth=16,
    non_inherited=frozenset({"name", "abstract", "extends"}),
)


def load_providers(
    layers: Sequence[tuple[Path | None, Layer]], problems: list[ConfigProblem]
) -> dict[str, ProviderInstance]:
    """Load provider instances from ``layers`` (lowest first); later layers replace by name."""
    definitions: dict[str, Definition] = {}
    for directory, layer in layers:
        for path in toml_files(directory):
            definition = read_definition(path, layer, PROVIDER_SCHEMA, problems)
            if definition is None:
                continue
            below = definitions.get(definition.name)
            if below is not None and definition.data.get("extends") == definition.name:
                definition = _overlay(below, definition)
            definitions[definition.name] = definition
    instances = {}
    for name, resolved in resolve_all(definitions, PROVIDER_SCHEMA, problems).items():
        if resolved.data.get("abstract") is True:
            continue
        instance = _build(resolved, problems)
        if instance is not None:
            instances[name] = instance
    return dict(sorted(instances.items(), key=lambda item: item[0].casefold()))


def _overlay(below: Definition, override: Definition) -> Definition:
    """Return ``below`` changed by ``override``, a same-name file that extends it by name."""
    own = {k: v for k, v in override.data.items() if k != "extends"}
    data = deep_merge(below.data, own)
    return Definition(override.name, data, override.source, override.layer)


def _build(resolved: Resolved, problems: list[ConfigProblem]) -> ProviderInstance | None:
    data = {k: v for k, v in resolved.data.items() if k not in ("abstract", "extends")}
    try:
        instance = ProviderInstance.model_validate(
            {**data, "source": resolved.source.path, "layer": resolved.layer}
        )
    except pydantic.ValidationError as exc:
        problems.extend(validation_problems(resolved, exc))
        return None
    if (
        urlsplit(instance.url).scheme == "http"
        and not instance.is_loopback
        and (instance.api_key_ref or instance.api_key_env)
    ):
        problems.append(
            resolved.problem(
                "warning",
                f"{instance.name!r} sends its API key over plain http:// to a remote host; "
                "use https:// or a tunnel, or remove api_key_ref if the server needs no key",
                "url",
            )
        )
    return instance
