"""The codebase feature's row: light to build, its service made when the door starts it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from qodeassist_lsp.core.operations import FileChange
from qodeassist_lsp.features.codebase import SPEC
from qodeassist_lsp.features.codebase.feature import CodebaseFeature
from qodeassist_lsp.workbench.features import LoggedProgress, services


class _View:
    """A runtime view whose settings are the defaults (the codebase section included)."""

    @property
    def settings(self) -> object:
        from qodeassist_lsp.lsp.sections import SETTINGS_MODEL

        return SETTINGS_MODEL()

    @property
    def configuration(self) -> object:
        raise AssertionError("not read here")


def test_building_the_row_makes_no_service_and_imports_no_engine() -> None:
    code = (
        "import sys\n"
        "from qodeassist_lsp.features.codebase import SPEC\n"
        "assert SPEC.name == 'codebase'\n"
        "assert 'pydantic' not in sys.modules\n"
        "assert 'qodeassist_lsp.features.codebase.service' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


async def test_the_service_is_made_when_the_door_starts_it(tmp_path: Path) -> None:
    built = SPEC.build(
        services(
            _View(),  # type: ignore[arg-type]
            lambda: [tmp_path],
            ignored_by=lambda _p: None,
            confinement=lambda: None,  # type: ignore[arg-type,return-value]
            progress=LoggedProgress(),
        )
    )
    feature = built.provides
    assert isinstance(feature, CodebaseFeature)
    assert feature._service is None
    assert [op.name for op in built.operations] == ["search", "definition", "status", "reindex"]
    assert feature.index_for(tmp_path / "a.py") is None
    feature.files_changed([FileChange(path=tmp_path / "a.py", kind="saved", text="x")])
    feature.reloaded()
    assert feature._service is None  # nothing to follow before the door starts it
    await feature.aclose()
    assert feature.enabled()
    assert feature._service is not None
    assert feature.status()["state"] == "waiting"
    await feature.aclose()
