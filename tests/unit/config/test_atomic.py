"""Atomic text writes: all or nothing, permissions kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qodeassist_lsp.config.atomic import write_text_atomically


def test_a_new_file_and_its_folder_are_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b.toml"
    write_text_atomically(path, "x = 1\r\n")
    assert path.read_bytes() == b"x = 1\r\n"
    assert path.stat().st_mode & 0o777 == 0o644


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "secret.toml"
    path.write_text("old", encoding="utf-8")
    os.chmod(path, 0o600)
    write_text_atomically(path, "new")
    assert path.read_text(encoding="utf-8") == "new"
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "keep.toml"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_text_atomically(path, "\udcff")  # a lone surrogate cannot be UTF-8
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.toml"]
