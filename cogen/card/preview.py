"""Preview images: a few input/output pairs of a built config, drawn with the ARC palette.

A preview is a stack of *bands*, one per (split, kind of example): each band shows pairs side
by side, the input above its output with a small arrow between them. A sequential config (a
``frames`` column) adds, per split, a band of strips: a few rows' frames, left to right; an RGB
config (``input_image``) a band of its stored images, pixel for pixel. Some rows hold one pair
(``input``/``output``); episodic rows hold lists of pairs (``study_inputs``/``study_outputs``,
``query_inputs``/...), which become one band per kind. Which columns are grids is read from the
manifest's column types; under each pair goes its caption, the value of the column the family's
card text names for that kind (``captions`` of its :class:`~cogen.card.family_card.FamilyCard`:
a transformation sequence, one step a line, or an example's role), so a new family needs no code here.

Card previews (``previews/<config>.png``) carry a stamp (config fingerprint, splits, count,
renderer version) and are redrawn only when it changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cogen.card._png import encode_png, read_png_image, read_png_text, write_png_atomic
from cogen.family import family
from cogen.folder import PREVIEW_DIR, folder_manifests, preview_path
from cogen.palette import ARC_RGB

__all__ = ["PALETTE", "PREVIEW_DIR", "Band", "Preview", "caption_columns", "caption_lines", "caption_strip",
           "card_preview", "draw_bands", "grid_columns", "held_out_split", "preview_problem", "preview_splits",
           "read_bands", "render_config", "render_preview",
           "stale_card_previews"]

#: Bump when the drawing changes, so that card previews are redrawn.
RENDERER_VERSION = 3  # 2: every band carries its label; 3: every pair its caption
CARD_PAIRS = 6
_PAGE, _LINE, _MARK = 10, 11, 12  # palette indices after the ten ARC colours
#: The colours of preview images: the ten ARC colours, then page, line and mark.
PALETTE = list(ARC_RGB) + [(255, 255, 255), (85, 85, 85), (160, 160, 160)]
_MARGIN = 8
_GRID_PX = 100  # target drawn size of the largest grid side


@dataclass(frozen=True)
class Band:
    """One row of a preview: ``label`` (e.g. ``"test_ood"``, ``"train study"``) and its pairs."""

    label: str
    pairs: tuple[tuple[np.ndarray, np.ndarray], ...]
    #: Sequential rows (a ``frames`` column): each row's frames, drawn left to right, one strip per row.
    strips: tuple[tuple[np.ndarray, ...], ...] = ()
    #: RGB rows (``input_image``/``output_image``): the stored images as preview palette indices, drawn as they are.
    images: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    #: Per pair, the lines of its caption (drawn under its output); empty: no captions.
    captions: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Preview:
    """A written preview image and the labels of its bands, top to bottom."""

    path: Path
    labels: tuple[str, ...]


def grid_columns(columns: dict[str, str]) -> list[tuple[str, str, str, bool]]:
    """``(kind, input column, output column, many)`` for every input/output pair of grid columns.

    ``input``/``output`` (``list<list<int8>>``) give one pair per row and kind ``""``;
    ``<kind>_inputs``/``<kind>_outputs`` (``list<list<list<int8>>>``) give several.
    """
    found = []
    for name, type_ in columns.items():
        for suffix, many, grid_type in (("input", False, "list<list<int8>>"), ("inputs", True, "list<list<list<int8>>>")):
            partner = name[: -len(suffix)] + suffix.replace("input", "output")
            if name.endswith(suffix) and type_ == grid_type and columns.get(partner) == grid_type:
                found.append((name[: -len(suffix)].rstrip("_"), name, partner, many))
    return found


def caption_columns(manifest: dict) -> dict[str, str]:
    """Kind of pair -> the column whose values caption its pairs, for the kinds the config has."""
    columns = manifest["columns"]
    kinds = {kind for kind, *_ in grid_columns(columns)}
    captions = family(manifest.get("family")).load("card").captions
    return {kind: column for kind, column in captions.items() if kind in kinds and column in columns}


def caption_lines(value) -> tuple[str, ...]:
    """The caption of one pair: a list (a transformation sequence) one step a line, each after the
    first marked ``>``; anything else on one line."""
    if isinstance(value, (list, tuple)):
        return tuple(("> " if position else "") + str(step) for position, step in enumerate(value))
    return () if value is None else (str(value),)


def held_out_split(manifest: dict, splits: list[str] | None = None) -> str | None:
    """The last of ``splits`` (default: the config's) that its family holds out of training, else the last."""
    splits = list(manifest["splits"]) if splits is None else splits
    record = family(manifest.get("family"))
    held = [split for split in splits if record.is_held_out(split)]
    return (held or splits or [None])[-1]


def preview_splits(manifest: dict) -> tuple[str, ...]:
    """The splits a card preview shows: the first (training) split and the last one held out of training
    (its family's ``held_out_splits``), else the last split."""
    splits = [s for s, info in manifest["splits"].items() if info["rows"]]
    if not splits:
        return ()
    return tuple(dict.fromkeys([splits[0], held_out_split(manifest, splits)]))


def read_bands(folder: Path, manifest: dict, split: str, n: int) -> list[Band]:
    """The first ``n`` pairs of each kind in ``split`` of a built config."""
    import pyarrow.parquet as pq

    info = manifest["splits"].get(split)
    kinds = grid_columns(manifest["columns"])
    if not info or not info["files"] or not kinds or n < 1:
        return []
    captions = caption_columns(manifest)
    columns = list(dict.fromkeys([c for _, inp, out, _ in kinds for c in (inp, out)] + list(captions.values())))
    batch = next(pq.ParquetFile(Path(folder) / info["files"][0]).iter_batches(batch_size=n, columns=columns), None)
    rows = batch.to_pylist() if batch is not None else []
    bands = []
    for kind, inp, out, many in kinds:
        band = _pair_band(f"{split} {kind}".strip(), rows, (inp, out, captions.get(kind)), many, n)
        if band is not None:
            bands.append(band)
    if "input_image" in manifest["columns"]:
        images = next(pq.ParquetFile(Path(folder) / info["files"][0]).iter_batches(
            batch_size=n, columns=["input_image", "output_image"]), None)
        pairs = tuple((_image_indices(row["input_image"]["bytes"]), _image_indices(row["output_image"]["bytes"]))
                      for row in (images.to_pylist() if images is not None else []))
        if pairs:
            bands.append(Band(f"{split} images", (), images=pairs))
    if "frames" in manifest["columns"]:
        frames = next(pq.ParquetFile(Path(folder) / info["files"][0]).iter_batches(batch_size=min(n, 3),
                                                                                  columns=["frames"]), None)
        strips = tuple(tuple(np.array(f, np.int8) for f in row) for row in (frames.column(0).to_pylist() if frames else []))
        if strips:
            bands.append(Band(f"{split} frames", (), strips))
    return bands


def _pair_band(label: str, rows: list[dict], columns: tuple[str, str, str | None], many: bool, n: int) -> Band | None:
    """The first ``n`` pairs of ``rows`` (input column, output column, caption column or None)."""
    inp, out, caption = columns
    found = []
    for row in rows:
        notes = row[caption] if caption else None
        if many:
            found += zip(row[inp], row[out], notes if notes is not None else [None] * len(row[inp]), strict=True)
        else:
            found.append((row[inp], row[out], notes))
    found = found[:n]
    if not found:
        return None
    pairs = tuple((np.array(a, np.int8), np.array(b, np.int8)) for a, b, _ in found)
    return Band(label, pairs, captions=tuple(caption_lines(note) for *_, note in found) if caption else ())


def _image_indices(data: bytes) -> np.ndarray:
    """A stored PNG/JPEG as indices of the preview palette (its nearest colour: exact for crisp renders)."""
    import io

    from cogen.errors import optional_import

    Image = optional_import("PIL.Image", "previews of stored images")
    pixels = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), np.int64)
    palette = np.array(PALETTE, np.int64)
    return ((pixels[:, :, None, :] - palette) ** 2).sum(axis=3).argmin(axis=2).astype(np.uint8)


