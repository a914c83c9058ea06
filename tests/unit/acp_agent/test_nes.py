"""`NesServer`: positions in the chosen encoding, document sync, accept/reject statistics."""

from __future__ import annotations

from typing import Any, cast

import pytest
from acp.schema import (
    AcceptNesNotification,
    DidChangeDocumentNotification,
    DidOpenDocumentNotification,
    RejectNesNotification,
    StartNesRequest,
)

from qodeassist_lsp.acp_agent.nes import NesServer, pick_encoding
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.core.runtime_view import RuntimeView
from qodeassist_lsp.features.next_edit.results import NextEditResult, Outcome, SuggestedEdit
from qodeassist_lsp.features.next_edit.rewrite import TextChange
from qodeassist_lsp.wire.errors import InvalidParams
from qodeassist_lsp.workbench.bench import Workbench
from qodeassist_lsp.workbench.ports import Ports

URI = "file:///p/a.py"


def _bench(documents: DocumentStore) -> Workbench:
    """A workbench whose agents are never asked (the next edit's answers are faked)."""
    return Workbench(cast(RuntimeView, object()), Ports(folders=list, documents=documents))


def _server(encoding: str = "utf-16") -> tuple[NesServer, DocumentStore, str]:
    documents = DocumentStore()
    nes = NesServer(_bench(documents))
    nes.encoding = encoding
    session = nes.start(StartNesRequest()).session_id
    return nes, documents, session


def _change(session: str, start: tuple[int, int], end: tuple[int, int], text: str) -> Any:
    where = {
        "start": {"line": start[0], "character": start[1]},
        "end": {"line": end[0], "character": end[1]},
    }
    return DidChangeDocumentNotification.model_validate(
        {
            "sessionId": session,
            "uri": URI,
            "version": 2,
            "contentChanges": [{"range": where, "text": text}],
        }
    )


def _open(nes: NesServer, session: str, text: str) -> None:
    nes.did_open(
        DidOpenDocumentNotification(
            session_id=session, uri=URI, language_id="python", version=1, text=text
        )
    )


def test_the_encoding_prefers_code_points_and_defaults_to_utf16() -> None:
    assert pick_encoding(["utf-8", "utf-32", "utf-16"]) == "utf-32"
    assert pick_encoding(["utf-8"]) == "utf-8"
    assert pick_encoding(None) == "utf-16"


@pytest.mark.parametrize(("encoding", "column"), [("utf-16", 6), ("utf-32", 5), ("utf-8", 8)])
def test_a_ranged_change_after_an_astral_character_lands_where_the_client_meant(
    encoding: str, column: int
) -> None:
    nes, documents, session = _server(encoding)
    _open(nes, session, 'x = "😀a"\nnext\n')
    nes.did_change(_change(session, (0, column + 1), (0, column + 2), "b"))
    document = documents.get(URI)
    assert document is not None and document.text == 'x = "😀b"\nnext\n'
    assert document.version == 2
    assert documents.edit_history.last(URI) is not None  # the prompt's edit history


def test_a_rangeless_change_replaces_the_whole_text_and_unopened_documents_are_ignored() -> None:
    nes, documents, session = _server()
    nes.did_change(_change(session, (0, 0), (0, 0), "ignored"))
    assert documents.get(URI) is None
    _open(nes, session, "a\n")
    whole = DidChangeDocumentNotification.model_validate(
        {"sessionId": session, "uri": URI, "version": 3, "contentChanges": [{"text": "b\n"}]}
    )
    nes.did_change(whole)
    document = documents.get(URI)
    assert document is not None and document.text == "b\n"


def test_suggestion_ranges_leave_in_the_clients_units() -> None:
    nes, documents, _session = _server("utf-16")
    document = documents.open(URI, '"😀" + area\n', 1)
    edit = SuggestedEdit.issue(document, TextChange(6, 10, "surface"), "agent")
    [text_edit] = nes._suggestion(edit).edits
    assert (text_edit.range.start.character, text_edit.range.end.character) == (7, 11)


def test_accept_and_reject_count_shown_and_accepted_once() -> None:
    nes, documents, session = _server()
    document = documents.open(URI, "a\n", 1)
    edits = tuple(SuggestedEdit.issue(document, TextChange(0, 1, "b"), "E") for _ in range(2))
    stats = nes.service().stats
    stats.record(NextEditResult(Outcome.SUGGESTED, edits=edits, agent="E"))
    nes.accept(AcceptNesNotification(session_id=session, id=edits[0].id))
    nes.accept(AcceptNesNotification(session_id=session, id=edits[0].id))
    nes.reject(RejectNesNotification(session_id=session, id=edits[1].id, reason="rejected"))
    data = stats.to_json()
    assert (data["shown"], data["accepted"]) == (2, 1)
    with pytest.raises(InvalidParams):  # answered -32602 by the route
        nes.accept(AcceptNesNotification(session_id="other", id=edits[1].id))
    nes.close(session)
    with pytest.raises(InvalidParams):  # answered -32602 by the route
        nes.reject(RejectNesNotification(session_id=session, id=edits[1].id))
    nes.aclose()


def test_the_sessions_qodeassistignore_keeps_files_out(tmp_path: Any) -> None:
    (tmp_path / ".qodeassistignore").write_text("secret.py\n")
    (tmp_path / ".gitignore").write_text("built.py\n")
    nes = NesServer(_bench(DocumentStore()))
    nes.start(StartNesRequest(workspace_uri=tmp_path.as_uri()))
    documents = DocumentStore()
    secret = documents.open((tmp_path / "secret.py").as_uri(), "", 1)
    built = documents.open((tmp_path / "built.py").as_uri(), "", 1)
    ignored = nes.service()._is_ignored
    assert ignored(secret) and not ignored(built)


async def test_a_route_answers_the_errors_of_the_tree_by_the_table() -> None:
    from acp import RequestError
    from acp.schema import CloseNesRequest

    from qodeassist_lsp.acp_agent.nes import _handler

    def refuse(_request: object) -> None:
        raise InvalidParams("no NES session 'x'; start one with nes/start")

    with pytest.raises(RequestError) as refused:
        await _handler(CloseNesRequest, refuse)({"sessionId": "x"})
    assert refused.value.code == -32602
    assert refused.value.data == {"message": "no NES session 'x'; start one with nes/start"}
