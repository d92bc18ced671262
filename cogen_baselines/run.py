"""One run end to end: data on the device, the model, the paper's protocol, checkpoints, predictions, scores.

>>> summary = train(RunConfig("grid-tf", "cogen-data", "C1-1", seed=0))           # doctest: +SKIP
>>> summary["selected"], summary["results"]["ood_loss"]["test_ood"]["grid_accuracy"]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import platform
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import torch

from cogen.errors import UnknownNameError
from cogen_baselines import folder as layout
from cogen_baselines.config import RunConfig, default_run_dir, resolve_device
from cogen_baselines.errors import BaselineError
from cogen_baselines.evaluate import score, write_json
from cogen_baselines.models.base import count_parameters
from cogen_baselines.protocol import RULE_NAMES, RULES, select_epochs
from cogen_baselines.registry import ModelCard, resolve_model
from cogen_baselines.train import Protocol, fit

__all__ = ["HEADLINES", "train"]

log = logging.getLogger(__name__)

#: The ``cogen eval`` numbers a summary keeps per family (the eval JSON has them all).
HEADLINES = {
    "cogitao": ("grid_accuracy", "per_pixel_accuracy", "object_pixel_accuracy", "no_transformation"),
    "carc": ("exact_match", "color_accuracy", "shape_accuracy", "valid_rate"),
}


def _workload(card: ModelCard, config: RunConfig, device: torch.device):
    options = {"device": device, "task_codes": config.task_codes, "train_limit": config.train_samples,
               "eval_batch_size": config.eval_batch_size, "seed": config.seed}
    if card.family == "carc":
        from cogen_baselines.carc import MLCWorkload

        return MLCWorkload.load(config.data, config.config, card, **options)
    from cogen_baselines.cogitao import GridWorkload

    return GridWorkload.load(config.data, config.config, card, stream=config.stream, **options)


def _protocol(card: ModelCard, run: RunConfig, device: torch.device) -> Protocol:
    compile_ = run.compile == "on" or (run.compile == "auto" and device.type == "cuda")
    return Protocol(run.epochs, run.batch_size, card.lr, card.weight_decay, card.betas, card.schedule,
                    accumulate=card.accumulate, validate_every=card.validate_every, compile=compile_)


def _environment(device: torch.device) -> dict:
    from cogen import __version__

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or platform.machine()
    return {"cogen": __version__, "torch": torch.__version__, "python": platform.python_version(),
            "device": str(device), "device_name": name, "threads": torch.get_num_threads()}


def _checkpointer(folder: Path, model) -> Callable[[dict, list[dict]], None]:
    def on_epoch(record: dict, history: list[dict]) -> None:
        layout.append_metrics(folder, record)
        for rule, epoch in select_epochs(history).items():
            if epoch == record["epoch"]:
                path = layout.checkpoint_path(folder, rule)
                path.parent.mkdir(parents=True, exist_ok=True)
                torch.save(model.state_dict(), path)

    return on_epoch


def _headline(metrics: dict, family: str) -> dict:
    return {name: metrics.get(name) for name in HEADLINES[family]}


def _test(folder: Path, model, workload, run: RunConfig, selected: dict, device: torch.device) -> dict:
    """Predictions and ``cogen eval`` scores of every test split for the weights of each rule."""
    results, done = {}, {}
    for rule in RULES:
        epoch = selected.get(rule)
        if epoch is None:
            continue
        if epoch in done:  # same weights as an earlier rule: same predictions and scores
            earlier = done[epoch]
            for split in workload.test_splits:
                predictions = layout.predictions_path(folder, rule, split)
                predictions.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(layout.predictions_path(folder, earlier, split), predictions)
                metrics = json.loads(layout.eval_path(folder, earlier, split).read_text(encoding="utf-8"))
                write_json(layout.eval_path(folder, rule, split), {**metrics, "predictions": str(predictions)})
            results[rule] = {**results[earlier], "epoch": epoch}
            continue
        model.load_state_dict(torch.load(layout.checkpoint_path(folder, rule), map_location=device))
        results[rule] = {"epoch": epoch}
        for split in workload.test_splits:
            path = layout.predictions_path(folder, rule, split)
            loop = workload.predict(model, split, path)
            metrics = score(run.data, run.config, split, path, layout.eval_path(folder, rule, split))
            results[rule][split] = {**_headline(metrics, workload.family), **loop, "n": metrics["n"]}
        done[epoch] = rule
    return results


def _default_epochs(card: ModelCard, config: RunConfig) -> int | None:
    """The paper's epochs where they depend on the data (MLC: 300 for systematicity, 200 for 3-shot);
    also refuses a model of the wrong family before any folder is touched."""
    from cogen_baselines.data import experiment_manifest

    family = experiment_manifest(config.data, config.config).get("family", "cogitao")
    if family != card.family:
        use = "mlc" if family == "carc" else "resnet, vanilla-tf, grid-tf, pl-tf or llada"
        raise BaselineError(f"{config.config} is a {family} config and --model {card.name} trains on {card.family} "
                            f"configs; use --model {use}")
    if card.family == "carc" and config.epochs is None:
        from cogen_baselines.carc import default_epochs

        return default_epochs(experiment_manifest(config.data, config.config))
    return None


def train(config: RunConfig, out: str | Path | None = None,
          progress: Callable[[int, int, dict], None] | None = None) -> dict:
    """Train, checkpoint, predict and score one run into ``out`` (default ``runs/<model>/<config>/seed<seed>``).

    Returns the run's summary (also written to ``summary.json``). A folder that already holds this
    run, finished, is returned as is.
    """
    started = time.perf_counter()
    config.check()
    card = resolve_model(config.model)
    if config.stream is not None and card.family != "cogitao":
        raise BaselineError(f"--stream makes COGITAO samples; {card.name} trains on the stored {card.family} data "
                            "(leave out --stream)")
    if config.size not in card.sizes:
        raise UnknownNameError("model size", config.size, card.sizes)
    device = resolve_device(config.device)
    run = config.resolved(card, device, _default_epochs(card, config))
    folder = Path(out) if out is not None else default_run_dir(config)
    finished = layout.prepare(folder, run.as_dict())
    if finished is not None:
        log.info("%s already holds this run, finished", folder)
        return finished
    with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
        workload = _workload(card, run, device)
        torch.manual_seed(config.seed)
        model = card.build(workload.model_input, config.size).to(device)
        parameters = count_parameters(model)
        log.info("%s: %s parameters", card.name, f"{parameters:,}")
        write_json(folder / layout.CONFIG, {
            "run": run.as_dict(), "data": workload.describe(), "environment": _environment(device),
            "model": {"name": card.name, "summary": card.summary, "parameters": parameters,
                      "paper_parameters": card.paper_parameters, "beyond_paper": card.beyond_paper},
            "protocol": {**_protocol(card, run, device).__dict__, "checkpoint_rules": RULE_NAMES}})
        history = fit(model, workload, _protocol(card, run, device), device, _checkpointer(folder, model), progress)
        trained = time.perf_counter() - started
        selected = select_epochs(history)
        results = _test(folder, model, workload, run, selected, device)
    summary = {"model": card.name, "config": config.config, "setting": workload.describe().get("setting"),
               "family": card.family, "seed": config.seed, "size": config.size, "parameters": parameters,
               "epochs": len(history), "selected": selected, "results": results,
               "train_seconds": round(trained, 1), "seconds": round(time.perf_counter() - started, 1),
               "device": str(device), "complete": True}
    write_json(folder / layout.SUMMARY, summary)
    return summary
