"""The Emacs snippets and their chat buffer byte-compile without a warning in Emacs 30."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.snippets.conftest import EDITORS, EmacsInstall

COMPILE = """
(progn
  (setq native-comp-jit-compilation nil native-comp-enable-subr-trampolines nil
        byte-compile-error-on-warn t
        byte-compile-dest-file-function (lambda (_) "{dest}"))
  (dolist (dir '({packages})) (add-to-list 'load-path dir))
  (add-to-list 'load-path "{editors}")
  (kill-emacs (if (byte-compile-file "{source}") 0 1)))
"""


@pytest.mark.parametrize(
    "name", ["qodeassist-eglot", "qodeassist-lsp-mode", "qodeassist-chat", "qodeassist-next-edit"]
)
def test_snippet_byte_compiles_cleanly(name: str, emacs: EmacsInstall, tmp_path: Path) -> None:
    source = EDITORS / "emacs" / f"{name}.el"
    program = COMPILE.format(
        dest=tmp_path / f"{name}.elc",
        packages=" ".join(f'"{p}"' for p in emacs.package_dirs),
        editors=source.parent,
        source=source,
    )
    done = subprocess.run(
        [str(emacs.launcher), "-Q", "--batch", "--eval", program],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / f"{name}.elc").is_file()
