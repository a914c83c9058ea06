"""Error classification of the recorded HTTP error bodies, envelopes, exceptions; redaction."""

import email.utils
import time

import httpx
import pytest

from qodeassist_lsp.wire.classify import (
    classify_exception,
    classify_http_error,
    classify_stream_error,
    retry_after_seconds,
)
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorContext, ErrorInfo, WireError, redact

AUTH = ErrorCategory.AUTH
CONFIG = ErrorCategory.CONFIG
PROVIDER = ErrorCategory.PROVIDER
VALIDATION = ErrorCategory.VALIDATION

CLAUDE = ErrorContext(provider="Claude", api_key_env="ANTHROPIC_API_KEY")


@pytest.mark.parametrize(
    ("name", "status", "category", "said"),
    [
        ("anthropic/error_http_400_invalid_request.json", 400, VALIDATION, "effort level 'xhigh'"),
        ("anthropic/error_http_401_authentication.json", 401, AUTH, "invalid x-api-key"),
        ("anthropic/error_http_529_overloaded.json", 529, PROVIDER, "Overloaded"),
        ("anthropic/error_http_529_overloaded_with_request_id.json", 529, PROVIDER, "Overloaded"),
        (
            "gemini/error_http_404_model_not_found.json",
            404,
            CONFIG,
            "gemini-3.6-flahs is not found",
        ),
        ("gemini/error_http_429_resource_exhausted.json", 429, PROVIDER, "exceeded your current"),
        ("llamacpp/error_http_500_tools_with_stream.json", 500, PROVIDER, "Cannot use tools with"),
        ("llamacpp/error_http_503_loading_model.json", 503, PROVIDER, "Loading model"),
        ("ollama/error_http_400_suffix_not_supported.json", 400, VALIDATION, "not support insert"),
        ("ollama/error_http_400_thinking_not_supported.json", 400, VALIDATION, "support thinking"),
        ("ollama/error_http_404_model_not_found.json", 404, CONFIG, "model '' not found"),
        ("ollama/error_http_429_rate_limit.json", 429, PROVIDER, "rate limit exceeded"),
        ("ollama/error_http_503_overloaded.json", 503, PROVIDER, "model is overloaded"),
        ("openai_chat/error_http_401_invalid_api_key.json", 401, AUTH, "Incorrect API key"),
        ("openai_chat/error_http_404_model_not_found.json", 404, CONFIG, "gpt-5.2-proo"),
        ("openai_responses/error_http_400_invalid_param.json", 400, VALIDATION, "temperature"),
        ("openai_responses/error_http_400_model_not_found.json", 400, CONFIG, "gpt-5.2-proo"),
    ],
)
def test_recorded_http_error_bodies(kit, name, status, category, said) -> None:
    body = kit.bytes(name)
    info = classify_http_error(status, {}, body, CLAUDE)
    assert info.category is category
    assert info.status == status
    assert said in info.message and f"HTTP {status}" in info.message
    assert info.provider_detail == body.decode()
    assert info.message.startswith("Claude ")


def test_auth_message_says_how_to_fix(kit) -> None:
    info = classify_http_error(
        401, {}, kit.bytes("anthropic/error_http_401_authentication.json"), CLAUDE
    )
    assert "Set ANTHROPIC_API_KEY or run `qodeassist-lsp secrets set Claude`" in info.message
    generic = classify_http_error(403, {}, b"forbidden", ErrorContext(provider="Ollama (Native)"))
    assert "`qodeassist-lsp secrets set 'Ollama (Native)'`" in generic.message  # shell-safe


def test_config_message_points_at_models_command(kit) -> None:
    info = classify_http_error(
        404, {}, kit.bytes("openai_chat/error_http_404_model_not_found.json"), CLAUDE
    )
    assert "`qodeassist-lsp models Claude`" in info.message


