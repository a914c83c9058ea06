"""Run the real command line in-process against the bundled tree and a temporary config root."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from qodeassist_lsp.cli import main
from tests.support.replay_server import ReplayServer
from tests.support.streams import write_embedded_instances

RunCli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "config"
    (root / "agents").mkdir(parents=True)
    monkeypatch.setenv("QODEASSIST_CONFIG_DIR", str(root))
    monkeypatch.setenv("QODEASSIST_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return root


@pytest.fixture
def replay(config_dir: Path) -> Iterator[ReplayServer]:
    """A replay server both Embedded provider instances of the config root point at."""
    with ReplayServer() as server:
        write_embedded_instances(config_dir / "providers", server.url)
        yield server


@pytest.fixture
def run_cli(config_dir: Path, capsys: pytest.CaptureFixture[str]) -> RunCli:
    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def rendered_body(run_cli: RunCli, name: str, ctx_file: Path) -> dict[str, object]:
    code, out, err = run_cli("agents", "render", name, "--context", str(ctx_file))
    assert code == 0, err
    return json.loads(out)


ServedModel = Callable[[Path, list[str]], Path]


@pytest.fixture
def served_model(monkeypatch: pytest.MonkeyPatch) -> ServedModel:
    """``embedded serve FLAGS`` with ``source`` as the bundled Gemma: the file it would load."""
    from qodeassist_lsp.cli import embedded_model

    class Loaded(Exception):
        pass

    def build_params(backend: object, options: object, model: Path) -> object:
        raise Loaded(model)

    monkeypatch.setattr(
        embedded_model, "_require", lambda package: type("Backend", (), {"Server": None})
    )
    monkeypatch.setattr(embedded_model, "check_port_free", lambda host, port: None)
    monkeypatch.setattr(embedded_model, "build_params", build_params)

    def serve(source: Path, flags: list[str]) -> Path:
        monkeypatch.setattr(embedded_model, "ensure_model", lambda log=None: source)
        with pytest.raises(Loaded) as loaded:
            main(["embedded", "serve", "--port", "1", *flags])
        model: Path = loaded.value.args[0]
        return model

    return serve
