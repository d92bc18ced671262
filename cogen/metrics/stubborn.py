"""Model stubbornness (COGITAO paper App. G.4), computed with cogen's own engine.

A prediction for an out-of-domain sample is *stubborn* when it equals ``tau(X)`` for some
in-domain sequence ``tau``, where ``X`` is the sample's input scene and ``tau(X)`` is what the
engine produces when it applies ``tau`` to every object of ``X`` (a sequence that fails on ``X``
— an object leaves the grid, objects overlap, a precondition fails — has no output and matches
nothing). Stubbornness is the share of samples with a stubborn prediction, over all samples
(missing or malformed predictions are never stubborn), exactly as the paper's STBN. The work is
one Numba kernel (:mod:`cogen.metrics._stubborn_kernels`) that calls the engine's own ``run_scene``.

Because the sequences differ but their outputs may not (``mirror_horizontal`` three times is one
mirror), a sample's *target* itself can equal an in-domain output; there a correct prediction is
also stubborn. :func:`stubbornness` reports those samples (``target_reachable``) so that the
share among wrong predictions can be read too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from cogen.metrics.grids import GridStack, as_stack

__all__ = ["Scene", "StubbornnessResult", "sequence_outputs", "stubbornness"]


class Scene(NamedTuple):
    """An input scene: placed objects (``cogen.engine.PlacedObject`` or ``(row, col, grid)``) on a
    ``height x width`` grid."""

    objects: tuple
    height: int
    width: int


@dataclass(frozen=True)
class StubbornnessResult:
    """Per-sample outcome (arrays of length n).

    ``stubborn``: the prediction equals some in-domain output. ``matched``: index in ``sequences``
    of the first such sequence, -1 otherwise. ``target_reachable``: the target equals some
    in-domain output (only when targets were given). ``unverifiable``: no scene for that sample.
    """

    stubborn: np.ndarray
    matched: np.ndarray
    target_reachable: np.ndarray
    unverifiable: np.ndarray

    @property
    def value(self) -> float:
        """The paper's STBN as a fraction: stubborn predictions over all samples."""
        return float(self.stubborn.mean()) if len(self.stubborn) else float("nan")


#: Scenes per kernel call (bounds the packed arrays' memory).
CHUNK = 16_384


def sequence_outputs(scene: Scene, sequences: Sequence[Sequence[str]]) -> list[np.ndarray | None]:
    """``tau(X)`` for every sequence ``tau`` (None where the sequence cannot be applied to the scene)."""
    from cogen.engine import OK, pack, run_scene, sequence_tokens

    boxes, pixels = pack(scene.objects, max([scene.height * scene.width] + [np.size(o[2]) for o in scene.objects]))
    out: list[np.ndarray | None] = []
    for sequence in sequences:
        grid = np.zeros((scene.height, scene.width), np.int8)
        ok = run_scene(sequence_tokens(sequence), scene.height, scene.width, boxes.copy(), pixels.copy(), grid) == OK
        out.append(grid if ok else None)
    return out


def _pack(scenes: Sequence[Scene | None]) -> tuple[np.ndarray, ...]:
    """Scenes as the kernel's arrays; ``kept`` marks the scenes that exist and lie inside their grids."""
    kept = np.zeros(len(scenes), bool)
    sizes = np.zeros((len(scenes), 2), np.int64)
    first = np.zeros(len(scenes) + 1, np.int64)
    objects = []
    for k, scene in enumerate(scenes):
        if scene is not None:
            grids = [np.asarray(obj[2], np.int8) for obj in scene.objects]
            boxes = [(int(obj[0]), int(obj[1]), *g.shape) for obj, g in zip(scene.objects, grids, strict=True)]
            if all(r >= 0 and c >= 0 and r + h <= scene.height and c + w <= scene.width and g.ndim == 2
                   for (r, c, h, w), g in zip(boxes, grids, strict=True)):
                kept[k], sizes[k] = True, (scene.height, scene.width)
                objects += zip(boxes, grids, strict=True)
        first[k + 1] = len(objects)
    cap = max([1] + [int(h * w) for h, w in sizes] + [g.size for _, g in objects])
    boxes = np.array([box for box, _ in objects], np.int32).reshape(-1, 4)
    pixels = np.zeros((len(objects), cap), np.int8)
    for i, (_, grid) in enumerate(objects):
        pixels[i, : grid.size] = grid.ravel()
    return kept, sizes, first, boxes, pixels


def _match(scenes, predictions: GridStack, targets: GridStack | None, inputs: GridStack | None,
           tokens: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(matched, reachable, verified)`` of one chunk of scenes."""
    from cogen.metrics import _stubborn_kernels
    from cogen.metrics._stubborn_kernels import CHECK_INPUT, WANT_PREDICTION, WANT_TARGET

    n = len(scenes)
    kept, sizes, first, boxes, pixels = _pack(scenes)
    height, width = max(1, int(sizes[:, 0].max(initial=1))), max(1, int(sizes[:, 1].max(initial=1)))
    empty = np.zeros((n, height, width), np.int8)
    wanted = np.zeros((n, 3), np.int64)
    wanted[:, WANT_PREDICTION] = (predictions.heights == sizes[:, 0]) & (predictions.widths == sizes[:, 1])
    wanted[:, WANT_TARGET] = targets is not None
    wanted[:, CHECK_INPUT] = inputs is not None
    wanted[~kept] = 0
    matched, reachable, verified = np.full(n, -1, np.int64), np.zeros(n, bool), np.zeros(n, bool)
    _stubborn_kernels.match_sequences(tokens, starts, boxes, pixels, first, sizes, *(
        empty if s is None else np.ascontiguousarray(s.canvas(height, width)) for s in (inputs, predictions, targets)),
        wanted, matched, reachable, verified)
    verified &= kept
    return matched, reachable, verified


def stubbornness(predictions, scenes: Sequence[Scene | None], sequences: Sequence[Sequence[str]],
                 targets=None, inputs=None) -> StubbornnessResult:
    """Which predictions equal the output of one of ``sequences`` (the in-domain set) applied to
    their sample's scene. ``scenes[k]`` None marks a sample whose scene is unknown; with
    ``inputs``, a scene that does not draw its input grid is unknown too (both never stubborn,
    counted in ``unverifiable``). With ``targets``, also which targets are reachable that way."""
    from cogen.engine import sequence_tokens

    predictions = as_stack(predictions)
    targets = None if targets is None else as_stack(targets)
    inputs = None if inputs is None else as_stack(inputs)
    encoded = [sequence_tokens(s) for s in sequences]
    tokens = np.ascontiguousarray(np.concatenate([np.zeros(0, np.int64), *encoded]), np.int64)
    starts = np.concatenate([[0], np.cumsum([len(t) for t in encoded])]).astype(np.int64)
    matched, reachable, verified = np.full(len(scenes), -1, np.int64), np.zeros(len(scenes), bool), \
        np.zeros(len(scenes), bool)
    for start in range(0, len(scenes), CHUNK):
        rows = np.arange(start, min(len(scenes), start + CHUNK))
        matched[rows], reachable[rows], verified[rows] = _match(
            scenes[start: start + len(rows)], predictions.take(rows), None if targets is None else targets.take(rows),
            None if inputs is None else inputs.take(rows), tokens, starts)
    return StubbornnessResult(matched >= 0, matched, reachable, ~verified)
