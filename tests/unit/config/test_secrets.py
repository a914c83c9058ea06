from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from keyring.backends.fail import Keyring as FailKeyring
from keyring.errors import KeyringLocked, PasswordDeleteError

from qodeassist_lsp.config.secrets import (
    DOTENV_FILE_NAME,
    KEYRING_SERVICE,
    SecretsPort,
    SecretStore,
    SecretStoreError,
    parse_dotenv,
)

SECRET = "sk-test-0123456789abcdef"
ENV = "QA_TEST_API_KEY"


class MemoryKeyring(KeyringBackend):
    """In-memory keyring backend that counts lookups."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}
        self.gets = 0

    def get_password(self, service: str, username: str) -> str | None:
        self.gets += 1
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[service, username] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.store[service, username]
        except KeyError:
            raise PasswordDeleteError(username) from None


class LockedKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        self.gets += 1
        raise KeyringLocked("the collection is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked(f"cannot store {password}")


class BrokenKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise OSError("dbus went away")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


@pytest.fixture
def memory() -> MemoryKeyring:
    return MemoryKeyring()


def store(config_dir: Path, backend: KeyringBackend) -> SecretStore:
    return SecretStore(config_dir, keyring_backend=backend)


# -- parse_dotenv -----------------------------------------------------------------------------


def test_parse_dotenv_forms() -> None:
    text = "\n".join(
        [
            "# a comment",
            "",
            "PLAIN=abc",
            "export EXPORTED = def ",
            'DOUBLE="with space # not a comment"',
            "SINGLE='lit\\n'",
            'ESCAPED="a\\"b\\\\c\\nd"',
            "INLINE=value # trailing comment",
            "HASH=a#b",
            "EMPTY=",
            "PLAIN=override",
        ]
    )
    values, bad = parse_dotenv(text)
    assert bad == []
    assert values == {
        "PLAIN": "override",
        "EXPORTED": "def",
        "DOUBLE": "with space # not a comment",
        "SINGLE": "lit\\n",
        "ESCAPED": 'a"b\\c\nd',
        "INLINE": "value",
        "HASH": "a#b",
        "EMPTY": "",
    }


def test_parse_dotenv_reports_bad_lines() -> None:
    values, bad = parse_dotenv('GOOD=1\nno equals sign\n1BAD=x\nOPEN="never closed\n')
    assert values == {"GOOD": "1"}
    assert bad == [2, 3, 4]


# -- lookup order -----------------------------------------------------------------------------


def test_environment_variable_comes_first(
    tmp_path: Path, memory: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / DOTENV_FILE_NAME).write_text(f"{ENV}=from-dotenv\n")
    memory.set_password(KEYRING_SERVICE, "openai", "from-keyring")
    monkeypatch.setenv(ENV, SECRET)
    assert store(tmp_path, memory).get("openai", ENV) == SECRET


def test_dotenv_comes_second(
    tmp_path: Path, memory: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / DOTENV_FILE_NAME).write_text(f'export {ENV}="{SECRET}"\n')
    memory.set_password(KEYRING_SERVICE, "openai", "from-keyring")
    monkeypatch.setenv(ENV, "  ")  # blank counts as unset
    assert store(tmp_path, memory).get("openai", ENV) == SECRET


def test_keyring_comes_last(tmp_path: Path, memory: MemoryKeyring) -> None:
    (tmp_path / DOTENV_FILE_NAME).write_text("OTHER=x\n")
    memory.set_password(KEYRING_SERVICE, "openai", SECRET)
    assert store(tmp_path, memory).get("openai", ENV) == SECRET
    assert store(tmp_path, memory).get("openai") == SECRET


def test_nothing_found(tmp_path: Path, memory: MemoryKeyring) -> None:
    secrets = store(tmp_path, memory)
    assert secrets.get("openai", ENV) is None
    assert secrets.get("", None) is None


def test_empty_ref_skips_the_keyring(tmp_path: Path, memory: MemoryKeyring) -> None:
    assert store(tmp_path, memory).get("", ENV) is None
    assert memory.gets == 0


def test_no_config_dir_means_no_dotenv(memory: MemoryKeyring) -> None:
    secrets = SecretStore(None, keyring_backend=memory)
    assert secrets.get("x", ENV) is None


def test_injected_environ_is_used(tmp_path: Path, memory: MemoryKeyring) -> None:
    secrets = SecretStore(tmp_path, environ={ENV: SECRET}, keyring_backend=memory)
    assert secrets.get("x", ENV) == SECRET


# -- caching ----------------------------------------------------------------------------------


def test_keyring_answers_are_cached_until_invalidated(
    tmp_path: Path, memory: MemoryKeyring
) -> None:
    secrets = store(tmp_path, memory)
    assert secrets.get("openai") is None
    memory.set_password(KEYRING_SERVICE, "openai", SECRET)
    assert secrets.get("openai") is None  # the miss is cached
    assert memory.gets == 1
    secrets.invalidate()
    assert secrets.get("openai") == SECRET
    assert secrets.get("openai") == SECRET
    assert memory.gets == 2


def test_dotenv_is_reread_after_invalidate(tmp_path: Path, memory: MemoryKeyring) -> None:
    dotenv = tmp_path / DOTENV_FILE_NAME
    dotenv.write_text(f"{ENV}=one\n")
    secrets = store(tmp_path, memory)
    assert secrets.get("x", ENV) == "one"
    dotenv.write_text(f"{ENV}=two\n")
    assert secrets.get("x", ENV) == "one"
    secrets.invalidate()
    assert secrets.get("x", ENV) == "two"


def test_environment_is_read_live(
    tmp_path: Path, memory: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = store(tmp_path, memory)
    assert secrets.get("x", ENV) is None
    monkeypatch.setenv(ENV, SECRET)
    assert secrets.get("x", ENV) == SECRET


# -- set / delete -----------------------------------------------------------------------------


def test_set_and_delete(tmp_path: Path, memory: MemoryKeyring) -> None:
    secrets = store(tmp_path, memory)
    assert secrets.get("openai") is None
    secrets.set("openai", SECRET)
    assert memory.store[KEYRING_SERVICE, "openai"] == SECRET
    assert secrets.get("openai") == SECRET  # cache updated, not stale
    secrets.delete("openai")
    assert (KEYRING_SERVICE, "openai") not in memory.store
    assert secrets.get("openai") is None
    secrets.delete("openai")  # absent is fine


def test_set_rejects_empty_values(tmp_path: Path, memory: MemoryKeyring) -> None:
    secrets = store(tmp_path, memory)
    with pytest.raises(SecretStoreError, match="empty key"):
        secrets.set("openai", " ")
    with pytest.raises(SecretStoreError, match="api_key_ref"):
        secrets.set("", SECRET)


def test_locked_keyring_error_never_echoes_the_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = store(tmp_path, LockedKeyring())
    assert secrets.get("openai") is None
    with pytest.raises(SecretStoreError) as info:
        secrets.set("openai", SECRET)
    assert SECRET not in str(info.value)
    assert "unlock the keyring" in str(info.value)


def test_broken_keyring_is_not_a_crash(tmp_path: Path) -> None:
    assert store(tmp_path, BrokenKeyring()).get("openai") is None


# -- the real headless backend ----------------------------------------------------------------


def test_fail_backend_is_a_normal_case(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qodeassist_lsp.config.secrets")
    secrets = store(tmp_path, FailKeyring())
    assert secrets.get("openai", ENV) is None
    assert any(r.levelno == logging.DEBUG and "no OS keyring" in r.message for r in caplog.records)
    with pytest.raises(SecretStoreError) as info:
        secrets.set("openai", SECRET)
    message = str(info.value)
    assert "no OS keyring is available" in message
    assert "api_key_env" in message and str(tmp_path / DOTENV_FILE_NAME) in message
    with pytest.raises(SecretStoreError, match="no OS keyring"):
        secrets.delete("openai")
    assert "keyring is unavailable" in secrets.describe("openai", ENV)


# -- describe ---------------------------------------------------------------------------------


def test_describe_each_source_without_the_secret(
    tmp_path: Path, memory: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.set_password(KEYRING_SERVICE, "openai", SECRET)
    secrets = store(tmp_path, memory)
    keyring_text = secrets.describe("openai", ENV)
    assert "OS keyring" in keyring_text and "'openai'" in keyring_text

    (tmp_path / DOTENV_FILE_NAME).write_text(f"{ENV}={SECRET}\n")
    secrets.invalidate()
    dotenv_text = secrets.describe("openai", ENV)
    assert f"{ENV} in {tmp_path / DOTENV_FILE_NAME}" in dotenv_text

    monkeypatch.setenv(ENV, SECRET)
    env_text = secrets.describe("openai", ENV)
    assert f"environment variable {ENV}" in env_text

    assert all(SECRET not in text for text in (keyring_text, dotenv_text, env_text))


def test_describe_missing_key_lists_every_way(tmp_path: Path, memory: MemoryKeyring) -> None:
    text = store(tmp_path, memory).describe("openai", ENV)
    assert "is not set" in text
    assert f"export {ENV}=" in text
    assert f"{ENV}=… to {tmp_path / DOTENV_FILE_NAME}" in text
    assert f"keyring set {KEYRING_SERVICE} openai" in text


def test_describe_without_any_reference(tmp_path: Path, memory: MemoryKeyring) -> None:
    assert "No API key is configured" in store(tmp_path, memory).describe("", None)


def test_store_satisfies_the_port(tmp_path: Path, memory: MemoryKeyring) -> None:
    port: SecretsPort = store(tmp_path, memory)
    port.set("a", SECRET)
    assert port.get("a", None) == SECRET


# -- logging ----------------------------------------------------------------------------------


def test_secrets_are_never_logged(
    tmp_path: Path,
    memory: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    (tmp_path / DOTENV_FILE_NAME).write_text(f"{ENV}={SECRET}\nbroken {SECRET}\n")
    secrets = store(tmp_path, memory)
    secrets.get("openai", ENV)
    secrets.set("openai", SECRET)
    secrets.describe("openai", ENV)
    store(tmp_path, LockedKeyring()).get("openai")
    assert "2: not a KEY=VALUE line" in caplog.text
    assert SECRET not in caplog.text


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_world_readable_dotenv_warns(
    tmp_path: Path, memory: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    dotenv = tmp_path / DOTENV_FILE_NAME
    dotenv.write_text(f"{ENV}={SECRET}\n")
    os.chmod(dotenv, 0o644)
    store(tmp_path, memory).get("x", ENV)
    assert "chmod 600" in caplog.text
    caplog.clear()
    os.chmod(dotenv, 0o600)
    store(tmp_path, memory).get("x", ENV)
    assert "chmod 600" not in caplog.text


def test_a_key_from_the_environment_never_imports_keyring(tmp_path: Path) -> None:
    # keyring costs ~30 ms and ~2 MB to import; it is loaded only when a key is looked up there.
    import subprocess

    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from qodeassist_lsp.config.secrets import SecretStore\n"
        f"store = SecretStore(Path({str(tmp_path)!r}), environ={{'K': 'secret'}})\n"
        "assert store.get('ref', 'K') == 'secret'\n"
        "print('keyring' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
