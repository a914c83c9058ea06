"""Recorded bad refactor answers (issue 25) are refused; correct refactors of the same selections pass.

``tests/fixtures/refactor/bad_answers.json`` holds real answers of the embedded SmolLM2-135M on
excerpts of files nobody here wrote (CPython's standard library, in ``sources/``), plus the
hand-made answers of the issue. Each goes through what the service does with an answer
(``replacement_text``: cleaning, markers, line breaks) and then the guard, on the whole file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qodeassist_lsp.context.documents import offset_at
from qodeassist_lsp.features.refactor.guard import ResultGuard, Verdict
from qodeassist_lsp.features.refactor.service import replacement_text

FIXTURES = Path(__file__).parents[3] / "fixtures" / "refactor"
CASES = json.loads((FIXTURES / "bad_answers.json").read_text(encoding="utf-8"))
GUARD = ResultGuard()


def judge(case: dict[str, Any]) -> Verdict | None:
    source = case["source"]
    text = (FIXTURES / "sources" / source).read_text(encoding="utf-8")
    l1, c1, l2, c2 = case["range"]
    start, end = offset_at(text, l1, c1), offset_at(text, l2, c2)
    new_text = replacement_text(case["answer"], text, start, end)
    assert new_text.strip(), "an empty answer is not the guard's business"
    return GUARD.check(
        text, start, end, new_text, path=f"/p/{source}", instruction=case["instruction"]
    )


def test_the_set_holds_real_answers_and_the_issue_cases() -> None:
    origins = [case["origin"] for case in CASES["bad"]]
    assert sum("SmolLM2" in origin for origin in origins) >= 5
    assert sum("issue 25" in origin for origin in origins) >= 4
    assert set(CASES["sources"]) == {case["source"] for case in CASES["bad"] + CASES["good"]}


@pytest.mark.parametrize("case", CASES["bad"], ids=[c["id"] for c in CASES["bad"]])
def test_a_bad_answer_is_refused(case: dict[str, Any]) -> None:
    verdict = judge(case)
    assert verdict is not None, "the guard let a bad answer through"
    assert verdict.kind == case["kind"], verdict.reason


@pytest.mark.parametrize("case", CASES["good"], ids=[c["id"] for c in CASES["good"]])
def test_a_good_answer_passes(case: dict[str, Any]) -> None:
    verdict = judge(case)
    assert verdict is None, verdict.reason if verdict else ""
