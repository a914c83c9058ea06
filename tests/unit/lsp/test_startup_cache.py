"""The attrs code cache: a warm start compiles nothing, and the classes behave the same."""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attr
import attr._make
import pytest

from qodeassist_lsp.config.paths import cache_root
from qodeassist_lsp.lsp.startup_cache import CacheStats, attrs_code_cache, default_cache_path

ROOT = Path(__file__).resolve().parents[3]

# Imports lsprotocol.types for the first time under the cache (or without it, when disabled) and
# prints what happened: the cache counters, how many attrs-generated sources were compiled by
# anyone, and a snapshot of how the classes behave.
CHILD = textwrap.dedent(
    """
    # attrs' compile() inherits this future flag from attr/_make.py; counting_compile must pass
    # on the same, or the uncached run's code objects would differ from a plain import's.
    from __future__ import annotations
    import builtins, dataclasses, json

    from qodeassist_lsp.lsp.startup_cache import attrs_code_cache, default_cache_path

    path = default_cache_path()  # imports attrs, which compiles its own classes uncached
    attrs_compiles = 0
    real_compile = builtins.compile

    def counting_compile(source, filename, *args, **kwargs):
        global attrs_compiles
        if str(filename).startswith("<attrs generated"):
            attrs_compiles += 1
        return real_compile(source, filename, *args, **kwargs)

    builtins.compile = counting_compile  # counts attrs' compiles and the cache's misses
    with attrs_code_cache(path) as stats:
        from lsprotocol import types
    builtins.compile = real_compile

    import attr._make
    from lsprotocol.converters import get_converter

    a, b = types.Position(1, 2), types.Position(1, 2)
    rng = types.Range(start=a, end=types.Position(line=3, character=4))
    converter = get_converter()
    try:
        types.Position(1)
        missing_argument = ""
    except TypeError as error:
        missing_argument = str(error)
    behaviour = {
        "eq": [a == b, a != b, a == types.Position(2, 1), a.__eq__(object()) is NotImplemented],
        "repr": [repr(a), repr(rng), repr(types.TextDocumentIdentifier(uri="file:///x"))],
        "hash": types.Position.__hash__ is None,
        "init_annotations": {k: str(v) for k, v in types.Range.__init__.__annotations__.items()},
        "co_flags": types.Range.__init__.__code__.co_flags,
        "co_filename": types.Range.__init__.__code__.co_filename,
        "defaults": repr(types.TextDocumentItem.__init__.__defaults__),
        "missing_argument": missing_argument,
        "round_trip": converter.structure(converter.unstructure(rng), types.Range) == rng,
        "unstructured": converter.unstructure(rng),
    }
    print(json.dumps({
        "path": str(path) if path else None,
        "stats": dataclasses.asdict(stats),
        "attrs_compiles": attrs_compiles,
        "restored": attr._make._compile_and_eval.__module__ == "attr._make",
        "behaviour": behaviour,
    }))
    """
)


