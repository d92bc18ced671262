"""What a family's ``card.py`` (and ``differences.py``) needs: the :class:`FamilyCard` its ``card`` role gives,
papers, differences from the reference code, and the drawing of preview bands for images of its own."""

from __future__ import annotations

from cogen.card._png import encode_png, write_png_atomic
from cogen.card.differences import Difference
from cogen.card.family_card import (
           FamilyCard,
           first_config,
           fixed_paragraph,
           grouped_lines,
           markdown_table,
           one_study_kind,
)
from cogen.card.papers import Paper
from cogen.card.preview import PALETTE, Band, draw_bands

__all__ = ["PALETTE", "Band", "Difference", "FamilyCard", "Paper", "draw_bands", "encode_png", "first_config",
           "fixed_paragraph", "grouped_lines", "markdown_table", "one_study_kind", "write_png_atomic"]
