"""Ctrl-C and SIGTERM in a build's key pass: one line, no traceback, no hang, no process left.

    python benchmarks/bench_interrupt.py [N] [SEED]     # N trials (default 50), delays drawn with SEED (default 36)
    python benchmarks/bench_interrupt.py --smoke        # 2 trials of a small build (checks the harness runs)

Each trial starts ``python -m cogen build --config c3 --scale 1 --workers 2 --no-progress`` (the
cogen that ``PYTHONPATH`` names: run it once per tree to compare trees) in a session of its own
and a new folder, waits until the key pass has saved its first result (``.cogen/keys/`` appears),
waits a random 0 to 3 s more, sends SIGINT or SIGTERM (alternately) to the driver, and waits up to
60 s. It records the exit code, the lines on stderr, whether they hold a traceback, whether the
driver hung (then it is killed), the seconds from the signal to the exit, and the processes of its
session still alive 2 s after. Prints one line per trial, then the totals: the review's round 4
found 3 tracebacks (``OSError: Bad file descriptor`` at exit) and 1 hang in 50 such trials.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"}
WAIT_SECONDS = 60


def _session_pids(sid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == sid:
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def trial(folder: Path, signum: int, delay: float, spec: list[str]) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    command = [sys.executable, "-m", "cogen", "build", *spec, "--workers", "2", "--out", str(folder), "--no-progress"]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV,
                              start_new_session=True)
    started = time.monotonic()
    while driver.poll() is None and not (folder / ".cogen" / "keys").exists() and time.monotonic() - started < 120:
        time.sleep(0.01)
    time.sleep(delay)
    sent = time.monotonic()
    if driver.poll() is not None:
        return {"outcome": "finished before the signal", "code": driver.returncode, "lines": 0, "traceback": False,
                "hung": False, "seconds": 0.0, "left": 0}
    driver.send_signal(signum)
    try:
        _, stderr = driver.communicate(timeout=WAIT_SECONDS)
        hung = False
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(driver.pid, signal.SIGKILL)
        _, stderr = driver.communicate()
    seconds = time.monotonic() - sent
    time.sleep(2)
    left = [pid for pid in _session_pids(driver.pid) if pid != driver.pid]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    lines = [line for line in stderr.splitlines() if line.strip()]
    if driver.returncode in (0, -signum) and not lines and (folder / "README.md").exists() and \
            not (folder / ".cogen" / "keys").exists():  # the build had ended: the signal met the interpreter's exit
        return {"outcome": "finished before the signal", "code": driver.returncode, "lines": 0, "traceback": False,
                "hung": False, "seconds": round(seconds, 2), "left": len(left)}
    traceback = "Traceback" in stderr or "Exception ignored" in stderr
    clean = driver.returncode == 130 and len(lines) == 1 and not traceback and not hung and not left
    return {"outcome": "clean" if clean else "NOT CLEAN", "code": driver.returncode, "lines": len(lines),
            "traceback": traceback, "hung": hung, "seconds": round(seconds, 2), "left": len(left),
            "last": lines[-1][:160] if lines else ""}


def run(count: int, seed: int, spec: list[str]) -> None:
    import cogen

    rng = random.Random(seed)
    print(f"cogen from {Path(cogen.__file__).parent}; {count} trials, seed {seed}; load {os.getloadavg()[0]:.1f}")
    totals = {"clean": 0, "traceback": 0, "hung": 0, "left": 0, "finished before the signal": 0}
    with tempfile.TemporaryDirectory(prefix="cogen-interrupt-") as scratch:
        for number in range(count):
            signum = (signal.SIGINT, signal.SIGTERM)[number % 2]
            delay = round(rng.uniform(0.0, 3.0), 2)
            result = trial(Path(scratch) / "out", signum, delay, spec)
            totals["clean"] += result["outcome"] == "clean"
            totals["traceback"] += result["traceback"]
            totals["hung"] += result["hung"]
            totals["left"] += bool(result["left"])
            totals["finished before the signal"] += result["outcome"] == "finished before the signal"
            print(f"trial {number + 1:>3} {signal.Signals(signum).name:<7} +{delay:4.2f} s: {result['outcome']}, exit "
                  f"{result['code']}, {result['lines']} line(s), exit {result['seconds']} s after the signal"
                  + (", TRACEBACK" if result["traceback"] else "") + (", HUNG" if result["hung"] else "")
                  + (f", {result['left']} processes left" if result["left"] else "")
                  + (f" | {result.get('last', '')}" if result["outcome"] == "NOT CLEAN" else ""), flush=True)
    print(", ".join(f"{name}: {value}" for name, value in totals.items()) + f" (of {count})")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] == ["--smoke"]:
        run(2, 36, ["--config", "c1", "--scale", "0.02", "--only", "C1-1"])
    elif all(a.isdigit() for a in arguments) and len(arguments) <= 2:
        run(int(arguments[0]) if arguments else 50, int(arguments[1]) if len(arguments) > 1 else 36,
            ["--config", "c3", "--scale", "1"])
    else:
        sys.exit(__doc__)
