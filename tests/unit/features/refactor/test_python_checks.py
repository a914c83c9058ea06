"""The Python-only refactor checks: placement, program, dangling, on whole files."""

from __future__ import annotations

from qodeassist_lsp.features.refactor.python_checks import dangling, placement, program

CLASS = "class Box:\n    size = 1\n\n    def area(self):\n        return 1\n\n    def grow(self):\n        pass\n"
METHOD = "    def area(self):\n        return 1\n"


def splice(text: str, old: str, new: str) -> tuple[str, int, int, str, int]:
    start = text.index(old)
    spliced = text[:start] + new + text[start + len(old) :]
    return text, start, start + len(old), spliced, start + len(new)


def test_a_method_answered_at_column_0_is_misplaced() -> None:
    # It compiles: grow() becomes a function nested in area().
    reason = placement(*splice(CLASS, METHOD, "def area(self):\n    return 2\n"))
    assert reason is not None and "column 0" in reason
    assert placement(*splice(CLASS, METHOD, METHOD.replace("1", "2"))) is None


def test_placement_does_not_judge_what_does_not_compile_or_is_not_indented() -> None:
    assert placement(*splice("def f(:\n    pass\n", "    pass\n", "pass\n")) is None
    text = "def f():\n    return 1\n"
    assert placement(*splice(text, text, "def g():\n    return 1\n")) is None


def test_example_usage_is_a_program_and_a_script_may_stay_one() -> None:
    text = "def f():\n    return 1\n"
    reason = program(*splice(text, text, text + "\nprint(f())\n"))
    assert reason is not None and "`print(f())`" in reason
    assert program(*splice(text, text, text + '\n"""More docs."""\n')) is None
    script = "def f():\n    return 1\n\nf()\n"
    assert program(*splice(script, script, script + "f()\n")) is None


def test_dangling_names_the_file_bound_before() -> None:
    text = "def wrap(text, **kwargs):\n    return W(**kwargs)\n"
    assert dangling(text, text.replace(", **kwargs)", ")")) == ["kwargs"]
    assert dangling(text, text.replace("W(", "math.W(")) == []  # never bound: the linter's job
    assert (
        dangling("from m import *\n" + text, "from m import *\n" + text.replace(", **kwargs)", ")"))
        == []
    )
