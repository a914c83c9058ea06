"""Inline completion honours the workbench's one ignore rule over the LSP server (issue 44).

The workspace has two folders; the second one's ``.qodeassistignore`` lists ``secret.py``, which
the user opened. Completion in ``secret.py`` gets no item and sends nothing, and a completion in
the first folder's ``geo.py`` is sent without it: the rule of next edits and the refactor, the
``.qodeassistignore`` of every workspace folder, not only the project's.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conformance.doors import SECRET, lsp_server, make_home, sent_to_provider
from tests.support.replay_server import ReplayServer
from tests.support.streams import completion_reply

ROUTE = "/v1/completions"
SECRET_DOC = f"TOKEN = '{SECRET}'\nvalue = \n"
DOC = "def area(w, h):\n    return \n"


@pytest.fixture
def replay() -> Any:
    with ReplayServer() as server:
        yield server


async def test_an_ignored_file_of_a_second_folder_gets_no_completion(
    tmp_path: Path, replay: ReplayServer
) -> None:
    home = make_home(tmp_path, replay)
    with (home / "config/settings.toml").open("a") as settings:
        # Only the asked completions go upstream (no warm-up, no prefetch).
        settings.write("\n[completion]\nwarm_idle_ms = 0\nprefetch_after_accept = false\n")
    other = home / "other"
    other.mkdir()
    (other / ".qodeassistignore").write_text("secret.py\n")
    (other / "secret.py").write_text(SECRET_DOC)
    (home / "project/geo.py").write_text(DOC)
    secret, geo = (other / "secret.py").as_uri(), (home / "project/geo.py").as_uri()
    async with asyncio.timeout(60), lsp_server(home, other) as lsp:
        for uri, text in ((secret, SECRET_DOC), (geo, DOC)):
            document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
            await lsp.send({"method": "textDocument/didOpen", "params": {"textDocument": document}})

        async def complete(uri: str, line: int, character: int) -> list[Any]:
            answer = await lsp.request(
                "textDocument/inlineCompletion",
                {
                    "textDocument": {"uri": uri},
                    "position": {"line": line, "character": character},
                    "context": {"triggerKind": 1},  # invoked
                },
            )
            assert "error" not in answer, answer
            result = answer["result"]
            return list(result["items"] if isinstance(result, dict) else result or [])

        assert await complete(secret, 1, 8) == []
        assert replay.requests == []  # the ignored file never reached a prompt
        replay.script(ROUTE, completion_reply("w * h"))
        [item] = await complete(geo, 1, 11)
        assert item["insertText"] == "w * h"
        assert SECRET not in sent_to_provider(replay)
