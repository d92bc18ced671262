"""The toy's card text: its paragraph, its paper, its caption."""

from types import MappingProxyType

from cogen.card.family_card import FamilyCard, fixed_paragraph
from cogen.card.papers import Paper

PAPER = Paper("Toy", "Toy Mirrors: A Family in Seven Files", "Nobody", "0000.00001", "nowhere",
              "@misc{nobody0000toy, title = {Toy Mirrors}}")

CARD = FamilyCard(shift=lambda manifest: "nothing held out: every grid is mirrored",
                  measures=fixed_paragraph("**Toy mirrors ({settings}).** Whether a model mirrors a grid."),
                  papers=(PAPER,), captions=MappingProxyType({}))
