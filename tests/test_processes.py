"""A build leaves nothing running, whatever stops it, and one folder has one builder at a time.

Real ``cogen build`` processes with two workers are stopped by each signal a user or a CI runner
sends: the driver's descendants (workers, resource tracker) must all be gone within a few
seconds, the output pipes must close (``cogen build | tee log`` must not hang), and a catchable
signal must leave one line that says what finished and that running again resumes. Linux only
(the descendants are read from ``/proc``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from terminal import as_in_a_terminal

# Every test here runs cogen in a subprocess and kills it (slow); they read /proc (Linux only).
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TERMINAL_WIDTH": "200", "COLUMNS": "200"}


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) of a process, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), fields[0]


def descendants(pid: int) -> set[int]:
    """Every living (not zombie) process below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) and stat[1] != "Z":
            children.setdefault(stat[0], []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    return {pid for pid in pids if (stat := _stat(pid)) is not None and stat[1] != "Z"}


#: Big enough that the build is still running when a test stops it, however fast the machine: at
#: 0.05 an idle machine finished before the signal came, and at 0.3, once the writer got faster, a
#: build's workers lived 1.5 s, no longer than the tests waited (the CI run of stop 31). At 2 they
#: live about 7 s on a 2-core machine, and the tests act 0.5 s after the workers appear.
SCALE = "2"

#: How long the tests let the workers run before they stop or kill something: past their start-up
#: and into their first shards, far less than the workers' life at ``SCALE``.
BUSY = 0.5


def sigint_ignored_or_blocked(pid: int) -> bool:
    """Whether ``pid`` ignores or blocks SIGINT (``/proc/<pid>/status``)."""
    fields = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
    bit = 1 << (signal.SIGINT - 1)
    return bool((int(fields["SigIgn"], 16) | int(fields["SigBlk"], 16)) & bit)


def start_build(out: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "cogen", "build", "--config", "c1", "--scale", SCALE, "--workers", "2",
               "--out", str(out), "--no-progress", *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            start_new_session=True, preexec_fn=as_in_a_terminal)


def wait_for_workers(driver: subprocess.Popen, count: int = 2, timeout: float = 120) -> set[int]:
    """The driver's descendants once it has ``count`` of them (two workers; forked workers need no
    resource tracker, spawned ones have one too)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = descendants(driver.pid)
        if len(found) >= count:
            return found
        assert driver.poll() is None, driver.communicate()
        time.sleep(0.05)
    raise AssertionError("the build never started its workers")


@pytest.mark.parametrize("stop", ["SIGKILL", "SIGTERM", "SIGHUP", "Ctrl-C"])
def test_no_worker_outlives_the_driver(tmp_path, stop):
    driver = start_build(tmp_path / "out")
    workers = wait_for_workers(driver)
    time.sleep(BUSY)  # the workers are started and busy
    assert driver.poll() is None, "the build finished before it could be stopped: raise SCALE"
    if stop == "Ctrl-C":  # the terminal sends SIGINT to the whole foreground process group
        assert not sigint_ignored_or_blocked(driver.pid), "the driver would never see the Ctrl-C"
        os.killpg(driver.pid, signal.SIGINT)
    else:
        driver.send_signal(getattr(signal, stop))
    stdout, stderr = driver.communicate(timeout=30)  # returns once every holder of the pipes is gone
    deadline = time.monotonic() + 5
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers), f"still running after {stop}: {alive(workers)}"
    if stop == "SIGKILL":
        assert driver.returncode == -signal.SIGKILL
        return
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert driver.returncode == 130 and "Traceback" not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith("error: interrupted while "), stderr
    assert "run the same command again to resume" in lines[0]


def test_a_killed_build_resumes_and_its_stale_lock_is_noticed(tmp_path):
    from cogen.pipeline.verify import failed, verify

    out = tmp_path / "out"
    driver = start_build(out)
    wait_for_workers(driver)
    time.sleep(BUSY)  # the workers are busy with shards
    assert driver.poll() is None, "the build finished before it could be killed: raise SCALE"
    driver.kill()
    driver.communicate(timeout=30)
    assert (out / ".cogen" / "lock").read_text().split()[0] == str(driver.pid)
    again = subprocess.run([sys.executable, "-m", "cogen", "build", "--config", "c1", "--scale", SCALE,
                            "--workers", "2", "--out", str(out), "--no-progress"], capture_output=True, text=True,
                           env=ENV, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"note: an earlier build of {out} (pid {driver.pid}) stopped before finishing (killed" in again.stderr
    assert "resuming it" in again.stderr
    assert not failed(verify(out, shards_per_config=1))


def test_a_second_build_into_the_same_folder_refuses_at_once(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from cogen.folder import FolderLock; "
                               "lock = FolderLock(sys.argv[1]).__enter__(); print('locked', flush=True); "
                               "time.sleep(120)", str(out)], stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        second = subprocess.run([sys.executable, "-m", "cogen", "build", "--config", "c1", "--scale", "0.002",
                                 "--out", str(out), "--no-progress"], capture_output=True, text=True, env=ENV,
                                timeout=120)
        lines = second.stderr.strip().splitlines()
        assert second.returncode == 1 and len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
        assert lines[0] == (f"error: {out} is being written by another cogen process (pid {holder.pid}); wait for it "
                            "to finish, or stop it, then run this command again")
        assert not (out / "data").exists() and time.monotonic() - started < 60
    finally:
        holder.kill()
        holder.wait()


def test_workers_die_with_their_driver_even_in_the_middle_of_a_shard(tmp_path):
    """The executor's own guarantee, with shards that never finish: without the parent-death
    signal these workers would sleep on for a minute after their driver is gone."""
    script = ("import time\n"
              "from cogen.pipeline.executors import make_executor\n"
              "with make_executor('local', 2) as pool:\n"
              "    futures = [pool.submit(time.sleep, 60) for _ in range(4)]\n"
              "    print('submitted', flush=True)\n"
              "    time.sleep(60)\n")
    driver = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=ENV)
    assert driver.stdout.readline().strip() == "submitted"
    workers = wait_for_workers(driver)
    time.sleep(3)  # the workers are past their start-up (a worker still starting ends with its pipe) and asleep
    driver.kill()
    driver.wait()
    deadline = time.monotonic() + 5
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers), f"still running: {alive(workers)}"


def test_a_killed_worker_ends_the_build_with_one_line_and_the_rerun_gives_the_same_bytes(tmp_path):
    """The out-of-memory killer's way: SIGKILL to one worker of a running build. The build ends at
    once with one line (the worker, the shard, the likely cause), exit 1, no worker left, the
    finished shards kept; the same command then finishes the build, byte for byte a clean build."""
    from folder_digests import digests

    from cogen.pipeline import build

    out = tmp_path / "out"
    driver = start_build(out)
    workers = wait_for_workers(driver)
    time.sleep(BUSY)  # the workers are busy with shards
    assert driver.poll() is None, "the build finished before a worker could be killed: raise SCALE"
    victim = min(workers)
    os.kill(victim, signal.SIGKILL)
    _, stderr = driver.communicate(timeout=60)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert driver.returncode == 1 and "Traceback" not in stderr and len(lines) == 1, stderr
    assert lines[0].startswith(f"error: worker process {victim} was killed by SIGKILL while working on data/C1-"), stderr
    assert "the likely cause is memory" in lines[0] and "run the same command again to resume" in lines[0]
    deadline = time.monotonic() + 5
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(workers)
    again = subprocess.run([sys.executable, "-m", "cogen", "build", "--config", "c1", "--scale", SCALE, "--workers",
                            "2", "--out", str(out), "--no-progress"], capture_output=True, text=True, env=ENV,
                           timeout=600)
    assert again.returncode == 0, again.stderr
    build("c1", tmp_path / "clean", scale=float(SCALE), workers=2)  # a clean run of the same command
    assert digests(out) == digests(tmp_path / "clean")
