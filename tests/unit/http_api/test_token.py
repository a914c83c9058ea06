from __future__ import annotations

import os
from pathlib import Path

import pytest

from qodeassist_lsp.http_api.token import TOKEN_ENV, HttpToken, rotate_token


def test_created_once_owner_only_and_rotated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    token = HttpToken(tmp_path)
    first = token.current()
    path = tmp_path / "http-token"
    assert path.read_text().strip() == first and len(first) >= 40
    assert path.stat().st_mode & 0o777 == 0o600
    assert HttpToken(tmp_path).current() == first  # generated once
    path.chmod(0o644)
    new, where = rotate_token(tmp_path)
    assert where == path and new != first
    assert path.stat().st_mode & 0o777 == 0o600
    os.utime(path, ns=(1, 1))  # a rotation within the same mtime tick is still seen
    assert token.current() == new


def test_the_environment_overrides_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "from-env")
    token = HttpToken(tmp_path)
    assert token.current() == "from-env" and token.source == f"${TOKEN_ENV}"
    assert not (tmp_path / "http-token").exists()


def test_a_loose_token_file_is_tightened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    path = tmp_path / "http-token"
    path.write_text("shared\n")
    path.chmod(0o644)
    token = HttpToken(tmp_path)
    assert token.current() == "shared" and token.tightened == 0o644
    assert path.stat().st_mode & 0o777 == 0o600
    assert HttpToken(tmp_path).tightened is None


def test_a_token_file_that_cannot_be_tightened_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qodeassist_lsp.http_api import token as token_module

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    path = tmp_path / "http-token"
    path.write_text("shared\n")
    path.chmod(0o666)

    def refuse(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(token_module.os, "chmod", refuse)
    with pytest.raises(token_module.TokenFileUnsafe, match="could not be made 0600"):
        HttpToken(tmp_path)
    monkeypatch.setattr(token_module.os, "geteuid", lambda: os.getuid() + 1)
    with pytest.raises(token_module.TokenFileUnsafe, match="another user"):
        HttpToken(tmp_path)


def test_rotating_while_the_environment_sets_the_token_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qodeassist_lsp.http_api.token import TokenFromEnvironment

    monkeypatch.setenv(TOKEN_ENV, "from-env")
    with pytest.raises(TokenFromEnvironment, match="cannot rotate"):
        rotate_token(tmp_path)
    assert not (tmp_path / "http-token").exists()
