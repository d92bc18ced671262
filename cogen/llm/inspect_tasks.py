"""cogen as an Inspect AI task package: one task per family, ``inspect eval cogen/<family>``.

    pip install 'cogen-arc[inspect]'
    inspect eval cogen/<family> -T data=cogen-data -T config=C3-1 -T split=test_ood --model openai-api/local/M
    inspect eval cogen/<family> -T data=cogen-data -T config=C3-1 --epochs 2 --epochs-reducer max \\
        --model vllm/Qwen/Qwen2.5-7B-Instruct

The ``inspect_ai`` entry point of the distribution (``pyproject.toml``) names this module; importing
it registers a task for every family of the registry (:data:`cogen.family.FAMILIES`), named after the
family, so a new family gets its task from its record, with no line here. A task's arguments (``-T``)
are ``data``, ``config``, ``split`` and the family's own prompt and evaluation options, as its record
declares them and checked the same way.

* **Dataset**: the family's prompts, made by :func:`cogen.llm.make_prompts` (byte for byte those of
  ``cogen prompts export`` and ``cogen prompts run``); a prompt with an image gets it as an image
  content part. Each sample's id is the prediction id, its metadata the prompt record's.
* **Scorer**: the reply made into the family's prediction and scored alone against its row by the
  family's evaluator (:func:`cogen.llm.scoring.score_reply`: cogen's parser and metrics; code a
  model writes runs in the sandbox). The score's value holds the sample's numbers (``correct``, ``valid``
  and the family's own: pixel accuracy, program lengths, ...), its metadata everything, including the
  error category. The task's metrics are their means (the papers' aggregates, such as grid
  accuracy) and ``correct_of_valid`` (the papers' k / n_valid).
* ``--epochs 2 --epochs-reducer max`` gives ARC-style pass@2 (a sample solved by either attempt).
"""

from __future__ import annotations

import asyncio
import inspect
from functools import cache
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import Metric, SampleScore, Score, Target, mean, metric, scorer, stderr
from inspect_ai.solver import TaskState, generate

import cogen.family
from cogen.family import Family

__all__ = ["correct_of_valid", "family_task", "family_scorer", "make_task"]

#: The package's namespace in Inspect's registry: ``inspect eval cogen/<family>``.
NAMESPACE = "cogen"


@metric
def correct_of_valid() -> Metric:
    """The papers' k / n_valid: solved samples over the samples whose reply could be read."""

    def compute(scores: list[SampleScore]) -> float:
        values = [s.score.value for s in scores if isinstance(s.score.value, dict)]
        valid = [v for v in values if v.get("valid")]
        return sum(float(v.get("correct", 0)) for v in valid) / len(valid) if valid else float("nan")

    return compute


@cache
def _split(data: str, config: str, split: str):
    from cogen.folder import read_split

    return read_split(data, config, split)


@scorer(metrics=[{"*": [mean()]}, {"correct": [stderr()]}, correct_of_valid()])
def family_scorer(family: str, data: str, config: str, split: str, options: dict[str, Any]):
    """cogen's parser and metrics for one family's replies (see the module docstring)."""
    from cogen.llm.scoring import score_reply

    record = cogen.family.family(family)

    async def score(state: TaskState, target: Target) -> Score:
        prompt = {**state.metadata, "id": str(state.sample_id)}
        entry = await asyncio.to_thread(score_reply, record, _split(data, config, split), prompt,
                                        state.output.completion, str(state.model), options)
        value = {k: float(v) for k, v in entry.items() if isinstance(v, (bool, int, float)) and not isinstance(v, str)}
        answer = entry.get("prediction")
        return Score(value=value, answer=None if answer is None else str(answer),
                     explanation=entry.get("error") or "correct", metadata=entry)

    return score


def _content(prompt) -> str | list:
    image = prompt.meta.get("image")
    if not image:
        return prompt.prompt
    return [ContentText(text=prompt.prompt), ContentImage(image=str(image))]


def make_task(record: Family, data: str, config: str, split: str = "test_ood", **options: Any) -> Task:
    """The Inspect task of ``record``'s prompts for ``split`` of ``config`` in ``data`` (options as its record declares)."""
    from cogen.llm import make_prompts, scoring_options
    from cogen.llm.scoring import split_options

    data = str(data)
    prompt_options, eval_options = split_options(record, options, config)
    made = make_prompts(data, config, split, **prompt_options)
    eval_options = {**scoring_options(record, made.options), **record.check_options("eval", eval_options, config)}
    samples = [Sample(input=[ChatMessageUser(content=_content(p))], id=p.id, metadata={"prompt": p.prompt, **p.meta})
               for p in made.prompts]
    return Task(dataset=MemoryDataset(samples, name=f"{made.split.config}/{made.split.split}"), solver=generate(),
                scorer=family_scorer(record.name, data, made.split.config, made.split.split, eval_options),
                metadata={"family": record.name, "config": made.split.config, "split": made.split.split,
                          "prompt_options": {k: str(v) for k, v in made.options.items()}})


def _registry_name(function, name: str) -> str:
    """The name to give ``@task`` so that Inspect registers ``cogen/<name>``: Inspect adds the namespace
    itself only for a package installed from a wheel (not an editable install, nor a source tree)."""
    try:
        from inspect_ai._util.package import get_installed_package_name

        return name if get_installed_package_name(function) else f"{NAMESPACE}/{name}"
    except (ImportError, AttributeError):
        return f"{NAMESPACE}/{name}"


def _task_function(record: Family):
    """``record``'s task function, with a signature that lists its ``-T`` arguments."""

    def family_task_function(data: str, config: str, split: str = "test_ood", **options: Any) -> Task:
        return make_task(record, data, config, split, **options)

    names = list(dict.fromkeys([*record.options_for("prompts"), *record.options_for("eval")]))
    parameters = [inspect.Parameter("data", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str),
                  inspect.Parameter("config", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str),
                  inspect.Parameter("split", inspect.Parameter.POSITIONAL_OR_KEYWORD, default="test_ood",
                                    annotation=str)]
    parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in names]
    family_task_function.__signature__ = inspect.Signature(parameters, return_annotation=Task)
    family_task_function.__name__ = family_task_function.__qualname__ = record.name
    family_task_function.__doc__ = f"{record.title}: {record.description}. Arguments: data, config, split, " + \
        ", ".join(names) + " (see `cogen prompts run --help`)."
    return task(name=_registry_name(family_task_function, record.name))(family_task_function)


_TASKS = {name: _task_function(record) for name, record in cogen.family.FAMILIES.items()}


def family_task(name: str):
    """The registered task function of family ``name`` (call it with ``data``, ``config``, ``split``, options)."""
    return _TASKS[name] if name in _TASKS else _task_function(cogen.family.family(name))
