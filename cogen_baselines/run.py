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
from cogen.folder.atomic import atomic_write
from cogen_baselines import folder as layout
from cogen_baselines.config import RunConfig, default_run_dir, resolve_device
from cogen_baselines.evaluate import score, write_json
from cogen_baselines.models.base import count_parameters
from cogen_baselines.protocol import RULE_NAMES, RULES, select_epochs
from cogen_baselines.registry import ModelCard, resolve_model
from cogen_baselines.train import Protocol, fit
from cogen_baselines.workload import check_fits, check_stream, headlines

__all__ = ["load_workload", "protocol_departures", "protocol_of", "resolve_run", "train"]

log = logging.getLogger(__name__)


def resolve_run(config: RunConfig) -> tuple[ModelCard, torch.device, RunConfig, dict]:
    """Check ``config`` against its model and data before anything is written: the model's card, the
    device, the config with every default filled in, and the data's manifest. A model that cannot
    read the data, or needs task codes the run will not have, is refused in one line."""
    from cogen_baselines.data import experiment_manifest, wants_task_codes

    config.check()
    card = resolve_model(config.model)
    if config.size not in card.sizes:
        raise UnknownNameError("model size", config.size, card.sizes)
    check_stream(card, config.stream)
    device = resolve_device(config.device)
    manifest = experiment_manifest(config.data, config.config)
    check_fits(card, manifest, config.config, wants_task_codes(manifest, config.task_codes))
    epochs = card.workload().default_epochs(manifest) if config.epochs is None else None
    return card, device, config.resolved(card, device, epochs), manifest


def load_workload(card: ModelCard, run: RunConfig, device: torch.device, eval_limit: int | None = None):
    """The run's data on the device, read by the workload class the model's card names."""
    return card.workload().load(run.data, run.config, card, device=device, task_codes=run.task_codes,
                                train_limit=run.train_samples, eval_batch_size=run.eval_batch_size, seed=run.seed,
                                stream=run.stream, precision=run.precision, eval_limit=eval_limit)


def protocol_of(card: ModelCard, run: RunConfig, device: torch.device) -> Protocol:
    """The training protocol of a resolved run: an update sees ``batch_size x the paper's accumulation``
    samples, in ``grad_accum`` micro-batches."""
    compile_ = run.compile == "on" or (run.compile == "auto" and device.type == "cuda")
    return Protocol(run.epochs, run.batch_size * card.accumulate, card.lr, card.weight_decay, card.betas,
                    card.schedule, period=card.cosine_epochs, floor=card.lr_floor, accumulate=run.grad_accum,
                    validate_every=card.validate_every, compile=compile_, precision=run.precision,
                    clip=card.setting("clip", run.follow))


def protocol_departures(card: ModelCard, run: RunConfig, workload, manifest: dict) -> list[str]:
    """How the run departs from its paper's protocol, one short phrase each (empty: it follows it): the
    text's form, the model's size, the epochs, the batch, fewer training rows than the config has, a
    scaled build or fewer rows than the paper's splits, fresh samples every epoch. ``cogen baselines
    table`` marks such runs, so no smoke run sits unmarked beside the paper's numbers."""
    out = ["the paper's text where it differs from its code (--follow text)"] if run.follow == "text" else []
    if run.size != "paper":
        out.append(f"size {run.size}")
    epochs = card.workload().default_epochs(manifest) or card.epochs
    if run.epochs != epochs:
        out.append(f"{run.epochs} epochs (the paper's {epochs})")
    batch = card.setting("batch_size", run.follow)
    if run.batch_size != batch:
        out.append(f"batch {run.batch_size} (the paper's {batch})")
    splits = manifest.get("splits", {})
    loaded, stored = workload.loaded_rows().get("train", 0), int(splits.get("train", {}).get("rows", 0))
    if run.train_samples is not None and loaded < stored:
        out.append(f"{loaded:,} of the config's {stored:,} training rows")
    scale = (manifest.get("inputs") or {}).get("scale", manifest.get("scale", 1))
    if scale not in (None, 1):
        out.append(f"a scale-{scale:g} build")
    short = [f"{split} {int(splits.get(split, {}).get('rows', 0)):,} of {rows:,}"
             for split, rows in (workload.paper_rows() or {}).items()
             if int(splits.get(split, {}).get("rows", 0)) < rows]
    if short:
        out.append("fewer rows than the paper's: " + ", ".join(short))
    if run.stream:
        out.append("fresh samples every epoch (--stream)")
    return out


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
                atomic_write(path, lambda temporary: torch.save(model.state_dict(), temporary))

    return on_epoch


