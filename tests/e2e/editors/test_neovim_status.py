"""The Neovim plugin's status-line component reads provider health and circuits right.

Pure Lua of ``qodeassist.status`` run in a real headless Neovim (0.11 from the ``test`` extra):
no server is needed to check what a ``qodeassist/status`` payload turns into.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.editors.conftest import PLUGIN

SCRIPT = """
vim.opt.runtimepath:prepend(%(plugin)s)
local status = require('qodeassist.status')
local problems = status.provider_problems({ providers = {
  { name = 'Ollama', state = 'degraded', circuit = { state = 'open', nextProbe = 42 } },
  { name = 'Claude', state = 'ok', circuit = { state = 'half_open' } },
  { name = 'Embedded', state = 'ok', circuit = { state = 'closed' } },
  { name = 'Old', state = 'down' },
} })
io.stdout:write(vim.json.encode(problems))
"""


def test_open_and_half_open_circuits_are_problems(nvim_011: Path, tmp_path: Path) -> None:
    script = tmp_path / "status.lua"
    script.write_text(SCRIPT % {"plugin": json.dumps(str(PLUGIN))})
    done = subprocess.run(
        [str(nvim_011), "--headless", "--clean", "-l", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        "Ollama: circuit open",
        "Claude: circuit half-open",
        "Old: down",
    ]
