"""What a family's ``spec.py`` (and ``schema.py``) needs: located YAML, field readers that report file, line and
field, ranges and the split names.

``parse(doc)`` gets a :class:`Located` document (``doc.data`` the YAML, ``doc.where(path)`` the file and line of a
field); each reader takes ``(doc, path, value, ...)`` and raises a :class:`SpecError` naming the field and the fix::

    top = expect_keys(doc, (), doc.data, ("setting", "family", "seed", "rows"), ("description",))
    rows = read_int(doc, ("rows",), top["rows"], minimum=1)
"""

from __future__ import annotations

from cogen.errors import SpecError, UnknownNameError
from cogen.specs._fields import (
    Range,
    expect_keys,
    read_choice,
    read_int,
    read_list,
    read_mapping,
    read_name,
    read_range,
    read_str,
)
from cogen.specs._yaml import Located, Path_
from cogen.specs.splits import ID_SPLITS, OOD_SPLITS, SPLITS

__all__ = ["ID_SPLITS", "OOD_SPLITS", "SPLITS", "Located", "Path_", "Range", "SpecError", "UnknownNameError",
           "expect_keys", "read_choice", "read_int", "read_list", "read_mapping", "read_name", "read_range", "read_str"]
