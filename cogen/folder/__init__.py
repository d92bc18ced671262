"""The dataset folder format: layout, manifests, column types, and the one split reader.

A *dataset folder* is what ``cogen build`` and ``cogen merge`` write and ``cogen push`` uploads;
a Hub dataset repo made by cogen has the same layout. Everything that reads or writes one goes
through this package, which depends on nothing else in cogen but :mod:`cogen.errors`.

* :mod:`cogen.folder.layout`    where the card, shards, manifests and previews live
* :mod:`cogen.folder.manifest`  reading and writing ``manifests/<config>.json``
* :mod:`cogen.folder.features`  column types as Arrow schema, ``datasets`` features and card YAML
* :mod:`cogen.folder.splits`    :func:`read_split`: one split from a folder or a Hub repo
* :mod:`cogen.folder.integrity` shard records (SHA-256, bytes, rows, row groups) and their checks
* :mod:`cogen.folder.lock`      the lock a build holds on its folder
* :mod:`cogen.folder.journal`   the shards an unfinished build has finished
"""

from cogen.folder.atomic import atomic_write
from cogen.folder.features import arrow_schema, card_features, hf_features_dict
from cogen.folder.integrity import (
                                 MANIFEST_FORMAT,
                                 buffer_record,
                                 file_sha256,
                                 has_shard_records,
                                 manifest_sha256,
                                 record_problem,
                                 shard_record,
                                 shard_records,
)
from cogen.folder.journal import append_journal, clear_journal, read_journal
from cogen.folder.layout import (
                                 CARD_FILE,
                                 CROISSANT_FILE,
                                 DATA_DIR,
                                 MANAGED_DIRS,
                                 MANIFEST_DIR,
                                 PREVIEW_DIR,
                                 STATE_DIR,
                                 config_dir,
                                 journal_path,
                                 lock_path,
                                 manifest_path,
                                 preview_path,
                                 scratch_path,
                                 shard_relpath,
                                 split_pattern,
)
from cogen.folder.lock import FolderLock
from cogen.folder.manifest import environment_versions, folder_manifests, natural_key, read_manifests, write_json_atomic
from cogen.folder.splits import SplitData, is_dataset_folder, is_repo_id, read_split, split_files

__all__ = ["atomic_write", "CARD_FILE", "CROISSANT_FILE", "DATA_DIR", "MANAGED_DIRS", "MANIFEST_DIR", "MANIFEST_FORMAT", "PREVIEW_DIR", "STATE_DIR",
           "FolderLock", "SplitData", "append_journal", "arrow_schema", "buffer_record", "card_features", "clear_journal", "config_dir",
           "environment_versions", "file_sha256", "folder_manifests", "has_shard_records", "hf_features_dict",
           "is_dataset_folder", "is_repo_id", "journal_path", "lock_path", "manifest_path", "manifest_sha256",
           "natural_key", "preview_path", "read_journal", "read_manifests", "read_split", "record_problem",
           "scratch_path", "shard_record", "shard_records", "shard_relpath", "split_files", "split_pattern",
           "write_json_atomic"]
