"""Sharded, resumable, leak-free dataset builds (``cogen build``) and their verification."""

from cogen.pipeline.driver import BuildReport, ConfigReport, build

__all__ = ["BuildReport", "ConfigReport", "build"]
