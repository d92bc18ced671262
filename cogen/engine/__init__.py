"""The transformation engine: the 28 COGITAO transformations behind one registry.

* :data:`TRANSFORMS`, :func:`resolve`, :func:`resolve_sequence` (pure Python, imported eagerly);
* :class:`PlacedObject`, :func:`apply`, :func:`apply_sequence`, :func:`render`, :func:`pack`,
  :func:`unpack` (plain-Python wrappers) and :func:`run_scene`, :func:`render_scene` (Numba
  kernels for other Numba code), imported on first use so that reading the registry does not load Numba.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cogen.engine.registry import (
    FAMILIES,
    IDENTITY_TOKEN,
    TRANSFORMS,
    Example,
    Transform,
    from_token,
    markdown_table,
    resolve,
    resolve_sequence,
    sequence_tokens,
)

if TYPE_CHECKING:
    from cogen.engine._kernels import CANNOT_APPLY, OK, OUT_OF_GRID, OVERLAP, render_scene, run_scene
    from cogen.engine.scene import PlacedObject, SceneResult, apply, apply_sequence, pack, render, unpack

__all__ = [
    "CANNOT_APPLY",
    "FAMILIES",
    "IDENTITY_TOKEN",
    "OK",
    "OUT_OF_GRID",
    "OVERLAP",
    "TRANSFORMS",
    "Example",
    "PlacedObject",
    "SceneResult",
    "Transform",
    "apply",
    "apply_sequence",
    "from_token",
    "markdown_table",
    "pack",
    "render",
    "render_scene",
    "resolve",
    "resolve_sequence",
    "run_scene",
    "sequence_tokens",
    "unpack",
]

_LAZY = {
    "PlacedObject": "scene", "SceneResult": "scene", "apply": "scene",
    "apply_sequence": "scene", "render": "scene", "pack": "scene", "unpack": "scene",
    "run_scene": "_kernels", "render_scene": "_kernels",
    "OK": "_kernels", "CANNOT_APPLY": "_kernels", "OUT_OF_GRID": "_kernels", "OVERLAP": "_kernels",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"cogen.engine.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cogen.engine' has no attribute {name!r}")
