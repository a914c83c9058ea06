"""editors/emacs/qodeassist-next-edit.el in a real Emacs 30 (batch) with its built-in Eglot.

Eglot starts the server through the Eglot snippet; the scenario renames a function in its
definition, asks for the next edit (the loopback provider answers with the recorded rewrite),
and checks the overlay (the replaced text, the lines after the edit), the jump and the accept,
which the server counts.
"""

from __future__ import annotations

from tests.e2e.snippets.conftest import EDITORS
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply

DOC = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n"
AFTER = DOC.replace("area", "surface")


def test_next_edit_overlay_jump_and_accept(run_emacs, replay: ReplayServer) -> None:
    replay.script("/v1/chat/completions", chat_reply(f"<updated>\n{AFTER}</updated>"))
    run = run_emacs(
        "next_edit_scenario",
        snippet=str(EDITORS / "emacs" / "qodeassist-eglot.el"),
        nextEdit=str(EDITORS / "emacs" / "qodeassist-next-edit.el"),
        text=DOC,
    )
    report = run.report
    why = run.explain()

    assert report["replaced"] == "area", why
    assert report["face"] == "qodeassist-next-edit-replaced", why
    assert report["afterString"] == "\nprint(surface(2, 3))", why
    assert report["jumpedTo"] == [4, 6], why
    assert report["text"] == AFTER, why
    assert not report["overlayAfterAccept"], why
    assert report["status"]["accepted"] == 1 and report["status"]["shown"] == 1, why
    prompt = replay.last_to("/v1/chat/completions").json["messages"][-1]["content"]
    assert "original:\ndef area(w, h):\nupdated:\ndef surface(w, h):" in prompt, prompt
