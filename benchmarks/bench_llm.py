"""Measure ``cogen prompts run`` against the loopback stand-in server (``tests/fake_openai.py``).

    python benchmarks/bench_llm.py clients            # the HTTP client choice: stdlib vs httpx vs openai
    python benchmarks/bench_llm.py runner             # cogen prompts run at --concurrency 1, 8, 32
    python benchmarks/bench_llm.py inspect            # the same prompts through Inspect AI's eval
    python benchmarks/bench_llm.py resume             # a run stopped at half and resumed: the server's log
    python benchmarks/bench_llm.py                    # all three
    python benchmarks/bench_llm.py --smoke            # every section, tiny, in seconds

The server runs in a process of its own and answers every request after ``--delay`` seconds (0: the
runner's own cost; a real model's latency only stretches the wall time). What is measured is the
client's process: its CPU seconds (user + system, every thread) read from the kernel when it ends,
per 1,000 replies, and replies per second of wall time. ``clients`` posts ``--requests`` copies of a
15 kB prompt (a COGITAO prompt's size) from ``--concurrency`` threads (or asyncio tasks) with each
client; ``runner`` and ``inspect`` send the prompts of a real split (``--data``/``--config``/``--split``,
or a small COGITAO build made in a temporary folder), each in a fresh output folder, and report the
sending phase (``run.json``'s ``timing``) beside the whole command. Numbers are medians of ``--repeats``.
``--smoke`` sends a tiny programs build (no compiled kernels to load) once at one concurrency.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "fake_openai.py"
PROMPT = "Grid puzzle. " + " ".join(["[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]"] * 450)  # about 15 kB, like a COGITAO prompt
TINY_SPEC = """\
setting: L
seed: 3
defaults:
  grid: {height: [5, 6], width: [5, 6]}
  objects: {count: [1, 1], where: {is_shape_fully_connected: true, rows: [1, 2], cols: [1, 2]}}
  sizes: {train: 60, validation: 2, test: 4, validation_ood: 2, test_ood: SIZE}
experiments:
  L-1:
    in_domain: {sequences: [[rot90], [translate_up], [mirror_horizontal], [rot90, translate_up]]}
    out_of_domain: {sequences: [[translate_up, mirror_horizontal]]}
"""

SMOKE_SPEC = "setting: sm\nfamily: programs\nseed: 1\nfunctions: 4\nsettings: [horizontal]\n"


# ---------------------------------------------------------------- the stand-in server
class Server:
    """``tests/fake_openai.py`` in a process of its own."""

    def __init__(self, delay: float, answers: Path | None = None, log: Path | None = None):
        command = [sys.executable, str(SERVER), "--delay", str(delay)]
        command += ["--answers", str(answers)] if answers else []
        command += ["--log", str(log)] if log else []
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        self.url = self.process.stdout.readline().strip()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(10)


def _child(command: list[str], env: dict | None = None) -> tuple[float, float, str]:
    """Run ``command``; its wall seconds, CPU seconds (user + system, all threads) and stdout."""
    before = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:6])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, _children_cpu() - before, done.stdout


def _children_cpu() -> float:
    """CPU seconds (user + system) of every child process that has ended."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------- clients
CLIENT_CODE = r'''
import json, sys, threading, time
kind, url, n, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
prompt = sys.argv[5]
start = time.perf_counter()
if kind == "stdlib":
    from cogen.llm.client import ChatClient
elif kind.startswith("httpx"):
    import httpx
else:
    import openai
imported = time.perf_counter() - start
body = {"model": "stand-in", "messages": [{"role": "user", "content": prompt}], "max_tokens": 100}
done = []

def threads(call):
    lock, next_job = threading.Lock(), iter(range(n))
    def work():
        while True:
            with lock:
                job = next(next_job, None)
            if job is None:
                return
            done.append(call())
    pool = [threading.Thread(target=work) for _ in range(concurrency)]
    [t.start() for t in pool]; [t.join() for t in pool]

if kind == "stdlib":
    client = ChatClient(url)
    threads(lambda: client.complete(body).text)
elif kind == "httpx":
    client = httpx.Client(limits=httpx.Limits(max_connections=concurrency), timeout=600)
    threads(lambda: client.post(url + "/chat/completions", json=body).json()["choices"][0]["message"]["content"])
elif kind == "openai":
    client = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
    threads(lambda: client.chat.completions.create(**body).choices[0].message.content)
else:
    import asyncio
    async def main():
        semaphore = asyncio.Semaphore(concurrency)
        if kind == "httpx-async":
            client = httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency), timeout=600)
            async def one():
                async with semaphore:
                    r = await client.post(url + "/chat/completions", json=body)
                    return r.json()["choices"][0]["message"]["content"]
        else:
            client = openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0)
            async def one():
                async with semaphore:
                    r = await client.chat.completions.create(**body)
                    return r.choices[0].message.content
        return await asyncio.gather(*(one() for _ in range(n)))
    done = asyncio.run(main())
assert len(done) == n and all(isinstance(t, str) for t in done)
print(json.dumps({"import_s": imported, "send_s": time.perf_counter() - start - imported}))
'''

