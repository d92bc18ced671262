"""The memory a build may use comes from the process's cgroup too (issue 36, review round 4: F13).

Fake cgroup trees in a temporary folder stand for ``/sys/fs/cgroup``: the reader gets fake
``/proc/self/cgroup`` and ``/proc/self/mountinfo`` files naming them, as the kernel would for a
process in a nested cgroup (a pod, a Slurm job, a ``systemd-run -p MemoryMax=`` scope).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cogen.errors import BuildError
from cogen.pipeline.memory import NO_LIMIT, cgroup_memory_limit, machine_memory

MIB = 2**20


def _tree(root: Path, limits: dict[str, str], name: str) -> Path:
    """Folders of a cgroup hierarchy under ``root``, each with its limit file (value as the kernel writes it)."""
    for relative, value in limits.items():
        folder = root / relative
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(value + "\n")
    return root


def _proc(tmp_path: Path, cgroup: str, mounts: list[str]) -> tuple[Path, Path]:
    (tmp_path / "cgroup").write_text(cgroup)
    (tmp_path / "mountinfo").write_text("\n".join(mounts) + "\n")
    return tmp_path / "cgroup", tmp_path / "mountinfo"


def test_v2_takes_the_smallest_limit_from_the_process_cgroup_up_to_the_root(tmp_path):
    root = _tree(tmp_path / "sys", {".": "max", "job": str(512 * MIB), "job/step": "max", "job/step/task": "max"},
                 "memory.max")
    files = _proc(tmp_path, "0::/job/step/task\n", [f"30 23 0:26 / {root} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate",
                                                     "31 23 0:27 / /proc rw - proc proc rw"])
    assert cgroup_memory_limit(*files) == 512 * MIB  # the parent's limit binds the child that has none
    (root / "job/step/task/memory.max").write_text(str(300 * MIB))
    assert cgroup_memory_limit(*files) == 300 * MIB


def test_v1_reads_the_memory_controllers_own_hierarchy(tmp_path):
    root = _tree(tmp_path / "sys" / "memory", {".": str(9223372036854771712), "docker": str(2048 * MIB),
                                                "docker/abc": str(9223372036854771712)}, "memory.limit_in_bytes")
    cpu = _tree(tmp_path / "sys" / "cpu", {"docker/abc": "100"}, "memory.limit_in_bytes")  # not the memory controller
    files = _proc(tmp_path, "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n1:name=systemd:/\n0::/\n",
                  [f"35 31 0:32 / {root} rw,relatime - cgroup cgroup rw,memory",
                   f"32 31 0:29 / {cpu} rw,relatime - cgroup cgroup rw,cpu,cpuacct"])
    assert cgroup_memory_limit(*files) == 2048 * MIB


def test_a_container_that_sees_its_own_cgroup_as_the_mount_root(tmp_path):
    """Inside a container the mount shows the hierarchy from the container's cgroup: its path is stripped."""
    root = _tree(tmp_path / "sys", {".": str(256 * MIB), "inner": "max"}, "memory.max")
    files = _proc(tmp_path, "0::/kubepods/pod1/inner\n", [f"30 23 0:26 /kubepods/pod1 {root} rw - cgroup2 cgroup2 rw"])
    assert cgroup_memory_limit(*files) == 256 * MIB


@pytest.mark.parametrize("cgroup, mounts", [
    ("0::/\n", []),  # no cgroup mount at all
    ("0::/a\n", ["30 23 0:26 / {root} rw - cgroup2 cgroup2 rw"]),  # only "max" everywhere
    ("", ["30 23 0:26 / {root} rw - cgroup2 cgroup2 rw"]),  # no membership line
])
def test_no_limit_is_none(tmp_path, cgroup, mounts):
    root = _tree(tmp_path / "sys", {".": "max", "a": "max"}, "memory.max")
    assert cgroup_memory_limit(*_proc(tmp_path, cgroup, [m.format(root=root) for m in mounts])) is None
    assert cgroup_memory_limit(tmp_path / "missing", tmp_path / "missing") is None
    assert NO_LIMIT < 9223372036854771712


def test_a_hostile_cgroup_path_reads_nothing_outside_the_mount(tmp_path):
    (tmp_path / "memory.max").write_text(str(MIB))  # above the mount: never read
    root = _tree(tmp_path / "sys", {".": "max"}, "memory.max")
    files = _proc(tmp_path, "0::/../..\n", [f"30 23 0:26 / {root} rw - cgroup2 cgroup2 rw"])
    assert cgroup_memory_limit(*files) is None


def test_the_build_is_refused_when_the_cgroup_is_too_small(tmp_path, monkeypatch):
    """The machine has room; its cgroup has not: the build is refused before any work, naming the limit."""
    import cogen.pipeline.memory as memory

    monkeypatch.setattr(memory, "cgroup_memory_limit", lambda: 512 * MIB)
    assert machine_memory() == 512 * MIB
    monkeypatch.setattr("cogen.pipeline.driver.machine_memory", memory.machine_memory)
    from cogen.pipeline import build

    with pytest.raises(BuildError, match=r"needs about [\d.]+ GiB of memory, more than the 0\.5 GiB this process may use "
                                         r"\(the machine's memory, or its cgroup's limit if lower\)"):
        build("c3", tmp_path / "out", scale=2, workers=2)
    assert not (tmp_path / "out" / "data").exists()
