"""Run folders: one run's config, per-epoch metrics, checkpoints, predictions and scores.

::

    RUN_DIR/
      config.json                    the resolved run config, the model, the data, the environment
      metrics.jsonl                  one JSON record per epoch (losses and accuracies, lr, seconds)
      checkpoints/<rule>.pt          the weights each checkpoint rule picked (ood_loss, id_val, final)
      predictions/<rule>/<split>.jsonl   predictions in the format `cogen eval` reads
      eval/<rule>/<split>.json       `cogen eval`'s metrics of those predictions
      summary.json                   selected epochs and headline test numbers per rule; written last

A folder holds one config: starting a different one there is an error; the same one again is
skipped when complete and restarted from scratch when not.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cogen_baselines.errors import RunFolderError

__all__ = ["CONFIG", "METRICS", "SUMMARY", "append_metrics", "checkpoint_path", "eval_path", "predictions_path",
           "prepare", "read_config", "read_metrics", "read_summary"]

CONFIG, METRICS, SUMMARY = "config.json", "metrics.jsonl", "summary.json"
_PRODUCTS = (METRICS, SUMMARY, "checkpoints", "predictions", "eval")


def checkpoint_path(folder: Path, rule: str) -> Path:
    return folder / "checkpoints" / f"{rule}.pt"


def predictions_path(folder: Path, rule: str, split: str) -> Path:
    return folder / "predictions" / rule / f"{split}.jsonl"


def eval_path(folder: Path, rule: str, split: str) -> Path:
    return folder / "eval" / rule / f"{split}.json"


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RunFolderError(f"{path}: unreadable ({error})") from None


def read_config(folder: Path) -> dict:
    """The ``config.json`` of a run folder."""
    return _read_json(Path(folder) / CONFIG)


def read_summary(folder: Path) -> dict | None:
    """The ``summary.json`` of a finished run, None while it is not finished."""
    path = Path(folder) / SUMMARY
    return _read_json(path) if path.is_file() else None


def read_metrics(folder: Path) -> list[dict]:
    """The per-epoch records of a run."""
    path = Path(folder) / METRICS
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if path.is_file() else []


def append_metrics(folder: Path, record: dict) -> None:
    with (Path(folder) / METRICS).open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


def _differences(stored: dict, wanted: dict) -> str:
    keys = sorted(set(stored) | set(wanted))
    return ", ".join(f"{key} {stored.get(key)!r} -> {wanted.get(key)!r}" for key in keys
                     if stored.get(key) != wanted.get(key))


def prepare(folder: Path, run: dict) -> dict | None:
    """Make ``folder`` ready for ``run`` (a resolved config as a dict).

    Returns the summary when the folder already holds this run, finished (nothing to do).
    Raises :class:`RunFolderError` when it holds another run or files that are not a run's.
    """
    folder = Path(folder)
    if (folder / CONFIG).is_file():
        stored = read_config(folder).get("run", {})
        if stored != run:
            raise RunFolderError(f"{folder} already holds a different run ({_differences(stored, run)}); "
                                 "pass another --out, or delete the folder to replace it")
        summary = read_summary(folder)
        if summary is not None and summary.get("complete"):
            return summary
        for name in _PRODUCTS:  # an interrupted run of the same config: start it again
            path = folder / name
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    elif folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise RunFolderError(f"{folder} exists and is not a run folder (no {CONFIG}); pass an empty or new --out")
    folder.mkdir(parents=True, exist_ok=True)
    return None
