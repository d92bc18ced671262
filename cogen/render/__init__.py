"""COGITAO-RGB (the paper's App. B): grids drawn as RGB images, and images read back into grids.

A grid of H x W cells becomes a ``size`` x ``size`` image: colour 0 is the ``background`` (white,
the paper's, or black, ARC's), colours 1-9 come from the ``palette``, cells are stretched by
``resample`` (``nearest``: every pixel takes the colour of the cell under its centre, as Pillow's
NEAREST; ``bilinear``: Pillow's) and an optional Gaussian ``blur`` (sigma in pixels) softens them.
Rendering is one NumPy gather per group of same-shape grids; crisp PNGs are palette PNGs (the
colour indices, a third of an RGB image's bytes to compress). Pillow (the ``rgb`` extra, which ``datasets`` also uses to
decode images) blurs and encodes PNG or JPEG (quality 100, no chroma subsampling).

:func:`to_grid` inverts a rendering: the nearest palette colour of every pixel, then a majority
vote among the pixels of each cell; without blur the round trip gives back the grid exactly.

>>> settings = RenderSettings(size=128)
>>> image = render_grid(np.eye(3, dtype=np.int8), settings)        # (128, 128, 3) uint8
>>> bool((to_grid(image, (3, 3), settings) == np.eye(3)).all())
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from cogen.errors import DataError
from cogen.palette import ARC_RGB

__all__ = ["BACKGROUNDS", "FORMATS", "PALETTES", "RESAMPLING", "RenderSettings", "check_size", "colours", "encode",
           "encode_grids", "render_grid", "to_grid"]

#: Colour 0 of a rendering.
BACKGROUNDS = {"white": (255, 255, 255), "black": (0, 0, 0)}
#: Colours 1-9 of a rendering. ``arc``: the ARC colours, which the COGITAO paper's images use too.
PALETTES = {"arc": ARC_RGB[1:]}
RESAMPLING = ("nearest", "bilinear")
#: Image encodings: file suffix of each.
FORMATS = {"png": "png", "jpeg": "jpg"}


@dataclass(frozen=True)
class RenderSettings:
    """How grids are drawn (``render:`` in a spec); the defaults are the paper's 128 x 128 images
    on white, crisp (``blur: 0``), stored as PNG."""

    size: int = 128
    background: str = "white"
    palette: str = "arc"
    resample: str = "nearest"
    blur: float = 0.0
    format: str = "png"


def colours(settings: RenderSettings) -> np.ndarray:
    """``(10, 3)`` uint8: the RGB of colours 0-9 under ``settings``."""
    return np.array([BACKGROUNDS[settings.background], *PALETTES[settings.palette]], np.uint8)


@lru_cache(maxsize=256)
def _cells(size: int, cells: int) -> np.ndarray:
    """The cell under the centre of each of ``size`` pixels across ``cells`` cells (nearest resampling;
    Pillow's own NEAREST rounds differently on some uneven ratios, e.g. 17 cells on 30 pixels)."""
    return np.minimum(((np.arange(size) + 0.5) * cells / size).astype(np.int64), cells - 1)


@lru_cache(maxsize=256)
def _gather(size: int, height: int, width: int) -> np.ndarray:
    """``(size, size)`` flat cell index (row-major in an H x W grid) under each pixel."""
    return _cells(size, height)[:, None] * width + _cells(size, width)[None, :]


def check_size(settings: RenderSettings, height: int, width: int) -> None:
    """Raise :class:`DataError` when a ``height`` x ``width`` grid would get less than a pixel per cell."""
    if settings.size < max(height, width):
        raise DataError(f"render size {settings.size} is smaller than a {height}x{width} grid: fewer than one "
                        f"pixel per cell; use size >= {max(height, width)}")


def _crisp(settings: RenderSettings) -> bool:
    """Pixels are exactly palette colours (nearest, no blur): kept as palette indices until encoded."""
    return settings.resample == "nearest" and settings.blur <= 0


def _indexed(grids: np.ndarray, height: int, width: int, settings: RenderSettings) -> np.ndarray:
    """``(n, size, size)`` uint8 colour indices of ``n`` grids of one shape (nearest resampling)."""
    check_size(settings, height, width)
    flat = np.ascontiguousarray(grids[:, :height, :width], np.uint8).reshape(len(grids), -1)
    return np.take(flat, _gather(settings.size, height, width), axis=1)  # C-contiguous images, unlike flat[:, gather]


def _pillow(module: str):
    """A module of Pillow (``Image``, ``ImageFilter``), or one line naming the extra that installs it."""
    from cogen.errors import optional_import

    return optional_import(f"PIL.{module}", "drawing grids as images (`render:`, cogen.render)")


def _rgb(grid: np.ndarray, settings: RenderSettings) -> np.ndarray:
    palette = colours(settings)
    height, width = grid.shape
    if settings.resample == "nearest":
        image = palette[_indexed(grid[None], height, width, settings)[0]]
    else:
        Image = _pillow("Image")

        check_size(settings, height, width)
        image = np.asarray(Image.fromarray(palette[grid]).resize((settings.size, settings.size), Image.BILINEAR))
    if settings.blur > 0:
        Image, ImageFilter = _pillow("Image"), _pillow("ImageFilter")

        image = np.asarray(Image.fromarray(image).filter(ImageFilter.GaussianBlur(settings.blur)))
    return image


def render_grid(grid: np.ndarray, settings: RenderSettings) -> np.ndarray:
    """``(size, size, 3)`` uint8 image of ``grid`` (H x W ints 0-9)."""
    return _rgb(np.asarray(grid).astype(np.int64), settings)


@lru_cache(maxsize=16)
def _palette_image(width: int, height: int, palette: tuple[int, ...]):
    """A blank palette image carrying ``palette`` (copied per image: cheaper than setting a palette each time)."""
    Image = _pillow("Image")

    picture = Image.new("P", (width, height))
    picture.putpalette(list(palette))
    return picture


def encode(image: np.ndarray, settings: RenderSettings, palette: np.ndarray | None = None) -> bytes:
    """PNG or JPEG bytes of an ``(S, S, 3)`` uint8 image (JPEG at quality 100, 4:4:4), or, with
    ``palette``, of an ``(S, S)`` image of its palette indices: a palette PNG (a third of the bytes
    to compress), or a JPEG of the colours Pillow looks up (the same bytes as from the RGB image, at
    a fraction of the cost of a NumPy colour gather)."""
    import io

    Image = _pillow("Image")
    if palette is not None:
        picture = _palette_image(image.shape[1], image.shape[0], tuple(palette.ravel().tolist())).copy()
        picture.frombytes(np.ascontiguousarray(image, np.uint8).tobytes())
        if settings.format != "png":
            picture = picture.convert("RGB")
    else:
        picture = Image.fromarray(image)
    out = io.BytesIO()
    if settings.format == "png":
        picture.save(out, format="PNG", compress_level=1)
    else:
        picture.save(out, format="JPEG", quality=100, subsampling=0)
    return out.getvalue()


#: Images drawn in one NumPy gather: bounds the memory of a row group's renderings (8 MB at 128x128).
DRAW_BATCH = 512


def encode_grids(grids: np.ndarray, sizes: np.ndarray, settings: RenderSettings) -> list[bytes]:
    """Encoded images of the padded ``grids`` (``(n, Hmax, Wmax)``), each its true ``sizes[i]``.

    Crisp images (nearest, no blur) are drawn :data:`DRAW_BATCH` grids of one shape at a time as
    palette indices, which Pillow colours while it encodes."""
    out: list[bytes] = [b""] * len(grids)
    palette = colours(settings)
    for height, width in np.unique(sizes, axis=0):
        rows = np.flatnonzero((sizes[:, 0] == height) & (sizes[:, 1] == width))
        if not _crisp(settings):
            for row in rows:
                out[row] = encode(_rgb(grids[row, :height, :width].astype(np.int64), settings), settings)
            continue
        for first in range(0, len(rows), DRAW_BATCH):
            batch = rows[first: first + DRAW_BATCH]
            images = _indexed(grids[batch], int(height), int(width), settings)
            for row, image in zip(batch, images, strict=True):
                out[row] = encode(image, settings, palette)
    return out


def to_grid(image, shape: tuple[int, int], settings: RenderSettings = RenderSettings()) -> np.ndarray:
    """The ``shape`` = (H, W) grid an image shows: each pixel's nearest palette colour, then a
    majority vote among the pixels whose centre lies in each cell. ``image``: an ``(S, S, 3)``
    array or a PIL image."""
    pixels = np.asarray(image.convert("RGB") if hasattr(image, "convert") else image, np.int64)
    if pixels.ndim != 3 or pixels.shape[2] != 3:
        raise DataError(f"expected an RGB image, got an array of shape {pixels.shape}")
    height, width = shape
    nearest = ((pixels[:, :, None, :] - colours(settings).astype(np.int64)) ** 2).sum(axis=3).argmin(axis=2)
    cell = _cells(pixels.shape[0], height)[:, None] * width + _cells(pixels.shape[1], width)[None, :]
    votes = np.bincount((cell * 10 + nearest).ravel(), minlength=height * width * 10).reshape(height * width, 10)
    return votes.argmax(axis=1).reshape(height, width).astype(np.int8)