CLIENTS = ("stdlib", "httpx", "openai", "httpx-async", "openai-async")
SMOKE_CLIENTS = ("stdlib", "httpx")


def bench_clients(args) -> None:
    print(f"## HTTP clients: {args.requests} requests of {len(PROMPT) / 1000:.0f} kB at concurrency "
          f"{args.concurrency}, server delay {args.delay} s (median of {args.repeats})")
    print("| client | import s | replies/s | CPU-s per 1,000 replies (whole process) |")
    print("|---|---:|---:|---:|")
    results = {kind: [] for kind in (SMOKE_CLIENTS if args.smoke else CLIENTS)}
    with Server(args.delay) as server:
        for _ in range(args.repeats):
            for kind in results:  # interleaved: every repeat runs each client once
                wall, cpu, out = _child([sys.executable, "-c", CLIENT_CODE, kind, server.url, str(args.requests),
                                         str(args.concurrency), PROMPT], {"PYTHONPATH": str(ROOT)})
                found = json.loads(out)
                results[kind].append((found["import_s"], args.requests / found["send_s"], 1000 * cpu / args.requests))
    for kind, runs in results.items():
        imported, rate, cpu = (statistics.median(r[i] for r in runs) for i in range(3))
        print(f"| {kind} | {imported:.2f} | {rate:,.0f} | {cpu:.2f} |")


