"""``cogen stream``: look at the samples of an endless stream, without building anything."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogen.cli import _console
from cogen.cli._help import examples
from cogen.cli._options import SpecOrConfigOpt, SplitOpt

__all__ = ["register"]


def stream(
    config: SpecOrConfigOpt = "c1",
    experiment: Annotated[str | None, typer.Option(help="The config of the spec to stream, e.g. C1-1 (needed when "
                                                        "--config is a spec with several configs).")] = None,
    split: SplitOpt = "train",
    n: Annotated[int, typer.Option("-n", min=1, help="Samples to show.")] = 4,
    start: Annotated[int, typer.Option(min=0, help="Index of the first sample.")] = 0,
    seed: Annotated[int | None, typer.Option(help="Override the spec's seed.")] = None,
    guard: Annotated[Path | None, typer.Option(help="A dataset folder built from the same config: never show a "
                                                    "pair of its other splits.")] = None,
) -> None:
    """Show samples of a config's stream: sample i is row i of a build with the same seed."""
    from cogen.cli._display import grids_side_by_side
    from cogen.engine import from_token
    from cogen.stream import SampleStream

    samples = SampleStream(config, experiment, split, seed=seed, guard=guard, batch_size=n)
    batch = samples.samples(start, start + n)
    for k in range(n):
        (h_in, w_in), (h_out, w_out) = batch["input_shape"][k], batch["output_shape"][k]
        names = [from_token(int(t)).name for t in batch["tokens"][k] if t]
        retry = int(batch["retry"][k])
        title = f"#{int(batch['index'][k])}" + (f" (regenerated {retry}x: a stored pair)" if retry else "")
        _console.out.print(grids_side_by_side([batch["input"][k, :h_in, :w_in], batch["output"][k, :h_out, :w_out]],
                                              [title, " -> ".join(names)]))
    _console.out.print(f"{samples.experiment.name} {split}, seed {samples.seed}: samples {start}..{start + n - 1}"
                       + (f", guarded by {len(samples.guard.keys):,} stored pairs of {', '.join(samples.guard.splits)}"
                          if samples.guard else ""))


def register(app: typer.Typer) -> None:
    """Add ``cogen stream`` to the ``cogen`` app."""
    app.command("stream", epilog=examples("cogen stream --config c1 --experiment C1-1 -n 4",
                                          "cogen stream --config C1-1 --split test_ood --guard cogen-data"))(stream)
