"""Token estimates: characters/4 for text, tiles for images read from their headers."""

from __future__ import annotations

import struct
import zlib

import pytest

from qodeassist_lsp.features.chat import tokens


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def test_text_is_characters_over_four() -> None:
    assert tokens.text_tokens("") == 0
    assert tokens.text_tokens("abcd") == 1
    assert tokens.text_tokens("abcde") == 2
    assert tokens.file_tokens("a.py", "x" * 8) == 1 + 2 + 5


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (png(640, 480), (640, 480)),
        (jpeg(1920, 1080), (1920, 1080)),
        (b"GIF89a" + struct.pack("<HH", 32, 16) + b"\x00" * 8, (32, 16)),
        (b"BM" + b"\x00" * 16 + struct.pack("<ii", 100, -50) + b"\x00" * 8, (100, 50)),
    ],
)
def test_image_sizes_come_from_the_header(data: bytes, size: tuple[int, int]) -> None:
    assert tokens.image_size(data) == size


def test_image_tokens_count_tiles_after_scaling() -> None:
    assert tokens.image_tokens(png(512, 512)) == 85 + 170
    # 4096x2048 → 2048x1024 → 1536x768 → 3x2 tiles.
    assert tokens.image_tokens(png(4096, 2048)) == 85 + 170 * 6
    assert tokens.image_tokens(b"not an image") == tokens.UNREADABLE_IMAGE_TOKENS
    assert tokens.image_tokens(b"\x89PNG\r\n\x1a\n") == tokens.UNREADABLE_IMAGE_TOKENS
