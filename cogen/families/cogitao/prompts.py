"""COGITAO's text prompts for in-context evaluation of language models.

COGITAO (paper App. C and L): each prompt holds a base prompt chosen by the experiment setting,
``examples`` in-context pairs from the config's ``train`` split, each labelled with its *task
code*, and the test input with the code of the sequence to apply. Two regimes:

* ``explicit``: the task codes are the transformation names (``['translate_up', 'rot90']``);
* ``coded``: each transformation is ``t1``, ``t2``, ... The mapping is deterministic: the
  experiment's transformations numbered in order of first appearance in its spec (in-domain
  sequences first, then out-of-domain ones). The reference numbered a Python ``set``, whose order
  changes between runs.

In-context examples are drawn deterministically per test sample (a generator seeded with
``seed`` and the sample id): first, for each transformation of the test sequence in turn, one
training sequence that holds it (the shortest ones preferred, so atomic transformations are
shown when the training set has them), then further distinct training sequences until
``examples`` are chosen (repeats only when the training set has fewer distinct sequences); one
training row of each chosen sequence.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from cogen.errors import EvalError
from cogen.kit.prompts import SELECTIONS, Prompt, format_grid
from cogen.kit.prompts import seeded as _seeded

__all__ = ["BASE_PROMPTS", "PAPER_PER_EXPERIMENT", "PAPER_SEED", "PROMPT_VERSION", "REGIMES", "choose_examples", "cogitao_paper_prompts",
           "cogitao_prompts", "cogitao_split_prompts", "task_codes"]

#: Task-code regimes of COGITAO's prompts.
REGIMES = ("explicit", "coded")
#: Version of the prompt text below, stored in every prompt and reply; bump it whenever the text changes.
PROMPT_VERSION = "cogitao-v1"

_OUTPUT_RULES = """OUTPUT FORMAT:
Return ONLY the resulting grid as a Python list of lists.
- No explanations
- No markdown code blocks
- No text before or after
- Just the raw list, e.g.: [[0, 1], [1, 0]]"""

_INTRO = """You are a system specialized in solving object-transformation puzzles on grids of numbers.

TASK:
1. You will see several input-output pairs of grids (numbers are colours, 0 is the background).
2. Each pair is labelled with the transformations that turn its input into its output."""

#: Base prompts by setting (COGITAO App. L.1), in our wording.
BASE_PROMPTS = {
    "id_composition": _INTRO + """
3. Infer what each transformation does from these examples.
4. For the test input, you will be told which transformations to apply.
5. Apply ONLY those transformations to the test input, in the order given.

""" + _OUTPUT_RULES,
    "ood_composition": _INTRO + """
3. Infer what each transformation does from these examples.
4. For the test input, you will be told which transformations to apply, possibly in a combination
   not seen in the examples.
   IMPORTANT: the test uses an out-of-distribution composition. Each transformation appears in the
   examples, but this combination of them does not. Work out what each transformation does on its
   own, then apply the specified transformations to the test input, even though the combination is new.
5. Apply ONLY those transformations to the test input, in the order given.

""" + _OUTPUT_RULES,
    "objects": _INTRO + """
3. Infer how each transformation affects individual objects.
4. Apply the same transformations to the test input.

IMPORTANT: the test checks generalization to other objects. The transformations work exactly as in
the examples, but the test input holds objects unlike any example (more of them, or of another
kind). Apply the transformations to every object, however many there are.

""" + _OUTPUT_RULES,
    "grid": _INTRO + """
3. Infer how each transformation affects objects and the grid.
4. Apply the same transformations to the test input.

IMPORTANT: the test checks generalization to other grid sizes. The transformations work exactly as
in the examples, but the test grid has a size no example has. Apply the transformations correctly
whatever the grid's dimensions.

