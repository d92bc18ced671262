"""Time ``cogen view`` on a real build: start-up, the first page, filters, a deep page, and the
server's CPU time and peak memory (run it on a machine as quiet as you can get).

    cogen build --config C1-1 --out c1                        # 104,000 rows; train holds 100,000
    python benchmarks/bench_view.py c1 --config C1-1 --split train [--predictions preds.jsonl] [--browser]
    python benchmarks/bench_view.py --smoke      # one server on C1-1 built at scale 0.002 (seconds; the tests run it)

Each number is the best of ``--repeats`` fresh servers. *first page* is the wall time from
starting ``cogen view`` to the first page's rows answered (``/api/info`` then ``/api/rows``), what
the browser waits for (``--browser``: also from navigation to rows drawn in headless Chromium,
on the already running server); the server's CPU time is read from ``/proc``; its peak resident memory
(``VmHWM``) is read after every request below has been answered, predictions included.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request


def _get(url: str, path: str, **query) -> tuple[float, dict]:
    start = time.perf_counter()
    with urllib.request.urlopen(f"{url}{path}?{urllib.parse.urlencode(query)}", timeout=600) as response:
        payload = json.loads(response.read())
    return time.perf_counter() - start, payload


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float:
    status = open(f"/proc/{pid}/status").read()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def _browser_first_page(url: str) -> float:
    """Seconds from navigation start until headless Chromium has drawn the first page's rows."""
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("body[data-loaded] article.row", timeout=60_000)
        seconds = page.evaluate("(Number(document.body.dataset.loaded) - performance.timeOrigin) / 1000")
        browser.close()
    return seconds


def one_run(folder: str, config: str, split: str, predictions: str | None, browser: bool = False) -> dict:
    """Start a fresh server, time the requests, read its CPU time and peak memory, stop it."""
    command = [sys.executable, "-m", "cogen", "view", folder, "--config", config, "--split", split, "--no-browser"]
    if predictions:
        command += ["--predictions", predictions]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline()).group(0)
        started = time.perf_counter() - start
        _get(url, "api/info")
        page, rows = _get(url, "api/rows", config=config, split=split, limit=12)
        first_page = time.perf_counter() - start
        cpu_first = _cpu_seconds(process.pid)
        filters_s, filters = _get(url, "api/filters", config=config, split=split)
        sequence = filters["facets"][0]["values"][-1][0]
        filtered_s, _ = _get(url, "api/rows", config=config, split=split, limit=12, **{f"f.{filters['facets'][0]['name']}": sequence})
        deep_s, _ = _get(url, "api/rows", config=config, split=split, limit=12, offset=rows["total"] - 12)
        out = {"rows": rows["total"], "start_s": started, "first_page_s": first_page, "rows_request_s": page,
               "server_cpu_at_first_page_s": cpu_first, "filters_s": filters_s, "filtered_page_s": filtered_s,
               "last_page_s": deep_s}
        if browser:
            out["browser_first_page_s"] = _browser_first_page(url)
        if predictions:
            wrong_s, _ = _get(url, "api/rows", config=config, split=split, limit=12, wrong="1")
            out["wrong_only_page_s"] = wrong_s
        out["server_cpu_s"] = _cpu_seconds(process.pid)
        out["peak_rss_mb"] = _peak_rss_mb(process.pid)
        return out
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)


def smoke() -> None:
    """One fresh server on C1-1 built at scale 0.002, no browser."""
    import tempfile

    from cogen.pipeline import build

    with tempfile.TemporaryDirectory() as scratch:
        build("c1", scratch, scale=0.002, workers=1, only=["C1-1"])
        for key, value in one_run(scratch, "C1-1", "train", None).items():
            print(f"{key:28s} {value:,.3f}" if isinstance(value, float) else f"{key:28s} {value:,}")


def main() -> None:
    if sys.argv[1:] == ["--smoke"]:
        return smoke()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--config", required=True)
    parser.add_argument("--split", default="train")
    parser.add_argument("--predictions")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--browser", action="store_true", help="also time the first page drawn in headless Chromium")
    args = parser.parse_args()
    runs = [one_run(args.folder, args.config, args.split, args.predictions, args.browser) for _ in range(args.repeats)]
    best = {key: (runs[0][key] if key == "rows" else min(run[key] for run in runs)) for key in runs[0]}
    for key, value in best.items():
        print(f"{key:28s} {value:,.3f}" if isinstance(value, float) else f"{key:28s} {value:,}")


if __name__ == "__main__":
    main()
