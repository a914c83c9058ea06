"""Plans read out of sloppy answers: numbered, checkbox and bulleted lists; no list is an error."""

from __future__ import annotations

import pytest

from qodeassist_lsp.features.chat.plan_parse import MAX_STEPS, PlanInvalid, parse_steps


@pytest.mark.parametrize(
    ("answer", "steps"),
    [
        (
            "1. Read the file\n2. Fix the bug\n3. Run the tests",
            ["Read the file", "Fix the bug", "Run the tests"],
        ),
        (
            "Here is my plan:\n\n1) **Read** the module:\n   - look at parse()\n2) Add `opt`\n\nDone!",
            ["Read the module", "Add opt"],
        ),
        ("### Step 1: Explore\nsome text\n### Step 2: Change\n", ["Explore", "Change"]),
        ("**1.** First\n**2.** Second", ["First", "Second"]),
        ("```\n1. Inside a fence\n2. Still\n```", ["Inside a fence", "Still"]),
        ("- [ ] Write test\n- [x] Make it pass\n  - [ ] nested", ["Write test", "Make it pass"]),
        ("* one\n* one\n* two", ["one", "two"]),
        ("Plan:\n- first\n    - detail\n- second", ["first", "second"]),
        ("1. a\n2. b\n- stray bullet", ["a", "b"]),
    ],
)
def test_the_steps_are_the_top_level_items(answer: str, steps: list[str]) -> None:
    assert parse_steps(answer) == steps


def test_a_runaway_list_is_cut() -> None:
    answer = "\n".join(f"{n}. step {n}" for n in range(1, 60))
    assert len(parse_steps(answer)) == MAX_STEPS


@pytest.mark.parametrize("answer", ["", "I would just fix it.", "**Plan**\nNothing to do."])
def test_an_answer_without_a_list_is_invalid_and_says_what_to_do(answer: str) -> None:
    with pytest.raises(PlanInvalid, match=r"not a plan .*plan/update"):
        parse_steps(answer)
