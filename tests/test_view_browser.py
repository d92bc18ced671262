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

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from terminal import as_in_a_terminal
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


@contextlib.contextmanager
def _server(*args: str):
    """``cogen view`` started with ``args``; yields its URL, and stops it with Ctrl-C."""
    process = subprocess.Popen([sys.executable, "-m", "cogen", "view", *args, "--no-browser"], stdout=subprocess.PIPE,
                               text=True, preexec_fn=as_in_a_terminal)
    try:
        yield re.search(r"http://127\.0\.0\.1:\d+/", process.stdout.readline()).group(0)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium, driven by Playwright."""
    sync_playwright = _browser_or_skip()
    with sync_playwright() as playwright:
        # Playwright starts Chromium with a fresh, empty profile of its own (its --user-data-dir).
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _open(browser, url: str):
    """A fresh page (a new context: no history, no storage) at ``url``, once it has drawn everything."""
    page = browser.new_context(viewport={"width": 1280, "height": 860}).new_page()
    page.goto(url)
    page.wait_for_selector("body[data-scored]", timeout=60_000)
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory, browser):
    """``cogen view`` started on the tiny build with mixed predictions; yields its page and the data."""
    root = tmp_path_factory.mktemp("browser")
    folder = build_tiny(root / "data")
    written = mixed_predictions(folder, root / "preds.jsonl")
    with _server(str(folder), "--predictions", str(root / "preds.jsonl")) as url:
        page = _open(browser, url)
        page.url_root = url
        yield page, folder, written, root


def _shot(page, root: Path, name: str) -> Path:
    """A screenshot of the viewport; ``COGEN_VIEW_SCREENSHOTS=<folder>`` also keeps it there (docs/images)."""
    path = root / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    folder = os.environ.get("COGEN_VIEW_SCREENSHOTS")
    if folder:
        from PIL import Image

        Image.open(path).convert("RGB").quantize(colors=64).save(Path(folder) / f"{name}.png", optimize=True)
    return path


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
    page.evaluate("window.scrollTo(0, 0)")  # an earlier test jumped to a row further down
    path = root / "view.png"
    page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": 1280, "height": 860})
    assert path.stat().st_size > 10_000
    target = os.environ.get("COGEN_VIEW_SCREENSHOT")
    if target:  # the README's image: the same pixels in a 64-colour palette, a few times smaller
        from PIL import Image

        Image.open(path).convert("RGB").quantize(colors=64).save(target, optimize=True)


def _status(page) -> str:
    return page.text_content("#status")


def _in_view(page, selector: str) -> bool:
    """True when the element's top is on screen, below the sticky header."""
    return page.evaluate(f"""(() => {{
        const box = document.querySelector("{selector}").getBoundingClientRect();
        const header = document.querySelector("header").getBoundingClientRect().bottom;
        return box.top >= header - 1 && box.top < window.innerHeight;
    }})()""")


def test_a_link_to_a_wrong_row_opens_that_row_in_a_fresh_browser(site, browser):
    page, folder, written, root = site
    wrong = sorted(wrong_ids(folder, written), key=lambda name: int(name.rsplit("-", 1)[1]))
    target = wrong[-2]  # far down: on a later page of the wrong rows
    link = f"{page.url_root}?config={CONFIG}&split=test_ood&wrong=1&row={target}"
    fresh = _open(browser, link)
    try:
        selector = f"article.row.focus[data-id='{target}']"
        assert fresh.is_visible(selector) and _in_view(fresh, selector)
        assert fresh.is_checked("#wrong") and all(r["wrong"] for r in fresh.evaluate(READ_ROWS))
        assert "page=" in fresh.url and f"row={target}" in fresh.url
        _shot(fresh, root, "view-link-to-wrong-row")
        fresh.reload()  # a reload keeps the view
        fresh.wait_for_selector(selector, timeout=30_000)
    finally:
        fresh.context.close()


