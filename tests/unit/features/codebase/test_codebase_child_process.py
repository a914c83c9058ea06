"""The codebase feature parses and writes in a child process: the server never loads tree-sitter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    from qodeassist_lsp.context.ignore import FolderIgnores
    from qodeassist_lsp.features.codebase.service import CodebaseService, CodebaseSources
    from qodeassist_lsp.features.codebase.settings import CodebaseSettings

    async def main(root: Path, data: Path) -> dict:
        service = CodebaseService(
            CodebaseSources(
                settings=lambda: CodebaseSettings(update_delay_ms=0),
                folders=lambda: [root],
                data_root=lambda: data,
                ignored=lambda path: FolderIgnores.of([root]).ignored_by(path),
            )
        )
        await service.start()
        await service.settled()
        built = [hit.snippet.path for hit in service.search("parse_config")]
        await service.saved(root / "pkg" / "app.py", "def brand_new_name(x):\\n    return x\\n")
        updated = [found.definition.path for found in service.definitions("brand_new_name")]
        status = service.status()
        await service.aclose()
        return {
            "built": built,
            "updated": updated,
            "state": status["state"],
            "loaded": sorted(
                name
                for name in sys.modules
                if name.startswith("tree_sitter")
                or name.endswith((".chunker", ".context.syntax"))
            ),
        }

    root, data = Path(sys.argv[1]), Path(sys.argv[2])
    print(json.dumps(asyncio.run(main(root, data))))
    """
)


def test_build_and_update_through_the_feature_never_load_tree_sitter_here(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "parser.py").write_text("def parse_config(text):\n    return text\n")
    (root / "pkg" / "app.py").write_text("def main():\n    parse_config('x')\n")
    (root / "secret.py").write_text("def secret_thing():\n    pass\n")
    (root / ".qodeassistignore").write_text("secret.py\n")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "pkg/parser.py" in result["built"]
    assert result["updated"] == ["pkg/app.py"]
    assert result["state"] == "ready"
    assert result["loaded"] == []  # the child parsed, chunked and wrote
