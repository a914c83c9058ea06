"""`CodebaseService`: builds per folder, freshness, the ignore rule, status, the off switch."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qodeassist_lsp.context.codebase.model import IndexStatus
from qodeassist_lsp.context.ignore import FolderIgnores, IgnoreFilter
from qodeassist_lsp.core.operations import FileChange
from qodeassist_lsp.features.codebase.service import CodebaseService, CodebaseSources
from qodeassist_lsp.features.codebase.settings import CodebaseSettings
from tests.unit.features.codebase.fake_index import FakeFactory


class Progress:
    """A progress reporter that records what it was told."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def begin(self, title: str, message: str = "") -> Progress:
        self.seen.append(f"begin {title}")
        return self

    def report(self, message: str, percentage: int | None = None) -> None:
        self.seen.append(f"report {message} {percentage}")

    def end(self, message: str = "") -> None:
        self.seen.append(f"end {message}")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "parser.py").write_text("def parse_config(text):\n    return text\n")
    (root / "pkg" / "app.py").write_text("def main():\n    parse_config('x')\n")
    (root / "secret.py").write_text("def parse_config_secret():\n    pass\n")
    (root / "built.py").write_text("def parse_config_built():\n    pass\n")
    (root / ".qodeassistignore").write_text("secret.py\n")
    (root / ".gitignore").write_text("built.py\n")
    return root


def make(
    project: Path, settings: CodebaseSettings | None = None
) -> tuple[CodebaseService, FakeFactory, Progress, list[CodebaseSettings]]:
    factory = FakeFactory()
    progress = Progress()
    current = [settings or CodebaseSettings(update_delay_ms=0)]
    cache: dict[tuple[Path, str], IgnoreFilter] = {}
    service = CodebaseService(
        CodebaseSources(
            settings=lambda: current[0],
            folders=lambda: [project],
            data_root=lambda: project.parent / "data",
            ignored=lambda path: FolderIgnores.of([project], cache).ignored_by(path),
            progress=progress,
            factory=factory,
        )
    )
    return service, factory, progress, current


async def test_nothing_is_built_before_start(project: Path) -> None:
    service, factory, _, _ = make(project)
    assert service.search("parse_config") == []
    assert factory.made == {}
    assert service.status()["state"] == "waiting"


async def test_start_builds_in_the_background_with_progress(project: Path) -> None:
    service, factory, progress, _ = make(project)
    await service.start()
    await service.settled()
    status = service.status()
    assert status["state"] == "ready"
    assert status["files"] == 2
    assert progress.seen[0] == "begin QodeAssist: indexing project"
    assert progress.seen[-1].startswith("end 2 files")
    assert any(line.startswith("report 2/2 files 100") for line in progress.seen)
    assert factory.made[project].builds == 1
    await service.aclose()
    assert factory.made[project].closed


async def test_status_shows_a_running_build(project: Path) -> None:
    service, factory, _, _ = make(project)
    await service.start()
    index = factory.made[project]
    index.gate = asyncio.Event()
    await asyncio.sleep(0)  # let the build task begin
    assert service.status()["state"] == "building"
    index.gate.set()
    await service.settled()
    assert service.status()["state"] == "ready"
    await service.aclose()


async def test_ignored_files_are_never_indexed_nor_returned(project: Path) -> None:
    service, factory, _, _ = make(project)
    await service.start()
    await service.settled()
    assert sorted(h.snippet.path for h in service.search("parse_config")) == [
        "pkg/app.py",
        "pkg/parser.py",
    ]
    # a file the index holds but that became ignored is not returned either
    factory.made[project].files["secret.py"] = "parse_config"
    assert all(h.snippet.path != "secret.py" for h in service.search("parse_config"))
    service.files_changed([FileChange(path=project / "secret.py", kind="saved", text="x")])
    await service.settled()
    assert all(p != project / "secret.py" for p, _ in factory.made[project].updates)
    await service.aclose()


async def test_exclude_setting_is_an_extra_ignore_rule(project: Path) -> None:
    service, _, _, _ = make(project, CodebaseSettings(exclude=["pkg/app.py"]))
    await service.start()
    await service.settled()
    assert [h.snippet.path for h in service.search("parse_config")] == ["pkg/parser.py"]
    await service.aclose()


async def test_a_rename_is_searchable_after_save_and_after_the_delay(project: Path) -> None:
    service, factory, _, _ = make(project)
    await service.start()
    await service.settled()
    parser = project / "pkg" / "parser.py"
    renamed = "def read_settings(text):\n    return text\n"
    service.files_changed([FileChange(path=parser, kind="changed", text=renamed)])
    await service.settled()
    assert [h.snippet.path for h in service.search("read_settings")] == ["pkg/parser.py"]
    assert service.search("parse_config text") == []
    parser.write_text(renamed.replace("read_settings", "load_settings"))
    service.files_changed([FileChange(path=parser, kind="saved")])
    await service.settled()
    assert [h.snippet.path for h in service.search("load_settings")] == ["pkg/parser.py"]
    assert factory.made[project].updates[-1] == (parser, None)
    await service.aclose()


async def test_deleted_and_created_files_follow_the_disk(project: Path) -> None:
    service, _, _, _ = make(project)
    await service.start()
    await service.settled()
    (project / "pkg" / "parser.py").unlink()
    (project / "pkg" / "new.py").write_text("def fresh_name():\n    pass\n")
    service.files_changed(
        [
            FileChange(path=project / "pkg" / "parser.py", kind="deleted"),
            FileChange(path=project / "pkg" / "new.py", kind="created"),
        ]
    )
    await service.settled()
    assert sorted(h.snippet.path for h in service.search("def")) == ["pkg/app.py", "pkg/new.py"]
    await service.aclose()


