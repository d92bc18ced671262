// cogen view: the page. Plain JavaScript, no library. Every string from the server is put in the
// document with textContent (never as markup), so text from data or predictions files stays text.
//
// The page's state (config, split, domain, filters, wrong-only, error type, page, focused row) lives in
// the address: every change pushes it, so Back, reload and a shared link open the same view.
// body[data-ready] is set when a split's first page and filters are drawn, body[data-scored] once its
// predictions' verdicts are drawn too (at once when the split has none), body[data-loaded] at every answer.
"use strict";

const PAGE = 12;
const state = { info: null, config: null, split: null, domain: "", offset: 0, total: 0, facets: {}, wrong: false,
                error: "", focus: null, filters: null, scored: false };
const $ = (id) => document.getElementById(id);
let pendingTimer = null;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function api(path, params) {
  const query = new URLSearchParams(params || {});
  const response = await fetch(`/api/${path}?${query}`);
  const payload = await response.json();
  if (!response.ok) throw new Error(payload.error || response.statusText);
  return payload;
}

function say(text) { $("message").textContent = text || ""; }

// ------------------------------------------------------------------ the address holds the state
function addressParams() {
  const p = new URLSearchParams();
  if (state.config) p.set("config", state.config);
  if (state.split) p.set("split", state.split);
  if (state.domain) p.set("domain", state.domain);
  for (const [name, value] of Object.entries(state.facets)) if (value) p.set("f." + name, value);
  if (state.wrong) p.set("wrong", "1");
  if (state.error) p.set("error", state.error);
  if (state.offset) p.set("page", String(Math.floor(state.offset / PAGE) + 1));
  if (state.focus) p.set("row", state.focus);
  return p;
}

