"""Kernel isolation in tests: available here, or skipped with the reason (a failure under CI); and
small programs builds for the sandbox and scoring tests.

Tests that must run programs *confined* (the hostile-program suite, the refusal of a missing
mechanism aside) call :func:`require_isolation`: on a machine without bubblewrap or user
namespaces they skip with the one-line reason, unless ``COGEN_REQUIRE_SANDBOX=1`` (set by
``.ci/run``) turns the skip into a failure, so CI always runs the isolated path. Tests that only
score their own (trusted) programs run them confined when they can, else with the explicit opt-in
(``conftest.py`` sets ``COGEN_UNSAFE_RUN_UNTRUSTED_CODE=1`` there, never under CI).
"""

from __future__ import annotations

import functools
import os

import pytest

REQUIRED = os.environ.get("COGEN_REQUIRE_SANDBOX") == "1"


@functools.cache
def problem() -> str | None:
    """Why programs cannot run confined here (None when they can)."""
    from cogen.sandbox import isolation_problem

    return isolation_problem()


def require_isolation() -> None:
    """Skip (or, under ``COGEN_REQUIRE_SANDBOX=1``, fail) when there is no kernel isolation here."""
    why = problem()
    if why is not None:
        (pytest.fail if REQUIRED else pytest.skip)(f"no kernel isolation here: {why}")


def build_programs(factory, setting: str, functions: int, settings: list[str], seed: int = 7):
    """A small programs build (``<setting>-<name>`` configs, one ``test`` split) in a fresh folder."""
    from cogen.pipeline import build

    folder = factory.mktemp(f"programs-{setting.lower()}")
    spec = folder / "spec.yaml"
    spec.write_text(f"setting: {setting}\nfamily: programs\nseed: {seed}\nfunctions: {functions}\n"
                    f"settings: [{', '.join(settings)}]\n")
    build(spec, folder / "out", workers=1)
    return folder / "out"
