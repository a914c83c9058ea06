"""Asking the model again where the line below proves its answer wrong (issue 46 item 3)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.template_context import complete_context
from qodeassist_lsp.context.documents import LineEdit
from qodeassist_lsp.core.agent import AgentFactory
from qodeassist_lsp.features.completion.ask_again import avoided_token, disproved
from qodeassist_lsp.features.completion.generation import takes_avoid
from qodeassist_lsp.features.completion.postprocess import PostprocessOptions
from qodeassist_lsp.features.completion.stats import Outcome
from tests.unit.features.completion.test_completion_service import (
    AGENT,
    PY,
    Harness,
    harness,
    until,
)

__all__ = ["harness"]  # the fixture, imported for the tests below

AVOIDING = AGENT + "avoid = '''{{ ctx.avoid | tojson }}'''\n"


@pytest.fixture
def completer_agent() -> str:
    return AVOIDING


def at(below: str, before: str = "    ", comment: str = "#") -> PostprocessOptions:
    return PostprocessOptions(comment_prefix=comment, line_before=before, next_line=below)


@pytest.mark.parametrize(
    ("answer", "below", "language", "comment", "rule"),
    [
        ("if x:", "    return x", "python", "#", "no body"),
        ("else:", "return x", "python", "#", "no body"),
        ("for (i = 0; i < n; i++) {", "    total += i;", "c-like", "//", "no body"),
        ("items.forEach(function (x) {", "    return y;", "js", "//", "no body"),
        ("if x > 0 then", "    return x", "lua", "--", "no body"),
        ("while i < n do", "    i = i + 1", "lua", "--", "no body"),
        ("return x", "    y = 2", "python", "#", "unreachable"),
        ("return 0;", "    free(p);", "c-like", "//", "unreachable"),
        ("break", "    i = i + 1", "lua", "--", "unreachable"),
        ("y = 2", "    y = 2", "python", "#", "repeats"),
        ("y = 2", "        z = 3", "python", "#", "not a block"),
        ("while (x) { /* loop */", "    y();", "c-like", "//", "no body"),
        ('s = ")"; while (s) {', "    y();", "c-like", "//", "no body"),  # ")" is a string's
        ("while (x) {", "    y();", "plain", "", "no body"),  # no comment marker known
    ],
)
def test_the_line_below_proves_the_answer_wrong(
    answer: str, below: str, language: str, comment: str, rule: str
) -> None:
    assert disproved(answer, at(below, comment=comment), language) == rule


@pytest.mark.parametrize(
    ("answer", "below", "language", "comment"),
    [
        ("if x:", "        return x", "python", "#"),  # the body is below
        ("if x:\n        y = 1", "    return x", "python", "#"),  # the answer wrote its body
        ("return x", "else:", "python", "#"),  # the jump ends a branch
        ("return x", "", "python", "#"),  # nothing below
        ("return 0;", "}", "c-like", "//"),
        ("return x", "end", "lua", "--"),
        ("if (x)", "    y();", "c-like", "//"),  # a brace-less if: the line below is its body
        ("case 1:", "    y();", "c-like", "//"),  # a C label, not a Python block
        ("y = 2", "    z = 3", "python", "#"),
        ("y = f(a,", "        b)", "python", "#"),  # an open bracket goes on below
        ("# TODO", "    y = 2", "python", "#"),  # a comment stands anywhere
        ("// a comment", "        y = 2;", "js", "//"),
        ("if l == 2 or l == 3 or", "        return x", "python", "#"),  # cut: meant a block
        ("y = 2", "        z = 3", "c-like", "//"),  # continuation lines are C's own
    ],
)
def test_answers_the_line_below_allows(
    answer: str, below: str, language: str, comment: str
) -> None:
    assert disproved(answer, at(below, comment=comment), language) is None


def test_only_on_a_fresh_line() -> None:
    options = PostprocessOptions(line_before="    x = ", next_line="    y = 2")
    assert disproved("y = 2", options, "python") is None


def test_the_token_to_exclude_is_the_answers_first() -> None:
    assert avoided_token(["if", " x", ":"]) == "if"
    assert avoided_token(["", "  ", "return", " x"]) == "return"  # indentation pieces skipped
    assert avoided_token([" foo", "()"]) == " foo"  # the one space a word token carries
    assert avoided_token(["\n    if"]) is None  # a line break would be banned too
    assert avoided_token(["    if"]) is None  # and so would indentation
    assert avoided_token([]) is None


def test_the_bundled_embedded_agent_sends_the_token_as_logit_bias(tmp_path: Path) -> None:
    paths = ConfigPaths(tmp_path / "config", tmp_path / "data", bundled_root(), project=None)
    agent = AgentFactory(load_configuration(paths)).create("Embedded Completion")
    told = agent.build_request(complete_context({"prefix": "x", "avoid": ["if"]}), None)
    assert told.body["logit_bias"] == [["if", False]]
    plain = agent.build_request(complete_context({"prefix": "x"}), None)
    assert "logit_bias" not in plain.body
    assert takes_avoid(agent)


async def test_a_block_header_above_its_level_is_asked_again_without_its_token(
    harness: Harness,
) -> None:
    harness.answer("if", " x", ":", "\n")
    harness.answer("x", " +=", " 1", "\n")
    result = await harness.complete("def f(x):\n    |\n    return x\n")
    assert result.items[0].insert_text == "x += 1"
    assert [body["avoid"] for body in harness.bodies] == [[], ["if"]]
    assert harness.bodies[1]["prompt"] == harness.bodies[0]["prompt"]
    assert harness.service.status()["askedAgain"] == 1


async def test_never_more_than_once(harness: Harness) -> None:
    harness.answer("return", " x", "\n")
    harness.answer("return", " y", "\n")  # as wrong (a model may ignore the ban)
    result = await harness.complete("def f(x):\n    |\n    y = 2\n")
    assert result.items[0].insert_text == "return y"
    assert len(harness.bodies) == 2


async def test_a_right_answer_is_not_asked_again(harness: Harness) -> None:
    harness.answer("y", " =", " 1", "\n")
    result = await harness.complete("def f(x):\n    |\n    return x\n")
    assert result.items[0].insert_text == "y = 1"
    assert len(harness.bodies) == 1
    assert harness.service.status()["askedAgain"] == 0


async def test_a_key_cancels_the_second_request(harness: Harness) -> None:
    harness.answer("if", " x", ":", "\n")
    harness.hold()
    asked = asyncio.create_task(harness.complete("def f(x):\n    |\n    return x\n"))
    await until(lambda: len(harness.scripts) == 2)
    harness.store.change(PY, "def f(x):\n    z\n    return x\n", 2, [LineEdit(1, "    z")])
    harness.answer("z", " = 1", "\n")
    follow = await harness.complete("def f(x):\n    z|\n    return x\n")
    await until(harness.scripts[1].closed.is_set)
    assert (await asked).outcome in (Outcome.SUPERSEDED, Outcome.CANCELLED)
    assert follow.outcome is Outcome.MODEL


@pytest.mark.parametrize("completer_agent", [AGENT])
async def test_an_agent_without_ctx_avoid_is_not_asked_again(harness: Harness) -> None:
    harness.answer("if", " x", ":", "\n")
    harness.answer("never", "\n")
    result = await harness.complete("def f(x):\n    |\n    return x\n")
    assert result.items[0].insert_text == "if x:"
    assert len(harness.bodies) == 1
