"""What a family's ``prompts.py`` needs: the :class:`Prompt` record, grids as text, seeded draws, the split reader.

The ``prompts`` role is ``prompts(data, split, **options) -> Iterator[Prompt]``: ``split`` the
:class:`SplitData` to prompt for, ``data`` where it came from (``read_split(data, split.config, "train")`` gives
train examples); each :class:`Prompt` carries the prediction id its reply answers.
"""

from __future__ import annotations

from cogen.folder import SplitData, read_split
from cogen.llm.prompts import SELECTIONS, Prompt, format_grid, seeded

__all__ = ["SELECTIONS", "Prompt", "SplitData", "format_grid", "read_split", "seeded"]
