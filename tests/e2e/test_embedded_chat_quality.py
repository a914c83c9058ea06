"""The Embedded Chat agent's prompt and sampling, measured on the real SmolLM2-135M-Instruct.

A 135M model cannot be a good assistant, but it must not misbehave the way the old setup did:
answer "hi" with its own persona text, or loop until ``max_tokens``. Five everyday prompts, the
agent's own seeded sampling (so a run is repeatable), and two checks per answer: no run of six
words of the system prompt in it, and no loop (the session's repetition watch and a last-line
count), ending on its own before ``max_tokens``. Skipped without the ``local`` extra, like
``test_embedded_model.py``, whose fixtures start the servers on free ports.
"""

from __future__ import annotations

import re

from qodeassist_lsp.core.content import user_text
from qodeassist_lsp.core.events import FinishedEvent, TextEvent
from qodeassist_lsp.core.repetition import RepetitionWatch
from qodeassist_lsp.core.runtime import Runtime
from tests.e2e.test_embedded_model import model_cache, pytestmark, runtime

__all__ = ["model_cache", "pytestmark", "runtime"]

PROMPTS = (
    "hi",
    "what does this regex do: ^a+b$",
    "reverse a string in python",
    "What is the capital of France?",
    "write a python function that adds two numbers",
)
ECHO_WORDS = 6
"""A run of this many consecutive words of the system prompt in an answer counts as an echo."""


def echoed(system_prompt: str, answer: str) -> list[str]:
    """Return the runs of ``ECHO_WORDS`` words of ``system_prompt`` that ``answer`` contains."""
    words = re.findall(r"\w+", system_prompt.lower())
    said = " ".join(re.findall(r"\w+", answer.lower()))
    runs = (" ".join(words[i : i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1))
    return [run for run in runs if run in said]


def test_echo_check_catches_a_recited_prompt() -> None:
    prompt = "You are a small offline assistant for programmers. Answer briefly."
    assert echoed(prompt, "Hello! I am a small offline assistant for programmers, ask away.")
    assert not echoed(prompt, "Hello! How can I help you with your code today?")


async def test_everyday_prompts_get_no_echo_and_no_loop(runtime: Runtime) -> None:
    profile = runtime.configuration.agents["Embedded Chat"]
    limit = profile.body["max_tokens"]
    report = []
    for prompt in PROMPTS:
        session = runtime.sessions.create("Embedded Chat")
        request = session.send(user_text(prompt))
        events = [event async for event in request.events()]
        answer = "".join(e.text for e in events if isinstance(e, TextEvent))
        terminal = events[-1]
        assert isinstance(terminal, FinishedEvent), terminal
        report.append(f"{prompt!r} -> {terminal.stop_reason}: {answer!r}")
        assert answer.strip(), prompt
        assert not echoed(profile.system_prompt, answer), (prompt, answer)
        watch = RepetitionWatch()
        assert not watch.feed(answer + "\n"), (prompt, watch.looping_line)
        assert terminal.stop_reason == "end_turn", (prompt, answer)
        assert len(answer) < limit * 6, (prompt, answer)
    print("\n".join(report))