def test_keys_page_and_the_address_follows_so_back_and_reload_restore(site, browser):
    page, _, _, root = site
    fresh = _open(browser, f"{page.url_root}?config={CONFIG}&split=test_ood")
    try:
        assert _status(fresh).startswith("rows 1-12 of 30")
        for key, expected in (("ArrowRight", "rows 13-24"), ("j", "rows 25-30"), ("k", "rows 13-24"),
                              ("ArrowLeft", "rows 1-12"), ("j", "rows 13-24")):
            before = _loaded(fresh)
            fresh.keyboard.press(key)
            _after(fresh, before)
            assert _status(fresh).startswith(expected), (key, _status(fresh))
        assert "page=2" in fresh.url
        fresh.reload()
        fresh.wait_for_selector("body[data-scored]")
        assert _status(fresh).startswith("rows 13-24")
        before = _loaded(fresh)
        fresh.go_back()  # the page before the last key: Back walks the views
        _after(fresh, before)
        assert _status(fresh).startswith("rows 1-12") and "page=" not in fresh.url
        before = _loaded(fresh)
        fresh.keyboard.press("w")
        _after(fresh, before)
        assert fresh.is_checked("#wrong") and "wrong=1" in fresh.url
        assert all(r["wrong"] for r in fresh.evaluate(READ_ROWS))
        fresh.keyboard.press("/")
        assert fresh.evaluate("document.activeElement.id") == "jump"
        fresh.keyboard.press("Escape")
        assert fresh.evaluate("[...document.querySelectorAll('.bar')].every((b) => b.tabIndex === -1)")
        values = fresh.evaluate("[...document.querySelectorAll('.bar')].map((b) => b.textContent)")
        accuracies = [float(re.search(r"([\d.]+) %", v).group(1)) for v in values]
        assert accuracies == sorted(accuracies) and len(accuracies) == 2  # worst first
        _shot(fresh, root, "view-keys-wrong-only")
    finally:
        fresh.context.close()


def test_a_malformed_prediction_is_drawn_as_written_with_its_bad_cells_hatched(site, browser):
    page, folder, _, root = site
    rows = list(stored_rows(folder, CONFIG, "test_ood"))
    odd = {rows[0]: [[1, 12], [3, -1]], rows[1]: [[1, 2], [3]], rows[2]: "[[1, 2], [3, 4]]"}
    path = root / "odd.jsonl"
    path.write_text("".join(json.dumps({"id": k, "prediction": v}) + "\n" for k, v in odd.items()))
    with _server(str(folder), "--predictions", str(path)) as url:
        fresh = _open(browser, f"{url}?config={CONFIG}&split=test_ood")
        try:
            drawn = fresh.evaluate("""[...document.querySelectorAll('article.row')].slice(0, 3).map((row) => {
                const item = row.querySelector('.item[data-kind=written]');
                return { bad: item ? item.querySelectorAll('i.bad').length : -1, gap: item ? item.querySelectorAll('i.gap').length : -1,
                         json: item && item.querySelector('.json') ? item.querySelector('.json').textContent : null,
                         note: item ? [...item.querySelectorAll('.note')].map((n) => n.textContent).join(' ') : '' };
            })""")
            assert drawn[0]["bad"] == 2 and "value outside 0-9" in drawn[0]["note"]
            assert drawn[1]["gap"] == 1 and "ragged rows" in drawn[1]["note"]
            assert drawn[2]["json"] == "[[1, 2], [3, 4]]" and "string" in drawn[2]["note"]
            _shot(fresh, root, "view-malformed-predictions")
        finally:
            fresh.context.close()


@pytest.fixture(scope="module")
def carc_site(tiny_carc, browser):
    with _server(str(tiny_carc), "--config", "carc-systematicity-1860") as url:
        yield url


def test_compositional_arc_s_held_out_splits_are_out_of_domain(carc_site, browser, tmp_path):
    page = _open(browser, carc_site)
    try:
        splits = "[...document.querySelectorAll('#split option')].map((option) => option.textContent)"
        labels = dict(s.split(" (", 1) for s in page.evaluate(splits))
        assert list(labels) == ["train", "validation", "test"] and labels["train"].startswith("in-domain")
        assert labels["validation"].startswith("out-of-domain") and labels["test"].startswith("out-of-domain")
        _settled(page, lambda: page.select_option("#domain", "out-of-domain"))
        assert [s.split(" ")[0] for s in page.evaluate(splits)] == ["validation", "test"]
        assert page.text_content("#message") == "" and "domain=out-of-domain" in page.url
        ids = [row["id"] for row in page.evaluate(READ_ROWS)]
        assert ids and all("-validation-" in name for name in ids)
        _shot(page, tmp_path, "view-carc-out-of-domain")
        _settled(page, lambda: page.select_option("#split", "test"))
        assert all("-test-" in row["id"] for row in page.evaluate(READ_ROWS))
    finally:
        page.context.close()
