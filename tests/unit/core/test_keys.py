"""Key rotation: round-robin, 429 rests for Retry-After, 401/403 parks, single keys stay."""

from __future__ import annotations

from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.core.keys import KeyRotation
from qodeassist_lsp.wire.errors import ErrorCategory, ErrorInfo

VALUES = {"A": "key-a", "B": "key-b", "C": "key-c"}
LIMITED = ErrorInfo(ErrorCategory.PROVIDER, "HTTP 429", status=429, retry_after=30)
REJECTED = ErrorInfo(ErrorCategory.AUTH, "HTTP 401", status=401)
DOWN = ErrorInfo(ErrorCategory.PROVIDER, "HTTP 503", status=503)


def rotation(*envs: str, now: list[float]) -> KeyRotation:
    return KeyRotation([("", e) for e in envs], lambda ref, env: VALUES.get(env), lambda: now[0])


def test_lists_pair_up_by_position_and_a_plain_string_is_one_key() -> None:
    many = ProviderInstance(
        name="P",
        client_api="OpenAI Compatible",
        url="https://x",
        api_key_ref=["r1", "r2"],  # type: ignore[arg-type]
        api_key_env=["E1", "E2", "E3"],  # type: ignore[arg-type]
    )
    assert (many.api_key_ref, many.api_key_env) == ("r1", "E1")
    assert many.key_slots == [("r1", "E1"), ("r2", "E2"), ("", "E3")]
    one = ProviderInstance(
        name="P", client_api="OpenAI Compatible", url="https://x", api_key_env="E"
    )
    assert one.key_slots == [("", "E")]


def test_round_robin_and_a_rate_limited_key_rests_for_retry_after() -> None:
    now = [0.0]
    keys = rotation("A", "B", "C", now=now)
    assert [keys.next_key() for _ in range(4)] == ["key-a", "key-b", "key-c", "key-a"]
    keys.record_failure("key-b", LIMITED)
    assert "key-b" not in [keys.next_key() for _ in range(4)]
    assert keys.snapshot()[1]["state"] == "resting" and keys.snapshot()[1]["until"] == 30
    now[0] = 30
    assert "key-b" in [keys.next_key() for _ in range(3)]


def test_a_rejected_key_is_parked_and_other_failures_leave_keys_alone() -> None:
    keys = rotation("A", "B", now=[0.0])
    keys.record_failure("key-a", REJECTED)
    keys.record_failure("key-b", DOWN)
    assert [keys.next_key() for _ in range(3)] == ["key-b"] * 3
    assert [k["state"] for k in keys.snapshot()] == ["parked", "ready"]
    assert "key-" not in str(keys.snapshot())


def test_when_every_key_is_out_the_one_back_soonest_serves() -> None:
    keys = rotation("A", "B", now=[0.0])
    keys.record_failure("key-a", REJECTED)
    keys.record_failure("key-b", LIMITED)
    assert keys.next_key() == "key-b"
    assert not keys.has_ready_spare(None)


def test_a_single_key_is_never_taken_out() -> None:
    keys = rotation("A", now=[0.0])
    keys.record_failure("key-a", REJECTED)
    assert keys.next_key() == "key-a" and keys.snapshot()[0]["state"] == "ready"
