"""How editor settings reach the server along the paths real editors use.

An editor may send the settings three ways: ``initializationOptions``, the answer to
``workspace/configuration`` (section ``qodeassist``) and ``workspace/didChangeConfiguration``.
Several editors answer the configuration request with an empty object when the user put the
settings in the initialization options only — lsp-mode does for any section nobody registered
(``lsp--section-workspace-configuration`` returns ``(ht-create)``), and Zed pushes ``{}`` after
start-up for servers whose adapter has no workspace configuration.
"""

from __future__ import annotations

import pytest

from tests.e2e.snippets.conftest import ADD_LINE, COMPLETION_DOC, completion_starts
from tests.e2e.snippets.editor_client import Editor, editor_session
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply


@pytest.mark.filterwarnings("ignore:Client does not support documentation format")
async def test_empty_configuration_answer_keeps_the_initialization_options(
    home, replay: ReplayServer
) -> None:
    editor = Editor(
        name="lsp-mode without registered settings",
        capabilities_file="pytest-lsp:emacs",
        command=["qodeassist-lsp"],
        initialization_options={"qodeassist": {"completion": {"linesBefore": 80}}},
        configuration={"qodeassist": {}},  # what lsp-mode answers for an unregistered section
    )
    replay.script("/v1/completions", completion_reply("a + b", repeat=5))
    async with editor_session(editor, home) as session:
        uri = session.open("add.py", COMPLETION_DOC)
        answer, _ = await session.complete(uri, ADD_LINE, len("    return "))
        assert answer.items
        assert ADD_LINE - 79 in completion_starts(replay)
