"""Chat file access: ignore rules, open buffers, attachments, linked files, mentions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qodeassist_lsp.config.confinement import Confinement
from qodeassist_lsp.context.documents import DocumentStore
from qodeassist_lsp.context.ignore import IgnoreFilter
from qodeassist_lsp.core.content import (
    ImageBlock,
    StoredAttachmentBlock,
    StoredImageBlock,
    TextBlock,
)
from qodeassist_lsp.features.chat import mentions
from qodeassist_lsp.features.chat.files import (
    ChatInputError,
    FileAccess,
    InlineImage,
    StoredContentLoader,
    store_attachments,
    store_images,
)
from qodeassist_lsp.features.chat.store import ChatStore


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src/pkg").mkdir(parents=True)
    (root / "src/pkg/parser.py").write_text("".join(f"l{n}\n" for n in range(1, 11)))
    (root / "other").mkdir()
    (root / "other/parser.py").write_text("deeper\n")
    (root / ".qodeassistignore").write_text("*.env\n")
    (root / "secret.env").write_text("KEY=1")
    return root


def access(project: Path, documents: DocumentStore | None = None) -> FileAccess:
    return FileAccess(documents or DocumentStore(), IgnoreFilter(project), project)


def test_ignored_and_missing_files_are_refused(project: Path) -> None:
    files = access(project)
    with pytest.raises(ChatInputError, match=r"secret\.env is excluded by"):
        files.check(project / "secret.env")
    with pytest.raises(ChatInputError, match="no such file"):
        files.check(project / "nope.py")
    (project / "bin.dat").write_bytes(b"\x00\x01")
    with pytest.raises(ChatInputError, match="not a text file"):
        files.read_text(project / "bin.dat")


def test_open_buffers_win_over_the_disk(project: Path) -> None:
    documents = DocumentStore()
    path = project / "src/pkg/parser.py"
    documents.open(path.as_uri(), "UNSAVED")
    files = access(project, documents)
    assert files.read_text(path) == "UNSAVED"
    [block] = files.linked_blocks([str(path)])
    assert isinstance(block, TextBlock)
    assert block.text.endswith("\nFile: parser.py\nContent:\nUNSAVED\n")


def test_attachments_are_copied_and_loaded_with_a_cache(project: Path, tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "history")
    (project / "shot.png").write_bytes(b"\x89PNG fake")
    (project / "notes.md").write_text("note")
    blocks = store_attachments(
        access(project), store, "c1", [(project / "notes.md").as_uri(), "shot.png"]
    )
    assert isinstance(blocks[0], StoredAttachmentBlock) and blocks[0].file_name == "notes.md"
    assert isinstance(blocks[1], StoredImageBlock) and blocks[1].media_type == "image/png"
    loader = StoredContentLoader(store, "c1")
    text = loader(blocks[0])
    assert text == TextBlock("File: notes.md\n```\nnote\n```")
    assert loader(blocks[0]) is text  # cached while the stored file is unchanged
    image = loader(blocks[1])
    assert isinstance(image, ImageBlock) and image.data == "iVBORyBmYWtl"


def test_a_refused_attachment_stores_nothing(project: Path, tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "history")
    (project / "ok.md").write_text("fine")
    with pytest.raises(ChatInputError):
        store_attachments(access(project), store, "c1", ["ok.md", "secret.env"])
    assert not (tmp_path / "history").exists()


def test_inline_images_are_stored_beside_the_chat(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "history")
    [block] = store_images(store, "c1", [InlineImage(b"\x89PNG fake", "image/jpeg", "shot")])
    assert isinstance(block, StoredImageBlock)
    assert (block.file_name, block.media_type) == ("shot.jpg", "image/jpeg")
    image = StoredContentLoader(store, "c1")(block)
    assert isinstance(image, ImageBlock) and image.data == "iVBORyBmYWtl"


@pytest.mark.parametrize(
    ("image", "why"),
    [
        (InlineImage(b"II*", "image/tiff", "scan"), "image/tiff images cannot be sent"),
        (InlineImage(b"0" * (20 * 1024 * 1024 + 1), "image/png", "big"), "over 20 MiB"),
    ],
)
def test_a_refused_inline_image_stores_nothing(
    tmp_path: Path, image: InlineImage, why: str
) -> None:
    store = ChatStore(tmp_path / "history")
    ok = InlineImage(b"fine", "image/png")
    with pytest.raises(ChatInputError, match=why):
        store_images(store, "c1", [ok, image])
    assert not (tmp_path / "history").exists()


def test_mentions_resolve_by_path_or_shortest_name(project: Path) -> None:
    files = access(project)
    found = mentions.find_mentions(files, "see @parser.py:2-3 and @other/parser.py, mail me@x.org")
    assert [(m.path.relative_to(project).as_posix(), m.first_line) for m in found] == [
        ("other/parser.py", 2),
        ("other/parser.py", None),
    ]
    expanded = mentions.expand(files, "look at @src/pkg/parser.py:2-3.")
    uri = (project / "src/pkg/parser.py").as_uri()
    assert expanded == f"look at [@src/pkg/parser.py]({uri}) (lines 2-3):\n```py\nl2\nl3\n```\n."
    assert mentions.expand(files, "@decorator stays") == "@decorator stays"


def test_mentions_of_ignored_files_are_refused(project: Path) -> None:
    with pytest.raises(ChatInputError, match="excluded"):
        mentions.expand(access(project), "read @secret.env")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    (folder / "dir").mkdir(parents=True)
    (folder / "secret.txt").write_text("TOP SECRET")
    (folder / "dir/deep.txt").write_text("DEEP SECRET")
    return folder


def test_paths_outside_the_workspace_are_refused(project: Path, outside: Path) -> None:
    os.symlink(outside / "secret.txt", project / "link.txt")
    os.symlink(outside / "dir", project / "linked_dir")
    files = access(project)
    for raw in ("../outside/secret.txt", str(outside / "secret.txt"), "link.txt"):
        with pytest.raises(
            ChatInputError, match=r"is outside the workspace folders.*allowed_roots"
        ):
            files.read_text(files.resolve(raw))
    with pytest.raises(ChatInputError, match="outside"):
        files.check(files.resolve("linked_dir/deep.txt"))
    [block] = files.linked_blocks([str(project / "link.txt")])
    assert isinstance(block, TextBlock) and "TOP SECRET" not in block.text
    assert "[unavailable: " in block.text


def test_an_open_buffer_outside_the_workspace_is_refused(project: Path, outside: Path) -> None:
    documents = DocumentStore()
    documents.open((outside / "secret.txt").as_uri(), "BUFFER SECRET")
    files = access(project, documents)
    with pytest.raises(ChatInputError, match="outside"):
        files.read_text(outside / "secret.txt")


def test_a_fifo_is_refused_as_a_fifo_not_as_missing(project: Path) -> None:
    os.mkfifo(project / "pipe.txt")
    files = access(project)
    with pytest.raises(ChatInputError, match="is a FIFO, not a regular file"):
        files.check(project / "pipe.txt")
    with pytest.raises(ChatInputError, match="is a FIFO"):
        mentions.expand(files, "see @pipe.txt")


def test_outside_attachments_store_nothing(project: Path, outside: Path, tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "history")
    with pytest.raises(ChatInputError, match="outside"):
        store_attachments(access(project), store, "c1", [(outside / "secret.txt").as_uri()])
    assert not store.content_dir("c1").exists()


def test_mentions_leading_outside_are_refused(project: Path, outside: Path) -> None:
    os.symlink(outside / "dir", project / "linked_dir")
    files = access(project)
    for message in ("see @../outside/secret.txt", "see @linked_dir/deep.txt:1-1"):
        with pytest.raises(ChatInputError, match="outside the workspace folders"):
            mentions.expand(files, message)


def test_allowed_roots_admit_a_folder_outside(project: Path, outside: Path) -> None:
    files = FileAccess(
        DocumentStore(),
        IgnoreFilter(project),
        project,
        Confinement.of([project], [str(outside)]),
    )
    assert files.read_text(outside / "secret.txt") == "TOP SECRET"
