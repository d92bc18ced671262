"""Publishing dataset folders: merging builds and the one-commit upload to a Hub dataset repo.

* :func:`merge`                     several dataset folders into one (``cogen merge``)
* :func:`push` / :func:`upload_plan`  one-commit upload to a Hub dataset repo (``cogen push``)

The card itself is :mod:`cogen.card`; the folder format is :mod:`cogen.folder`.
"""

from cogen.hub.merging import MergeReport, merge
from cogen.hub.publish import PushResult, UploadPlan, push, upload_plan

__all__ = ["MergeReport", "PushResult", "UploadPlan", "merge", "push", "upload_plan"]
