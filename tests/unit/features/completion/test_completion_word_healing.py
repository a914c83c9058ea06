"""Word healing through the service: the half-typed word cut off the prompt and the answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.template_context import complete_context
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.features.completion.requests import TriggerKind
from qodeassist_lsp.features.completion.stats import Outcome
from tests.unit.features.completion.test_completion_service import (
    AGENT,
    PY,
    Harness,
    harness,
    until,
)

__all__ = ["harness"]  # the fixture, imported for the tests below

GRAMMAR = (
    "grammar = '''{% if ctx.healed_word %}"
    '{{ ("root ::= " ~ (ctx.healed_word | tojson) ~ " [^\\\\x00]*") | tojson }}'
    "{% endif %}'''\n"
)
HEALING = AGENT + GRAMMAR


@pytest.fixture
def completer_agent() -> str:
    return HEALING


async def test_the_prompt_ends_before_the_word_and_the_answer_loses_it(
    harness: Harness,
) -> None:
    harness.answer("return", " y", "\n")
    result = await harness.complete("def f(y):\n    re|\n")
    assert [i.insert_text for i in result.items] == ["turn y"]
    [body] = harness.bodies
    assert body["prompt"] == "def f(y):\n    "
    assert body["grammar"] == 'root ::= "re" [^\\x00]*'


async def test_the_spaces_after_code_go_with_the_word(harness: Harness) -> None:
    harness.answer(" for", "mat(x)", "\n")
    result = await harness.complete("y = fo|\n")
    assert [i.insert_text for i in result.items] == ["rmat(x)"]
    assert harness.bodies[0]["prompt"] == "y ="
    assert harness.bodies[0]["grammar"] == 'root ::= " fo" [^\\x00]*'


async def test_an_answer_without_the_word_is_dropped(harness: Harness) -> None:
    harness.answer("x", " = 1", "\n")  # a provider that ignored the grammar
    result = await harness.complete("def f(y):\n    re|\n")
    assert result.items == ()
    assert result.outcome is Outcome.EMPTY


async def test_a_word_going_on_right_of_the_cursor_is_not_healed(harness: Harness) -> None:
    harness.answer("o", "\n")
    await harness.complete("y = fo|o\n")
    assert harness.bodies[0]["prompt"] == "y = fo"
    assert "grammar" not in harness.bodies[0]


async def test_the_setting_turns_it_off(harness: Harness) -> None:
    harness.use(heal_words=False)
    harness.answer("turn", " y", "\n")
    result = await harness.complete("def f(y):\n    re|\n")
    assert [i.insert_text for i in result.items] == ["turn y"]
    assert harness.bodies[0]["prompt"] == "def f(y):\n    re"
    assert "grammar" not in harness.bodies[0]


@pytest.mark.parametrize("completer_agent", [AGENT])
async def test_an_agent_without_ctx_healed_word_gets_the_prompt_as_typed(
    harness: Harness,
) -> None:
    harness.answer("turn", " y", "\n")
    result = await harness.complete("def f(y):\n    re|\n")
    assert [i.insert_text for i in result.items] == ["turn y"]
    assert harness.bodies[0]["prompt"] == "def f(y):\n    re"


async def test_the_next_key_attaches_to_the_answer_that_writes_it(harness: Harness) -> None:
    harness.use(multi_line="always")
    harness.hold()
    first = asyncio.create_task(harness.complete("def f(y):\n    r|\n"))
    await until(lambda: len(harness.scripts) == 1)
    harness.scripts[0].send("return")
    await asyncio.sleep(0.05)
    second = asyncio.create_task(harness.complete("def f(y):\n    re|\n"))
    assert (await first).outcome is Outcome.SUPERSEDED
    harness.scripts[0].send(" y\n", end=True)
    result = await second
    assert result.outcome is Outcome.REUSED
    assert [i.insert_text for i in result.items] == ["turn y"]
    assert len(harness.bodies) == 1


async def test_r_and_re_are_not_answered_by_each_others_answer(harness: Harness) -> None:
    # Their prompts are equal ("    "); the word is not, so neither request is the other's.
    harness.answer("re", "ad(x)", "\n")
    assert [i.insert_text for i in (await harness.complete("def f(y):\n    re|\n")).items] == [
        "ad(x)"
    ]
    harness.answer("raise", " E", "\n")
    result = await harness.complete("def f(y):\n    r|\n")  # a backspace: not the cached "ad(x)"
    assert [i.insert_text for i in result.items] == ["aise E"]
    assert [body["prompt"] for body in harness.bodies] == ["def f(y):\n    "] * 2
    assert [body["grammar"] for body in harness.bodies] == [
        'root ::= "re" [^\\x00]*',
        'root ::= "r" [^\\x00]*',
    ]
    result = await harness.complete("def f(y):\n    ra|\n")  # typed ahead: "aise E" goes on
    assert [i.insert_text for i in result.items] == ["ise E"]
    assert len(harness.bodies) == 2


async def test_no_asking_again_after_a_healed_word(harness: Harness) -> None:
    harness.answer("return", " x", "\n")
    result = await harness.complete("def f(x):\n    re|\n    y = 2\n")
    assert [i.insert_text for i in result.items] == ["turn x"]
    assert len(harness.bodies) == 1


@pytest.mark.parametrize(
    "name",
    ["Embedded Completion", "llama.cpp Completion — FIM", "llama.cpp Completion — FIM Template"],
)
def test_the_bundled_llama_cpp_agents_send_the_word_as_a_grammar(tmp_path: Path, name: str) -> None:
    paths = ConfigPaths(tmp_path / "config", tmp_path / "data", bundled_root(), project=None)
    agent = AgentFactory(load_configuration(paths)).create(name)
    told = agent.build_request(
        complete_context({"prefix": "x", "healed_word": " grö"}, agent.model), None
    )
    assert told.body["grammar"] == 'root ::= " grö" [^\\x00]*'
    plain = agent.build_request(complete_context({"prefix": "x"}, agent.model), None)
    assert "grammar" not in plain.body


async def test_the_word_a_suggestion_ends_in_is_whole_for_its_prefetch(harness: Harness) -> None:
    harness.use(prefetch_after_accept=True)
    harness.answer(" fo", "o", "\n")
    harness.answer("\n")
    shown = await harness.complete("x = f|\n", TriggerKind.AUTOMATIC)
    assert [i.insert_text for i in shown.items] == ["oo"]
    await until(lambda: len(harness.bodies) == 2)
    assert harness.bodies[0]["prompt"] == "x ="
    assert harness.bodies[1]["prompt"] == "x = foo"  # the model ended the word: not cut
    assert "grammar" not in harness.bodies[1]


async def test_the_next_keys_prompt_is_not_warmed_again(harness: Harness) -> None:
    # "r" and "re" send the same prompt: the model server has it cached after the first.
    harness.answer("raise", " E", "\n")
    await harness.complete("def f(y):\n    r|\n")
    harness.request("def f(y):\n    re|\n")  # the next key, then the user is idle
    assert not harness.service._warmer.warm(PY, 1, 6)
    assert len(harness.bodies) == 1
