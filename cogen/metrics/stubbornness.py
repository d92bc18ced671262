"""Model stubbornness (COGITAO paper App. G.4), computed with cogen's own engine.

A prediction for an out-of-domain sample is *stubborn* when it equals ``tau(X)`` for some
in-domain sequence ``tau``, where ``X`` is the sample's input scene and ``tau(X)`` is what the
engine produces when it applies ``tau`` to every object of ``X`` (a sequence that fails on ``X``
— an object leaves the grid, objects overlap, a precondition fails — has no output and matches
nothing). Stubbornness is the share of samples with a stubborn prediction, over all samples
(missing or malformed predictions are never stubborn), exactly as the paper's STBN.

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

from cogen.metrics.grids import as_stack

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


def _outputs(scene: Scene, tokens: Sequence[np.ndarray]):
    """Yield ``(j, grid)`` for every sequence ``j`` that applies to the scene (grid reused: copy to keep)."""
    from cogen.engine import OK, pack, run_scene

    boxes, pixels = pack(scene.objects, max([scene.height * scene.width] + [np.size(o[2]) for o in scene.objects]))
    grid = np.zeros((scene.height, scene.width), np.int8)
    for j, sequence in enumerate(tokens):
        if run_scene(sequence, scene.height, scene.width, boxes.copy(), pixels.copy(), grid) == OK:
            yield j, grid


def sequence_outputs(scene: Scene, sequences: Sequence[Sequence[str]]) -> list[np.ndarray | None]:
    """``tau(X)`` for every sequence ``tau`` (None where the sequence cannot be applied to the scene)."""
    from cogen.engine import sequence_tokens

    out: list[np.ndarray | None] = [None] * len(sequences)
    for j, grid in _outputs(scene, [sequence_tokens(s) for s in sequences]):
        out[j] = grid.copy()
    return out


def stubbornness(predictions, scenes: Sequence[Scene | None], sequences: Sequence[Sequence[str]],
                 targets=None) -> StubbornnessResult:
    """Which predictions equal the output of one of ``sequences`` (the in-domain set) applied to
    their sample's scene. ``scenes[k]`` None marks a sample whose scene is unknown (never stubborn,
    counted in ``unverifiable``). With ``targets``, also which targets are reachable that way."""
    from cogen.engine import sequence_tokens

    predictions = as_stack(predictions)
    targets = None if targets is None else as_stack(targets)
    tokens = [sequence_tokens(s) for s in sequences]
    n = len(scenes)
    stubborn, reachable = np.zeros(n, bool), np.zeros(n, bool)
    matched = np.full(n, -1, np.int64)
    unverifiable = np.array([scene is None for scene in scenes], bool)
    for k, scene in enumerate(scenes):
        if scene is None:
            continue
        prediction = predictions.grid(k)
        if prediction is not None and prediction.shape != (scene.height, scene.width):
            prediction = None  # every output of the engine has the input's size
        target = None if targets is None else targets.grid(k)
        for j, grid in _outputs(scene, tokens if prediction is not None or target is not None else ()):
            if prediction is not None and matched[k] < 0 and np.array_equal(grid, prediction):
                stubborn[k], matched[k] = True, j
            if target is not None and not reachable[k] and np.array_equal(grid, target):
                reachable[k] = True
            if (prediction is None or stubborn[k]) and (target is None or reachable[k]):
                break
    return StubbornnessResult(stubborn, matched, reachable, unverifiable)
