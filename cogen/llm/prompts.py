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

__all__ = ["NO_CODE_LINE", "PAPER_PER_EXPERIMENT", "PAPER_SEED", "REGIMES", "SELECTIONS", "Prompt", "carc_prompts",
           "cogitao_paper_prompts", "cogitao_prompts", "format_grid", "task_codes"]

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


#: The line the paper added to its Gemini prompts (000: App. D.2).
NO_CODE_LINE = "- Do not generate any code to solve the task."
_IMAGE_NOTE = """An image comes with this prompt: it shows the {n} study example pairs (each input above its
output) and, last, the final input grid."""


def _carc_prompt(study_inputs, study_outputs, roles: Sequence[str], query_input, image: bool = False,
                 no_code: bool = False) -> str:
    primitives = sum(1 for role in roles if "+" not in role)
    compositions = sum(1 for role in roles if role.count("+") == 1)
    systematic = primitives + compositions == len(roles) and primitives > 0
    tail = _CARC_TAIL.format(verb="might combine" if systematic else "are applied")
    if no_code:
        tail = tail.replace("beyond the specified format.\n", "beyond the specified format.\n" + NO_CODE_LINE + "\n")
    if image:
        tail = tail.replace("\nInput:\n", "\n" + _IMAGE_NOTE.format(n=len(roles)) + "\n\nInput:\n")
    parts = [_CARC_HEAD.format(n=len(roles)),
             _CARC_SYSTEMATICITY.format(primitives=primitives, compositions=compositions) if systematic
             else _CARC_FEWSHOT,
             tail]
    parts += [f"example input {i}: {format_grid(grid_in, True)}\nexample output {i}: {format_grid(grid_out, True)}"
              for i, (grid_in, grid_out) in enumerate(zip(study_inputs, study_outputs, strict=True), 1)]
    parts.append(f"Final input: {format_grid(query_input, True)}")
    return "\n\n".join(part.strip() for part in parts) + "\n"


def carc_prompts(split, queries: str = "first", images=None, no_code: bool = False) -> Iterator[Prompt]:
    """Prompts for the queries of a Compositional-ARC split (``first``: one per episode, as the paper).

    ``images``: a folder that receives one PNG per prompt (study pairs and query, drawn by
    :mod:`cogen.llm.images`), named in the record's ``image``; ``no_code`` adds :data:`NO_CODE_LINE`."""
    from cogen.eval.carc import expected_queries

    index = expected_queries(split, queries)
    columns = split.table.select(["study_inputs", "study_outputs", "study_roles", "query_inputs"])
    row_ids = split.table.column("id").to_pylist()
    record, current = None, -1
    for name, row, query in zip(index.ids, index.rows.tolist(), index.numbers.tolist(), strict=True):
        if row != current:
            record, current = columns.slice(row, 1).to_pylist()[0], row
        meta = {"family": "carc", "config": split.config, "split": split.split, "row": row_ids[row], "query": query}
        if no_code:
            meta["no_code"] = True
        if images is not None:
            from cogen.llm.images import write_episode_image

            meta["image"] = str(write_episode_image(images, name, record["study_inputs"], record["study_outputs"],
                                                    record["query_inputs"][query]))
        yield Prompt(name, _carc_prompt(record["study_inputs"], record["study_outputs"], record["study_roles"],
                                        record["query_inputs"][query], images is not None, no_code), meta)


# ---------------------------------------------------------------- the COGITAO paper's selection
#: Example selections of ``cogen prompts``: cogen's rule (module docstring) or the paper's (:mod:`cogen.llm.paper`).
SELECTIONS = ("cogen", "paper")
#: The paper's sampling: prompts per experiment and seed (COGITAO App. C).
PAPER_PER_EXPERIMENT, PAPER_SEED = 10, 42
_ID_SPLIT_OF = {"test_ood": "test", "validation_ood": "validation", "test": "test", "validation": "validation"}


def cogitao_paper_prompts(split, context, regime: str = "explicit", per_experiment: int = PAPER_PER_EXPERIMENT,
                          seed: int = PAPER_SEED) -> Iterator[Prompt]:
    """``per_experiment`` prompts for ``split`` with the paper's example selection and sampling
    (:mod:`cogen.llm.paper`); ``context`` is the config's in-domain split of the same kind (test)."""
    from cogen.llm.paper import condition, paper_draws
    from cogen.specs.schema import OOD_SPLITS, experiment_from_dict

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
        meta = {"family": "cogitao", "config": split.config, "split": split.split, "regime": regime, "setting": base,
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


def carc_split_prompts(data, split, *, queries: str | None = None, selection: str = "cogen",
                       images: str | None = None, no_code: bool = False) -> Iterator[Prompt]:
    """Compositional-ARC's prompt maker (:attr:`cogen.families.Family.prompts`): the study examples
    of each episode come with it, so ``data`` is not read again.

    ``selection="paper"`` is the paper's protocol: one query (the first) per episode, which is
    also the default. ``images``: a folder where each prompt's study pairs and query are drawn as
    a PNG (the paper's text+image prompts); ``no_code`` adds the paper's "Do not generate any code
    to solve the task" line (its Gemini prompts)."""
    if selection not in SELECTIONS:
        raise EvalError(f"selection must be one of {', '.join(SELECTIONS)}, not {selection!r}")
    if selection == "paper" and queries not in (None, "first"):
        raise EvalError("the paper's Compositional-ARC protocol asks one query per episode: use --queries first")
    return carc_prompts(split, queries or "first", images=images, no_code=no_code)
