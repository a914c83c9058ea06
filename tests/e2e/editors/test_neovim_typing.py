"""Keys typed fast while ghost text shows (Neovim 0.12 native, 0.12 and 0.11 extmark renderer).

A fast typist on a busy machine hands Neovim several keys at once (typeahead) while the
provider is slow: an <Enter> after the ghost text appeared, a <Tab> that accepts and the next
line right after it, a <Tab> with nothing to accept. The lines must come out as typed: once
`try:` and the next line came out joined.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.editors.conftest import RunPlugin
from tests.e2e.editors.test_neovim_plugin import (
    EXTMARK_EDITORS,
    NATIVE_012,
    Editor,
    ghosts,
    multi_line_everywhere,
)
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply

GUARD = "def main():\n    \n    return 0\n"


@pytest.mark.parametrize("editor", [NATIVE_012, *EXTMARK_EDITORS])
@pytest.mark.parametrize(
    ("keys", "lines"),
    [
        pytest.param("<CR>x = 1", ["    try:", "    x = 1"], id="enter"),
        # <Tab> accepts; what is typed after it lands after the accepted text.
        pytest.param(
            "<Tab><CR>x = 1", ["    try:", "        pass", "        x = 1"], id="tab-enter"
        ),
        # <Tab> after the Enter accepts the rest of what the Enter continued, at the cursor.
        pytest.param("<CR><Tab>x = 1", ["    try:", "        passx = 1"], id="enter-tab"),
        # Nothing to accept after <C-]>: <Tab> is a plain tab, before what is typed after it.
        pytest.param("<C-]><Tab>x = 1", ["    try:        x = 1"], id="dismiss-tab"),
    ],
)
def test_an_enter_typed_while_ghost_text_shows_is_never_lost(
    plugin: RunPlugin,
    replay: ReplayServer,
    tmp_path: Path,
    editor: Editor,
    keys: str,
    lines: list[str],
) -> None:
    version, mode, _ = editor
    multi_line_everywhere(tmp_path)
    source = tmp_path / "project" / "guard.py"
    source.write_text(GUARD)
    slow = completion_reply("\n        pass", first_byte_delay=1.5, repeat=3)
    replay.script("/v1/completions", [completion_reply("\n        pass"), slow])
    run = plugin("plugin_enter", version, mode, file=str(source), keys=keys, last="x = 1")
    why = run.explain()

    assert ghosts(run.snapshot("shown"))[0][:2] == (1, 8), why
    typed = run.snapshot("typed")["lines"]
    assert typed[0] == "def main():" and typed[-1] == "    return 0", why
    assert typed[1:-1] == lines, typed
