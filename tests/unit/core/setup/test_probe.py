"""Probe targets: only this machine, from the command line or the environment."""

from __future__ import annotations

import pytest

from qodeassist_lsp.core.setup.probe import (
    DEFAULT_PORTS,
    PROBE_ENV,
    ProbeTargetError,
    Target,
    default_targets,
    discover,
    instruction_tuned,
    parse_target,
)


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("11434", Target("127.0.0.1", 11434)),
        ("localhost:8080", Target("localhost", 8080)),
        ("127.0.0.2:1", Target("127.0.0.2", 1)),
        ("[::1]:1234", Target("::1", 1234)),
    ],
)
def test_targets_on_this_machine_are_accepted(text: str, target: Target) -> None:
    assert parse_target(text) == target


@pytest.mark.parametrize("text", ["192.168.1.20:8080", "example.com:11434", "gpu-box:8000"])
def test_other_hosts_are_refused_with_the_way_to_configure_them(text: str) -> None:
    with pytest.raises(ProbeTargetError, match=r"only probes this machine.*provider instance"):
        parse_target(text)


@pytest.mark.parametrize("text", ["", "localhost", "127.0.0.1:0", "127.0.0.1:70000", "x:y"])
def test_malformed_targets_are_refused(text: str) -> None:
    with pytest.raises(ProbeTargetError, match="not a port or HOST:PORT"):
        parse_target(text)


def test_the_environment_replaces_the_default_ports() -> None:
    assert default_targets({PROBE_ENV: "1234, 127.0.0.1:5"}) == [
        Target("127.0.0.1", 1234),
        Target("127.0.0.1", 5),
    ]
    assert [t.port for t in default_targets({})] == [port for port, _ in DEFAULT_PORTS]
    assert Target("::1", 80).base_url == "http://[::1]:80"


async def test_a_closed_port_is_reported_as_closed_at_once(unused_tcp_port: int) -> None:
    [outcome] = await discover([Target("127.0.0.1", unused_tcp_port)], limit_s=5)
    assert outcome.status == "closed" and outcome.server is None


@pytest.mark.parametrize(
    ("names", "tuned"),
    [
        (("gemma3-270m", "gemma-3-270m-q4_k_m.code-vocab-1be9b9681e86.gguf"), False),
        (("gemma-3-4b-it-Q4_K_M.gguf",), True),
        (("smollm2-135m-instruct", "SmolLM2-135M-Instruct.Q4_1.gguf"), True),
        (("Meta-Llama-3.1-8B-Q4_K_M.gguf",), False),
        (("Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf",), True),
        (("Qwen2.5-7B.Q4_K_M.gguf",), False),
        (("deepseek-coder-6.7b-base.Q4_K_M.gguf",), False),
        (("Qwen3-8B-Q4_K_M.gguf",), None),
        (("phi-4-Q4_K_M.gguf",), None),
        (("gpt-oss-20b-mxfp4.gguf",), None),
    ],
)
def test_instruction_tuned_models_are_told_by_their_names(
    names: tuple[str, ...], tuned: bool | None
) -> None:
    verdict, why = instruction_tuned(*names)
    assert verdict is tuned
    assert bool(why) is (tuned is not None)
