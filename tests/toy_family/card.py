"""The toy's card text: its paragraph, its paper, its caption."""

from types import MappingProxyType

from cogen.kit.card import FamilyCard, Paper, fixed_paragraph

PAPER = Paper("Toy", "Toy Mirrors: A Family in Seven Files", "Nobody", "0000.00001", "nowhere",
              "@misc{nobody0000toy, title = {Toy Mirrors}}")

CARD = FamilyCard(shift=lambda manifest: f"larger grids out of domain ({manifest['spec']['ood_side']} cells a side)",
                  measures=fixed_paragraph("**Toy mirrors ({settings}).** Whether a model mirrors a grid."),
                  papers=(PAPER,), captions=MappingProxyType({}))
