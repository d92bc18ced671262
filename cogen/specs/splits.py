"""The split names every family uses: three in domain, two out of domain."""

from __future__ import annotations

__all__ = ["ID_SPLITS", "OOD_SPLITS", "SPLITS"]

ID_SPLITS = ("train", "validation", "test")
OOD_SPLITS = ("validation_ood", "test_ood")
SPLITS = ID_SPLITS + OOD_SPLITS
