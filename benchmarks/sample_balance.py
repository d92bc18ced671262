"""What the COGITAO samples hold: no-op shares, attempts, object counts and object heights.

    python benchmarks/sample_balance.py [SPEC ...] [--train N] [--ood N] [--json FILE]
    python benchmarks/sample_balance.py --smoke     # g5 and s, 200 samples each (seconds; the tests run it)

For every experiment of the packaged COGITAO specs (default: the paper-text suite c1-c3, g1-g5
and S-4; `as_run/c1` ... for the as-run specs), draws the first N samples of `train` and `test_ood` with the pure sample function (no
dedup pass; the statistics of a build differ only by its few regenerated samples) and prints:

* `noop`: share of the samples whose output equals their input;
* `would`: share of valid attempts that were no-ops, i.e. the no-op share the split would have
  had with `degenerate: keep` (the `degenerate` rejections over themselves plus the accepted);
* `att/s`: attempts per accepted sample;
* `counts`: share of each object count, where the domain allows more than one;
* `heights` (and `widths`, with `--widths`): share of each object height, where the domain's
  `rows` filter spans five values or more and starts above 1;
* `redraws`: size redraws (samples that drew new object sizes after failing with theirs).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

PAPER_SUITE = ("c1", "c2", "c3", "g1", "g2", "g3", "g4", "g5", "s")


def split_statistics(job, n: int) -> dict:
    """No-op shares, attempts, object counts and heights of the first ``n`` samples of ``job``."""
    from cogen.bank import load_bank
    from cogen.families.cogitao.generate.sampler import CAUSES, generate_rows

    rows = generate_rows(job, np.arange(n))
    ok = rows["ok"]
    same = (rows["inputs"] == rows["outputs"]).all(axis=(1, 2)) & ok
    causes = dict(zip(CAUSES, rows["causes"].sum(axis=0).tolist(), strict=True))
    domain = job.domain
    would = rows["noop"] if "noop" in rows else same  # generator version 1 had no flag: keep = today
    stats = {"samples": int(ok.sum()), "noop": float(same.mean()), "would": float(would.mean()),
             "attempts_per_sample": sum(causes.values()) / n,
             "size_redraws": int(rows["size_redraws"].sum()) if "size_redraws" in rows else 0}
    count = domain.objects.count
    if count.hi > count.lo:
        values = rows["n_objects"][ok]
        stats["counts"] = {int(c): float((values == c).mean()) for c in range(count.lo, count.hi + 1)}
    rows_filter = dict(domain.objects.where).get("rows")
    if rows_filter is not None and rows_filter[1] - rows_filter[0] >= 4 and rows_filter[0] > 1:
        ids = rows["object_ids"][ok]
        shapes = load_bank().shapes[ids[ids >= 0]]
        for key, column in (("heights", 0), ("widths", 1)):
            stats[key] = {int(h): float((shapes[:, column] == h).mean())
                          for h in range(rows_filter[0], rows_filter[1] + 1)}
    return stats


def spec_statistics(name: str, train: int, ood: int) -> dict:
    """:func:`split_statistics` of `train` and `test_ood` of every experiment of spec ``name``."""
    from cogen.families.cogitao.generate.sampler import SplitJob
    from cogen.specs import load_spec

    setting = load_spec(name)
    experiments = setting.experiments
    if name.endswith("s"):  # sample efficiency: the 100,000-sample experiments
        experiments = [e for e in experiments if "S-4-" in e.name]
    out = {}
    for experiment in experiments:
        for split, n in (("train", train), ("test_ood", ood)):
            if split in experiment.splits():
                job = SplitJob.of(experiment.domain(split), setting.seed, experiment.name, split)
                out[f"{experiment.name} {split}"] = split_statistics(job, n)
    return out


def _shares(mapping: dict | None) -> str:
    if not mapping:
        return ""
    return " ".join(f"{key}:{value:.1%}" for key, value in mapping.items())


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", default=list(PAPER_SUITE))
    parser.add_argument("--train", type=int, default=20_000)
    parser.add_argument("--ood", type=int, default=2_000)
    parser.add_argument("--widths", action="store_true", help="also print the shares of object widths")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--smoke", action="store_true", help="g5 and s (counts, heights, S-4), 200 samples each")
    args = parser.parse_args(argv)
    if args.smoke:
        args.specs, args.train, args.ood = ["g5", "s"], 200, 200
    everything = {}
    print(f"{'config split':22} {'noop':>6} {'would':>6} {'att/s':>7} {'redraws':>7}  counts / heights")
    for name in args.specs:
        for label, stats in spec_statistics(name, args.train, args.ood).items():
            everything[label] = stats
            widths = f" | w {_shares(stats.get('widths'))}" if args.widths and stats.get("widths") else ""
            print(f"{label:22} {stats['noop']:>6.1%} {stats['would']:>6.1%} {stats['attempts_per_sample']:>7.2f} "
                  f"{stats['size_redraws']:>7}  {_shares(stats.get('counts'))} "
                  f"{_shares(stats.get('heights'))}{widths}".rstrip())
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(everything, handle, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