def _child(cache_dir: Path, **extra_env: str) -> dict[str, Any]:
    env = {**os.environ, "QODEASSIST_CACHE_DIR": str(cache_dir)}
    env.pop("QODEASSIST_NO_STARTUP_CACHE", None)
    env.update(extra_env)
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One uncached, one cold and one warm import of lsprotocol.types, each in a fresh process."""
    cache_dir = tmp_path_factory.mktemp("cache")
    uncached = _child(cache_dir, QODEASSIST_NO_STARTUP_CACHE="1")
    assert not any(cache_dir.iterdir())
    cold = _child(cache_dir)
    warm = _child(cache_dir)
    return {"uncached": uncached, "cold": cold, "warm": warm}


def test_cold_start_compiles_and_writes_the_file(runs: dict[str, dict[str, Any]]) -> None:
    cold = runs["cold"]
    stats = cold["stats"]
    assert stats["active"]
    assert stats["loaded"] == 0
    assert stats["hits"] == 0
    assert stats["misses"] > 500  # lsprotocol.types: ~550 attrs classes
    assert stats["written"]
    assert cold["attrs_compiles"] == stats["misses"]
    assert Path(cold["path"]).is_file()
    assert cold["restored"]


def test_warm_start_compiles_nothing_for_attrs(runs: dict[str, dict[str, Any]]) -> None:
    warm, cold = runs["warm"], runs["cold"]
    assert warm["path"] == cold["path"]
    assert warm["stats"]["loaded"] == cold["stats"]["misses"]
    assert warm["stats"]["hits"] == cold["stats"]["misses"]
    assert warm["stats"]["misses"] == 0
    assert not warm["stats"]["written"]
    assert warm["attrs_compiles"] == 0
    assert warm["restored"]


def test_the_classes_behave_the_same_with_and_without_the_cache(
    runs: dict[str, dict[str, Any]],
) -> None:
    uncached = runs["uncached"]
    assert uncached["path"] is None
    assert not uncached["stats"]["active"]
    assert uncached["attrs_compiles"] > 500
    expected = uncached["behaviour"]
    assert expected["eq"] == [True, False, False, True]
    assert expected["repr"][2] == "TextDocumentIdentifier(uri='file:///x')"
    assert expected["init_annotations"]["start"] == "Position"
    assert expected["co_flags"] & 0x1000000  # CO_FUTURE_ANNOTATIONS, from attrs' future import
    assert expected["round_trip"]
    assert runs["cold"]["behaviour"] == expected
    assert runs["warm"]["behaviour"] == expected


def test_the_file_is_named_after_the_interpreter_and_attrs(runs: dict[str, dict[str, Any]]) -> None:
    name = Path(runs["cold"]["path"]).name
    assert sys.implementation.cache_tag in name
    assert attr.__version__ in name


# In-process tests: lsprotocol.types is already imported here, so they build fresh attrs classes.


def _define(name: str = "Point") -> type:
    namespace: dict[str, Any] = {}
    exec(  # a class whose qualname, and so attrs' generated "file" names, is stable
        textwrap.dedent(
            f"""
            import attr

            @attr.define
            class {name}:
                x: int
                y: "list[int]" = attr.field(factory=list)
            """
        ),
        namespace,
    )
    cls: type = namespace[name]
    return cls


def _check(cls: Callable[..., Any]) -> None:
    a, b = cls(1, [2]), cls(1, [2])
    assert a == b
    assert a != cls(2)
    assert repr(a) == f"{cls.__name__}(x=1, y=[2])"
    assert cls(3).y == []
    with pytest.raises(TypeError):
        cls()


def _cached_entries(path: Path) -> dict[bytes, Any]:
    data = path.read_bytes()
    assert data.startswith(importlib.util.MAGIC_NUMBER)
    table: dict[bytes, Any] = marshal.loads(data[len(importlib.util.MAGIC_NUMBER) :])
    return table


def test_second_use_hits_and_the_original_is_restored(tmp_path: Path) -> None:
    original = attr._make._compile_and_eval
    path = tmp_path / "code.marshal"
    with attrs_code_cache(path) as first:
        assert attr._make._compile_and_eval is not original
        _check(_define())
    assert attr._make._compile_and_eval is original
    assert (first.misses, first.hits, first.written) == (1, 0, True)

    with attrs_code_cache(path) as second:
        cls = _define()
    assert (second.loaded, second.hits, second.misses, second.written) == (1, 1, 0, False)
    _check(cls)
    assert cls.__init__.__code__.co_flags & 0x1000000  # CO_FUTURE_ANNOTATIONS, like attrs'


def test_the_file_keeps_only_the_entries_this_run_used(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    with attrs_code_cache(path):
        _define("Old")
    with attrs_code_cache(path) as stats:
        _define("New")
    assert stats.written
    [code] = _cached_entries(path).values()
    assert "New" in code.co_filename


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage", importlib.util.MAGIC_NUMBER + b"\xff\x00garbage", b"\x00\x00\r\n" + b"x"],
)
def test_a_corrupt_file_is_an_empty_cache_and_is_rewritten(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "code.marshal"
    path.write_bytes(content)
    with attrs_code_cache(path) as stats:
        cls = _define()
    _check(cls)
    assert (stats.loaded, stats.misses, stats.written) == (0, 1, True)
    assert len(_cached_entries(path)) == 1


def test_a_file_of_another_shape_is_an_empty_cache(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    path.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps([1, 2, 3]))
    with attrs_code_cache(path) as stats:
        _check(_define())
    assert (stats.loaded, stats.misses) == (0, 1)


def test_an_unwritable_directory_only_costs_the_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")  # a file where the directory should be: fails even for root
    path = blocker / "cache" / "code.marshal"
    with attrs_code_cache(path) as stats:
        cls = _define()
    _check(cls)
    assert stats.active
    assert stats.misses == 1
    assert not stats.written
    assert list(tmp_path.iterdir()) == [blocker]


def test_the_original_is_restored_when_the_block_raises(tmp_path: Path) -> None:
    original = attr._make._compile_and_eval
    path = tmp_path / "code.marshal"

    def fail() -> None:
        with attrs_code_cache(path):
            _define()
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail()
    assert attr._make._compile_and_eval is original
    assert not path.exists()


def test_none_disables_the_cache(tmp_path: Path) -> None:
    original = attr._make._compile_and_eval
    with attrs_code_cache(None) as stats:
        assert attr._make._compile_and_eval is original
        _check(_define())
    assert stats == CacheStats()
    assert not any(tmp_path.iterdir())


def test_an_unexpected_attrs_function_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = attr._make._compile_and_eval

    def other_signature(script: str, globs: dict[str, Any] | None, filename: str = "") -> None:
        calls.append(filename)
        real(script, globs, None, filename)

    monkeypatch.setattr(attr._make, "_compile_and_eval", other_signature)
    path = tmp_path / "code.marshal"
    with attrs_code_cache(path) as stats:
        assert attr._make._compile_and_eval is other_signature
    assert not stats.active
    assert not path.exists()

    monkeypatch.delattr(attr._make, "_compile_and_eval")
    with attrs_code_cache(path) as stats:
        pass
    assert not stats.active
    assert not hasattr(attr._make, "_compile_and_eval")


def test_the_default_path_follows_the_environment(tmp_path: Path) -> None:
    path = default_cache_path({"QODEASSIST_CACHE_DIR": str(tmp_path)})
    assert path is not None
    assert path.parent == tmp_path
    assert path.name == (
        f"attrs-code-{sys.implementation.cache_tag}-attrs-{attr.__version__}.marshal"
    )
    assert (
        default_cache_path({"QODEASSIST_CACHE_DIR": "x", "QODEASSIST_NO_STARTUP_CACHE": "1"})
        is None
    )
    assert default_cache_path({"QODEASSIST_NO_STARTUP_CACHE": "0"}) is not None
    assert cache_root({}).name  # the platform user cache dir
