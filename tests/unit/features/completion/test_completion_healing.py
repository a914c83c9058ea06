"""Trailing-whitespace healing: the prompt's trailing spaces, and taking them off the answer."""

from qodeassist_lsp.features.completion.healing import (
    MAX_HEALED_WORD,
    continues_text,
    heal_prefix,
    heal_word,
    unheal,
    unheal_word,
)
from qodeassist_lsp.features.completion.postprocess import PostprocessOptions, Postprocessor


def test_the_prefix_loses_the_spaces_and_tabs_it_ends_in_after_code() -> None:
    assert heal_prefix("x = \t") == ("x =", " \t")
    assert heal_prefix("def f():\n    x = ") == ("def f():\n    x =", " ")
    # Indentation alone stays: it tells the model which block it writes in.
    assert heal_prefix("def f():\n    ") == ("def f():\n    ", "")
    assert heal_prefix("    ") == ("    ", "")
    assert heal_prefix("x = 1\n") == ("x = 1\n", "")  # a line break is not healed
    assert heal_prefix("") == ("", "")


def test_the_answer_loses_its_leading_blanks() -> None:
    assert unheal("    return 1\n    x", "    ") == "return 1\n    x"
    assert unheal("      deeper", "    ") == "deeper"  # the cursor's indentation is the user's
    assert unheal("  less", "    ") == "less"
    assert unheal("  ", "    ") == ""  # still streaming the indentation
    assert unheal(" 1", " ") == "1"
    assert unheal("1", " ") == "1"
    assert unheal("  x", "") == "  x"  # nothing healed: untouched


def test_postprocessing_and_the_stop_rules_see_the_unhealed_answer() -> None:
    post = Postprocessor(PostprocessOptions(healed="    ", single_line=True))
    assert post.process("    return a\n    b").text == "return a"
    assert post.should_stop("    return a\n")
    assert post.answer("    re") == "re"


def test_only_prompts_the_model_continues_are_healed() -> None:
    assert continues_text("/v1/completions", {"prompt": "x"}, [])
    assert continues_text("/infill", {}, [])
    assert continues_text("/api/generate", {"prompt": "p", "suffix": "s"}, [])
    assert not continues_text("/v1/chat/completions", {"messages": []}, [])
    assert not continues_text("/v1/messages", {"messages": []}, [])


def test_the_prefix_loses_the_half_typed_word_it_ends_in() -> None:
    assert heal_word("def f():\n    re", "") == ("def f():\n    ", "re")  # indentation stays
    assert heal_word("x = fo", "") == ("x =", " fo")  # the spaces after code go with it
    assert heal_word("x\n  y = a +\tfo", ")") == ("x\n  y = a +", "\tfo")
    assert heal_word("self.na", "") == ("self.", "na")
    assert heal_word("x = 1", "") == ("x =", " 1")
    assert heal_word("print(grö", ")") == ("print(", "grö")  # any script's letters
    assert heal_word("x." + "a" * MAX_HEALED_WORD, "") == ("x.", "a" * MAX_HEALED_WORD)


def test_a_word_is_not_healed_where_the_prompt_does_not_end_in_one() -> None:
    assert heal_word("x = fo", "o") == ("x = fo", "")  # a word char right of the cursor
    assert heal_word("x = fo", "_") == ("x = fo", "")
    assert heal_word("x = " + "a" * (MAX_HEALED_WORD + 1), "") == ("x = " + "a" * 17, "")
    assert heal_word("x = ", "") == ("x = ", "")
    assert heal_word("x(", "") == ("x(", "")
    assert heal_word("re", "") == ("re", "")  # nothing would be left to continue
    assert heal_word("", "") == ("", "")


def test_the_answer_loses_the_healed_word_it_must_start_with() -> None:
    assert unheal_word("return y", "re") == "turn y"
    assert unheal_word(" for x in y:", " fo") == "r x in y:"
    assert unheal_word("re", "re") == ""
    assert unheal_word("r", "re") == ""  # still streaming the word
    assert unheal_word("x = 1", "re") == ""  # the grammar was ignored: no answer


def test_postprocessing_and_the_stop_rules_see_the_answer_after_the_word() -> None:
    post = Postprocessor(
        PostprocessOptions(healed_word="re", line_before="    re", single_line=True)
    )
    assert post.process("return a\n    b").text == "turn a"
    assert post.should_stop("return a\n")
    assert post.answer("r") == ""
    assert post.process("x = 1\n").text == ""
    assert not post.should_stop("x = 1\n")  # nothing to show: no early stop on it either