function remember(replace) {
  const url = `${location.pathname}?${addressParams()}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (replace) history.replaceState(null, "", url); else history.pushState(null, "", url);
}

function readAddress() {
  const p = new URLSearchParams(location.search);
  const configs = state.info.configs;
  const config = configs.find((c) => c.name === p.get("config"));
  state.config = config ? config.name : state.info.start.config;
  const splits = configInfo().splits.map((s) => s.name);
  state.domain = ["in-domain", "out-of-domain"].includes(p.get("domain")) ? p.get("domain") : "";
  const wanted = p.get("split") || (config ? null : state.info.start.split);
  state.split = splits.includes(wanted) ? wanted : null;
  state.facets = {};
  for (const [name, value] of p) if (name.startsWith("f.") && value) state.facets[name.slice(2)] = value;
  state.wrong = p.get("wrong") === "1";
  state.error = p.get("error") || "";
  const page = Number.parseInt(p.get("page") || "1", 10);
  state.offset = Number.isFinite(page) && page > 1 ? (page - 1) * PAGE : 0;
  state.focus = p.get("row") || null;
}

// ------------------------------------------------------------------ drawing
function drawGrid(cells, marks, bad) {
  const rows = cells.length, cols = Math.max(0, ...cells.map((row) => row.length));
  const grid = el("div", "grid" + (rows > 20 || cols > 20 ? " large" : ""));
  grid.style.gridTemplateColumns = `repeat(${cols}, auto)`;
  grid.dataset.rows = rows;
  grid.dataset.cols = cols;
  const wrong = new Set((marks || []).map(([r, c]) => r * 1000 + c));
  const written = new Map((bad || []).map(([r, c, value]) => [r * 1000 + c, value]));
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let cell;
      if (c >= cells[r].length) {
        cell = el("i", "gap");                       // a short row of a ragged prediction
      } else if (written.has(r * 1000 + c)) {
        cell = el("i", "bad");                       // a value that is no colour 0-9, hatched
        cell.title = written.get(r * 1000 + c);
      } else {
        const value = Number(cells[r][c]);
        cell = el("i", "c" + (value >= 0 && value <= 9 ? value : 0) + (wrong.has(r * 1000 + c) ? " wrong" : ""));
      }
      grid.appendChild(cell);
    }
  }
  return grid;
}

function drawItem(item) {
  if (item.kind === "arrow") return el("div", "arrow", item.label);
  const box = el("div", "item");
  box.dataset.kind = item.kind;
  box.dataset.label = item.label;
  if (item.kind === "grid") {
    if (item.marks) {
      box.classList.add(item.right ? "prediction-right" : "prediction-wrong");
      box.dataset.prediction = "1";
    }
    box.appendChild(drawGrid(item.cells, item.marks));
  } else if (item.kind === "written") {          // a malformed prediction, as the model wrote it
    box.classList.add("prediction-wrong");
    box.appendChild(item.rows ? drawGrid(item.rows, [], item.bad) : el("pre", "json", item.json));
  } else if (item.kind === "text") {
    box.appendChild(el("div", "text", item.text));
  } else {
    box.appendChild(el("div", "missing", item.text));
  }
  box.appendChild(el("span", "label", item.label));
  if (item.note) box.appendChild(el("span", "note", item.note));
  if (item.kind === "written") box.appendChild(el("span", "note", item.text));
  return box;
}

function drawRow(row) {
  const card = el("article", "row");
  card.dataset.id = row.id;
  card.dataset.position = row.position;
  card.id = "row-" + row.id;
  if (row.verdict) card.classList.add(row.verdict.wrong ? "wrong" : "right");
  if (state.focus === row.id) card.classList.add("focus");
  const head = el("div", "row-head");
  head.appendChild(el("span", "title", row.title));
  const link = el("a", "rid", row.id);
  link.href = `?${rowAddress(row.id)}`;
  link.title = "a link to this row";
  link.addEventListener("click", (event) => { event.preventDefault(); focusRow(row.id); });
  head.appendChild(link);
  for (const [name, value] of row.facts) {
    const fact = el("span", "fact");
    fact.appendChild(el("b", null, name + ": "));
    fact.appendChild(document.createTextNode(value));
    head.appendChild(fact);
  }
  if (row.verdict) {
    const v = row.verdict;
    const text = v.wrong ? `wrong (${v.correct}/${v.expected} right${v.errors.length ? "; " + v.errors.join(", ") : ""})`
                         : `right (${v.correct}/${v.expected})`;
    head.appendChild(el("span", "fact verdict", text));
  }
  card.appendChild(head);
  const panels = el("div", "panels");
  card.appendChild(panels);
  for (const panel of row.panels) {
    const box = el("div", "panel");
    box.dataset.title = panel.title;
    box.appendChild(el("div", "panel-title", panel.title));
    const strip = el("div", "strip");
    for (const item of panel.items) strip.appendChild(drawItem(item));
    box.appendChild(strip);
    panels.appendChild(box);
  }
  return card;
}

function rowAddress(id) {
  const p = addressParams();
  p.delete("page");
  p.set("row", id);
  return p;
}

// ------------------------------------------------------------------ loading
function params() {
  const p = { config: state.config, split: state.split, offset: state.offset, limit: PAGE };
  for (const [name, value] of Object.entries(state.facets)) if (value) p["f." + name] = value;
  if (state.wrong) p.wrong = "1";
  if (state.error) p.error = state.error;
  return p;
}

function clearRows(text) {
  $("rows").replaceChildren();
  $("status").textContent = text || "";
  document.body.dataset.loaded = String(Date.now());
}

async function loadRows() {
  say("");
  if (!state.split) return clearRows("");
  $("status").textContent = "loading…";
  try {
    const extra = state.focus ? { id: state.focus } : {};
    const page = await api("rows", Object.assign(params(), extra));
    state.offset = page.offset;
    state.total = page.total;
    state.scored = page.scored;
    $("rows").replaceChildren(...page.rows.map(drawRow));
    const last = Math.min(page.offset + page.rows.length, page.total);
    const p = state.info.predictions;
    const waiting = p && p.config === state.config && p.split === state.split && !page.scored;
    $("status").textContent = (page.total ? `rows ${page.offset + 1}-${last} of ${page.total}` : "no rows match")
      + (waiting ? " · scoring the predictions…" : "");
    remember(true);
    const focused = state.focus && document.getElementById("row-" + state.focus);
    if (focused) {
      focused.style.scrollMarginTop = `${document.querySelector("header").offsetHeight + 8}px`;  // below the sticky header
      focused.scrollIntoView({ block: "start" });
    }
    document.body.dataset.loaded = String(Date.now());
  } catch (error) {
    clearRows("");             // never leave another view's rows under an error
    say(error.message);
  }
}

function fillSelect(select, options, chosen) {
  select.replaceChildren(...options.map(([value, text]) => {
    const option = el("option", null, text);
    option.value = value;
    return option;
  }));
  if (chosen !== undefined) select.value = chosen;
}

function configInfo() { return state.info.configs.find((c) => c.name === state.config); }

function fillSplits() {
  const domain = state.domain;
  $("domain").value = domain;
  const splits = configInfo().splits.filter((s) => !domain || s.domain === domain);
  fillSelect($("split"), splits.map((s) => [s.name, `${s.name} (${s.domain}, ${s.rows})`]));
  if (!splits.some((s) => s.name === state.split)) state.split = splits.length ? splits[0].name : null;
  $("split").value = state.split || "";
  if (!splits.length) say(`${state.config} has no ${domain.replace("-", " ")} split`);
}

function drawFacets(filters) {
  const holder = $("facets");
  holder.replaceChildren();
  for (const facet of filters.facets) {
    const label = el("label", null, facet.label + " ");
    const select = el("select");
    select.id = "facet-" + facet.name;
    select.dataset.facet = facet.name;
    fillSelect(select, [["", "any"], ...facet.values.map(([v, n]) => [v, `${v} (${n})`])], state.facets[facet.name] || "");
    select.addEventListener("change", () => {
      state.facets[facet.name] = select.value;
      change();
    });
    label.appendChild(select);
    holder.appendChild(label);
  }
}

function drawOverview(predictions) {
  const shown = Boolean(predictions);
  $("overview").hidden = !shown;
  $("prediction-filters").hidden = !shown || Boolean(predictions.pending);
  if (!shown) return;
  if (predictions.pending) {
    $("summary").replaceChildren(el("span", "pending", "scoring the predictions… the dataset filters work meanwhile"));
    $("bars-title").textContent = "";
    $("bars").replaceChildren();
    return;
  }
  $("wrong").checked = state.wrong;
  fillSelect($("error"), [["", "any"], ...predictions.errors.map(([name, n]) => [name, `${name} (${n} rows)`])], state.error);
  $("summary").replaceChildren(...predictions.summary.map(([name, value]) => {
    const span = el("span");
    span.appendChild(el("b", null, name + ": "));
    span.appendChild(document.createTextNode(value));
    return span;
  }));
  $("bars-title").textContent = predictions.facet ? `accuracy by ${predictions.facet}, worst first (click: its failures)` : "";
  $("bars").replaceChildren(...predictions.bars.map(drawBar(predictions.facet)));
}

function drawBar(facet) {
  return (bar) => {
    const button = el("button", "bar");
    button.type = "button";
    button.tabIndex = -1;                         // out of the tab order: the filters above reach the same rows
    button.dataset.value = bar.value;
    if (state.facets[facet] === bar.value) button.classList.add("chosen");
    button.appendChild(el("span", null, bar.value));
    const track = el("span", "track");
    const fill = el("span", "fill");
    fill.style.width = `${bar.accuracy === null ? 0 : 100 * bar.accuracy}%`;
    track.appendChild(fill);
    button.appendChild(track);
    const percent = bar.accuracy === null ? "–" : (100 * bar.accuracy).toFixed(1) + " %";
    button.appendChild(el("span", null, `${percent} (${bar.correct}/${bar.expected}; ${bar.wrong_rows} wrong rows)`));
    button.addEventListener("click", () => {
      state.facets[facet] = bar.value;
      state.wrong = true;
      $("wrong").checked = true;
      const select = $("facet-" + facet);
      if (select) select.value = bar.value;
      for (const other of document.querySelectorAll(".bar")) other.classList.toggle("chosen", other === button);
      change();
    });
    return button;
  };
}

async function refreshFilters() {
  pendingTimer = null;
  const asked = `${state.config}/${state.split}`;
  try {
    const filters = await api("filters", { config: state.config, split: state.split });
    if (asked !== `${state.config}/${state.split}`) return;
    state.filters = filters;
    drawOverview(filters.predictions);
    if (filters.predictions && filters.predictions.pending) {
      pendingTimer = setTimeout(refreshFilters, 1000);
    } else {
      if (filters.predictions && !state.scored) await loadRows();  // scored now: draw the verdicts
      document.body.dataset.scored = asked;
    }
  } catch (error) {
    say(error.message);
  }
  document.body.dataset.settled = String(Number(document.body.dataset.settled || 0) + 1);
}

// Open the current config and split with the state's filters (from the address, or cleared by the caller).
async function openSplit() {
  if (pendingTimer) clearTimeout(pendingTimer);
  pendingTimer = null;
  delete document.body.dataset.scored;
  $("jump").value = state.focus || "";
  $("wrong").checked = state.wrong;
  $("facets").replaceChildren();
  drawOverview(null);
  if (!state.split) {
    clearRows("");
    document.body.dataset.ready = `${state.config}/`;
    document.body.dataset.settled = String(Number(document.body.dataset.settled || 0) + 1);
    return;
  }
  const first = loadRows();  // the first page needs no index: it shows at once
  try {
    state.filters = await api("filters", { config: state.config, split: state.split });
    drawFacets(state.filters);
    drawOverview(state.filters.predictions);
    await first;
    const pending = state.filters.predictions && state.filters.predictions.pending;
    if (pending) pendingTimer = setTimeout(refreshFilters, 1000);
    else {
      if (state.filters.predictions && !state.scored) await loadRows();  // scored after the first page showed
      document.body.dataset.scored = `${state.config}/${state.split}`;
    }
  } catch (error) {
    say(error.message);
  }
  await first;
  document.body.dataset.ready = `${state.config}/${state.split}`;
  document.body.dataset.settled = String(Number(document.body.dataset.settled || 0) + 1);
}

function resetFilters() {
  state.offset = 0;
  state.facets = {};
  state.wrong = false;
  state.error = "";
  state.focus = null;
}

// A filter changed: back to the first page, remembered in the address.
function change() {
  state.offset = 0;
  state.focus = null;
  remember(false);
  loadRows();
}

function focusRow(id) {
  state.focus = id;
  remember(false);
  loadRows();
}

function move(step) {
  const next = state.offset + step * PAGE;
  if (next < 0 || next >= state.total) return;
  state.offset = next;
  state.focus = null;
  remember(false);
  loadRows();
  window.scrollTo(0, 0);
}

function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName));
}

function keys(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (typing(event.target)) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (event.key === "ArrowRight" || event.key === "j") move(1);
  else if (event.key === "ArrowLeft" || event.key === "k") move(-1);
  else if (event.key === "w" && !$("prediction-filters").hidden) {
    state.wrong = !state.wrong;
    $("wrong").checked = state.wrong;
    change();
  } else if (event.key === "/") $("jump").focus();
  else return;
  event.preventDefault();
}

function wire() {
  $("config").addEventListener("change", () => {
    state.config = $("config").value;
    state.split = null;
    resetFilters();
    fillSplits();
    remember(false);
    openSplit();
  });
  $("domain").addEventListener("change", () => {
    state.domain = $("domain").value;
    const before = state.split;
    fillSplits();
    if (state.split !== before) resetFilters();
    remember(false);
    openSplit();
  });
  $("split").addEventListener("change", () => { state.split = $("split").value; resetFilters(); remember(false); openSplit(); });
  $("wrong").addEventListener("change", () => { state.wrong = $("wrong").checked; change(); });
  $("error").addEventListener("change", () => { state.error = $("error").value; change(); });
  $("clear").addEventListener("click", () => { resetFilters(); remember(false); openSplit(); });
  $("jump").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    const id = $("jump").value.trim();
    if (id) focusRow(id);
  });
  for (const id of ["prev", "prev2"]) $(id).addEventListener("click", () => move(-1));
  for (const id of ["next", "next2"]) $(id).addEventListener("click", () => move(1));
  document.addEventListener("keydown", keys);
  window.addEventListener("popstate", () => { readAddress(); showAddress(); });
}

// Draw the selects for the state read from the address, then open its split.
function showAddress() {
  $("config").value = state.config;
  fillSplits();
  openSplit();
}

async function start() {
  wire();
  try {
    state.info = await api("info");
  } catch (error) {
    say(error.message);
    return;
  }
  $("dataset").textContent = state.info.name + (state.info.predictions ? ` · predictions: ${state.info.predictions.file}` : "");
  fillSelect($("config"), state.info.configs.map((c) => [c.name, `${c.name} (${c.family})`]), state.info.start.config);
  readAddress();
  remember(true);
  showAddress();
}

document.addEventListener("DOMContentLoaded", start);
