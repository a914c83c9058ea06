"""The code-server install builds its native modules against local Node headers, never nodejs.org."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import code_server
from tests.support.code_server import InstallError, node_headers


def fake_node(prefix: Path, version: str, headers: str | None) -> str:
    """A ``<prefix>/bin/node`` printing ``version``, with headers of ``headers`` (None: none)."""
    (prefix / "bin").mkdir(parents=True)
    node = prefix / "bin" / "node"
    node.write_text(f"#!/bin/sh\necho v{version}\n")
    node.chmod(0o755)
    if headers is not None:
        major, minor, patch = headers.split(".")
        (prefix / "include" / "node").mkdir(parents=True)
        (prefix / "include" / "node" / "node_version.h").write_text(
            f"#define NODE_MAJOR_VERSION {major}\n#define NODE_MINOR_VERSION {minor}\n"
            f"#define NODE_PATCH_VERSION {patch}\n"
        )
    return str(node)


@pytest.fixture(autouse=True)
def no_nodedir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("npm_config_nodedir", raising=False)


def test_the_headers_beside_node_are_used(tmp_path: Path) -> None:
    assert node_headers(fake_node(tmp_path, "20.20.2", "20.20.2")) == tmp_path


def test_headers_of_another_major_version_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match=r"are for 18\.20\.4 but .* is 20\.20\.2"):
        node_headers(fake_node(tmp_path, "20.20.2", "18.20.4"))


def test_missing_headers_say_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="libnode-dev for Debian's nodejs"):
        node_headers(fake_node(tmp_path, "20.20.2", None))


def test_npm_config_nodedir_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node = fake_node(tmp_path / "node", "20.1.0", None)
    fake_node(tmp_path / "headers", "20.1.0", "20.1.0")
    monkeypatch.setenv("npm_config_nodedir", str(tmp_path / "headers"))
    assert node_headers(node) == tmp_path / "headers"


def test_every_native_build_gets_the_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands: list[list[str]] = []
    monkeypatch.setattr(code_server, "_run", lambda command, cwd, log: commands.append(command))
    vscode = tmp_path / "node_modules" / "code-server" / "lib" / "vscode"
    for folder in ("bin/remote-cli", "bin/helpers"):
        (vscode / folder).mkdir(parents=True)
    code_server._steps(tmp_path, "npm", "/usr/bin/rg", Path("/usr"), [])
    rebuilds = [c for c in commands if "rebuild" in c]
    assert [c[0] for c in rebuilds] == ["env", "env"], commands
    assert all("npm_config_nodedir=/usr" in c for c in rebuilds), rebuilds
