"""Prompts for string-to-grid programs (seed 003): all 16 pairs of a function, and a request for code.

Seed 003 publishes no prompt (spec programs.md §B.5, decision 4), so the wording is cogen's. It is
versioned: :data:`PROMPT_VERSION` is stored in every exported record, and ``cogen eval`` stores
the version a reply carries with its score, so results from different wordings are never mixed
unknowingly. Change the text only together with the version.
"""

from __future__ import annotations

from collections.abc import Iterator

from cogen.kit.prompts import Prompt

__all__ = ["PROMPT_VERSION", "program_prompt", "split_prompts"]

#: Version of the prompt text below; bump it whenever the text changes.
PROMPT_VERSION = "programs-v1"

_HEAD = """Below are all 16 examples of a function. The function maps an input string of 4 letters to
a 4x4 grid of '.' and '*'. The first letter is A or B, the second C or D, the third E or F and the
fourth G or H. Each example shows the input string, then the 4 rows of its grid.
"""

_TASK = """Write a Python program that defines a function `f(s: str) -> str` reproducing every example
exactly: `f` receives the input string and returns its grid as 4 rows of 4 characters joined by
newlines ("\\n"), for example "....\\n.*.*\\n****\\n*..*".

Rules:
- Use only the Python standard library; do not read files, the network or standard input.
- `f` will be called once for each of the 16 inputs above.
- Return only the code, in one ```python block.
"""


def program_prompt(inputs: list[str], outputs: list[str]) -> str:
    """The prompt for one function: its 16 (input, grid text) pairs."""
    examples = "\n\n".join(f"{text} ->\n{grid}" for text, grid in zip(inputs, outputs, strict=True))
    return f"{_HEAD}\n{examples}\n\n{_TASK}"


def split_prompts(data, split, *, version: str | None = None) -> Iterator[Prompt]:
    """The programs family's prompt maker (:attr:`cogen.families.Family.prompts`): one prompt per
    function of ``split``. ``version`` must be :data:`PROMPT_VERSION` when given (the only text
    this release can write)."""
    if version is not None and version != PROMPT_VERSION:
        from cogen.errors import EvalError

        raise EvalError(f"prompt version {version!r} is not available; this cogen writes {PROMPT_VERSION!r}")
    columns = split.table.select(["id", "setting", "inputs", "outputs"]).to_pydict()
    rows = zip(columns["id"], columns["setting"], columns["inputs"], columns["outputs"], strict=True)
    for name, setting, inputs, outputs in rows:
        meta = {"family": "programs", "config": split.config, "split": split.split, "setting": setting,
                "prompt_version": PROMPT_VERSION}
        yield Prompt(name, program_prompt(inputs, outputs), meta)
