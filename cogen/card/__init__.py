"""The dataset card of a dataset folder: ``README.md``, its preview images, its tables.

Everything in the card is derived from the folder's manifests, the transformation registry and
the card text each family's record names (:class:`FamilyCard`: measures, papers, differences from
the reference code, preview captions); nothing is typed twice, and nothing here names a family.

* :func:`write_card` / :func:`render_card`  README.md (YAML header + body from ``hub_card.md``)
* :func:`render_croissant`                  croissant.json (Croissant 1.1 with the RAI fields), written with it
* :func:`render_config`                     preview PNGs of any built config (``cogen render``)
* :func:`differences_table`                 the "differences from the reference code" table
* :class:`FamilyCard`                       what a family's ``card`` role gives the card
"""

from cogen.card.card import (
                             card_header,
                             check_card_owner,
                             folder_card_checksums,
                             is_cogen_card,
                             render_card,
                             render_croissant,
                             write_card,
                             write_previews,
)
from cogen.card.differences import differences_table, family_differences
from cogen.card.family_card import FamilyCard
from cogen.card.preview import render_config

__all__ = ["FamilyCard", "card_header", "check_card_owner", "differences_table", "family_differences",
           "folder_card_checksums", "is_cogen_card", "render_card", "render_config", "render_croissant", "write_card", "write_previews"]
