from __future__ import annotations

from typing import Any

import pytest

from qodeassist_lsp.core.agent_pool import Requirements
from qodeassist_lsp.http_api.errors import ApiError
from qodeassist_lsp.http_api.openai_routes import Completion
from qodeassist_lsp.wire.error_table import http_answer


def parse(**body: Any) -> Completion:
    return Completion({"model": "A", "messages": [{"role": "user", "content": "hi"}], **body})


def test_a_conversation_becomes_history_system_and_the_last_message() -> None:
    args = parse(
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "one"}]},
            {"role": "assistant", "content": "two"},
            {"role": "developer", "content": "Use Python."},
            {"role": "user", "content": "three"},
        ],
        stream=True,
        stream_options={"include_usage": True},
        qodeassist={"chatId": "c1", "permissions": "ask", "events": True},
    )
    assert args.message == "three"
    assert [(m.role, m.text) for m in args.history] == [("user", "one"), ("assistant", "two")]
    assert args.system == "Be brief.\n\nUse Python."
    assert args.stream and args.include_usage and args.events
    assert (args.chat_id, args.mode) == ("c1", "ask")


def test_defaults_deny_ask_and_start_a_new_chat() -> None:
    args = parse()
    assert (args.mode, args.chat_id, args.stream, args.events) == ("deny", None, False, False)


def image_part(url: str) -> dict[str, object]:
    return {"type": "image_url", "image_url": {"url": url}}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"model": ""}, "model"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "assistant", "content": "x"}]}, "last message"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "tools run on the server"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "data:image/"),
        ({"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}, "text and image"),
        (
            {
                "messages": [
                    {"role": "user", "content": "x"},
                    {"role": "assistant", "content": [image_part("data:image/png;base64,aGk=")]},
                    {"role": "user", "content": "y"},
                ]
            },
            "only user messages can carry images",
        ),
        (
            {"messages": [{"role": "user", "content": [image_part("data:image/png;base64,@@")]}]},
            "not base64",
        ),
        ({"messages": [{"role": "user", "content": 3}]}, "string or a list"),
        ({"qodeassist": {"permissions": "always"}}, "deny, allow, ask"),
        ({"qodeassist": []}, "must be an object"),
        ({"qodeassist": {"requires": {"tools": True}}}, "both choose the agent"),
        ({"model": "pool", "qodeassist": {"requires": {"gpu": 1}}}, "unknown key(s) gpu"),
        ({"model": "pool", "qodeassist": {"requires": {"local": 1}}}, "qodeassist.requires.local"),
    ],
)
def test_bad_requests_say_what_to_change(body: dict[str, Any], says: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse(**body)
    assert http_answer(caught.value).status == 400
    assert says in str(caught.value)


def test_requires_asks_the_agent_pool() -> None:
    wanted = {"tools": True, "minContext": 8000, "tags": ["python"]}
    args = parse(model="pool", qodeassist={"requires": wanted})
    assert args.requires == Requirements(tools=True, min_context=8000, tags=("python",))
    assert (
        Completion(
            {"messages": [{"role": "user", "content": "hi"}], "qodeassist": {"requires": {}}}
        ).requires
        == Requirements()
    )
    assert parse(model="pool").requires == Requirements()  # any agent, within the limits
    assert parse().requires is None and parse().model == "A"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
        ({"functions": [{"name": "f"}]}, "functions"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"tool_choice": {"type": "function", "function": {"name": "f"}}}, "tool_choice"),
        ({"function_call": {"name": "f"}}, "function_call"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        ({"response_format": {"type": "json_schema", "json_schema": {}}}, "response_format"),
        ({"n": 2}, "n"),
        ({"n": True}, "n"),
        ({"stream": "false"}, "stream"),
        ({"stream": 1}, "stream"),
    ],
)
def test_fields_that_cannot_be_served_are_refused_by_name(body: dict[str, Any], param: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse(**body)
    assert (http_answer(caught.value).status, caught.value.param) == (400, param)
    assert str(caught.value).startswith(param)


def test_harmless_values_of_those_fields_are_accepted() -> None:
    args = parse(tools=[], tool_choice="none", response_format={"type": "text"}, n=1, stream=False)
    assert args.stream is False
    assert parse(tool_choice="auto", stream=None).stream is False


def test_an_image_over_the_limit_is_refused_before_anything_runs() -> None:
    import base64

    from qodeassist_lsp.features.chat.files import MAX_IMAGE_BYTES

    data = base64.b64encode(b"\0" * (MAX_IMAGE_BYTES + 1)).decode()
    with pytest.raises(ApiError) as caught:
        parse(messages=[{"role": "user", "content": [image_part(f"data:image/png;base64,{data}")]}])
    assert "20 MiB" in str(caught.value)
    assert caught.value.param == "messages[0].content[0]"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"qodeassist": {"chatId": 5}}, "qodeassist.chatId"),
        ({"qodeassist": {"events": [1]}}, "qodeassist.events"),
        ({"stream_options": {"include_usage": "maybe"}}, "stream_options.include_usage"),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]},
            "messages[0].content[0].text",
        ),
        ({"messages": [{"role": "user", "content": [3]}]}, "messages[0].content[0]"),
        ({"messages": "hi"}, "messages"),
        ({"messages": [3]}, "messages[0]"),
        ({"model": 3}, "model"),
    ],
)
def test_the_body_model_names_the_field_of_a_wrong_type(body: dict[str, Any], param: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse(**body)
    assert (http_answer(caught.value).status, caught.value.param) == (400, param)
    assert str(caught.value).startswith(param)


def test_unknown_fields_are_accepted() -> None:
    args = parse(user="u1", seed=7, metadata={"a": 1}, qodeassist={"futureField": True})
    assert args.message == "hi"


async def test_auto_is_a_model_only_when_the_router_has_chat_agents_to_pick_from() -> None:
    from types import SimpleNamespace

    from qodeassist_lsp.config.pipelines import Pipelines
    from qodeassist_lsp.http_api.openai_routes import _check_model

    pipelines = Pipelines({"chat_assistant": ("A", "Gone"), "chat_router": ("R",)})
    agents: dict[str, object] = {"R": object()}  # no chat agent loaded: GET /v1/models is empty

    async def runtime() -> Any:
        return SimpleNamespace(configuration=SimpleNamespace(pipelines=pipelines, agents=agents))

    host: Any = SimpleNamespace(runtime=runtime)
    with pytest.raises(ApiError, match="use one of: none") as caught:
        await _check_model(host, "auto")
    assert caught.value.error_code == "model_not_found"
    agents["A"] = object()
    await _check_model(host, "auto")
    await _check_model(host, "A")
    with pytest.raises(ApiError, match="use one of: A, auto"):
        await _check_model(host, "Gone")