def _test(folder: Path, model, workload, run: RunConfig, selected: dict, device: torch.device,
          names: tuple[str, ...]) -> dict:
    """Predictions and ``cogen eval`` scores of every test split for the weights of each rule."""
    results, done = {}, {}
    for rule in RULES:
        epoch = selected.get(rule)
        if epoch is None:
            continue
        if epoch in done:  # same weights as an earlier rule: same predictions and scores
            earlier = done[epoch]
            for split in workload.test_splits:
                predictions, source = layout.predictions_path(folder, rule, split), \
                    layout.predictions_path(folder, earlier, split)
                for made in sorted(source.parent.glob(f"{split}.*")):   # the split's files (MLC: teacher-forced too)
                    atomic_write(predictions.parent / made.name,
                                 lambda temporary, made=made: shutil.copyfile(made, temporary))
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
            results[rule][split] = {**{name: metrics.get(name) for name in names}, **loop, "n": metrics["n"]}
        done[epoch] = rule
    return results


def train(config: RunConfig, out: str | Path | None = None,
          progress: Callable[[int, int, dict], None] | None = None) -> dict:
    """Train, checkpoint, predict and score one run into ``out`` (default ``runs/<model>/<config>/seed<seed>``).

    Returns the run's summary (also written to ``summary.json``). A folder that already holds this
    run, finished, is returned as is.
    """
    started = time.perf_counter()
    card, device, run, manifest = resolve_run(config)
    names = headlines(manifest)
    folder = Path(out) if out is not None else default_run_dir(config)
    finished = layout.prepare(folder, run.as_dict())
    if finished is not None:
        log.info("%s already holds this run, finished", folder)
        return finished
    with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
        workload = load_workload(card, run, device)
        torch.manual_seed(config.seed)
        model = card.build(workload.model_input, config.size, run.follow).to(device)
        parameters = count_parameters(model)
        log.info("%s: %s parameters", card.name, f"{parameters:,}")
        write_json(folder / layout.CONFIG, {
            "run": run.as_dict(), "data": workload.describe(), "environment": _environment(device),
            "model": {"name": card.name, "summary": card.summary, "parameters": parameters,
                      "paper_parameters": card.paper_parameters, "beyond_paper": card.beyond_paper},
            "protocol": {**protocol_of(card, run, device).__dict__, "checkpoint_rules": RULE_NAMES,
                         "paper_rule": card.setting("checkpoint", run.follow)}})
        history = fit(model, workload, protocol_of(card, run, device), device, _checkpointer(folder, model), progress)
        trained = time.perf_counter() - started
        selected = select_epochs(history)
        results = _test(folder, model, workload, run, selected, device, names)
    summary = {"model": card.name, "config": config.config, "setting": workload.describe().get("setting"),
               "family": manifest.get("family"), "headline": names[0], "seed": config.seed, "size": config.size,
               "parameters": parameters, "epochs": len(history), "follow": run.follow,
               "rule": card.setting("checkpoint", run.follow),
               "departures": protocol_departures(card, run, workload, manifest), "selected": selected,
               "results": results, "train_seconds": round(trained, 1),
               "seconds": round(time.perf_counter() - started, 1), "device": str(device), "complete": True}
    write_json(folder / layout.SUMMARY, summary)
    return summary