""" + _OUTPUT_RULES,
}


def task_codes(experiment, regime: str) -> dict[str, str]:
    """Name -> task code of every transformation of an experiment (identity for ``explicit``)."""
    if regime not in REGIMES:
        raise EvalError(f"regime must be one of {', '.join(REGIMES)}, not {regime!r}")
    names = list(experiment.in_domain.sequences.transforms())
    if experiment.out_of_domain is not None:
        names += [n for n in experiment.out_of_domain.sequences.transforms() if n not in names]
    return {name: name if regime == "explicit" else f"t{i + 1}" for i, name in enumerate(names)}


def _base_prompt(experiment, split: str) -> str:
    from cogen.families.cogitao.schema import OOD_SPLITS

    if split not in OOD_SPLITS:
        return "id_composition"
    if experiment.shift == "composition":
        return "ood_composition"
    same_grid = experiment.in_domain.grid == experiment.out_of_domain.grid
    return "objects" if same_grid else "grid"


def choose_examples(test_sequence: Sequence[str], train_sequences: dict[tuple[str, ...], np.ndarray],
                    count: int, rng: np.random.Generator) -> list[int]:
    """Training rows for one test sample (see the module docstring for the rule)."""
    kinds = list(train_sequences)
    if not kinds:
        raise EvalError("the train split is empty: no in-context examples to draw")
    chosen: list[tuple[str, ...]] = []
    for name in test_sequence:
        holding = [s for s in kinds if name in s and s not in chosen]
        if holding and len(chosen) < count and not any(name in s for s in chosen):
            shortest = min(map(len, holding))
            options = [s for s in holding if len(s) == shortest]
            chosen.append(options[rng.integers(len(options))])
    rest = [kinds[i] for i in rng.permutation(len(kinds)) if kinds[i] not in chosen]
    chosen += rest[: count - len(chosen)]
    while len(chosen) < count:
        chosen.append(kinds[rng.integers(len(kinds))])
    return [int(rng.choice(train_sequences[s])) for s in chosen]


def _cogitao_prompt(base: str, codes: dict[str, str], examples: list[dict], sample: dict) -> str:
    def code(sequence):
        return str([codes.get(name, name) for name in sequence])

    parts = [BASE_PROMPTS[base], ""]
    for i, example in enumerate(examples, 1):
        parts += [f"Here is a new example with transformations: {code(example['transformations'])}.",
                  f"Input {i}: {format_grid(example['input'])}", f"Output {i}: {format_grid(example['output'])}"]
    parts += [f"Now, apply the following transformations: {code(sample['transformations'])} to the test input below.",
              f"Test Input: {format_grid(sample['input'])}"]
    return "\n".join(parts) + "\n"


def cogitao_prompts(split, train, regime: str = "explicit", examples: int = 5, seed: int = 0) -> Iterator[Prompt]:
    """Prompts for every row of ``split`` (a :class:`cogen.eval.SplitData`), with in-context
    examples from ``train`` (the same config's train split)."""
    from cogen.families.cogitao.schema import experiment_from_dict

    experiment = experiment_from_dict(split.manifest["spec"])
    codes = task_codes(experiment, regime)
    base = _base_prompt(experiment, split.split)
    groups: dict[tuple[str, ...], list[int]] = {}
    for row, sequence in enumerate(train.table.column("transformations").to_pylist()):
        groups.setdefault(tuple(sequence), []).append(row)
    train_rows = {s: np.array(rows) for s, rows in groups.items()}
    columns = ["id", "input", "output", "transformations"]
    for sample in split.table.select(columns).to_pylist():
        picked = choose_examples(sample["transformations"], train_rows, examples, _seeded(seed, sample["id"]))
        shown = train.table.select(columns).take(picked).to_pylist()
        meta = {"family": "cogitao", "prompt_version": PROMPT_VERSION, "config": split.config, "split": split.split, "regime": regime, "setting": base,
                "examples": [e["id"] for e in shown], "task_codes": codes}
        yield Prompt(sample["id"], _cogitao_prompt(base, codes, shown, sample), meta)



# ---------------------------------------------------------------- the COGITAO paper's selection

#: The paper's sampling: prompts per experiment and seed (COGITAO App. C).
PAPER_PER_EXPERIMENT, PAPER_SEED = 10, 42
_ID_SPLIT_OF = {"test_ood": "test", "validation_ood": "validation", "test": "test", "validation": "validation"}


def cogitao_paper_prompts(split, context, regime: str = "explicit", per_experiment: int = PAPER_PER_EXPERIMENT,
                          seed: int = PAPER_SEED) -> Iterator[Prompt]:
    """``per_experiment`` prompts for ``split`` with the paper's example selection and sampling
    (:mod:`cogen.families.cogitao.paper_selection`); ``context`` is the config's in-domain split of the same kind (test)."""
    from cogen.families.cogitao.paper_selection import condition, paper_draws
    from cogen.families.cogitao.schema import OOD_SPLITS, experiment_from_dict

    experiment = experiment_from_dict(split.manifest["spec"])
    name = condition(experiment, split.split in OOD_SPLITS)
    codes = task_codes(experiment, regime)
    base = _base_prompt(experiment, split.split)
    columns = ["id", "input", "output", "transformations"]
    shown_rows = context.table.select(columns)
    tests = split.table.select(columns)
    sequences = [tuple(s) for s in context.table.column("transformations").to_pylist()]
    rng = _seeded(seed, f"paper:{split.config}:{split.split}")
    where = f"{split.config} {context.split}"
    for number, draw in enumerate(paper_draws(name, sequences, tests.num_rows, per_experiment, rng, where)):
        shown = shown_rows.take(list(draw.examples)).to_pylist()
        sample = tests.slice(draw.test, 1).to_pylist()[0]
        meta = {"family": "cogitao", "prompt_version": PROMPT_VERSION, "config": split.config, "split": split.split, "regime": regime, "setting": base,
                "selection": "paper", "condition": name, "prompt_number": number, "seed": seed,
                "examples": [e["id"] for e in shown], "task_codes": codes}
        yield Prompt(sample["id"], _cogitao_prompt(base, codes, shown, sample), meta)


def _sampled(split, per_experiment: int | None, seed: int):
    """``split`` itself, or ``per_experiment`` of its rows drawn without replacement (in row order)."""
    if per_experiment is None or per_experiment >= split.table.num_rows:
        return split
    import dataclasses

    rows = np.sort(_seeded(seed, f"sample:{split.config}:{split.split}").choice(
        split.table.num_rows, per_experiment, replace=False))
    return dataclasses.replace(split, table=split.table.take(rows))


# ---------------------------------------------------------------- family entry points
def cogitao_split_prompts(data, split, *, regime: str = "explicit", examples: int = 5, seed: int | None = None,
                          selection: str = "cogen", per_experiment: int | None = None) -> Iterator[Prompt]:
    """COGITAO's prompt maker (:attr:`cogen.families.Family.prompts`).

    ``selection="cogen"``: in-context examples from the train split of the same config in ``data``
    (seed 0 by default), for every row, or for ``per_experiment`` rows drawn with ``seed``.
    ``selection="paper"``: the paper's selection and sampling (:func:`cogitao_paper_prompts`;
    ``per_experiment`` 10 and ``seed`` 42 by default, examples from the in-domain test split).
    """
    from cogen.folder import read_split

    if selection not in SELECTIONS:
        raise EvalError(f"selection must be one of {', '.join(SELECTIONS)}, not {selection!r}")
    if per_experiment is not None and per_experiment < 1:
        raise EvalError(f"per_experiment must be at least 1, not {per_experiment}")
    if selection == "paper":
        if split.split not in _ID_SPLIT_OF:
            raise EvalError(f"the paper's selection is defined for test and test_ood (and validation splits), "
                            f"not {split.split!r}")
        context = split if _ID_SPLIT_OF[split.split] == split.split else \
            read_split(data, split.config, _ID_SPLIT_OF[split.split])
        return cogitao_paper_prompts(split, context, regime, per_experiment or PAPER_PER_EXPERIMENT,
                                     PAPER_SEED if seed is None else seed)
    seed = 0 if seed is None else seed
    return cogitao_prompts(_sampled(split, per_experiment, seed), read_split(data, split.config, "train"), regime,
                           examples, seed)
