"""A prompt's content blocks as one chat message and its attachments."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import pytest
from acp import (
    RequestError,
    embedded_blob_resource,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)

from qodeassist_lsp.acp_agent.agent import QodeAssistAgent, _message
from qodeassist_lsp.acp_agent.session import AcpSession, ClientAbilities
from qodeassist_lsp.features.chat.files import ChatBusy
from qodeassist_lsp.wire.errors import InvalidParams

if TYPE_CHECKING:
    from acp import Client

    from qodeassist_lsp.acp_agent.host import AcpHost
    from qodeassist_lsp.features.chat.service import ChatService


def test_text_links_and_embedded_text_make_the_message() -> None:
    text, attachments, images = _message(
        [
            text_block("Fix "),
            text_block("this"),
            resource_link_block("a.py", "file:///p/a.py"),
            resource_link_block("docs", "https://example.com/docs"),
            resource_block(embedded_text_resource("file:///p/b.py", "print(1)")),
        ]
    )
    assert attachments == ["file:///p/a.py"] and images == []
    assert text == (
        "Fix \n\nthis\n\n[docs](https://example.com/docs)\n\n"
        "File: file:///p/b.py\n```\nprint(1)\n```"
    )


def test_text_blocks_are_separate_paragraphs() -> None:
    blocks = [text_block("First message."), text_block(""), text_block("Second message.")]
    assert _message(blocks)[0] == "First message.\n\nSecond message."


def test_images_are_decoded_and_named() -> None:
    _text, _attachments, images = _message(
        [text_block("look"), image_block("aGk=", "image/png"), image_block("aGk=", "image/jpeg")]
    )
    assert [(i.data, i.media_type, i.name) for i in images] == [
        (b"hi", "image/png", "image-1"),
        (b"hi", "image/jpeg", "image-2"),
    ]
    [named] = _message([image_block("aGk=", "image/png", uri="file:///tmp/shot.png")])[2]
    assert named.name == "shot"


@pytest.mark.parametrize(
    "block",
    [
        image_block("not base64!", "image/png"),
        resource_block(embedded_blob_resource("file:///p/x.bin", "aGk=")),
    ],
)
def test_content_the_agent_does_not_take_is_refused(block: object) -> None:
    with pytest.raises(InvalidParams):  # the agent's methods answer it -32602
        _message([text_block("look"), block])


class _BusyChats:
    """A chat service whose chat is answering elsewhere (`ChatService.send` raises ChatBusy)."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    def agent_of(self, _chat_id: str) -> str:
        return ""

    async def send(self, params: Any) -> None:
        raise ChatBusy(params.chat_id, "req-1")

    def cancel(self, chat_id: str) -> None:
        self.cancelled.append(chat_id)


async def test_a_chat_busy_elsewhere_is_refused_with_invalid_request_and_nothing_cancelled() -> (
    None
):
    host = cast(
        "AcpHost", SimpleNamespace(bench=SimpleNamespace(ports=SimpleNamespace(documents=None)))
    )
    agent = QodeAssistAgent(host)
    chats = _BusyChats()
    session = AcpSession(
        "s1", Path("/"), cast("ChatService", chats), cast("Client", None), ClientAbilities(), None
    )
    agent.sessions["s1"] = session
    try:
        with pytest.raises(RequestError) as refused:
            await agent.prompt("s1", [text_block("hi")])
        assert refused.value.code == -32600
        assert "still answering" in str(refused.value.data)
        assert chats.cancelled == [] and not session.busy  # the session takes the next prompt
    finally:
        await session.aclose()
