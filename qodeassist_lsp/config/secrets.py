"""Where API keys come from: the secrets port and its env → ``.env`` → OS keyring implementation.

Secrets never live in TOML. A provider names an environment variable (``api_key_env``) and a
keyring entry (``api_key_ref``); ``SecretStore`` resolves them in that order, plus a ``.env`` file
in the config root for machines where exporting variables to an editor is awkward. A headless
machine without a keyring backend is normal, not an error. Keyring calls may block (D-Bus, a
password prompt), so their results are cached until ``invalidate()``. No secret value is ever
logged or put into a message.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from qodeassist_lsp.wire.errors import QodeAssistError

if TYPE_CHECKING:
    # keyring is imported when a key is first looked up there: importing it costs ~30 ms and
    # ~2 MB (entry-point scanning), which a setup with keys in the environment never needs.
    from keyring.backend import KeyringBackend

__all__ = [
    "DOTENV_FILE_NAME",
    "KEYRING_SERVICE",
    "SecretStore",
    "SecretStoreError",
    "SecretsPort",
    "parse_dotenv",
]

logger = logging.getLogger(__name__)

KEYRING_SERVICE: Final = "qodeassist"
"""Keyring service name; the keyring user name is the provider's ``api_key_ref``."""

DOTENV_FILE_NAME: Final = ".env"
"""``KEY=VALUE`` file in the config root, consulted after the process environment."""

_DOTENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_EXPORT = re.compile(r"^export\s+")
_ESCAPES: Final = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


class SecretStoreError(QodeAssistError, RuntimeError):
    """A secret could not be stored or removed; the message says what to do instead."""


class SecretsPort(Protocol):
    """Resolves, stores and explains API keys named by a provider's ``api_key_ref``."""

    def get(self, ref: str, env_var: str | None = None) -> str | None:
        """Return the key for ``ref`` (or from ``env_var``), or None when it is not set."""
        ...

    def set(self, ref: str, value: str) -> None:
        """Store the key for ``ref`` in the OS keyring."""
        ...

    def delete(self, ref: str) -> None:
        """Remove the key for ``ref`` from the OS keyring (absent is fine)."""
        ...

    def describe(self, ref: str, env_var: str | None = None) -> str:
        """Say where the key comes from, or how to set it when it is missing (never the key)."""
        ...

    def invalidate(self) -> None:
        """Forget cached answers so the next ``get`` reads again."""
        ...


def parse_dotenv(text: str) -> tuple[dict[str, str], list[int]]:
    r"""Parse ``.env`` text into values and the numbers of the lines that could not be read.

    Supported: ``KEY=VALUE``, an ``export`` prefix, single quotes (literal), double quotes
    (``\n \t \" \\`` escapes), ``#`` comment lines and `` #`` comments after unquoted values.
    A later line wins over an earlier one with the same key.
    """
    values: dict[str, str] = {}
    bad_lines: list[int] = []
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, rest = _EXPORT.sub("", line).partition("=")
        key = key.strip()
        value = _dotenv_value(rest.strip()) if sep else None
        if not _DOTENV_KEY.fullmatch(key) or value is None:
            bad_lines.append(number)
            continue
        values[key] = value
    return values, bad_lines


def _dotenv_value(text: str) -> str | None:
    """Decode the right-hand side of a ``.env`` line; None if a quote is never closed."""
    if text[:1] == "'":
        end = text.find("'", 1)
        return None if end < 0 else text[1:end]
    if text[:1] == '"':
        chars: list[str] = []
        index = 1
        while index < len(text):
            char = text[index]
            if char == "\\" and index + 1 < len(text):
                chars.append(_ESCAPES.get(text[index + 1], "\\" + text[index + 1]))
                index += 2
                continue
            if char == '"':
                return "".join(chars)
            chars.append(char)
            index += 1
        return None
    comment = re.search(r"\s#", text)
    return (text[: comment.start()] if comment else text).strip()


