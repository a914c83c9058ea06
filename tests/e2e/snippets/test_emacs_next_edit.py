"""editors/emacs/qodeassist-next-edit.el in a real Emacs 30 (batch), with Eglot and lsp-mode.

With Eglot the scenario renames a function in its definition, asks for the next edit (the
loopback provider answers with the recorded rewrite), and checks the overlay (the replaced
text, the lines after the edit), the jump and the accept, which the server counts. With
lsp-mode 10 it accepts an inline completion and sees the next edit asked for and shown at once.
"""

from __future__ import annotations

from tests.e2e.snippets.conftest import EDITORS
from tests.support.replay_server import ReplayServer
from tests.support.streams import chat_reply, completion_reply

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


def test_lsp_mode_accepting_a_completion_asks_for_the_next_edit_at_once(
    run_emacs, replay: ReplayServer
) -> None:
    doc = "def area(w, h):\n    return \n\n\nprint(area(2, 3))\n"
    completed = doc.replace("return ", "return w * h")
    after = completed.replace("print(area(2, 3))", 'print("area:", area(2, 3))')
    # The second answers the prefetch for after the accept.
    replay.script("/v1/completions", [completion_reply("w * h"), completion_reply("")])
    replay.script("/v1/chat/completions", chat_reply(f"<updated>\n{after}</updated>"))
    run = run_emacs(
        "next_edit_lsp_mode_scenario",
        snippet=str(EDITORS / "emacs" / "qodeassist-lsp-mode.el"),
        nextEdit=str(EDITORS / "emacs" / "qodeassist-next-edit.el"),
        text=doc,
        inlineAt=[1, 11],
    )
    report = run.report
    why = run.explain()

    assert report["acceptedLine"] == "    return w * h", why
    # The accept asked at once: the edit-pause timer the insertion started was cancelled, and
    # batch Emacs never fires idle timers, so nothing else could have asked.
    assert report["timerAfterAccept"] is None, why
    assert report["afterString"] == '\nprint("area:", area(2, 3))', why
    assert report["text"] == after, why
    assert report["nextEdit"]["accepted"] == 1 and report["nextEdit"]["shown"] == 1, why
    assert report["completion"]["accepted"] >= 1, why
    prompt = replay.last_to("/v1/chat/completions").json["messages"][-1]["content"]
    assert "return w * h" in prompt, prompt
