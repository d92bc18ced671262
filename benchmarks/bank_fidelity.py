"""Object statistics of the pools the COGITAO experiments draw from, beside the reference's.

Builds C3-1 (as run: objects of at most 5x5, as the reference draws them), G4-1/G4-3, G5-1/G5-3
and G1-3 with the shipped specs and bank, sampled as the reference samples (no-ops kept, nothing
balanced), and prints, for C3 training
objects, G4 out-of-domain and G5 out-of-domain objects, every row of the object table of cogen's
fidelity review (``cogitao_fidelity.md`` section 2.2): the reference generator's figure, the
review's figure for cogen at ``aa8c763`` (bank v1), cogen's figure now on the objects the sampler
drew (``object_ids`` of the first 20,000 training rows or of all out-of-domain rows, as the review
counted them) and on the pool itself, and the total-variation distance to the reference over the
bins the review gives (drawn objects; the pool for ``square box``). Then the symmetric single-coloured pool that
G4/G5 train on, the share of no-op samples of G4-3/G5-3/G1-3, the C3 objects a mirror keeps,
and whole-bank property rates.

Run: ``python benchmarks/bank_fidelity.py`` (about a minute; ``--scale`` shrinks the builds; ``--smoke``
builds at scale 0.01, in seconds: the test suite runs it).
The output is Markdown.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from cogen.bank import SYMMETRIC_SINGLE_COLOUR, load_bank, mirror_noop_share
from cogen.bank.fidelity import REFERENCE, STATISTICS, object_statistics, tvd

TRAIN_ROWS = 20_000

POOLS = {  # pool -> (spec, experiment, splits whose objects count)
    "C3 train": ("as_run/c3", "as-run-C3-1", ("train",)),  # objects of at most 5x5, as the reference's C3
    "G4 out of domain": ("g4", "G4-1", ("validation_ood", "test_ood")),
    "G5 out of domain": ("g5", "G5-1", ("validation_ood", "test_ood")),
}

REVIEWED_COGEN = {  # the review's figures for cogen at aa8c763 (bank v1), same layout as REFERENCE
    "C3 train": {
        "height": {"1": 0.062, "3": 0.222, "5": 0.279}, "pixels": {"mean": 9.7},
        "colours": {"1": 0.220, "2": 0.614, ">=3": 0.166}, "square box": {"yes": 0.42},
        "transpose": {"yes": 0.172}, "point only": {"yes": 0.121}, "4-connected": {"yes": 0.825},
        "hollow": {"yes": 0.152},
    },
    "G4 out of domain": {
        "height": {}, "pixels": {"mean": 10.2}, "colours": {"2": 0.811}, "square box": {"yes": 0.41},
        "transpose": {"yes": 0.050}, "point only": {"yes": 0.438}, "4-connected": {"yes": 0.780},
        "hollow": {"yes": 0.102},
    },
    "G5 out of domain": {
        "height": {"6": 0.350, "8": 0.254, "10": 0.044}, "pixels": {"mean": 33.4}, "colours": {"2": 0.765},
        "square box": {"yes": 0.26}, "transpose": {"yes": 0.013}, "point only": {"yes": 0.528},
        "4-connected": {"yes": 0.695}, "hollow": {"yes": 0.433},
    },
}
CHANGED_CELLS = {  # fraction of output cells that change: (reference, cogen at aa8c763)
    "C3 train": (0.038, 0.041), "G4 out of domain": (0.096, 0.106), "G5 out of domain": (0.275, 0.296),
}
NO_OPS = {  # share of training samples whose output equals the input: (reference, cogen at aa8c763)
    "G4-3": (0.097, 0.542), "G5-3": (0.187, 0.637), "G1-3": (0.158, 0.242),
}
C3_MIRRORS = {  # C3-1 training objects: (reference, cogen at aa8c763)
    "unchanged by mirror_horizontal": (0.257, 0.359), "whose rot90 equals their mirror_horizontal": (0.115, 0.092),
}
WHOLE_BANK = {  # whole-bank property rates: (reference bank, cogen bank v1), as the review measured them
    "square box": (0.397, 0.231), "is_shape_symmetric": (0.699, 0.682), "single colour": (0.225, 0.213),
    "is_shape_hollow": (0.445, 0.394), "is_shape_fully_connected": (0.831, 0.870),
}
REFERENCE_MIRROR_NOOP = 0.304     # mirror_horizontal no-op share of the reference's training pool
REVIEWED_MIRROR_NOOP = 0.734      # the same for cogen's pool at aa8c763


#: The reference's sampling: no-ops kept, count and sizes redrawn with every attempt. cogen's
#: defaults change both on purpose (docs/differences.md); these figures isolate the bank.
REFERENCE_SAMPLING = "degenerate: keep\nbalance: none\n"


def _with_reference_sampling(spec: str, out: Path) -> Path:
    """The packaged spec ``spec`` with the reference's sampling, written next to the build."""
    from cogen.specs import packaged_specs

    text = packaged_specs()[spec].read_text()
    if "\ndegenerate:" not in text:
        text = text.replace("\nexperiments:\n", f"\n{REFERENCE_SAMPLING}experiments:\n", 1)
    path = out.parent / f"{spec.replace('/', '_')}.yaml"
    path.write_text(text)
    return path