def _cell_size(bands: list[Band]) -> int:
    side = max(max(g.shape) for band in bands for group in (*band.pairs, *band.strips) for g in group)
    return int(np.clip(_GRID_PX // max(side, 1), 3, 16))


def _draw_grid(grid: np.ndarray, cell: int) -> np.ndarray:
    """Palette indices of one grid: ``cell``-pixel squares separated by 1-pixel lines."""
    if grid.ndim != 2 or grid.size == 0:
        return np.full((1, 1), _LINE, np.uint8)
    step = cell + 1
    rows, cols = np.arange(grid.shape[0] * step + 1), np.arange(grid.shape[1] * step + 1)
    image = grid.astype(np.uint8)[np.minimum(rows // step, grid.shape[0] - 1)][:, np.minimum(cols // step, grid.shape[1] - 1)]
    image[rows % step == 0, :] = _LINE
    image[:, cols % step == 0] = _LINE
    return image


def _arrow(width: int, height: int) -> np.ndarray:
    """A small downward-pointing triangle centred in a ``height x width`` page-coloured box."""
    box = np.full((height, width), _PAGE, np.uint8)
    size = max(2, height // 2)
    top, centre = (height - size) // 2, width // 2
    for step in range(size):
        half = size - 1 - step
        box[top + step, max(0, centre - half): centre + half + 1] = _MARK
    return box


def _paste(canvas: np.ndarray, image: np.ndarray, top: int, left: int) -> None:
    canvas[top: top + image.shape[0], left: left + image.shape[1]] = image


def _draw_strips(band: Band, cell: int) -> np.ndarray:
    """Each strip's frames left to right, a right-pointing arrow between frames; strips stacked."""
    gap = max(8, 2 * cell)
    rows = []
    for strip in band.strips:
        drawn = [_draw_grid(frame, cell) for frame in strip]
        height = max(d.shape[0] for d in drawn)
        canvas = np.full((height, sum(d.shape[1] for d in drawn) + gap * (len(drawn) - 1)), _PAGE, np.uint8)
        left = 0
        for position, image in enumerate(drawn):
            if position:
                _paste(canvas, _arrow(height, gap).T, 0, left - gap)  # the down arrow turned to point right
            _paste(canvas, image, 0, left)
            left += image.shape[1] + gap
        rows.append(canvas)
    width = max(r.shape[1] for r in rows)
    return np.vstack([np.pad(r, ((0, _MARGIN), (0, width - r.shape[1])), constant_values=_PAGE) for r in rows])


def _draw_band(band: Band, cell: int) -> np.ndarray:
    if band.strips:
        return _draw_strips(band, cell)
    drawn = list(band.images) or [(_draw_grid(a, cell), _draw_grid(b, cell)) for a, b in band.pairs]
    captions = [caption_strip(lines) for lines in band.captions] or [np.zeros((0, 0), np.uint8)] * len(drawn)
    widths = [max(a.shape[1], b.shape[1], c.shape[1]) for (a, b), c in zip(drawn, captions, strict=True)]
    top_height = max(a.shape[0] for a, _ in drawn)
    gap = max(8, 2 * cell)
    bottom = top_height + gap + max(b.shape[0] for _, b in drawn)
    height = bottom + (CAPTION_GAP + max(c.shape[0] for c in captions) if band.captions else 0)
    canvas = np.full((height, sum(widths) + _MARGIN * (len(widths) - 1)), _PAGE, np.uint8)
    left = 0
    for (a, b), caption, width in zip(drawn, captions, widths, strict=True):
        _paste(canvas, a, 0, left)
        _paste(canvas, _arrow(width, gap), top_height, left)
        _paste(canvas, b, top_height + gap, left)
        _paste(canvas, caption, bottom + CAPTION_GAP, left)
        left += width + _MARGIN
    return canvas


#: Pixels per font pixel of band labels and pair captions, the gap between a label and its band, between
#: an output and its caption, and between the lines of a caption.
LABEL_SCALE, LABEL_GAP, CAPTION_GAP, CAPTION_LEADING = 2, 4, 4, 2


def caption_strip(lines: tuple[str, ...]) -> np.ndarray:
    """Palette indices of a pair's caption: its ``lines`` in dark grey, one under the other, from the left."""
    from cogen.card._font import text_bitmap

    bitmaps = [text_bitmap(line, LABEL_SCALE) for line in lines]
    if not bitmaps:
        return np.zeros((0, 0), np.uint8)
    step = bitmaps[0].shape[0] + CAPTION_LEADING
    strip = np.full((step * len(bitmaps) - CAPTION_LEADING, max(b.shape[1] for b in bitmaps)), _PAGE, np.uint8)
    for number, bitmap in enumerate(bitmaps):
        strip[number * step: number * step + bitmap.shape[0], : bitmap.shape[1]][bitmap] = _LINE
    return strip


def label_strip(label: str, width: int) -> np.ndarray:
    """Palette indices of a band's label line: ``label`` in dark grey from the left margin."""
    from cogen.card._font import text_bitmap

    bitmap = text_bitmap(label, LABEL_SCALE)
    strip = np.full((bitmap.shape[0] + LABEL_GAP, width), _PAGE, np.uint8)
    strip[: bitmap.shape[0], _MARGIN: _MARGIN + bitmap.shape[1]][bitmap] = _LINE
    return strip


def draw_bands(bands: list[Band], cell: int | None = None) -> np.ndarray:
    """Palette indices of the whole preview: bands stacked top to bottom, each under its label
    (:func:`label_strip`), separated by a rule."""
    from cogen.card._font import text_bitmap

    if not bands:
        raise ValueError("nothing to draw: no band holds a pair")
    cell = cell or _cell_size(bands)
    images = [_draw_band(band, cell) for band in bands]
    width = max(max(i.shape[1] for i in images), max(text_bitmap(b.label, LABEL_SCALE).shape[1] for b in bands))
    width += 2 * _MARGIN
    parts = []
    for position, (band, image) in enumerate(zip(bands, images, strict=True)):
        if position:
            rule = np.full((2 * _MARGIN + 1, width), _PAGE, np.uint8)
            rule[_MARGIN, _MARGIN: width - _MARGIN] = _MARK
            parts.append(rule)
        parts.append(label_strip(band.label, width))
        row = np.full((image.shape[0], width), _PAGE, np.uint8)
        _paste(row, image, 0, _MARGIN)
        parts.append(row)
    page = np.vstack(parts)
    return np.pad(page, ((_MARGIN, _MARGIN), (0, 0)), constant_values=_PAGE)


def render_preview(folder: Path, manifest: dict, splits: tuple[str, ...], n: int, path: Path,
                   cell: int | None = None, stamp: dict | None = None) -> Preview | None:
    """Draw the first ``n`` pairs of each split (and kind) of a config into the PNG ``path``.

    Returns ``None`` (and writes nothing) when the splits hold no input/output grids.
    """
    drawn = _preview_png(folder, manifest, splits, n, cell, stamp)
    if drawn is None:
        return None
    write_png_atomic(path, drawn[0])
    return Preview(Path(path), drawn[1])


def _preview_png(folder: Path, manifest: dict, splits: tuple[str, ...], n: int, cell: int | None,
                 stamp: dict | None) -> tuple[bytes, tuple[str, ...]] | None:
    """The PNG bytes of a preview and the labels of its bands (None when the splits hold no grids)."""
    bands = [band for split in splits for band in read_bands(folder, manifest, split, n)]
    if not bands:
        return None
    text = {"cogen": json.dumps(stamp, sort_keys=True)} if stamp else None
    return encode_png(draw_bands(bands, cell), PALETTE, text), tuple(band.label for band in bands)


def render_config(folder: Path, configs: list[str] | None, split: str | None, n: int, images: Path,
                  cell: int | None = None) -> list[Preview]:
    """``cogen render``: draw ``n`` pairs of ``split`` of each config into ``images/<config>-<split>.png``.

    ``configs=None`` draws every config; ``split=None`` picks the last split held out of training, else the last.
    """
    from cogen.errors import UnknownNameError

    manifests = folder_manifests(folder)
    previews = []
    for name in configs or list(manifests):
        if name not in manifests:
            raise UnknownNameError("config", name, manifests)
        manifest = manifests[name]
        chosen = split or held_out_split(manifest)
        if chosen not in manifest["splits"]:
            raise UnknownNameError(f"split of {name}", chosen, manifest["splits"])
        preview = render_preview(folder, manifest, (chosen,), n, Path(images) / f"{name}-{chosen}.png", cell)
        if preview is not None:
            previews.append(preview)
    return previews


def _card_stamp(manifest: dict, splits: tuple[str, ...]) -> dict:
    return {"config": manifest["config"], "fingerprint": manifest.get("fingerprint"), "splits": list(splits),
            "pairs": CARD_PAIRS, "renderer": RENDERER_VERSION}


def card_preview(folder: Path, manifest: dict) -> Path | None:
    """``previews/<config>.png`` for the dataset card, redrawn only if its stamp is out of date."""
    splits = preview_splits(manifest)
    path = preview_path(folder, manifest['config'])
    stamp = _card_stamp(manifest, splits)
    if path.is_file() and read_png_text(path).get("cogen") == json.dumps(stamp, sort_keys=True):
        return path
    preview = render_preview(folder, manifest, splits, CARD_PAIRS, path, stamp=stamp)
    if preview is None:
        path.unlink(missing_ok=True)
    return preview.path if preview else None


def preview_problem(folder: Path, manifest: dict) -> str | None:
    """Why ``previews/<config>.png`` is not the card preview cogen draws from the config's rows now (None
    when it is, or when there is none and none is drawn). Pixels, palette and stamp are compared, not the
    compressed bytes, which depend on the zlib that wrote them."""
    path = preview_path(folder, manifest["config"])
    shown = f"{PREVIEW_DIR}/{path.name}"
    if path.is_symlink():
        return f"{shown} is a symbolic link; cogen writes previews as files: delete it and rerun `cogen card`"
    if not path.exists():
        return None
    splits = preview_splits(manifest)
    fresh = _preview_png(folder, manifest, splits, CARD_PAIRS, None, _card_stamp(manifest, splits))
    if fresh is None:
        return f"{shown} is there, but cogen draws no preview of this config (no grids in its rows): delete it"
    stored = read_png_image(path.read_bytes())
    if stored is None or encode_png(*stored) != fresh[0]:
        return (f"{shown} is not the image cogen draws from the config's rows (replaced, or drawn from other rows): "
                "delete it and rerun `cogen card`")
    return None


def stale_card_previews(folder: Path, configs: set[str]) -> list[Path]:
    """Card previews (they carry a stamp) of configs that are no longer in the folder."""
    directory = Path(folder) / PREVIEW_DIR
    stale = []
    for path in sorted(directory.glob("*.png")) if directory.is_dir() else ():
        stamp = read_png_text(path).get("cogen")
        if stamp and json.loads(stamp).get("config") not in configs:
            stale.append(path)
    return stale
