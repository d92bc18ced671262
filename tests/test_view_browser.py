"""``cogen view`` in a real headless browser (Debian's Chromium, driven by Playwright).

The test starts ``cogen view`` on a tiny build with a predictions file, then reads what the page
*drew*: every cell's computed colour, mapped back through the ARC palette, compared with the
stored rows read from the Parquet files (not with the JSON the server sent). It checks that
"wrong only" lists exactly the rows ``cogen eval`` counts as wrong, that the sequence filter
and a click on the accuracy bar keep only matching rows, and saves a screenshot
(``COGEN_VIEW_SCREENSHOT=path`` also writes it there: the README's image is made so).

Skipped, with the reason, where Chromium or Playwright is missing, unless
``COGEN_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from view_helpers import CONFIG, build_tiny, mixed_predictions, stored_rows, wrong_ids

from cogen.palette import ARC_RGB

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("COGEN_CHROMIUM", "/usr/bin/chromium")
#: Flags that keep Chromium quiet on a closed network (no background connections, no updates).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
COLOUR = {f"rgb({r}, {g}, {b})": k for k, (r, g, b) in enumerate(ARC_RGB)}

#: Reads every drawn row back from the page: per row, per grid item, its label and cell colours.
READ_ROWS = """() => [...document.querySelectorAll('article.row')].map((row) => ({
  id: row.dataset.id,
  wrong: row.classList.contains('wrong'),
  items: [...row.querySelectorAll('.item[data-kind=grid]')].map((item) => {
    const grid = item.querySelector('.grid');
    const cols = Number(grid.dataset.cols);
    const cells = [...grid.children].map((cell) => getComputedStyle(cell).backgroundColor);
    const rows = [];
    for (let r = 0; r < cells.length / cols; r++) rows.push(cells.slice(r * cols, (r + 1) * cols));
    return { label: item.dataset.label, rows, marked: [...grid.children].map((c, k) => c.classList.contains('wrong') ? k : -1).filter((k) => k >= 0) };
  }),
}))"""


def _browser_or_skip():
    required = os.environ.get("COGEN_REQUIRE_BROWSER") == "1"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if required:
            raise
        pytest.skip("Playwright for Python is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).is_file():
        if required:
            pytest.fail(f"COGEN_REQUIRE_BROWSER=1 but there is no Chromium at {CHROMIUM} (apt-get install chromium)")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set COGEN_CHROMIUM)")
    return sync_playwright


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """``cogen view`` started on the tiny build with mixed predictions; yields its URL and the data."""
    sync_playwright = _browser_or_skip()
    root = tmp_path_factory.mktemp("browser")
    folder = build_tiny(root / "data")
    written = mixed_predictions(folder, root / "preds.jsonl")
    process = subprocess.Popen([sys.executable, "-m", "cogen", "view", str(folder), "--predictions",
                                str(root / "preds.jsonl"), "--no-browser"], stdout=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline()).group(0)
        with sync_playwright() as playwright:
            # Playwright starts Chromium with a fresh, empty profile of its own (its --user-data-dir).
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            page.goto(url)
            page.wait_for_selector("body[data-ready]", timeout=60_000)
            yield page, folder, written, root
            browser.close()
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def _loaded(page) -> str:
    return page.evaluate("document.body.dataset.loaded")


def _after(page, before: str, timeout: float = 30.0) -> None:
    """Wait until the page has drawn an answer newer than ``before`` (polled from here: the page's
    Content-Security-Policy forbids the string evaluation that Playwright's wait_for_function uses)."""
    end = time.monotonic() + timeout
    while _loaded(page) == before:
        assert time.monotonic() < end, "the page drew nothing new"
        time.sleep(0.05)


def _settled(page, action) -> None:
    """Do ``action`` (which reloads the split) and wait until the page has drawn all of it."""
    before = page.evaluate("document.body.dataset.settled")
    action()
    end = time.monotonic() + 30
    while page.evaluate("document.body.dataset.settled") == before:
        assert time.monotonic() < end, "the page did not settle"
        time.sleep(0.05)


def _reset(page, split: str = "test_ood") -> None:
    """Clear every filter and open ``split``."""
    _settled(page, lambda: page.click("#clear"))
    if page.input_value("#split") != split:
        _settled(page, lambda: page.select_option("#split", split))


def _drawn(page) -> list[dict]:
    return [{**row, "items": {item["label"]: {**item, "cells": [[COLOUR[c] for c in line] for line in item["rows"]]}
                              for item in row["items"]}}
            for row in page.evaluate(READ_ROWS)]


def _every_page(page) -> list[dict]:
    rows = _drawn(page)
    while page.evaluate("(() => { const t = document.getElementById('status').textContent.match(/(\\d+)-(\\d+) of (\\d+)/);"
                        " return t && Number(t[2]) < Number(t[3]); })()"):
        with_answer = _loaded(page)
        page.click("#next")
        _after(page, with_answer)
        rows += _drawn(page)
    return rows


def _choose(page, selector: str, value: str) -> None:
    before = _loaded(page)
    page.select_option(selector, value)
    _after(page, before)


def test_drawn_cells_are_the_stored_cells(site):
    page, folder, written, _ = site
    stored = stored_rows(folder, CONFIG, "test_ood")
    rows = _drawn(page)
    assert len(rows) == 12
    for row in rows:
        truth, items = stored[row["id"]], row["items"]
        assert items["input"]["cells"] == truth["input"] and items["output"]["cells"] == truth["output"]
        for step, frame in enumerate(truth["frames"][1:], start=1):
            assert items[f"step {step}"]["cells"] == frame
        prediction = written.get(row["id"])
        if prediction is None:
            assert "prediction" not in items
        else:
            assert items["prediction"]["cells"] == prediction
            differ = [r * len(prediction[0]) + c for r, line in enumerate(prediction) for c, v in enumerate(line)
                      if r >= len(truth["output"]) or c >= len(truth["output"][0]) or v != truth["output"][r][c]]
            assert items["prediction"]["marked"] == differ


def test_wrong_only_shows_exactly_the_rows_cogen_eval_counts_wrong(site):
    from cogen.eval import evaluate

    page, folder, written, root = site
    _reset(page)
    before = _loaded(page)
    page.check("#wrong")
    _after(page, before)
    shown = _every_page(page)
    metrics = evaluate(folder, CONFIG, "test_ood", root / "preds.jsonl")
    ids = [row["id"] for row in shown]
    assert len(ids) == len(set(ids)) == sum(metrics["errors"].values())
    assert set(ids) == wrong_ids(folder, written) and all(row["wrong"] for row in shown)


def test_a_click_on_a_sequence_bar_shows_its_failures(site):
    page, folder, written, _ = site
    _reset(page)
    sequence = page.get_attribute(".bar >> nth=0", "data-value")
    before = _loaded(page)
    page.click(".bar >> nth=0")
    _after(page, before)
    shown = {row["id"] for row in _every_page(page)}
    stored = stored_rows(folder, CONFIG, "test_ood")
    expected = {k for k in wrong_ids(folder, written) if " -> ".join(stored[k]["transformations"]) == sequence}
    assert shown == expected and expected


def test_the_sequence_filter_shows_only_matching_rows(site):
    page, folder, _, _ = site
    _reset(page, "train")
    stored = stored_rows(folder, CONFIG, "train")
    sequences = sorted({" -> ".join(r["transformations"]) for r in stored.values()})
    assert len(sequences) == 3
    for sequence in sequences:
        _choose(page, "#facet-sequence", sequence)
        rows = _every_page(page)
        assert {row["id"] for row in rows} == {k for k, r in stored.items() if " -> ".join(r["transformations"]) == sequence}
        for row in rows:
            assert row["items"]["input"]["cells"] == stored[row["id"]]["input"]
        _choose(page, "#facet-sequence", "")


def test_the_domain_filter_lists_only_its_splits(site):
    page = site[0]
    _reset(page)
    splits = "[...document.querySelectorAll('#split option')].map((option) => option.value)"
    assert page.evaluate(splits) == ["train", "validation", "test", "validation_ood", "test_ood"]
    for domain, names in [("out-of-domain", ["validation_ood", "test_ood"]), ("in-domain", ["train", "validation", "test"])]:
        _settled(page, lambda domain=domain: page.select_option("#domain", domain))
        assert page.evaluate(splits) == names and page.input_value("#split") in names
    _settled(page, lambda: page.select_option("#domain", ""))


def test_a_jump_to_a_row_id_shows_it(site):
    page, _, _, _ = site
    _reset(page)
    page.fill("#jump", f"{CONFIG}-test_ood-17")
    before = _loaded(page)
    page.press("#jump", "Enter")
    _after(page, before)
    assert page.is_visible(f"article.row.focus[data-id='{CONFIG}-test_ood-17']")


def test_screenshot(site):
    page, _, _, root = site
    _reset(page)
    path = root / "view.png"
    page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": 1280, "height": 860})
    assert path.stat().st_size > 10_000
    target = os.environ.get("COGEN_VIEW_SCREENSHOT")
    if target:  # the README's image: the same pixels in a 64-colour palette, a few times smaller
        from PIL import Image

        Image.open(path).convert("RGB").quantize(colors=64).save(target, optimize=True)
