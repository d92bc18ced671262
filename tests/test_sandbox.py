"""The sandbox's own guarantees: isolation chosen once and refused (one line) when missing, a protocol
no server answer can forge, what a confined program sees, CPU-time limits, and scores that do not
depend on the worker count or on who runs the scorer. The attacks are in test_sandbox_hostile.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sandbox_support import REQUIRED, build_programs, require_isolation

from cogen.families.programs.evaluate import evaluate_table
from cogen.families.programs.functions import INPUTS
from cogen.folder import read_split
from cogen.safe_text import clean, identifier, markdown_cell
from cogen.sandbox import Sandbox
from cogen.sandbox import sandbox as sandbox_module
from cogen.sandbox.isolation import UNSAFE_ENV, IsolationUnavailable
from cogen.sandbox.protocol import check_answer, job

DOTS = "def f(s):\n    return ['....'] * 4\n"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return build_programs(tmp_path_factory, "S", 3, ["horizontal", "random"], seed=3)


def _replies(data: Path, path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# ---------------------------------------------------------------- text from programs
def test_text_from_programs_is_cleaned_before_it_is_shown():
    assert clean("a\x1b[2J\x00b\u202e\u2028c\n d") == "a?[2J?b??c d"
    assert len(clean("x" * 10_000)) == 160 and clean("x" * 10_000).endswith("…")
    assert identifier("KeyError") == "KeyError" and identifier("time limit", "Exception") == "Exception"
    assert markdown_cell("m|<img src=x>[a](b)`") == "m\\|&lt;img src=x&gt;\\[a\\](b)\\`"


# ---------------------------------------------------------------- the protocol
def _answer(sent: dict, **change) -> bytes:
    answer = {"nonce": sent["nonce"], "outputs": ["." * 16] * 16, "reasons": [None] * 16, "fate": "ok", "cpu": 0.1,
              "seconds": 0.2}
    answer.update(change)
    return (json.dumps(answer) + "\n").encode()


@pytest.mark.parametrize("broken", [
    {"nonce": "0" * 32},                                      # another job's answer
    {"outputs": ["." * 16] * 15},                             # one output short
    {"outputs": ["." * 15] + ["." * 16] * 15},                # not 16 cells
    {"outputs": ["x" * 16] + ["." * 16] * 15},                # not a cell
    {"outputs": [None] * 16},                                 # no output and no reason
    {"reasons": ["boom"] + [None] * 15},                      # an output and a reason
    {"reasons": [None] * 16, "outputs": [None] + ["." * 16] * 15},
    {"fate": "ok; rm -rf /"},
    {"cpu": -1},
    {"seconds": "1"},
    {"extra": 1},
])
def test_a_malformed_answer_is_refused(broken):
    sent = job(DOTS, ["ACEG"] * 16, "f", "call", 1.0, 5.0, 1 << 28)
    assert check_answer(_answer(sent), sent, "f") is not None
    assert check_answer(_answer(sent, **broken), sent, "f") is None


def test_answers_that_are_not_one_bounded_json_line_are_refused():
    sent = job(DOTS, ["ACEG"] * 16, "f", "call", 1.0, 5.0, 1 << 28)
    good = _answer(sent)
    for line in (good[:-1], b"{}\n", b"[1, 2]\n", b"\xff\n", b"[" * 100_000 + b"\n",
                 good[:-2] + b', "pad": "' + b"x" * 70_000 + b'"}\n'):
        assert check_answer(line, sent, "f") is None


FAKE_SERVER = '''
import json, sys, time
config = json.loads(sys.argv[-1])
out = sys.stdout
out.write(json.dumps({"hello": config["hello"], "dumpable": False, "seccomp": False}) + "\\n"); out.flush()
for line in sys.stdin:
    sent = json.loads(line)
    answer = {"nonce": sent["nonce"], "outputs": ["." * 16] * 16, "reasons": [None] * 16, "fate": "ok", "cpu": 0.0,
              "seconds": 0.0}
    source = sent["source"]
    if "WRONG NONCE" in source:
        answer["nonce"] = "0" * 32
    if "GARBAGE" in source:
        answer = {}
    if "HUGE" in source:
        answer["fate"] = "x" * 100_000
    if "LATE" in source:
        time.sleep(3)
    if "DIE" in source:
        sys.exit(0)
    out.write(json.dumps(answer) + "\\n")
    if "FORGE" in source:  # a second answer, ready for the next job
        out.write(json.dumps(answer) + "\\n")
    out.flush()
'''


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_lying_server_costs_one_job_and_never_shifts_results(tmp_path, monkeypatch, workers):
    fake = tmp_path / "fake_server.py"
    fake.write_text(FAKE_SERVER)
    monkeypatch.setattr(sandbox_module, "_CHILD", fake)
    monkeypatch.setattr(sandbox_module, "_GRACE", 1.0)
    monkeypatch.setattr(sandbox_module, "WALL_EXTRA", 0.0)
    bad = ["FORGE", "WRONG NONCE", "GARBAGE", "HUGE", "LATE", "DIE"]
    sources = [f"# honest {k}\n" + DOTS for k in range(7)]
    for k, word in enumerate(bad):
        sources.insert(2 * k + 1, f"# {word}\n" + DOTS)
    with Sandbox(workers=workers, timeout=0.1, unsafe=True) as box:
        results = box.run(sources, INPUTS)
    for source, result in zip(sources, results, strict=True):
        if any(word in source for word in bad):
            assert result.reasons == ("sandbox failure",) * 16, source
        else:
            assert result.outputs == ("." * 16,) * 16, source


# ---------------------------------------------------------------- no failure of one job ends the run
def test_a_worker_that_will_not_restart_costs_its_job_alone(monkeypatch):
    """R07 of the second red team: a fork refused (``BlockingIOError``) while a worker restarts, or any
    other exception of one job, is that job's ``sandbox failure``; the restart is tried again after a
    back-off, and the next job runs."""
    import warnings

    from cogen.sandbox.isolation import UnconfinedWarning

    monkeypatch.setattr(sandbox_module, "RESTART_DELAYS", (0.01, 0.02, 0.04))
    real, refusals = subprocess.Popen, []

    def popen(*args, **kwargs):
        if refusals and refusals[0] > 0:
            refusals[0] -= 1
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real(*args, **kwargs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnconfinedWarning)
        with Sandbox(workers=1, timeout=1.0, unsafe=True) as box:
            monkeypatch.setattr(sandbox_module.subprocess, "Popen", popen)
            worker = box._all[0]
            outcomes, left = [], []
            for refused in (2, 10, 0):  # two refusals: the third try starts it; ten: the job fails alone
                worker.stop()
                refusals[:] = [refused]
                outcomes.append(box.run([DOTS], INPUTS)[0])
                left.append(refusals[0])
            original = sandbox_module._Worker.run
            monkeypatch.setattr(sandbox_module._Worker, "run", lambda *a: 1 / 0)
            broken = box.run([DOTS], INPUTS)[0]
            monkeypatch.setattr(sandbox_module._Worker, "run", original)
            after = box.run([DOTS, DOTS], INPUTS)
    assert outcomes[0].outputs == ("." * 16,) * 16
    assert outcomes[1].reasons == ("sandbox failure",) * 16 and left == [0, 10 - 4, 0]  # four tries, then given up
    assert outcomes[2].outputs == ("." * 16,) * 16
    assert broken.reasons == ("sandbox failure",) * 16
    assert [r.outputs for r in after] == [("." * 16,) * 16] * 2


# ---------------------------------------------------------------- the scratch
def test_the_scratch_goes_where_no_bound_folder_lives(monkeypatch):
    """E11: /tmp unless the Python installation lives under it; never over or under a bind. A virtual
    environment anywhere is bound at /cogen-sites and never meets the scratch."""
    from cogen.sandbox import isolation

    real = isolation.python_paths()
    venv = ("/tmp/venv/lib/site-packages",)
    for executable, prefix, expected in ((real[0], real[1], "/tmp"), ("/tmp/py/bin/python3", "/tmp/py", "/scratch"),
                                         ("/scratch/me/bin/python3", "/tmp/py", "/cogen-scratch")):
        monkeypatch.setattr(isolation, "python_paths", lambda e=executable, p=prefix: (e, p, venv))
        assert isolation.scratch_mount(venv) == expected, prefix
        command = isolation.bwrap_command("bwrap", ["python"], venv, {}, expected)
        assert command[command.index("--tmpfs") + 1] == expected
        assert command.index("--remount-ro", command.index("--tmpfs")) < command.index("--")  # the root last
        assert " ".join(command).count(" /cogen-sites/0 ") == 1 and venv[0] + " " + venv[0] not in " ".join(command)


# ---------------------------------------------------------------- refusing without isolation
def _fake_bwrap(folder: Path) -> Path:
    folder.mkdir()
    tool = folder / "bwrap"
    tool.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel "
                    "does not allow non-privileged user namespaces.' >&2\nexit 1\n")
    tool.chmod(0o755)
    return folder


def test_no_isolation_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv(UNSAFE_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap here
    with pytest.raises(IsolationUnavailable) as missing:
        Sandbox().__enter__()
    message = str(missing.value)
    assert "\n" not in message and "bubblewrap (bwrap) is not installed" in message
    assert "apt-get install bubblewrap" in message and "--unsafe-run-untrusted-code" in message
    monkeypatch.setenv("PATH", str(_fake_bwrap(tmp_path / "bin")))  # bwrap without user namespaces
    with pytest.raises(IsolationUnavailable, match="does not allow non-privileged user namespaces"):
        Sandbox().__enter__()


@pytest.mark.slow
def test_the_cli_refuses_without_isolation_and_runs_when_told_to(data, tmp_path):
    row = read_split(data, "S-horizontal", "test").table.to_pylist()[0]
    replies = _replies(data, tmp_path / "r.jsonl", [{"id": row["id"], "model": "m", "reply": DOTS}])
    env = {k: v for k, v in os.environ.items() if k != UNSAFE_ENV}
    env["PATH"] = str(_fake_bwrap(tmp_path / "bin"))
    command = [sys.executable, "-m", "cogen", "eval", "programs", "-d", str(data), "-p", str(replies), "--workers", "1"]
    refused = subprocess.run(command, capture_output=True, text=True, env=env)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith("error: cogen refuses to run untrusted programs without isolation")
    assert len(refused.stderr.strip().splitlines()) <= 3  # one message (the terminal may wrap it)
    told = subprocess.run([*command, "--unsafe-run-untrusted-code"], capture_output=True, text=True, env=env)
    assert told.returncode == 0, told.stderr
    assert "WITHOUT isolation" in told.stderr and "3 predictions scored" in told.stdout
    single = [sys.executable, "-m", "cogen", "eval", "-d", str(data), "-c", "S-horizontal", "-s", "test", "-p",
              str(replies)]
    assert subprocess.run(single, capture_output=True, text=True, env=env).returncode == 1
    assert subprocess.run([*single, "--unsafe-run-untrusted-code"], capture_output=True, text=True,
                          env=env).returncode == 0
    assert subprocess.run(single, capture_output=True, text=True, env={**env, UNSAFE_ENV: "1"}).returncode == 0


@pytest.mark.slow
def test_unconfined_runs_are_never_silent(data, tmp_path):
    """D04 of the second red team: whatever chose no isolation (the flag, the environment variable), the
    CLI says so in one line on stderr, and the tables say ``isolation: none``."""
    row = read_split(data, "S-horizontal", "test").table.to_pylist()[0]
    replies = _replies(data, tmp_path / "r.jsonl", [{"id": row["id"], "model": "m", "reply": DOTS}])
    env = {k: v for k, v in os.environ.items() if k != UNSAFE_ENV}
    report = [sys.executable, "-m", "cogen", "eval", "programs", "-d", str(data), "-p", str(replies), "--workers", "1"]
    single = [sys.executable, "-m", "cogen", "eval", "-d", str(data), "-c", "S-horizontal", "-s", "test", "-p",
              str(replies), "--workers", "1"]
    for command, extra, chose in ((report, [], f"{UNSAFE_ENV}=1 in the environment"),
                                  (single, [], f"{UNSAFE_ENV}=1 in the environment"),
                                  (report, ["--unsafe-run-untrusted-code"], "--unsafe-run-untrusted-code")):
        done = subprocess.run([*command, *extra], capture_output=True, text=True,
                              env={**env, UNSAFE_ENV: "1"} if not extra else env)
        assert done.returncode == 0, done.stderr
        notes = [line for line in done.stderr.splitlines() if "WITHOUT isolation" in line]
        assert len(notes) == 1 and chose in notes[0] and "Traceback" not in done.stderr, done.stderr
        assert re.search(r"isolation(:|\s*│)\s*none", done.stdout), done.stdout  # the tables say it too
    markdown = tmp_path / "report.md"
    confined = subprocess.run([*report, "--markdown", str(markdown)], capture_output=True, text=True, env=env)
    if confined.returncode == 0:  # with isolation here: no note, and the report names it
        assert "WITHOUT isolation" not in confined.stderr and "isolation: bubblewrap" in markdown.read_text()


# ---------------------------------------------------------------- inside the sandbox
PROBE = textwrap.dedent('''
    import os, socket, threading
    def f(s):
        seen = []
        seen.append(os.getuid() == 1000 and os.getgid() == 1000)
        seen.append(not os.path.exists("/proc") and not os.path.exists("/home") and not os.path.exists("/etc/passwd"))
        seen.append(sorted(os.environ) == ["LC_ALL", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                           "PATH", "PWD", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "TMPDIR"])
        seen.append(os.getcwd() == os.environ["TMPDIR"] and os.listdir(".") == [])
        open("left-behind", "w").write("x")                      # the next program must not see it
        os.makedirs("a/b/c")
        os.symlink("/usr", "a/b/link")
        os.chmod("a/b", 0)
        os.chmod("a", 0o100)
        try:
            open(os.__file__, "a")
            seen.append(False)
        except OSError as error:
            seen.append(error.errno == 30)                       # EROFS: the Python files are read-only
        try:
            os.setuid(0)
            seen.append(False)
        except OSError:
            seen.append(True)                                    # no capabilities, no root
        roots = []
        for path in ("/written", "/etc/written", "/usr/written"):
            try:
                open(path, "w")
                roots.append(False)
            except OSError as error:
                roots.append(error.errno in (2, 30))             # the root is read-only: only the scratch is not
        seen.append(all(roots))
        try:
            threading.Thread(target=len, args=("",)).start()
            seen.append(False)
        except RuntimeError:
            seen.append(True)                                    # a program is one task, whoever runs the scorer
        for attempt in (os.fork, lambda: socket.socket(), lambda: os.kill(1, 0)):
            try:
                attempt()
                seen.append(False)
            except PermissionError:
                seen.append(True)
        cells = "".join("*" if ok else "." for ok in seen).ljust(16, ".")
        return [cells[k:k + 4] for k in (0, 4, 8, 12)]
''')


def test_a_program_sees_only_its_sandbox():
    require_isolation()
    with Sandbox(workers=1, timeout=2.0) as box:
        first, second = box.run([PROBE, PROBE], INPUTS)
    assert first.outputs[0] == "*" * 11 + "." * 5, first.reasons[0] or first.outputs[0]  # eleven checks passed
    assert second.outputs[0] == "*" * 11 + "." * 5, "the scratch folder was not emptied between programs"


SITES_PROBE = textwrap.dedent('''
    import os, sys
    def f(s):
        real = {real!r}
        seen = [not any(os.path.exists(p) for p in real), all(p.startswith("/cogen-sites/") for p in sys.path[-len(real):])]
        system = ("/", "/usr", "/usr/lib", "/usr/local", "/usr/local/lib", os.environ["TMPDIR"])  # TMPDIR: the scratch
        for path in real:                                        # nothing above a bound folder shows either
            while path not in system:
                path = os.path.dirname(path)
                seen.append(path in system or not os.path.exists(path))
        import numpy                                             # and the packages still import
        seen.append(numpy.__file__.startswith("/cogen-sites/"))
        cells = "".join("*" if ok else "." for ok in seen).ljust(16, ".")[:16]
        return [cells[k:k + 4] for k in (0, 4, 8, 12)]
''')


def test_site_packages_are_bound_where_no_folder_of_the_user_shows():
    """S03 in CI: a virtual environment inside the checkout bound at its own path let a program list the
    checkout; bound at /cogen-sites, neither it nor any folder above it is visible."""
    from cogen.sandbox.isolation import python_paths

    require_isolation()
    real = [p for p in python_paths()[2] if not p.startswith(sys.base_prefix)]
    with Sandbox(workers=1, timeout=2.0) as box:
        outcome = box.run([SITES_PROBE.format(real=real)], INPUTS)[0]
    assert outcome.reasons[0] is None, outcome.reasons[0]
    assert "." not in "".join(outcome.outputs[0]).rstrip("."), outcome.outputs[0]
    assert "".join(outcome.outputs[0]).count("*") >= 3


@pytest.mark.slow
def test_limits_count_cpu_time_not_wall_time():
    require_isolation()
    spin = "import time\ndef f(s):\n    t = time.process_time()\n    while time.process_time() - t < 0.02:\n" \
           "        pass\n    return ['....'] * 4\n"
    hogs = [subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 4: pass"])
            for _ in range(3 * (os.cpu_count() or 1))]
    try:
        with Sandbox(workers=1, timeout=0.5) as box:
            result, = box.run([spin], INPUTS)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    # 16 x 0.02 s = 0.32 s of CPU: under the 0.5 s limit, however long the busy machine made it take
    assert result.outputs == ("." * 16,) * 16 and result.fate == "ok" and 0.3 <= result.cpu < 0.5


@pytest.mark.slow
def test_a_sleeping_program_meets_the_wall_clock_safety_net(monkeypatch):
    require_isolation()
    monkeypatch.setattr(sandbox_module, "WALL_EXTRA", 0.0)
    monkeypatch.setattr(sandbox_module, "WALL_FACTOR", 10.0)
    with Sandbox(workers=1, timeout=0.3) as box:  # 0.3 s of CPU, 3 s of wall clock
        asleep, loop = box.run(["import time\ndef f(s):\n    time.sleep(60)\n", "def f(s):\n    while True: pass\n"], INPUTS)
    assert asleep.fate == "wall" and asleep.reasons == ("wall-clock limit",) * 16 and asleep.cpu < 0.3
    assert loop.fate == "cpu" and loop.reasons == ("time limit",) * 16 and loop.cpu >= 0.3


# ---------------------------------------------------------------- scores are a function of the replies
BORDERLINE = [
    "import time\ndef f(s):\n    t = time.process_time()\n    while time.process_time() - t < 0.01:\n        pass\n"
    "    return ['....'] * 4\n",                                              # 0.16 s of CPU, limit 0.5 s
    "from concurrent.futures import ThreadPoolExecutor\ndef f(s):\n"
    "    return list(ThreadPoolExecutor(4).map(lambda c: '*...' if c in 'ACEG' else '.*..', s))\n",
    "import threading\ndef f(s):\n    for _ in range(200):\n        t = threading.Thread(target=len, args=(s,))\n"
    "        t.start()\n        t.join()\n    return ['....'] * 4\n",           # many threads, one at a time
    "S = {'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'}\ndef f(s):\n    return [''.join(sorted(S))[:4].replace('A', '.')"
    ".replace('B', '*').replace('C', '.').replace('D', '*')] * 4\n",          # set order: the hash seed is fixed
    "def f(s):\n    while True:\n        pass\n",
    "def f(s):\n    return bytearray(10 ** 10)\n",
]


@pytest.mark.slow
def test_scores_are_identical_with_1_2_and_8_workers(data, tmp_path):
    require_isolation()
    import numpy as np

    from cogen.families.programs.styles import STYLES, program

    records = []
    for config in ("S-horizontal",):
        for row in read_split(data, config, "test").table.to_pylist():
            patterns = [[c == "*" for c in p] for p in row["patterns"]]
            for style in sorted(STYLES):
                records.append({"id": row["id"], "model": style,
                                "reply": program(style, np.array(row["cell_groups"]), patterns)})
            for j, source in enumerate(BORDERLINE):
                records.append({"id": row["id"], "model": f"borderline {j}", "reply": source})
    replies = _replies(data, tmp_path / "r.jsonl", records)
    runs = [evaluate_table(data, replies, workers=workers, timeout=0.5) for workers in (1, 2, 8)]
    functions = [[f for config in run["configs"].values() for f in config["functions"]] for run in runs]
    assert functions[0] == functions[1] == functions[2]
    assert runs[0]["markdown"] == runs[1]["markdown"] == runs[2]["markdown"]
    assert all(f["errors"] == 0 for f in functions[0] if f["model"] in STYLES)


def _usable_by(uid: int) -> bool:
    try:
        return subprocess.run([sys.executable, "-c", "import cogen"], user=uid, group=uid, extra_groups=[],
                              capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.slow
def test_scores_do_not_depend_on_who_runs_the_scorer(data, tmp_path):
    """The sandbox's user is 1000 with no capabilities whoever runs the scorer, and processes and
    threads are governed by the seccomp filter, not by RLIMIT_NPROC (which spares root): the probe
    above checks this from inside. Here the same replies are scored as root and as nobody, where this
    machine's interpreter is usable by nobody."""
    require_isolation()
    if os.geteuid() != 0 or not _usable_by(65534):
        pytest.skip("needs root and an interpreter that an unprivileged user can run")
    import shutil

    shared = tmp_path / "shared"
    shutil.copytree(data, shared / "data")
    records = [{"id": row["id"], "model": f"b{j}", "reply": source}
               for row in read_split(data, "S-horizontal", "test").table.to_pylist()
               for j, source in enumerate(BORDERLINE)]
    replies = _replies(data, shared / "r.jsonl", records)
    for path in [tmp_path, shared, *shared.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o666)
    as_root = evaluate_table(shared / "data", replies, timeout=1.0)
    command = [sys.executable, "-m", "cogen", "eval", "programs", "-d", str(shared / "data"), "-p", str(replies),
               "--timeout", "1", "--json-out", str(shared / "nobody.json")]
    done = subprocess.run(command, user=65534, group=65534, extra_groups=[], capture_output=True, text=True,
                          cwd=shared, env={**os.environ, "HOME": str(shared)})
    assert done.returncode == 0, done.stderr
    as_nobody = json.loads((shared / "nobody.json").read_text())
    assert as_root["configs"]["S-horizontal"]["functions"] == as_nobody["configs"]["S-horizontal"]["functions"]


def test_the_isolation_is_reported_with_the_scores(data, tmp_path):
    row = read_split(data, "S-horizontal", "test").table.to_pylist()[0]
    replies = _replies(data, tmp_path / "r.jsonl", [{"id": row["id"], "model": "m", "reply": DOTS}])
    report = evaluate_table(data, replies, workers=1)
    expected = "none" if os.environ.get(UNSAFE_ENV) == "1" and not REQUIRED else "bubblewrap"
    assert report["configs"]["S-horizontal"]["sandbox"]["isolation"] == expected
    assert evaluate_table(data, replies, workers=1, unsafe=True)["configs"]["S-horizontal"]["sandbox"][
        "isolation"] == "none"
