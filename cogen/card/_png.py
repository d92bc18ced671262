"""Indexed-colour PNG files written and read with the standard library (``zlib`` + ``struct``).

Preview images need ten ARC colours and a few layout colours, so an 8-bit palette PNG is both
the smallest file and about thirty lines of code; a stamp (``tEXt`` chunk) records what an
image shows, so a dataset card can tell whether a preview is still up to date.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from cogen.folder.atomic import atomic_write

__all__ = ["encode_png", "read_png_image", "read_png_text", "write_png_atomic"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(pixels: np.ndarray, palette: list[tuple[int, int, int]], text: dict[str, str] | None = None) -> bytes:
    """PNG bytes of ``pixels`` (2-D palette indices, < 256 colours) with optional ``tEXt`` entries."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    if pixels.ndim != 2 or not 0 < len(palette) <= 256 or int(pixels.max(initial=0)) >= len(palette):
        raise ValueError("encode_png needs a 2-D array of indices into a palette of at most 256 colours")
    height, width = pixels.shape
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)  # 8-bit indexed, no interlace
    scanlines = np.hstack([np.zeros((height, 1), np.uint8), pixels])  # filter type 0 on every row
    chunks = [_chunk(b"IHDR", header), _chunk(b"PLTE", bytes(c for rgb in palette for c in rgb))]
    chunks += [_chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1"))
               for key, value in (text or {}).items()]
    chunks += [_chunk(b"IDAT", zlib.compress(scanlines.tobytes(), 9)), _chunk(b"IEND", b"")]
    return _SIGNATURE + b"".join(chunks)


def read_png_text(path: Path) -> dict[str, str]:
    """The ``tEXt`` entries of a PNG file (empty if the file is missing or not a PNG)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return {}
    if not data.startswith(_SIGNATURE):
        return {}
    entries, offset = {}, len(_SIGNATURE)
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"tEXt" and b"\0" in body:
            key, value = body.split(b"\0", 1)
            entries[key.decode("latin-1")] = value.decode("latin-1")
        if kind in (b"IDAT", b"IEND"):  # text chunks are written before the image data
            break
        offset += 12 + length
    return entries


def read_png_image(data: bytes) -> tuple[np.ndarray, list[tuple[int, int, int]], dict[str, str]] | None:
    """(pixels, palette, text) of a PNG laid out as :func:`encode_png` writes one (8-bit indexed, no
    interlace, filter 0 on every row, only IHDR, PLTE, tEXt, IDAT and IEND, nothing after IEND, every
    CRC right), so that ``encode_png(*read_png_image(data))`` gives the same image; None for any other file."""
    if not data.startswith(_SIGNATURE):
        return None
    chunks, offset = [], len(_SIGNATURE)
    while offset + 12 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        end = offset + 12 + length
        if end > len(data) or struct.unpack(">I", data[end - 4:end])[0] != zlib.crc32(kind + body) & 0xFFFFFFFF:
            return None
        chunks.append((kind, body))
        offset = end
        if kind == b"IEND":
            break
    kinds = [kind for kind, _ in chunks]
    if offset != len(data) or kinds[:2] != [b"IHDR", b"PLTE"] or kinds[-1:] != [b"IEND"] or \
            any(kind not in (b"tEXt", b"IDAT") for kind in kinds[2:-1]) or b"IDAT" not in kinds:
        return None
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    palette_bytes = chunks[1][1]
    if (depth, colour, compression, filtering, interlace) != (8, 3, 0, 0, 0) or len(palette_bytes) % 3 or \
            not 0 < width * height <= 1 << 28:
        return None
    try:
        raw = zlib.decompressobj().decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"),
                                              (width + 1) * height + 1)
    except zlib.error:
        return None
    if len(raw) != (width + 1) * height:
        return None
    rows = np.frombuffer(raw, np.uint8).reshape(height, width + 1)
    if rows[:, 0].any():
        return None
    palette = [tuple(palette_bytes[i:i + 3]) for i in range(0, len(palette_bytes), 3)]
    if int(rows[:, 1:].max(initial=0)) >= len(palette):
        return None
    text = {}
    for kind, body in chunks:
        if kind == b"tEXt":
            if b"\0" not in body:
                return None
            key, value = body.split(b"\0", 1)
            text[key.decode("latin-1")] = value.decode("latin-1")
    return rows[:, 1:].copy(), palette, text


def write_png_atomic(path: Path, png: bytes) -> Path:
    """Write ``png`` to ``path`` through a temporary name and a rename (never half a file)."""
    path = Path(path)
    atomic_write(path, lambda temporary: temporary.write_bytes(png))
    return path
