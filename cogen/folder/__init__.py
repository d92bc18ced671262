"""The dataset folder format: layout, manifests, column types, and the one split reader.

A *dataset folder* is what ``cogen build`` and ``cogen merge`` write and ``cogen push`` uploads;
a Hub dataset repo made by cogen has the same layout. Everything that reads or writes one goes
through this package, which depends on nothing else in cogen but :mod:`cogen.errors`.

* :mod:`cogen.folder.layout`    where the card, shards, manifests and previews live
* :mod:`cogen.folder.manifest`  reading and writing ``manifests/<config>.json``
* :mod:`cogen.folder.features`  column types as Arrow schema, ``datasets`` features and card YAML
* :mod:`cogen.folder.splits`    :func:`read_split`: one split from a folder or a Hub repo
"""

from cogen.folder.features import arrow_schema, card_features, hf_features_dict
from cogen.folder.layout import (
                                 CARD_FILE,
                                 DATA_DIR,
                                 MANAGED_DIRS,
                                 MANIFEST_DIR,
                                 PREVIEW_DIR,
                                 config_dir,
                                 manifest_path,
                                 preview_path,
                                 shard_relpath,
                                 split_pattern,
)
from cogen.folder.manifest import environment_versions, folder_manifests, natural_key, read_manifests, write_json_atomic
from cogen.folder.splits import SplitData, is_dataset_folder, is_repo_id, read_split

__all__ = ["CARD_FILE", "DATA_DIR", "MANAGED_DIRS", "MANIFEST_DIR", "PREVIEW_DIR", "SplitData", "arrow_schema",
           "card_features", "config_dir", "environment_versions", "folder_manifests", "hf_features_dict",
           "is_dataset_folder", "is_repo_id", "manifest_path", "natural_key", "preview_path", "read_manifests",
           "read_split", "shard_relpath", "split_pattern", "write_json_atomic"]
