"""Hub-ready folders: the dataset card, preview images, merging builds, and publishing.

* :func:`write_card` / :func:`render_card`  README.md (YAML header + body from ``hub_card.md``)
* :func:`render_config`                     preview PNGs of any built config (``cogen render``)
* :func:`merge`                             several build folders into one (``cogen merge``)
* :func:`push` / :func:`upload_plan`        one-commit upload to a Hub dataset repo (``cogen push``)
"""

from cogen.hub.card import card_header, render_card, write_card, write_previews
from cogen.hub.differences import DIFFERENCES, differences_table
from cogen.hub.merging import MergeReport, merge
from cogen.hub.preview import render_config
from cogen.hub.publish import PushResult, UploadPlan, push, upload_plan

__all__ = ["DIFFERENCES", "MergeReport", "PushResult", "UploadPlan", "card_header", "differences_table", "merge",
           "push", "render_card", "render_config", "upload_plan", "write_card", "write_previews"]
