"""Text prompts for in-context evaluation of language models.

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

Compositional-ARC (paper App. D.2, Figures 12 and 14, in our own wording): the episode's study
examples and one query input; the answer must follow ``output:``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from cogen.errors import EvalError

__all__ = ["REGIMES", "Prompt", "carc_prompts", "cogitao_prompts", "format_grid", "task_codes"]

#: Task-code regimes of COGITAO's prompts.
REGIMES = ("explicit", "coded")

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


@dataclass(frozen=True)
class Prompt:
    """One prompt: ``id`` is the prediction id its reply answers; ``meta`` says how it was made."""

    id: str
    prompt: str
    meta: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """JSON-ready record."""
        return {"id": self.id, "prompt": self.prompt, **self.meta}


def format_grid(grid, one_row_per_line: bool = False) -> str:
    """A grid as a Python list of lists, on one line or one row per line."""
    rows = ["[" + ", ".join(str(int(v)) for v in row) + "]" for row in np.asarray(grid)]
    return "[" + (",\n ".join(rows) if one_row_per_line else ", ".join(rows)) + "]"


def _seeded(seed: int, name: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


# ---------------------------------------------------------------- COGITAO
def task_codes(experiment, regime: str) -> dict[str, str]:
    """Name -> task code of every transformation of an experiment (identity for ``explicit``)."""
    if regime not in REGIMES:
        raise EvalError(f"regime must be one of {', '.join(REGIMES)}, not {regime!r}")
    names = list(experiment.in_domain.sequences.transforms())
    if experiment.out_of_domain is not None:
        names += [n for n in experiment.out_of_domain.sequences.transforms() if n not in names]
    return {name: name if regime == "explicit" else f"t{i + 1}" for i, name in enumerate(names)}


def _base_prompt(experiment, split: str) -> str:
    from cogen.specs.schema import OOD_SPLITS

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
    from cogen.specs.schema import experiment_from_dict

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
        meta = {"family": "cogitao", "config": split.config, "split": split.split, "regime": regime, "setting": base,
                "examples": [e["id"] for e in shown], "task_codes": codes}
        yield Prompt(sample["id"], _cogitao_prompt(base, codes, shown, sample), meta)


# ---------------------------------------------------------------- Compositional-ARC
_CARC_HEAD = """Task Description:
You must solve an abstract visual reasoning task by identifying geometric transformations (e.g., rotation,
translation, colour changes) applied to objects within a 10x10 grid.

To infer the correct transformation, you are given {n} pairs of input-output examples. Each pair consists of:
- an input grid: a 10x10 list of lists (2d array), where each element is an integer (0-9);
- an output grid: a 10x10 list of lists (2d array) obtained from the input by a transformation that follows
  a specific geometric rule.
"""

_CARC_SYSTEMATICITY = """
The first {primitives} example pairs show primitive transformations triggered by the object's colour, its
shape, or the presence of an additional object. For instance, objects of a certain colour may be translated,
while objects of a certain shape (a distinct pattern of cells) may be rotated.

The last {compositions} example pairs show composite transformations: several transformations applied
together. For instance, an object with the right colour and the right shape is both translated and rotated.

For the final prediction, understand the transformations shown in the examples, combine them further, and
apply them to the final input grid.
"""

_CARC_FEWSHOT = """
For the final prediction, understand the transformations shown in the examples and apply them to the final
input grid.
"""

_CARC_TAIL = """
Your task:
1. Analyze the example pairs to infer the transformation rules applied to each input grid.
2. Identify how these transformations {verb} to generate the output grids.
3. Apply the deduced transformations to the final input grid.
4. Output the correctly transformed 10x10 grid.

Output requirements:
- Return only the final output grid.
- Do not include any extra text, explanations, or comments.
- The output must be formatted exactly as: 'output: [...]'
- The output grid must be a 10x10 list of lists containing only integers between 0 and 9 (inclusive).
- Do not include unnecessary line breaks or additional text beyond the specified format.

Input:

Study examples:
"""


def _carc_prompt(study_inputs, study_outputs, roles: Sequence[str], query_input) -> str:
    primitives = sum(1 for role in roles if "+" not in role)
    compositions = sum(1 for role in roles if role.count("+") == 1)
    systematic = primitives + compositions == len(roles) and primitives > 0
    parts = [_CARC_HEAD.format(n=len(roles)),
             _CARC_SYSTEMATICITY.format(primitives=primitives, compositions=compositions) if systematic
             else _CARC_FEWSHOT,
             _CARC_TAIL.format(verb="might combine" if systematic else "are applied")]
    parts += [f"example input {i}: {format_grid(grid_in, True)}\nexample output {i}: {format_grid(grid_out, True)}"
              for i, (grid_in, grid_out) in enumerate(zip(study_inputs, study_outputs, strict=True), 1)]
    parts.append(f"Final input: {format_grid(query_input, True)}")
    return "\n\n".join(part.strip() for part in parts) + "\n"


def carc_prompts(split, queries: str = "first") -> Iterator[Prompt]:
    """Prompts for the queries of a Compositional-ARC split (``first``: one per episode, as the paper)."""
    from cogen.eval.carc import expected_queries

    index = expected_queries(split, queries)
    columns = split.table.select(["study_inputs", "study_outputs", "study_roles", "query_inputs"])
    record, current = None, -1
    for name, row, query in zip(index.ids, index.rows.tolist(), index.numbers.tolist(), strict=True):
        if row != current:
            record, current = columns.slice(row, 1).to_pylist()[0], row
        meta = {"family": "carc", "config": split.config, "split": split.split, "query": query}
        yield Prompt(name, _carc_prompt(record["study_inputs"], record["study_outputs"], record["study_roles"],
                                        record["query_inputs"][query]), meta)


# ---------------------------------------------------------------- family entry points
def cogitao_split_prompts(data, split, *, regime: str = "explicit", examples: int = 5,
                          seed: int = 0) -> Iterator[Prompt]:
    """COGITAO's prompt maker (:attr:`cogen.families.Family.prompts`): in-context examples come from
    the train split of the same config in ``data``."""
    from cogen.folder import read_split

    return cogitao_prompts(split, read_split(data, split.config, "train"), regime, examples, seed)


def carc_split_prompts(data, split, *, queries: str = "first") -> Iterator[Prompt]:
    """Compositional-ARC's prompt maker (:attr:`cogen.families.Family.prompts`): the study examples
    of each episode come with it, so ``data`` is not read again."""
    return carc_prompts(split, queries)
