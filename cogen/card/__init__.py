"""The dataset card of a dataset folder: ``README.md``, its preview images, its tables.

Everything in the card is derived from the folder's manifests, the family registry
(:mod:`cogen.families`), the transformation registry and :mod:`cogen.card.differences`; nothing
is typed twice.

* :func:`write_card` / :func:`render_card`  README.md (YAML header + body from ``hub_card.md``)
* :func:`render_config`                     preview PNGs of any built config (``cogen render``)
* :func:`differences_table`                 the "differences from the reference code" table
"""

from cogen.card.card import (
                             card_header,
                             check_card_owner,
                             folder_card_checksums,
                             is_cogen_card,
                             render_card,
                             write_card,
                             write_previews,
)
from cogen.card.differences import DIFFERENCES, differences_table
from cogen.card.preview import render_config

__all__ = ["DIFFERENCES", "card_header", "check_card_owner", "differences_table", "folder_card_checksums",
           "is_cogen_card", "render_card", "render_config", "write_card", "write_previews"]