def test_retry_after_from_headers_and_google_retry_info(kit) -> None:
    body = kit.bytes("ollama/error_http_429_rate_limit.json")
    assert classify_http_error(429, {"Retry-After": "7"}, body).retry_after == 7.0
    assert classify_http_error(429, {"retry-after-ms": "1500"}, body).retry_after == 1.5
    gemini = kit.bytes("gemini/error_http_429_resource_exhausted.json")
    info = classify_http_error(429, {}, gemini)
    assert info.retry_after == 34.4 and "wait 34 s" in info.message
    overloaded = kit.bytes("anthropic/error_http_529_overloaded.json")
    assert classify_http_error(529, {"retry-after": "3"}, overloaded).retry_after == 3.0
    # Retry-After on a client error means nothing to us.
    assert classify_http_error(400, {"retry-after": "3"}, b"{}").retry_after is None


def test_retry_after_http_date() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    seconds = retry_after_seconds({"Retry-After": when})
    assert seconds is not None and 25 <= seconds <= 31
    assert retry_after_seconds({"Retry-After": "soon"}) is None


def test_non_json_error_body() -> None:
    info = classify_http_error(502, {}, b"<html>Bad Gateway</html>")
    assert info.category is PROVIDER and "Bad Gateway" in info.message


def test_stream_envelopes() -> None:
    anthropic = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert classify_stream_error(anthropic).category is PROVIDER
    responses_old = {"type": "error", "code": "invalid_api_key", "message": "bad key"}
    assert classify_stream_error(responses_old).category is AUTH
    mistral = {"object": "error", "message": "invalid model", "type": "invalid_model"}
    assert classify_stream_error(mistral).category is PROVIDER
    ollama = {"error": "boom"}
    assert "boom" in classify_stream_error(ollama).message
    assert classify_stream_error({"choices": []}) is None
    assert classify_stream_error("not a dict") is None


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectError("[Errno 111] Connection refused"),
        httpx.ConnectTimeout("timed out"),
        httpx.ReadTimeout("timed out"),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
        TimeoutError(),
    ],
)
def test_transport_exceptions_are_network_errors(exc) -> None:
    info = classify_exception(exc, ErrorContext(provider="llama.cpp"))
    assert info.category is ErrorCategory.NETWORK
    assert "llama.cpp" in info.message and "Check the URL" in info.message


def test_redaction_of_known_secrets_and_credential_shapes() -> None:
    text = (
        "Authorization: Bearer abc.def-123 x-api-key: sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAA "
        'headers {"x-api-key": "plainsecret1"} url https://g/v1beta/models?alt=sse&key=AIzaXYZ '
        "and my-own-token-42 again"
    )
    out = redact(text, ["my-own-token-42"])
    for secret in (
        "abc.def-123",
        "sk-ant-api03-AAAA",
        "plainsecret1",
        "AIzaXYZ",
        "my-own-token-42",
    ):
        assert secret not in out
    assert "Bearer ***" in out and "key=***" in out and '"x-api-key": "***"' in out


def test_error_info_is_redacted_on_creation() -> None:
    info = ErrorInfo(
        ErrorCategory.AUTH, "sent Authorization: Bearer sk-live-123", "url ...?key=AIzaSECRET"
    )
    assert "sk-live-123" not in info.message and "AIzaSECRET" not in info.provider_detail
    again = ErrorInfo(ErrorCategory.AUTH, "the key hunter2-secret leaked").redacted(
        ["hunter2-secret"]
    )
    assert "hunter2-secret" not in again.message
    assert str(WireError(again)) == again.message


def test_web_pages_are_told_from_api_answers_by_type_or_first_bytes() -> None:
    from qodeassist_lsp.wire.classify import is_web_page

    assert is_web_page("text/html; charset=UTF-8", b"")
    assert is_web_page("application/xhtml+xml", b"")
    assert is_web_page("", b"\r\n  <!DOCTYPE HTML PUBLIC>")
    assert is_web_page("text/event-stream", b"<html lang=en>")
    assert not is_web_page("text/event-stream", b'data: {"html": "<html>"}\n\n')
    assert not is_web_page("application/json", b'{"error": "<!doctype html>"}')
    assert not is_web_page("", b"")