def _build(out: Path, scale: float, workers: int) -> None:
    """Each spec's configs into a folder of its own under ``out`` (a folder holds one build)."""
    from cogen.pipeline import build

    for spec, configs in (("as_run/c3", ["as-run-C3-1"]), ("g4", ["G4-1", "G4-3"]), ("g5", ["G5-1", "G5-3"]),
                          ("g1", ["G1-3"])):
        build(_with_reference_sampling(spec, out), out / spec.replace("/", "_"), scale=scale, workers=workers,
              only=configs)


def _rows(out: Path, config: str, split: str, columns: list[str]):
    from cogen.io import split_table

    folder = next(path for path in out.iterdir() if (path / "manifests" / f"{config}.json").is_file())
    table = split_table(str(folder), config, split, lambda name: name in columns)
    return table.slice(0, TRAIN_ROWS) if split == "train" else table


def _drawn(out: Path, config: str, splits) -> np.ndarray:
    ids = [np.asarray(_rows(out, config, split, ["object_ids"])["object_ids"].combine_chunks().flatten())
           for split in splits]
    return np.concatenate(ids)


def _changed_cells(out: Path, config: str, splits) -> float:
    from cogen.io import table_arrays

    fractions = []
    for split in splits:
        arrays = table_arrays(_rows(out, config, split, ["input", "output"]), columns=["input", "output"])
        area = arrays["input_shape"].prod(axis=1)
        fractions.append((arrays["input"] != arrays["output"]).sum(axis=(1, 2)) / area)
    return float(np.concatenate(fractions).mean())


def _no_op_share(out: Path, config: str) -> float:
    from cogen.io import table_arrays

    arrays = table_arrays(_rows(out, config, "train", ["input", "output"]), columns=["input", "output"])
    return float((arrays["input"] == arrays["output"]).all(axis=(1, 2)).mean())


def _pool(spec: str, experiment: str, split: str) -> np.ndarray:
    from cogen.families.cogitao.spec import object_query
    from cogen.specs import load_spec

    domain = load_spec(spec).experiment(experiment).domain(split)
    return load_bank().select(object_query(domain.objects, ()))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _bins(statistic: str, reference, drawn) -> list[str]:
    """The rows of one statistic: the reference's bins, then the rest lumped (every bin if none)."""
    if statistic == "pixels":
        return ["mean"]
    if not reference:
        return sorted(drawn, key=lambda b: (len(b), b))
    whole = statistic in ("height", "colours") and sum(reference.values()) < 0.999
    return [*reference, "rest"] if whole else list(reference)


def _value(distribution, name: str, bins: list[str]) -> float | None:
    if not distribution and name != "mean":
        return None
    if name == "rest":
        return 1 - sum(distribution.get(b, 0.0) for b in bins if b != "rest")
    return distribution.get(name, 0.0)


