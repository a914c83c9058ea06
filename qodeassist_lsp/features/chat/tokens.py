"""Token estimates for chat input, as the original counts them (behaviour §8.4).

Text counts one token per four characters. An image counts by its tiles: the long side is
scaled to at most 2048 pixels, then the short side to at most 768, and each 512×512 tile costs
170 tokens on top of 85 (1,500 when its size cannot be read). The image size is read from the
file header (PNG, GIF, JPEG, BMP, WebP) without decoding the image.
"""

from __future__ import annotations

import math
import struct

UNREADABLE_IMAGE_TOKENS = 1500
MESSAGE_OVERHEAD = 4
FILE_OVERHEAD = 5


def text_tokens(text: str) -> int:
    """Return the estimated tokens of ``text`` (characters / 4, rounded up)."""
    return (len(text) + 3) // 4


def file_tokens(name: str, content: str) -> int:
    """Return the estimated tokens of a file sent as text."""
    return text_tokens(name) + text_tokens(content) + FILE_OVERHEAD


def image_tokens(data: bytes) -> int:
    """Return the estimated tokens of an image given as its file bytes."""
    size = image_size(data)
    if size is None:
        return UNREADABLE_IMAGE_TOKENS
    width, height = float(size[0]), float(size[1])
    for limit, side in ((2048, max), (768, min)):  # fit 2048 square, then shortest side 768
        if side(width, height) > limit:
            scale = limit / side(width, height)
            width, height = width * scale, height * scale
    tiles = math.ceil(width / 512) * math.ceil(height / 512)
    return 85 + 170 * tiles


def image_size(data: bytes) -> tuple[int, int] | None:
    """Return (width, height) from an image header, or ``None`` when it is not understood."""
    try:
        if data.startswith(b"\x89PNG\r\n\x1a\n"):
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
        if data[:6] in (b"GIF87a", b"GIF89a"):
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
        if data.startswith(b"BM"):
            width, height = struct.unpack("<ii", data[18:26])
            return abs(int(width)), abs(int(height))
        if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
            return _webp_size(data)
        if data.startswith(b"\xff\xd8"):
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        length = int.from_bytes(data[index + 2 : index + 4], "big")
        # Start-of-frame markers carry the size (C4, C8 and CC are not frames).
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return int(width), int(height)
        index += 2 + length
    return None