class SecretStore:
    """The real ``SecretsPort``: environment variable, then ``<config>/.env``, then the keyring."""

    def __init__(
        self,
        config_dir: Path | None,
        *,
        environ: Mapping[str, str] | None = None,
        keyring_backend: KeyringBackend | None = None,
        service: str = KEYRING_SERVICE,
    ) -> None:
        """Create a store reading ``<config_dir>/.env`` and the given (or detected) keyring."""
        self._dotenv_path = config_dir / DOTENV_FILE_NAME if config_dir is not None else None
        # The live process environment by default, so an exported variable is always current.
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self._backend = keyring_backend
        self._service = service
        self._lock = threading.Lock()
        self._dotenv: dict[str, str] | None = None
        self._keyring_cache: dict[str, str | None] = {}
        self._keyring_missing = False

    def get(self, ref: str, env_var: str | None = None) -> str | None:
        """Return the key from ``env_var``, the ``.env`` file or the keyring entry ``ref``."""
        return self._resolve(ref, env_var)[0]

    def set(self, ref: str, value: str) -> None:
        """Store ``value`` as the keyring entry ``ref``; raises ``SecretStoreError`` on failure."""
        if not ref.strip():
            raise SecretStoreError("cannot store a key without a name: set api_key_ref first")
        if not value.strip():
            raise SecretStoreError(f"refusing to store an empty key for {ref!r}")
        from keyring.errors import KeyringError, NoKeyringError

        with self._lock:
            try:
                self._keyring().set_password(self._service, ref, value)
            except NoKeyringError as exc:
                self._keyring_missing = True
                raise SecretStoreError(self._no_keyring_message(ref)) from exc
            except KeyringError as exc:
                raise SecretStoreError(
                    f"the OS keyring could not store the key {ref!r} "
                    f"({_safe_reason(exc, value)}); unlock the keyring and retry, or use an "
                    "environment variable or the .env file instead"
                ) from exc
            self._keyring_cache[ref] = value

    def delete(self, ref: str) -> None:
        """Remove the keyring entry ``ref``; an entry that does not exist is not an error."""
        from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

        with self._lock:
            try:
                self._keyring().delete_password(self._service, ref)
            except PasswordDeleteError:
                pass
            except NoKeyringError as exc:
                self._keyring_missing = True
                raise SecretStoreError(
                    f"no OS keyring is available on this machine, so there is no stored key "
                    f"{ref!r} to delete; remove it from the environment or the .env file"
                ) from exc
            except KeyringError as exc:
                raise SecretStoreError(
                    f"the OS keyring could not delete the key {ref!r} ({_safe_reason(exc)}); "
                    "unlock the keyring and retry"
                ) from exc
            self._keyring_cache[ref] = None

    def describe(self, ref: str, env_var: str | None = None) -> str:
        """Say where the key for ``ref`` comes from, or list the ways to set it."""
        value, source = self._resolve(ref, env_var)
        name = f"API key {ref!r}" if ref else f"API key from {env_var}" if env_var else "API key"
        if value is not None:
            return f"{name} comes from {source}."
        if not ref and not env_var:
            return (
                "No API key is configured (the provider sets neither api_key_ref nor api_key_env)."
            )
        ways = []
        if env_var:
            ways.append(f"export the environment variable {env_var} (export {env_var}=…)")
            if self._dotenv_path is not None:
                ways.append(f"add a line {env_var}=… to {self._dotenv_path}")
        else:
            ways.append("set api_key_env in the provider file to read an environment variable")
        if ref:
            if self._keyring_missing:
                ways.append("(the OS keyring is unavailable on this machine)")
            else:
                ways.append(f"store it in the OS keyring: keyring set {self._service} {ref}")
        return f"{name} is not set. Set it in one of these ways: " + "; ".join(ways) + "."

    def invalidate(self) -> None:
        """Forget cached keyring answers and re-read ``.env`` next time."""
        with self._lock:
            self._dotenv = None
            self._keyring_cache.clear()
            self._keyring_missing = False

    # ----------------------------------------------------------------------------------------
    def _resolve(self, ref: str, env_var: str | None) -> tuple[str | None, str]:
        """Return the value and a description of where it was found (never the value)."""
        if env_var:
            value = self._environ.get(env_var, "").strip()
            if value:
                return value, f"the environment variable {env_var}"
            value = self._dotenv_values().get(env_var, "").strip()
            if value:
                return value, f"{env_var} in {self._dotenv_path}"
        if ref:
            keyring_value = self._keyring_get(ref)
            if keyring_value:
                return (
                    keyring_value,
                    f"the OS keyring (service {self._service!r}, user {ref!r})",
                )
        return None, ""

    def _dotenv_values(self) -> dict[str, str]:
        with self._lock:
            if self._dotenv is None:
                self._dotenv = self._read_dotenv()
            return self._dotenv

    def _read_dotenv(self) -> dict[str, str]:
        path = self._dotenv_path
        if path is None:
            return {}
        try:
            text = path.read_text(encoding="utf-8")
            mode = path.stat().st_mode
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            logger.warning("cannot read %s (%s); it is ignored", path, type(exc).__name__)
            return {}
        if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            logger.warning(
                "%s is readable by other users; protect it with: chmod 600 %s", path, path
            )
        values, bad_lines = parse_dotenv(text)
        for number in bad_lines:
            # Only the line number: the line itself may contain a key.
            logger.warning("%s:%d: not a KEY=VALUE line; ignored", path, number)
        return values

    def _keyring_get(self, ref: str) -> str | None:
        from keyring.errors import NoKeyringError

        with self._lock:
            if ref in self._keyring_cache:
                return self._keyring_cache[ref]
            value: str | None = None
            try:
                value = self._keyring().get_password(self._service, ref)
            except NoKeyringError:
                self._keyring_missing = True
                logger.debug("no OS keyring backend; key %r treated as not stored", ref)
            except Exception as exc:  # a broken keyring must never break a request
                logger.debug(
                    "keyring lookup of %r failed (%s); treated as not stored",
                    ref,
                    type(exc).__name__,
                )
            # Misses are cached too, so a missing or locked keyring is asked only once.
            self._keyring_cache[ref] = value
            return value

    def _keyring(self) -> KeyringBackend:
        if self._backend is None:
            # Detection imports and probes backends (D-Bus on Linux): do it only when needed.
            import keyring

            self._backend = keyring.get_keyring()
        return self._backend

    def _no_keyring_message(self, ref: str) -> str:
        where = f" or add a KEY=VALUE line to {self._dotenv_path}" if self._dotenv_path else ""
        return (
            f"cannot store the key {ref!r}: no OS keyring is available on this machine "
            "(typical for headless servers and containers). Put the key in the environment "
            f"variable named by the provider's api_key_env{where} instead."
        )


def _safe_reason(exc: BaseException, secret: str | None = None) -> str:
    """Describe a keyring error without ever echoing the secret it was handling."""
    reason = str(exc) or type(exc).__name__
    if secret:
        reason = reason.replace(secret, "***")
    return reason
