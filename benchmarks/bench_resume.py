"""What a resumed build costs after Ctrl-C during the key pass, beside a clean build.

    python benchmarks/bench_resume.py [SCALE] [WORKERS] [SHARE]
    python benchmarks/bench_resume.py --smoke     # scale 0.01, 1 worker (seconds; the tests run it)

Builds ``c1`` at SCALE (default 0.5) with WORKERS workers three ways, each into a new folder, and
prints the CPU seconds (the process and its workers) and wall seconds of each:

1. a clean build;
2. a build sent SIGINT (as Ctrl-C) once SHARE (default 0.5) of its key-pass results are saved in
   ``.cogen/keys/``, then the same command again (the resume);
3. the resumed folder compared with the clean one, file by file (SHA-256).

The resume's cost beside the clean build's says what the saved key pass is worth.
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(out: Path, scale: float, workers: int) -> list[str]:
    return [sys.executable, "-m", "cogen", "build", "--config", "c1", "--scale", str(scale), "--workers",
            str(workers), "--out", str(out), "--no-progress"]


def _run(command: list[str]) -> tuple[float, float, int]:
    cpu, wall = _cpu(), time.perf_counter()
    done = subprocess.run(command, env=ENV, capture_output=True, text=True)
    return time.perf_counter() - wall, _cpu() - cpu, done.returncode


def _interrupted(command: list[str], out: Path, share: float, shards: int) -> tuple[float, float, str]:
    """Run ``command`` and send SIGINT once ``share`` of ``shards`` key-pass results are saved."""
    cpu, wall = _cpu(), time.perf_counter()
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    while process.poll() is None and len(list(out.glob(".cogen/keys/*/*.npz"))) < share * shards:
        time.sleep(0.05)
    try:
        os.killpg(process.pid, signal.SIGINT)
    except ProcessLookupError:  # the build finished first (a small one); the resume then keeps everything
        pass
    _, stderr = process.communicate()
    return time.perf_counter() - wall, _cpu() - cpu, stderr.strip().splitlines()[-1] if stderr.strip() else ""


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "lock"}


def main(scale: float, workers: int, share: float) -> None:
    from cogen.pipeline.driver import builder_for
    from cogen.specs import load_spec

    setting = load_spec("c1").scaled(scale)
    builder = builder_for(setting)
    shards = sum(len(builder._tasks(e, "", None)) for e in setting.experiments)
    with tempfile.TemporaryDirectory(prefix="cogen-resume-") as root:
        clean, resumed = Path(root) / "clean", Path(root) / "resumed"
        wall, cpu, code = _run(_command(clean, scale, workers))
        print(f"clean build (c1, scale {scale}, {workers} workers): {cpu:6.1f} CPU s, {wall:6.1f} s wall (exit {code})")
        wall, cpu, message = _interrupted(_command(resumed, scale, workers), resumed, share, shards)
        print(f"stopped with {share:.0%} of {shards} key-pass results saved: {cpu:6.1f} CPU s, {wall:6.1f} s wall")
        print(f"  {message}")
        wall, cpu, code = _run(_command(resumed, scale, workers))
        print(f"resume: {cpu:6.1f} CPU s, {wall:6.1f} s wall (exit {code})")
        same = _digests(clean) == _digests(resumed)
        print(f"resumed folder {'identical to' if same else 'DIFFERS from'} the clean build, every file")


if __name__ == "__main__":
    if sys.argv[1:] == ["--smoke"]:
        sys.exit(main(0.01, 1, 0.5))
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.5, int(sys.argv[2]) if len(sys.argv) > 2 else 2,
         float(sys.argv[3]) if len(sys.argv) > 3 else 0.5)
