"""The VS Code extension (``editors/vscode``) installs, compiles, passes its tests and packages.

In a temporary copy of the folder (the checkout is never written to): ``npm ci`` from the
committed ``package-lock.json``, ``npm run compile`` (tsc), ``npm test`` (the pure modules under
``node --test``) and ``npm run package`` (``vsce package``). The .vsix must hold exactly the bundled extension
(``dist/extension.js``: esbuild puts vscode-languageclient inside it), its manifest, README,
licence and webview files — no sources, compiled tests or ``node_modules`` — and the packaged
``extension.js`` must load in plain Node with a stand-in ``vscode`` module (nothing outside the
bundle is required but ``vscode`` and Node's own modules).

Fails (never skips) when npm is missing: CI must prove the extension builds. Cheap consistency
checks against the server run without npm: the extension's own command ids never equal a server
command (the language client registers those itself), and every mirrored setting is a key of
``docs/settings.md``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from qodeassist_lsp.lsp import methods
from tests.e2e.vscode.conftest import EXTENSION, REPO_ROOT

DOCS = REPO_ROOT / "docs"
CLIENT_ONLY_SECTIONS = {"server", "inlineCompletion", "trace"}

# A stand-in for the `vscode` module: every property is a constructible, callable stub, so the
# shipped modules (and vscode-languageclient, which subclasses vscode classes) load.
VSCODE_STUB = """
function stub(name) {
  const target = function () {};
  return new Proxy(target, {
    get(t, prop) {
      if (prop === 'prototype') return t.prototype;
      if (prop === 'then') return undefined;
      if (prop === Symbol.toPrimitive) return () => name;
      if (!(prop in cache)) cache[prop] = stub(name + '.' + String(prop));
      return cache[prop];
    },
    apply() { return stub(name + '()'); },
    construct() { return stub('new ' + name); },
  });
}
const cache = {};
module.exports = stub('vscode');
"""


def test_compiles_and_unit_tests_pass(tested: tuple[int, str]) -> None:
    status, output = tested
    assert status == 0, f"npm test exited {status}\n{output[-6000:]}"
    # node --test's summary: tests ran and none failed.
    passed = re.search(r"^ℹ pass (\d+)$", output, re.MULTILINE)
    failed = re.search(r"^ℹ fail (\d+)$", output, re.MULTILINE)
    assert passed and int(passed[1]) >= 40, output[-3000:]
    assert failed and int(failed[1]) == 0, output[-3000:]


def test_packages_a_vsix_that_loads(packaged: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(packaged) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
        archive.extractall(tmp_path / "unpacked")
    assert names == {
        "extension.vsixmanifest",
        "[Content_Types].xml",
        "extension/package.json",
        "extension/readme.md",
        "extension/LICENSE.txt",
        "extension/dist/extension.js",
        "extension/media/chat.html",
        "extension/media/chat.js",
        "extension/media/chat.css",
        "extension/media/qodeassist.svg",
    }, sorted(names)
    assert manifest["main"] == "./dist/extension.js"
    assert manifest["contributes"]["views"]["qodeassist"][0]["id"] == "qodeassist.chat"

    stubs = tmp_path / "stubs" / "vscode"
    stubs.mkdir(parents=True)
    (stubs / "index.js").write_text(VSCODE_STUB)
    extension_js = tmp_path / "unpacked" / "extension" / "dist" / "extension.js"
    script = (
        f"const m = require({json.dumps(str(extension_js))});"
        "if (typeof m.activate !== 'function' || typeof m.deactivate !== 'function') {"
        "  throw new Error('no activate/deactivate');"
        "}"
        "console.log('loaded');"
    )
    node = shutil.which("node") or pytest.fail("node is not installed", pytrace=False)
    done = subprocess.run(
        [node, "-e", script],
        env={**os.environ, "NODE_PATH": str(stubs.parent)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0 and "loaded" in done.stdout, done.stdout + done.stderr


def package_json() -> dict:
    return json.loads((EXTENSION / "package.json").read_text())


def test_extension_commands_never_shadow_server_commands() -> None:
    server_commands = {
        value for name, value in vars(methods).items() if name.startswith("CMD_")
    } | set(re.findall(r"^\| `(qodeassist\.\w+)` \|", (DOCS / "protocol.md").read_text(), re.M))
    assert "qodeassist.refactor" in server_commands
    contributed = {c["command"] for c in package_json()["contributes"]["commands"]}
    assert not contributed & server_commands


def test_mirrored_settings_are_server_settings() -> None:
    sections: dict[str, set[str]] = {}
    current = None
    for line in (DOCS / "settings.md").read_text().splitlines():
        heading = re.match(r"^### `\[([\w.]+)\]`", line)
        if heading:
            current = sections.setdefault(heading[1], set())
            continue
        row = re.match(r"^\| `(\w+)` \|", line)
        if row and current is not None:
            current.add(row[1])
    mirrored = [
        name
        for section in package_json()["contributes"]["configuration"]
        for name in section["properties"]
        if name.split(".")[1] not in CLIENT_ONLY_SECTIONS
    ]
    assert len(mirrored) >= 20
    for name in mirrored:
        _, section, key = name.split(".")
        snake = re.sub(r"[A-Z]", lambda m: "_" + m[0].lower(), key)
        assert snake in sections.get(section, set()), f"{name}: no `{snake}` in [{section}]"
