"""The feature table: specs from built-in rows and entry points, built once, served by path."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from qodeassist_lsp.config.configuration import load_configuration
from qodeassist_lsp.config.paths import ConfigPaths, bundled_root
from qodeassist_lsp.config.pipelines import CHAT_ASSISTANT
from qodeassist_lsp.config.settings_types import Section, SettingsSection
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.core.operations import (
    Feature,
    FeatureServices,
    FeatureSpec,
    FileChange,
    Operation,
)
from qodeassist_lsp.core.tools import ToolRegistry
from qodeassist_lsp.wire.error_table import http_answer, lsp_answer
from qodeassist_lsp.wire.errors import InvalidParams
from qodeassist_lsp.workbench.features import (
    FeatureTable,
    LoggedProgress,
    OperationNotFound,
    feature_specs,
    services,
    settings_sections,
)


class Text(BaseModel):
    text: str


class Count(BaseModel):
    count: int


async def _length(request: Text) -> Count:
    return Count(count=len(request.text))


def _spec(name: str = "echo", **hooks: Any) -> FeatureSpec:
    def build(_services: FeatureServices) -> Feature:
        op = Operation(name="length", request=Text, result=Count, run=_length)
        return Feature(operations=(op,), **hooks)

    return FeatureSpec(name=name, build=build)


SPEC = _spec()
"""What the entry points of these tests name."""
NOT_A_SPEC = 42


def _services(folders: Sequence[Path] = ()) -> FeatureServices:
    return services(
        None,  # type: ignore[arg-type]  # the view is the features', unread here
        lambda: list(folders),
        ignored_by=lambda _path: None,
        confinement=lambda: None,  # type: ignore[arg-type,return-value]
    )


def _plugins(root: Path, lines: str, monkeypatch: pytest.MonkeyPatch) -> None:
    info = root / "plugins/qa_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: qa-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[qodeassist_lsp.features]\n{lines}")
    monkeypatch.syspath_prepend(str(root / "plugins"))


# -- the declaration ---------------------------------------------------------------------------
def test_a_name_is_one_path_segment() -> None:
    with pytest.raises(ValueError, match="must match"):
        FeatureSpec(name="Echo/x", build=lambda s: Feature())
    with pytest.raises(ValueError, match="must match"):
        Operation(name="", request=Text, result=Count, run=_length)


# -- the table's rows --------------------------------------------------------------------------
def test_built_in_rows_and_an_entry_point_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plugins(tmp_path, f"other = {__name__}:SPEC\n", monkeypatch)
    group = "qodeassist_lsp.features"
    specs = feature_specs((f"{__name__}:SPEC",), group)
    # The plugin names the same spec: a name declared twice keeps the first row.
    assert [s.name for s in specs] == ["echo"]


def test_a_broken_plugin_is_logged_and_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _plugins(
        tmp_path,
        f"missing = qa_no_such_module:SPEC\nwrong = {__name__}:NOT_A_SPEC\necho = {__name__}:SPEC\n",
        monkeypatch,
    )
    with caplog.at_level(logging.ERROR, "qodeassist.features"):
        specs = feature_specs((), "qodeassist_lsp.features")
    assert [s.name for s in specs] == ["echo"]
    assert "feature missing (qa_no_such_module:SPEC) failed to import; left out" in caplog.text
    assert "is a int, not a FeatureSpec; left out" in caplog.text


def test_a_build_that_raises_leaves_the_others(caplog: pytest.LogCaptureFixture) -> None:
    def broken(_services: FeatureServices) -> Feature:
        raise RuntimeError("no")

    table = FeatureTable([FeatureSpec(name="broken", build=broken), _spec()], _services())
    assert list(table.features) == ["echo"]
    assert "feature broken: build failed" in caplog.text


# -- operations --------------------------------------------------------------------------------
async def test_an_operation_is_validated_run_and_answered_as_json() -> None:
    table = FeatureTable([_spec()], _services())
    assert list(table.operations()) == ["echo/length"]
    assert await table.operation("echo/length").call({"text": "abc"}) == {"count": 3}
    with pytest.raises(InvalidParams, match=r"qodeassist/echo/length: Text: text: Input should"):
        await table.operation("echo/length").call({"text": 42})
    with pytest.raises(InvalidParams, match="text: Field required"):
        await table.operation("echo/length").call(None)


def test_an_unknown_path_names_what_there_is() -> None:
    table = FeatureTable([_spec()], _services())
    with pytest.raises(OperationNotFound, match=r"no feature 'nope' \(features: echo\)"):
        table.operation("nope/length")
    with pytest.raises(OperationNotFound) as missing:
        table.operation("echo/nope")
    assert str(missing.value) == "feature 'echo' has no operation 'nope' (operations: length)"
    assert http_answer(missing.value).status == 404
    assert lsp_answer(missing.value).code == -32602


# -- the hooks ---------------------------------------------------------------------------------
async def test_start_runs_in_a_task_cancelled_at_close() -> None:
    began, closed = asyncio.Event(), []

    async def start() -> None:
        began.set()
        await asyncio.Event().wait()

    async def aclose() -> None:
        closed.append(True)

    table = FeatureTable([_spec(start=start, aclose=aclose)], _services())
    table.start()
    table.start()  # once
    await began.wait()
    await table.aclose()
    assert closed == [True]
    table.start()  # closed: nothing starts again


def test_status_tools_reload_and_file_changes_reach_each_feature(tmp_path: Path) -> None:
    seen: list[Any] = []

    def tools(registry: ToolRegistry, pipeline: Any) -> None:
        seen.append(("tools", pipeline.slot))

    def failing_status() -> dict[str, Any]:
        raise RuntimeError("no")

    table = FeatureTable(
        [
            _spec(
                status=lambda: {"state": "ready"},
                tools=tools,
                reloaded=lambda: seen.append("reloaded"),
                files_changed=lambda changes: seen.extend(changes),
            ),
            _spec("quiet", status=failing_status),
        ],
        _services(),
    )
    assert table.status() == {"echo": {"state": "ready"}}
    table.contribute(ToolRegistry(), CHAT_ASSISTANT)
    table.reloaded()
    documents = DocumentStore()
    table.watch(documents)
    path = tmp_path / "a.py"
    documents.open(path.as_uri(), "x = 1\n")
    documents.close(path.as_uri())
    assert seen == [
        ("tools", CHAT_ASSISTANT.slot),
        "reloaded",
        FileChange(path=path, kind="opened", text="x = 1\n"),
        FileChange(path=path, kind="closed"),
    ]


async def test_services_read_the_door_per_call(tmp_path: Path) -> None:
    folders: list[Path] = []
    given = _services(folders)
    assert list(given.folders()) == []
    folders.append(tmp_path)
    assert list(given.folders()) == [tmp_path]
    task = await given.progress.begin("indexing")  # no progress port: logged
    task.report("1 of 2", 50)
    task.end()
    assert isinstance(given.progress, LoggedProgress)


# -- built after initialize ---------------------------------------------------------------------
def test_a_lazy_table_builds_on_first_use_and_checks_the_declared_names(
    caplog: pytest.LogCaptureFixture,
) -> None:
    built: list[str] = []

    def spec(name: str, declared: tuple[str, ...]) -> FeatureSpec:
        def build(_services: FeatureServices) -> Feature:
            built.append(name)
            op = Operation(name="length", request=Text, result=Count, run=_length)
            return Feature(operations=(op,))

        return FeatureSpec(name=name, build=build, operations=declared)

    table = FeatureTable(
        [spec("good", ("length",)), spec("odd", ("size",))], _services(), lazy=True
    )
    assert not table.built and built == [] and table.status() == {}
    table.files_changed([])  # told nothing before it is built, and builds nothing
    assert built == []
    assert set(table.operations()) == {"good/length", "odd/length"}
    assert table.built and built == ["good", "odd"]
    table.build()
    assert built == ["good", "odd"]  # once
    assert "feature odd declares operations ['odd/size'] but serves ['odd/length']" in caplog.text


def test_the_codebase_row_names_the_operations_it_serves() -> None:
    from qodeassist_lsp.features.codebase import SPEC as CODEBASE

    table = FeatureTable([CODEBASE], _services(), lazy=True)
    assert {f"codebase/{op}" for op in CODEBASE.operations} == set(table.operations())


class _EchoSettings(Section):
    greeting: str = "hello"


class _Loose(BaseModel):
    greeting: str = "hello"


def test_a_rows_settings_section_is_validated_like_the_core_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    echo = SettingsSection("echo", _EchoSettings)
    rows = [
        FeatureSpec(name="echo", build=_spec().build, settings=echo),
        FeatureSpec(
            name="tools", build=_spec().build, settings=SettingsSection("tools", _EchoSettings)
        ),
        FeatureSpec(name="loose", build=_spec().build, settings=SettingsSection("loose", _Loose)),  # type: ignore[type-var]
    ]
    with caplog.at_level(logging.ERROR, "qodeassist.features"):
        sections = settings_sections((), rows)
    assert sections == (echo,)
    assert "feature tools: settings section [tools] is taken; left out" in caplog.text
    assert "does not derive from qodeassist_lsp.config.settings_types.Section" in caplog.text

    (tmp_path / "c").mkdir()
    (tmp_path / "c/settings.toml").write_text('[echo]\ngreeting = 42\ncolour = "red"\n')
    paths = ConfigPaths(tmp_path / "c", tmp_path / "d", bundled_root())
    problems = [p.message for p in load_configuration(paths, sections=sections).problems]
    assert any(m.startswith("echo.greeting = 42 is invalid") for m in problems), problems
    assert any("unknown key 'colour' in [echo]" in m for m in problems), problems
    (tmp_path / "c/settings.toml").write_text('[echo]\ngreeting = "hallo"\n')
    settings = load_configuration(paths, sections=sections).settings
    assert settings.section(echo).greeting == "hallo"
