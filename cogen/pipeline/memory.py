"""How much memory a build may use: the machine's, or less where the process's cgroup says so.

A build is refused before it starts when its estimate (:func:`cogen.pipeline.driver.estimate_memory`)
is above :func:`machine_memory`. In a container, a Slurm job, a ``systemd-run -p MemoryMax=...``
scope or a Kubernetes pod, the limit that counts is the memory cgroup of the process, not the
machine: the kernel's out-of-memory killer ends the build (with no message: SIGKILL cannot be
caught) as soon as the cgroup is full. So the limit is the smallest of the machine's memory and
every ``memory.max`` (cgroup v2) or ``memory.limit_in_bytes`` (cgroup v1) from the process's own
cgroup, as ``/proc/self/cgroup`` names it, up to the root of its hierarchy: a limit set on a
parent (a pod, a Slurm job) binds a child that has none.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["NO_LIMIT", "cgroup_memory_limit", "machine_memory"]

#: Values at or above this are "no limit" (cgroup v1 writes 2**63 - 4096 rounded to the page size).
NO_LIMIT = 2**60


def machine_memory() -> int | None:
    """Bytes of memory this process may use: the machine's, or its cgroup's limit if lower (None if unknown)."""
    limits = []
    try:
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        pass
    cgroup = cgroup_memory_limit()
    if cgroup is not None:
        limits.append(cgroup)
    return min(limits) if limits else None


def cgroup_memory_limit(cgroups: str | Path = "/proc/self/cgroup",
                        mountinfo: str | Path = "/proc/self/mountinfo") -> int | None:
    """The smallest memory limit, in bytes, on the way from this process's cgroup to the root of its
    hierarchy (v1 and v2 alike; None when no cgroup limits memory, or on a system without cgroups).

    ``cgroups`` and ``mountinfo`` are the files the kernel describes them in (tests pass fake ones).
    """
    try:
        memberships = Path(cgroups).read_text(encoding="utf-8", errors="replace").splitlines()
        mounts = Path(mountinfo).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    limits = []
    for line in memberships:
        hierarchy, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if hierarchy == "0" and not controllers:  # cgroup v2: one hierarchy, memory.max at every level
            places = [(mount, root) for mount, root, kind, _ in _cgroup_mounts(mounts) if kind == "cgroup2"]
            name = "memory.max"
        elif "memory" in controllers.split(","):  # cgroup v1: the memory controller's own hierarchy
            places = [(mount, root) for mount, root, kind, options in _cgroup_mounts(mounts)
                      if kind == "cgroup" and "memory" in options]
            name = "memory.limit_in_bytes"
        else:
            continue
        for mount, root in places:
            limits += _limits_up_the_tree(Path(mount), _inside(path, root), name)
    return min(limits) if limits else None


def _cgroup_mounts(lines: list[str]) -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root inside the hierarchy, file system type, super options) of every cgroup mount
    in ``/proc/self/mountinfo`` lines (``ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER``)."""
    mounts = []
    for line in lines:
        fields = line.split()
        if "-" not in fields or len(fields) < 5:
            continue
        tail = fields[fields.index("-") + 1:]
        if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            mounts.append((_unescape(fields[4]), _unescape(fields[3]), tail[0], set(tail[2].split(","))))
    return mounts


def _unescape(text: str) -> str:
    """A mountinfo path with its octal escapes (``\\040`` for a space) decoded."""
    return text.encode("latin-1").decode("unicode_escape") if "\\" in text else text


def _inside(path: str, root: str) -> str:
    """The cgroup ``path`` relative to a mount that shows the hierarchy from ``root`` (a container sees its own
    cgroup as ``/``, or its full path under a mount of part of the tree)."""
    path, root = "/" + path.strip("/"), "/" + root.strip("/")
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root):] or "/"
    return path.strip("/")


def _limits_up_the_tree(mount: Path, relative: str, name: str) -> list[int]:
    """Every limit ``name`` from ``mount/relative`` up to ``mount`` itself (files that are missing,
    unreadable or say ``max`` add nothing)."""
    limits = []
    parts = [part for part in relative.split("/") if part and part not in (".", "..")]
    for depth in range(len(parts), -1, -1):
        try:
            text = (mount.joinpath(*parts[:depth]) / name).read_text(encoding="ascii", errors="replace").strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < NO_LIMIT:
            limits.append(int(text))
    return limits
