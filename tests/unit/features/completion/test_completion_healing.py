"""Trailing-whitespace healing: the prompt's trailing spaces, and taking them off the answer."""

from qodeassist_lsp.features.completion.healing import continues_text, heal_prefix, unheal
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