async def test_an_ignore_file_change_rescans_the_folder(project: Path) -> None:
    service, factory, _, _ = make(project)
    await service.start()
    await service.settled()
    service.files_changed([FileChange(path=project / ".gitignore", kind="changed")])
    await service.settled()
    assert factory.made[project].builds == 2
    await service.aclose()


async def test_a_nested_gitignore_change_rescans_the_folder(project: Path) -> None:
    service, factory, _, _ = make(project)
    await service.start()
    await service.settled()
    nested = project / "pkg" / ".gitignore"
    nested.write_text("app.py\n")
    service.changed(nested, "app.py\n")  # unsaved: nothing yet
    await service.settled()
    assert factory.made[project].builds == 1
    assert factory.made[project].updates == []
    service.files_changed([FileChange(path=nested, kind="saved")])
    await service.settled()
    assert factory.made[project].builds == 2
    # a .qodeassistignore below the root is no ignore file (read at the root only)
    service.files_changed([FileChange(path=project / "pkg" / ".qodeassistignore", kind="created")])
    await service.settled()
    assert factory.made[project].builds == 2
    await service.aclose()


async def test_the_off_switch_closes_the_index_at_once(project: Path) -> None:
    service, factory, _, current = make(project)
    await service.start()
    await service.settled()
    current[0] = CodebaseSettings(enabled=False)
    service.sync()
    await service.settled()
    assert factory.made[project].closed
    assert service.status()["state"] == "off"
    assert service.search("parse_config") == []
    assert service.index_for(project / "pkg" / "app.py") is None
    current[0] = CodebaseSettings()
    service.sync()
    await service.settled()
    assert service.status()["state"] == "ready"
    assert service.index_for(project / "pkg" / "app.py") is factory.made[project]
    await service.aclose()


async def test_mention_snippets_stay_within_the_budget(project: Path) -> None:
    service, _, _, _ = make(
        project, CodebaseSettings(mention_snippets=5, mention_budget_tokens=100)
    )
    await service.start()
    await service.settled()
    long = "def parse_config_long():\n" + "    x = 1\n" * 200
    (project / "pkg" / "long.py").write_text(long)
    await service.file_event(project / "pkg" / "long.py")
    hits = service.for_mention("parse_config")
    assert sum(len(h.snippet.text) for h in hits) <= 400
    assert hits
    await service.aclose()


async def test_a_failing_build_is_a_failed_state_not_a_crash(project: Path) -> None:
    service, factory, progress, _ = make(project)

    async def broken(progress: object = None) -> object:
        raise OSError("disk full")

    await service.start()
    factory.made[project].build = broken  # type: ignore[method-assign,assignment]
    await service.reindex(wait=True)
    status = service.status()
    assert status["state"] == "failed"
    assert status["folders"][0]["error"] == "disk full"
    assert progress.seen[-1] == "end failed: disk full"
    assert service.search("parse_config") == []
    await service.aclose()


async def test_changed_caps_make_the_index_anew_on_reload(project: Path) -> None:
    service, factory, _, current = make(project)
    await service.start()
    await service.settled()
    first = factory.made[project]
    current[0] = CodebaseSettings(max_file_kb=1)
    service.sync()
    await service.settled()
    assert first.closed
    assert factory.made[project] is not first
    assert service.status()["state"] == "ready"
    await service.aclose()


async def test_edits_in_a_row_are_indexed_once_still(project: Path) -> None:
    service, factory, _, _ = make(project, CodebaseSettings(update_delay_ms=10000))
    await service.start()
    await service.settled()
    parser = project / "pkg" / "parser.py"
    for n in range(3):
        service.files_changed([FileChange(path=parser, kind="changed", text=f"v{n}")])
    assert factory.made[project].updates == []  # still typing
    service.files_changed([FileChange(path=parser, kind="saved", text="saved")])
    await service.settled()
    assert factory.made[project].updates == [(parser, "saved")]
    await service.aclose()


async def test_an_added_workspace_folder_is_indexed(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "extra.py").write_text("def parse_config_extra():\n    pass\n")
    folders = [project]
    factory = FakeFactory()
    service = CodebaseService(
        CodebaseSources(
            settings=CodebaseSettings,
            folders=lambda: folders,
            data_root=lambda: tmp_path / "data",
            factory=factory,
        )
    )
    await service.start()
    await service.settled()
    folders.append(other)
    assert service.search("parse_config_extra") == []  # its build has only begun
    await service.settled()
    assert [h.root for h in service.search("parse_config_extra")] == [other]
    folders.remove(project)
    service.search("x")
    await service.settled()
    assert factory.made[project].closed
    await service.aclose()


async def test_a_build_the_engine_reports_failed_is_failed(project: Path) -> None:
    service, factory, progress, _ = make(project)
    await service.start()
    await service.settled()
    index = factory.made[project]

    async def failed(progress: object = None) -> IndexStatus:
        return IndexStatus(state="failed", root=str(project), error="data folder read-only")

    index.build = failed  # type: ignore[method-assign,assignment]
    await service.reindex(wait=True)
    assert service.status()["state"] == "failed"
    assert service.status()["folders"][0]["error"] == "data folder read-only"
    assert service.index_for(project / "pkg" / "app.py") is None
    assert progress.seen[-1] == "end failed: data folder read-only"
    await service.aclose()
