"""Compositional-ARC's text prompts (paper App. D.2, Figures 12 and 14, in our own wording): the
episode's study examples and one query input; the answer must follow ``output:``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from cogen.errors import EvalError
from cogen.kit.prompts import SELECTIONS, Prompt, format_grid

__all__ = ["answer", "NO_CODE_LINE", "PROMPT_VERSION", "carc_prompts", "carc_split_prompts"]

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


#: Version of the prompt text, stored in every prompt and reply; bump it whenever the text changes.
PROMPT_VERSION = "carc-v1"
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
    :mod:`cogen.families.carc.prompt_images`), named in the record's ``image``; ``no_code`` adds :data:`NO_CODE_LINE`."""
    from cogen.families.carc.evaluate import expected_queries

    index = expected_queries(split, queries)
    columns = split.table.select(["study_inputs", "study_outputs", "study_roles", "query_inputs"])
    row_ids = split.table.column("id").to_pylist()
    record, current = None, -1
    for name, row, query in zip(index.ids, index.rows.tolist(), index.numbers.tolist(), strict=True):
        if row != current:
            record, current = columns.slice(row, 1).to_pylist()[0], row
        meta = {"family": "carc", "prompt_version": PROMPT_VERSION, "config": split.config, "split": split.split, "row": row_ids[row], "query": query}
        if no_code:
            meta["no_code"] = True
        if images is not None:
            from cogen.families.carc.prompt_images import write_episode_image

            meta["image"] = str(write_episode_image(images, name, record["study_inputs"], record["study_outputs"],
                                                    record["query_inputs"][query]))
        yield Prompt(name, _carc_prompt(record["study_inputs"], record["study_outputs"], record["study_roles"],
                                        record["query_inputs"][query], images is not None, no_code), meta)


def answer(grid) -> str:
    """A right reply to a query, as the prompt asks for it (``output: [[...]]``): the assistant turn of
    ``cogen export --format chat``."""
    return "output: " + format_grid(grid)


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
