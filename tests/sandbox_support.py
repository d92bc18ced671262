"""Kernel isolation in tests: available here, or skipped with the reason (a failure under CI); and
small programs builds for the sandbox and scoring tests; and limited cgroups for the denial-of-service
tests (skipped, with the reason, where the machine gives none).

Tests that must run programs *confined* (the hostile-program suite, the refusal of a missing
mechanism aside) call :func:`require_isolation`: on a machine without bubblewrap or user
namespaces they skip with the one-line reason, unless ``COGEN_REQUIRE_SANDBOX=1`` (set by
``.ci/run``) turns the skip into a failure, so CI always runs the isolated path. Tests that only
score their own (trusted) programs run them confined when they can, else with the explicit opt-in
(``conftest.py`` sets ``COGEN_UNSAFE_RUN_UNTRUSTED_CODE=1`` there, never under CI).
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path

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


def _own_cgroup(controller: str) -> str | None:
    """This process's cgroup path in the v1 hierarchy of ``controller`` (or the v2 one), from /proc."""
    try:
        lines = open("/proc/self/cgroup").read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return next((line.split(":", 2)[2] for line in lines if line.startswith("0::")), None)


def _limit_files(controller: str) -> dict[str, str]:
    return {"pids": {"v1": "pids.max", "v2": "pids.max"},
            "memory": {"v1": "memory.limit_in_bytes", "v2": "memory.max"}}[controller]


@contextlib.contextmanager
def limited_cgroup(controller: str, limit: str):
    """A fresh child cgroup of ``controller`` (``pids`` or ``memory``) with ``limit``, where this
    machine lets the tests make one (cgroup v1 with a writable hierarchy, as root in a container; or
    cgroup v2 with the controller delegated); else skip with the reason. Yields the cgroup's folder;
    a command joins it by writing its pid to ``cgroup.procs`` (:func:`in_cgroup`)."""
    import itertools

    candidates = []
    own = _own_cgroup(controller)
    v1 = Path("/sys/fs/cgroup") / controller
    if v1.is_dir() and own is not None:
        candidates.append((v1 / own.lstrip("/"), _limit_files(controller)["v1"]))
    for root in (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup")):
        subtree = root / "cgroup.subtree_control"
        if subtree.is_file() and controller in subtree.read_text().split():
            candidates.append((root, _limit_files(controller)["v2"]))
            break
    reasons = []
    for parent, limit_file in candidates:
        for k in itertools.count():
            folder = parent / f"cogen-test-{os.getpid()}-{k}"
            if not folder.exists():
                break
        try:
            folder.mkdir()
        except OSError as error:
            reasons.append(f"{parent}: {error.strerror}")
            continue
        try:
            (folder / limit_file).write_text(limit)
        except OSError as error:
            folder.rmdir()
            reasons.append(f"{folder / limit_file}: {error.strerror}")
            continue
        try:
            yield folder
        finally:
            import time

            for _ in range(50):  # the processes in it may take a moment to be reaped
                try:
                    folder.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
        return
    pytest.skip(f"no writable {controller} cgroup here ({'; '.join(reasons) or 'no such hierarchy'})")


def in_cgroup(folder: Path, command: list[str]) -> list[str]:
    """``command`` run inside the cgroup ``folder`` (it joins before anything starts)."""
    return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(folder), *command]
