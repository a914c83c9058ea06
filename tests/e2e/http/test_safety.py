"""What every request to ``serve --http`` must pass: token, Host, Origin, body size; and the
loopback default with its explicit opt-out."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from tests.e2e.http.conftest import HttpServer, free_port
from tests.support.workspace import Workspace

ROUTES = [
    ("GET", "/health"),
    ("GET", "/v1/models"),
    ("POST", "/v1/chat/completions"),
    ("GET", "/v1/qodeassist/chats"),
    ("POST", "/mcp"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_no_token_and_a_wrong_token_are_refused(
    shared_server: HttpServer, method: str, path: str
) -> None:
    bare = httpx.request(method, f"{shared_server.url}{path}", json={})
    assert bare.status_code == 401
    assert bare.headers["www-authenticate"] == "Bearer"
    wrong = httpx.request(
        method, f"{shared_server.url}{path}", json={}, headers={"Authorization": "Bearer nope"}
    )
    assert wrong.status_code == 401


def test_a_foreign_host_is_refused_even_with_the_token(shared_server: HttpServer) -> None:
    with shared_server.client() as http:
        assert http.get("/health").status_code == 200
        rebound = http.get("/health", headers={"Host": "evil.example:80"})
        assert rebound.status_code == 403
        assert "evil.example" in rebound.json()["error"]["message"]
        assert http.get("/", headers={"Host": "evil.example"}).status_code == 403
        assert http.get("/health", headers={"Host": "localhost"}).status_code == 200


def test_another_sites_origin_is_refused_and_no_cors_headers_are_sent(
    shared_server: HttpServer,
) -> None:
    with shared_server.client() as http:
        foreign = http.get("/v1/models", headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403
        own = http.get("/v1/models", headers={"Origin": shared_server.url})
        assert own.status_code == 200
        assert not any(k.lower().startswith("access-control-") for k in own.headers)
        preflight = http.options(
            "/v1/chat/completions",
            headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status_code == 403


@pytest.mark.parametrize(
    ("path", "mib"), [("/v1/qodeassist/edits/e1", 5), ("/v1/chat/completions", 33)]
)
def test_a_huge_body_is_refused(shared_server: HttpServer, path: str, mib: int) -> None:
    """4 MiB, and 32 MiB where messages may carry a 20 MiB image (in base64)."""
    huge = b"{" + b" " * (mib * 1024 * 1024) + b"}"
    with shared_server.client() as http:
        declared = http.post(path, content=huge)
        assert declared.status_code == 413
        assert declared.json()["error"]["code"] == "too_large"

        def chunks():  # no Content-Length: counted while read
            for _ in range(mib + 1):
                yield b" " * (1024 * 1024)

        streamed = http.post(path, content=chunks())
        assert streamed.status_code == 413
        assert http.get("/health").status_code == 200  # still serving


def test_the_page_is_served_without_the_token_and_holds_none(shared_server: HttpServer) -> None:
    page = httpx.get(f"{shared_server.url}/")
    assert page.status_code == 200
    assert "<textarea" in page.text
    assert shared_server.token not in page.text
    assert "connect-src 'self'" in page.headers["content-security-policy"]


def test_a_rotated_token_replaces_the_old_one_at_once(http_server: HttpServer) -> None:
    rotated = http_server.workspace.run("serve", "--http-rotate-token")
    assert rotated.returncode == 0, rotated.describe()
    new = rotated.stdout.strip().splitlines()[-1]
    assert new and new != http_server.token
    assert (
        httpx.get(
            f"{http_server.url}/health", headers={"Authorization": f"Bearer {new}"}
        ).status_code
        == 200
    )
    old = httpx.get(
        f"{http_server.url}/health", headers={"Authorization": f"Bearer {http_server.token}"}
    )
    assert old.status_code == 401


def test_a_non_loopback_address_needs_the_explicit_flag(workspace: Workspace) -> None:
    refused = workspace.run("serve", "--http", f"0.0.0.0:{free_port()}")
    assert refused.returncode == 1
    assert "--http-allow-remote" in refused.stderr


def test_a_port_in_use_is_a_clear_error(workspace: Workspace) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = workspace.run("serve", "--http", f"127.0.0.1:{port}")
    assert refused.returncode == 1
    assert "is the port in use?" in refused.stderr
    assert "#token=" not in refused.stderr  # no address printed for a server that is not up


def test_health_is_the_status_of_the_hosts_runtime(shared_server: HttpServer) -> None:
    with shared_server.client() as http:
        status = http.get("/health").json()
        deadline = time.monotonic() + 60  # a hang guard: loading is slow on a loaded machine
        while status["state"] != "ready" and time.monotonic() < deadline:
            time.sleep(0.1)
            status = http.get("/health").json()
    assert status["state"] == "ready" and status["agents"] > 0
    assert status["problems"]["errors"] == 0
    assert list(status["pipelines"]) == ["chatAssistant"]
    assert isinstance(status["pipelines"]["chatAssistant"], list)
