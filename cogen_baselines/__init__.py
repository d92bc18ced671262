"""Model baselines of the papers behind cogen's datasets, trained and scored on those datasets.

The grid paper (spec seed 001) trained ResNet, Vanilla-TF, Grid-TF, PL-TF and LLaDA on grid pairs;
the MLC paper (spec seed 000) trained MLC on episodes of study pairs and queries.

Installed with ``pip install 'cogen-arc[baselines]'`` (PyTorch). ``cogen`` never imports this
package; it reads data only through the public paths (:mod:`cogen.io`, :mod:`cogen.folder`,
:mod:`cogen.eval`, :mod:`cogen.stream`) and writes predictions that ``cogen eval``
scores. Importing the package is cheap: torch loads with the first name used from it.

* :func:`train`           one run (model, data, config, seed) into a run folder: the paper's protocol
  (the authors' code's where it and the text differ), checkpoints of five rules, predictions of
  each test split, ``cogen eval`` scores, and how the run departs from the paper's protocol
* :class:`RunConfig`      what a run is
* :func:`run_suite`       models x settings x seeds, optionally side by side
* :func:`results_table`   the paper's Table 1 layout of finished runs, beside the paper's numbers
* :data:`MODELS`          every model as a :class:`~cogen_baselines.registry.ModelCard`

Layout: ``models/`` (one module per model and shared layers), ``registry`` (a card per model),
``workload`` (what a model's data must be; ``grids``: grid pairs, ``episodes``: episodes), ``data``
(splits on the device), ``train`` (the one training loop), ``amp`` (the device-agnostic precision
switch), ``evaluate`` (the one evaluation path), ``probes`` (live memory, host syncs),
``preflight`` (before a long run: the time of the full run, the peak memory, whether it fits the
card), ``table`` (the results table writer), ``run`` / ``suite`` / ``folder``. The package
names no family: a model's card names its workload class, which reads the data's columns.
"""

from __future__ import annotations

import importlib

__all__ = ["MODELS", "RunConfig", "find_runs", "results_table", "run_suite", "train"]

_WHERE = {"MODELS": "registry", "RunConfig": "config", "find_runs": "table", "results_table": "table",
          "run_suite": "suite", "train": "run"}


def __getattr__(name: str):
    if name in _WHERE:
        if _WHERE[name] != "table":  # the results table needs no torch; everything else does
            from cogen.errors import optional_import

            optional_import("torch", f"cogen_baselines.{name}")
        return getattr(importlib.import_module(f"cogen_baselines.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'cogen_baselines' has no attribute {name!r}")