def _pool_table(name: str, out: Path) -> None:
    spec, experiment, splits = POOLS[name]
    drawn_ids = _drawn(out, experiment, splits)
    pool_ids = _pool(spec, experiment, splits[0])
    drawn, pool = object_statistics(load_bank(), drawn_ids), object_statistics(load_bank(), pool_ids)
    reference, reviewed = REFERENCE[name], REVIEWED_COGEN[name]
    print(f"\n### {name}: {experiment} {' + '.join(splits)}, {len(drawn_ids):,} drawn objects; pool "
          f"{len(pool_ids):,} objects\n")
    print("| statistic | bin | reference | cogen aa8c763 | cogen drawn | cogen pool | TVD vs reference |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for statistic in STATISTICS:
        bins = _bins(statistic, reference[statistic], drawn[statistic])
        measured = pool if statistic == "square box" else drawn   # as the review measured it
        distance = tvd(measured[statistic], reference[statistic])
        for k, b in enumerate(bins):
            label = "other" if b == "rest" else b
            cells = [_value(d[statistic], b, bins) for d in (reference, reviewed, drawn, pool)]
            text = [f"{v:.1f}" if v is not None else "–" for v in cells] if b == "mean" else map(_pct, cells)
            shown = f"{distance:.3f}" if k == 0 and distance is not None else ""
            shown += " (pool)" if shown and measured is pool else ""
            print(f"| {statistic if k == 0 else ''} | {label} | {' | '.join(text)} | {shown} |")
    ref_changed, reviewed_changed = CHANGED_CELLS[name]
    changed = _changed_cells(out, experiment, splits)
    print(f"| output cells that change | mean | {ref_changed:.3f} | {reviewed_changed:.3f} | {changed:.3f} | | |")


def _c3_mirrors(out: Path) -> None:
    bank = load_bank()
    grids = [bank.object(int(i)) for i in _drawn(out, "as-run-C3-1", ("train",))]
    shares = {"unchanged by mirror_horizontal": np.mean([(g == g[::-1]).all() for g in grids]),
              "whose rot90 equals their mirror_horizontal":
                  np.mean([np.array_equal(np.rot90(g), g[::-1]) for g in grids])}
    print("\n### Mirrors on C3 training objects (review section 2.3)\n")
    for name, (reference, reviewed) in C3_MIRRORS.items():
        print(f"* C3-1 training objects {name}: {_pct(float(shares[name]))} (reference {_pct(reference)}, "
              f"cogen aa8c763 {_pct(reviewed)}).")


def _training_pool(out: Path) -> None:
    bank = load_bank()
    ids = bank.select(SYMMETRIC_SINGLE_COLOUR)
    family = np.where(bank.column("family")[ids] == "footprint", bank.column("footprint")[ids],
                      np.char.add("grown ", bank.column("symmetry")[ids].astype(str)))
    names, counts = np.unique(family, return_counts=True)
    print(f"\n### G4/G5 training pool (symmetric, single-coloured, fully connected, at most 5x5): "
          f"{len(ids):,} objects\n")
    print(f"* `mirror_horizontal` leaves {_pct(mirror_noop_share(bank, ids))} of it unchanged "
          f"(reference pool {_pct(REFERENCE_MIRROR_NOOP)}, cogen aa8c763 {_pct(REVIEWED_MIRROR_NOOP)}).")
    parts = ", ".join(f"{n} {c / len(ids):.0%}" for n, c in sorted(zip(names, counts, strict=True), key=lambda p: -p[1]))
    print(f"* families: {parts}.")
    print("\n### Training samples whose output equals the input (first 20,000)\n")
    for config, (reference, reviewed) in NO_OPS.items():
        print(f"* {config}: {_pct(_no_op_share(out, config))} (reference generator with cogen's parameters "
              f"{_pct(reference)}, cogen aa8c763 {_pct(reviewed)}).")


def _whole_bank() -> None:
    bank = load_bank()
    ours = {"square box": bank.column("rows") == bank.column("cols"), "single colour": bank.column("n_colors") == 1}
    print(f"\n### Whole bank ({len(bank):,} objects; reference 22,520)\n")
    print("| property | reference | cogen aa8c763 | cogen |")
    print("|---|---:|---:|---:|")
    for name, (reference, reviewed) in WHOLE_BANK.items():
        share = float(np.mean(ours[name] if name in ours else bank.column(name)))
        print(f"| {name} | {_pct(reference)} | {_pct(reviewed)} | {_pct(share)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="build scale (1.0 = 2,000 out-of-domain rows)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="every table from builds at scale 0.01, 1 worker")
    args = parser.parse_args()
    if args.smoke:
        args.scale, args.workers = 0.01, 1
    bank = load_bank()
    print(f"## Object statistics, cogen bank v{bank.meta['builder_version']} ({len(bank):,} objects, sha256 "
          f"{bank.sha256[:12]}) vs the reference generator")
    print("\nShares in %; TVD over the reference's bins (rest lumped); `–`: the review gives no figure. "
          "The review measured `square box` on the pool, the rest on drawn objects.")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "build"  # the specs it builds are written beside it
        _build(out, args.scale, args.workers)
        for name in POOLS:
            _pool_table(name, out)
        _c3_mirrors(out)
        _training_pool(out)
    _whole_bank()


if __name__ == "__main__":
    main()
