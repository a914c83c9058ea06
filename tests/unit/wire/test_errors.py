"""The error tree: one base for every error the package raises, drawn in wire/errors.py."""

import importlib
import pkgutil

import qodeassist_lsp
from qodeassist_lsp.core.launcher.errors import LaunchError
from qodeassist_lsp.core.session import ToolLimitError
from qodeassist_lsp.wire import errors
from qodeassist_lsp.wire.errors import CategorizedError, QodeAssistError, WireError


def package_exceptions() -> set[type[BaseException]]:
    found = set()
    for module in pkgutil.walk_packages(qodeassist_lsp.__path__, "qodeassist_lsp."):
        if module.name.endswith("__main__"):
            continue
        for value in vars(importlib.import_module(module.name)).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.startswith("qodeassist_lsp.")
                and not value.__name__.startswith("_")
            ):
                found.add(value)
    return found


def test_every_package_error_has_the_one_base_and_is_in_the_drawn_tree() -> None:
    classes = package_exceptions()
    assert len(classes) >= 15
    for cls in classes:
        assert issubclass(cls, QodeAssistError), cls
        assert f" {cls.__name__} " in errors.__doc__ or f"── {cls.__name__}" in errors.__doc__


def test_launch_and_tool_limit_failures_are_categorized_but_not_wire_errors() -> None:
    for cls in (LaunchError, ToolLimitError):
        assert issubclass(cls, CategorizedError) and not issubclass(cls, WireError)
