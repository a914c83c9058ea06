"""Telling a host of this machine (`wire.urls.is_loopback_host`)."""

from __future__ import annotations

import pytest

from qodeassist_lsp.wire.urls import is_loopback_host


@pytest.mark.parametrize(
    ("host", "loop"),
    [
        ("localhost", True),
        ("LocalHost", True),
        ("models.localhost", True),
        ("localhost.localdomain", True),
        ("ip6-localhost", True),
        ("127.0.0.5", True),
        ("::1", True),
        ("[::1]", True),
        ("example.com", False),
        ("localhost.example.com", False),
        ("10.0.0.1", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, loop: bool) -> None:
    assert is_loopback_host(host) is loop