# ---------------------------------------------------------------- a split to send
def _data(args, workdir: Path) -> tuple[str, str, str]:
    if args.data:
        return args.data, args.config, args.split
    spec = workdir / "tiny.yaml"
    if args.smoke:  # a programs build needs no compiled kernels: the smoke run takes seconds
        spec.write_text(SMOKE_SPEC)
        subprocess.run([sys.executable, "-m", "cogen", "build", "--config", str(spec), "--out", str(workdir / "data"),
                        "--workers", "1"], check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        return str(workdir / "data"), "sm-horizontal", "test"
    spec.write_text(TINY_SPEC.replace("SIZE", str(args.rows)))
    subprocess.run([sys.executable, "-m", "cogen", "build", "--config", str(spec), "--out", str(workdir / "data"),
                    "--workers", "1"], check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return str(workdir / "data"), "L-1", "test_ood"


def _answers(data: str, config: str, split: str, workdir: Path) -> Path:
    """{prompt text: [id, right reply]} for the stand-in server: the target baseline of the split."""
    sys.path.insert(0, str(ROOT))
    from cogen.eval import baseline_records
    from cogen.folder import read_split
    from cogen.llm import make_prompts
    from cogen.llm.prompts import format_grid

    made = make_prompts(data, config, split)
    right = dict(baseline_records(read_split(data, config, split), "target", **made.eval_options))
    grids = made.record.load("reply_parser") is not None
    answers = {p.prompt: [p.id, format_grid(right[p.id]) if grids else right[p.id]] for p in made.prompts}
    path = workdir / "answers.json"
    path.write_text(json.dumps(answers))
    return path


def bench_runner(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        data, config, split = _data(args, workdir)
        answers = _answers(data, config, split, workdir)
        count = len(json.loads(answers.read_text()))
        if not args.runner:
            return _bench_inspect(args, data, config, split, workdir, server_delay=args.delay, answers=answers,
                                  count=count)
        print(f"## cogen prompts run: {count} prompts of {config} {split}, server delay {args.delay} s "
              f"(median of {args.repeats})")
        print("| concurrency | replies/s (sending) | CPU-s per 1,000 replies (sending) | whole command: wall s | "
              "whole command: CPU-s |")
        print("|---:|---:|---:|---:|---:|")
        rows = {c: [] for c in args.levels}
        with Server(args.delay, answers) as server:
            for repeat in range(args.repeats):
                for concurrency in args.levels:
                    out = workdir / f"run-{concurrency}-{repeat}"
                    wall, cpu, _ = _child([sys.executable, "-m", "cogen", "prompts", "run", "-d", data, "-c", config,
                                           "-s", split, "--base-url", server.url, "--model", "stand-in", "--out",
                                           str(out), "--concurrency", str(concurrency), "--no-progress"],
                                          {"PYTHONPATH": str(ROOT)})
                    timing = json.loads((out / "run.json").read_text())["timing"]
                    rows[concurrency].append((timing["replies"] / timing["send_wall_s"],
                                              1000 * timing["send_cpu_s"] / timing["replies"], wall, cpu))
        for concurrency, runs in rows.items():
            rate, cpu, wall, total = (statistics.median(r[i] for r in runs) for i in range(4))
            print(f"| {concurrency} | {rate:,.0f} | {cpu:.2f} | {wall:.2f} | {total:.2f} |")
        if args.inspect:
            _bench_inspect(args, data, config, split, workdir, server_delay=args.delay, answers=answers, count=count)


INSPECT_CODE = r'''
import json, sys, time
from inspect_ai import eval as inspect_eval
from cogen.llm.inspect_tasks import family_task
data, config, split, concurrency, logs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
score = sys.argv[6] == "score"
start = time.process_time(); wall = time.perf_counter()
from cogen.folder import read_split
task = family_task(read_split(data, config, split).family)(data=data, config=config, split=split)
log, = inspect_eval(task, model="openai-api/standin/stand-in", max_connections=concurrency, log_dir=logs,
                    display="none", max_retries=0, score=score)
assert log.status == "success", log.status
assert not score or log.results.scores
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - start,
                  "samples": len(log.samples or [])}))
'''


def _bench_inspect(args, data, config, split, workdir, server_delay, answers, count) -> None:
    print(f"\n## The same prompts through Inspect AI's eval (inspect_ai, openai-api provider), server delay "
          f"{server_delay} s (median of {args.repeats})")
    print("| max connections | scored | replies/s (eval call) | CPU-s per 1,000 replies (eval call) | "
          "whole process: wall s | whole process: CPU-s |")
    print("|---:|---|---:|---:|---:|---:|")
    variants = [(c, scored) for c in args.levels for scored in (("score",) if args.smoke else ("score", "no-score"))]
    rows = {variant: [] for variant in variants}
    with Server(server_delay, answers) as server:
        for repeat in range(args.repeats):
            for concurrency, scored in variants:
                wall, cpu, out = _child([sys.executable, "-c", INSPECT_CODE, data, config, split, str(concurrency),
                                         str(workdir / f"logs-{concurrency}-{scored}-{repeat}"), scored],
                                        {"PYTHONPATH": str(ROOT), "STANDIN_BASE_URL": server.url,
                                         "STANDIN_API_KEY": "none", "INSPECT_LOG_LEVEL": "error"})
                found = json.loads(out.strip().splitlines()[-1])
                rows[concurrency, scored].append((count / found["wall"], 1000 * found["cpu"] / count, wall, cpu))
    for (concurrency, scored), runs in rows.items():
        rate, cpu, wall, total = (statistics.median(r[i] for r in runs) for i in range(4))
        print(f"| {concurrency} | {'yes' if scored == 'score' else 'no (--no-score)'} | {rate:,.0f} | {cpu:.2f} | "
              f"{wall:.2f} | {total:.2f} |")


def bench_resume(args) -> None:
    """A run stopped at about half (SIGINT, as Ctrl-C, then SIGKILL) and resumed: the stand-in's log, per id."""
    import collections
    import signal

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        data, config, split = _data(args, workdir)
        answers = _answers(data, config, split, workdir)
        names = [name for name, _ in json.loads(answers.read_text()).values()][: args.resume_prompts]
        print(f"## A run stopped at about half and resumed: {len(names)} prompts of {config} {split}, concurrency 8, "
              f"server delay {args.resume_delay} s")
        for stop in (signal.SIGINT, signal.SIGKILL):
            log, out = workdir / f"server-{stop.name}.jsonl", workdir / f"run-{stop.name}"
            command = [sys.executable, "-m", "cogen", "prompts", "run", "-d", data, "-c", config, "-s", split,
                       "--model", "stand-in", "--out", str(out), "--concurrency", "8", "--no-progress",
                       "--limit", str(len(names))]
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            with Server(args.resume_delay, answers, log) as server:
                first = subprocess.Popen([*command, "--base-url", server.url], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, env=env)
                replies = out / "replies.jsonl"
                while first.poll() is None and not (replies.exists() and
                                                    replies.read_bytes().count(b"\n") >= len(names) // 2):
                    time.sleep(0.02)
                kept_at_stop = replies.read_bytes().count(b"\n")
                first.send_signal(stop)
                _, err = first.communicate()
                stopped_at = time.time()
                second = subprocess.run([*command, "--base-url", server.url], capture_output=True, text=True, env=env)
            entries = [json.loads(line) for line in log.read_text().splitlines()]
            before = [e for e in entries if e["t"] <= stopped_at]
            answered = collections.Counter(e["id"] for e in entries if e["status"] == 200)
            kept = [json.loads(line) for line in (out / "replies.jsonl").read_text().splitlines()]
            print(f"\n{stop.name} after {kept_at_stop} replies: exit {first.returncode}"
                  + (f" ({err.strip().splitlines()[-1]})" if err.strip() else ""))
            print(f"  first run: {len(before)} requests answered; the resumed run (exit {second.returncode}): "
                  f"{len(entries) - len(before)} requests")
            print(f"  answers per id over both runs: {dict(sorted(collections.Counter(answered.values()).items()))} "
                  f"(count: ids); ids never answered: {len(set(names) - set(answered))}")
            print(f"  replies.jsonl: {len(kept)} lines, {len({r['id'] for r in kept})} distinct ids; "
                  f"asked twice: {sorted(name for name, n in answered.items() if n > 1)}")
            print("  server log around the stop (t, id, status):")
            around = [k for k, e in enumerate(entries) if e["t"] > stopped_at][:1] or [len(entries)]
            for e in entries[max(0, around[0] - 3): around[0] + 3]:
                print(f"    {e['t']:.3f} {e['id']} {e['status']}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("section", nargs="?", default="all", choices=("all", "clients", "runner", "inspect", "resume"))
    parser.add_argument("--smoke", action="store_true", help="every section, tiny, in seconds")
    parser.add_argument("--requests", type=int, default=2000, help="requests per client (clients)")
    parser.add_argument("--concurrency", type=int, default=8, help="threads or tasks per client (clients)")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32], help="concurrency levels (runner, inspect)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds the server waits before each answer")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=1000, help="test_ood rows of the small build made when no --data")
    parser.add_argument("--data", help="a built dataset folder (default: a small COGITAO build in a temporary folder)")
    parser.add_argument("--resume-prompts", type=int, default=200, help="prompts of the stopped run (resume)")
    parser.add_argument("--resume-delay", type=float, default=0.05, help="server delay of the stopped run (resume)")
    parser.add_argument("--config", default="L-1")
    parser.add_argument("--split", default="test_ood")
    args = parser.parse_args(argv)
    if args.smoke:
        args.requests, args.repeats, args.levels, args.resume_prompts = 20, 1, [4], 4
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs; python {sys.version.split()[0]}\n")
    if args.section in ("all", "clients"):
        bench_clients(args)
        print()
    args.inspect = args.section in ("all", "inspect")
    args.runner = args.section in ("all", "runner")
    if args.section in ("all", "runner", "inspect"):
        bench_runner(args)
    if args.section in ("all", "resume"):
        print()
        bench_resume(args)


if __name__ == "__main__":
    main()
