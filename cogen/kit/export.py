"""What a family's ``export.py`` (its ``exporter`` role) needs: the export records, ARC tasks, column views, and
the grid helpers of the column views."""

from __future__ import annotations

from cogen.export import ExportFormat, ExportSource, Written
from cogen.export.arc_json import ArcTask, pair
from cogen.io._arrow import column_shapes, pad_grid_column
from cogen.io.views import ColumnView

__all__ = ["ArcTask", "ColumnView", "ExportFormat", "ExportSource", "Written", "column_shapes",
           "pad_grid_column", "pair"]
