// cogen view: the page. Plain JavaScript, no library. Every string from the server is put in the
// document with textContent (never as markup), so text from data or predictions files stays text.
"use strict";

const PAGE = 12;
const state = { info: null, config: null, split: null, offset: 0, total: 0, facets: {}, wrong: false, error: "",
                focus: null, filters: null };
const $ = (id) => document.getElementById(id);

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

function drawGrid(cells, marks) {
  const rows = cells.length, cols = rows ? cells[0].length : 0;
  const grid = el("div", "grid" + (rows > 20 || cols > 20 ? " large" : ""));
  grid.style.gridTemplateColumns = `repeat(${cols}, auto)`;
  grid.dataset.rows = rows;
  grid.dataset.cols = cols;
  const wrong = new Set((marks || []).map(([r, c]) => r * 1000 + c));
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const value = Number(cells[r][c]);
      const cell = el("i", "c" + (value >= 0 && value <= 9 ? value : 0) + (wrong.has(r * 1000 + c) ? " wrong" : ""));
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
  } else if (item.kind === "text") {
    box.appendChild(el("div", "text", item.text));
  } else {
    box.appendChild(el("div", "missing", item.text));
  }
  box.appendChild(el("span", "label", item.label));
  if (item.note) box.appendChild(el("span", "note", item.note));
  return box;
}

function drawRow(row) {
  const card = el("article", "row");
  card.dataset.id = row.id;
  card.dataset.position = row.position;
  if (row.verdict) card.classList.add(row.verdict.wrong ? "wrong" : "right");
  if (state.focus === row.id) card.classList.add("focus");
  const head = el("div", "row-head");
  head.appendChild(el("span", "title", row.title));
  head.appendChild(el("span", "rid", row.id));
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

function params() {
  const p = { config: state.config, split: state.split, offset: state.offset, limit: PAGE };
  for (const [name, value] of Object.entries(state.facets)) if (value) p["f." + name] = value;
  if (state.wrong) p.wrong = "1";
  if (state.error) p.error = state.error;
  return p;
}

async function loadRows(extra) {
  say("");
  $("status").textContent = "loading…";
  try {
    const page = await api("rows", Object.assign(params(), extra || {}));
    state.offset = page.offset;
    state.total = page.total;
    state.scored = page.scored;
    const main = $("rows");
    main.replaceChildren(...page.rows.map(drawRow));
    const last = Math.min(page.offset + page.rows.length, page.total);
    const p = state.info.predictions;
    const waiting = p && p.config === state.config && p.split === state.split && !page.scored;
    $("status").textContent = (page.total ? `rows ${page.offset + 1}-${last} of ${page.total}` : "no rows match")
      + (waiting ? " · scoring the predictions…" : "");
    document.body.dataset.loaded = String(Date.now());
  } catch (error) {
    say(error.message);
    $("status").textContent = "";
    document.body.dataset.loaded = String(Date.now());
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
  const domain = $("domain").value;
  const splits = configInfo().splits.filter((s) => !domain || s.domain === domain);
  fillSelect($("split"), splits.map((s) => [s.name, `${s.name} (${s.domain}, ${s.rows})`]));
  if (splits.some((s) => s.name === state.split)) $("split").value = state.split;
  state.split = $("split").value;
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
    select.addEventListener("change", () => { state.facets[facet.name] = select.value; state.offset = 0; loadRows(); });
    label.appendChild(select);
    holder.appendChild(label);
  }
}

function drawOverview(predictions) {
  const shown = Boolean(predictions);
  $("overview").hidden = !shown;
  $("prediction-filters").hidden = !shown;
  if (!shown) return;
  fillSelect($("error"), [["", "any"], ...predictions.errors.map(([name, n]) => [name, `${name} (${n} rows)`])], state.error);
  const summary = $("summary");
  summary.replaceChildren(...predictions.summary.map(([name, value]) => {
    const span = el("span");
    span.appendChild(el("b", null, name + ": "));
    span.appendChild(document.createTextNode(value));
    return span;
  }));
  $("bars-title").textContent = predictions.facet ? `accuracy by ${predictions.facet} (click: its failures)` : "";
  $("bars").replaceChildren(...predictions.bars.map(drawBar(predictions.facet)));
}

function drawBar(facet) {
  return (bar) => {
    const button = el("button", "bar");
    button.type = "button";
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
      state.offset = 0;
      loadRows();
    });
    return button;
  };
}

async function loadSplit() {
  state.offset = 0;
  state.facets = {};
  state.wrong = false;
  state.error = "";
  state.focus = null;
  $("jump").value = "";
  $("wrong").checked = false;
  $("facets").replaceChildren();
  drawOverview(null);
  const first = loadRows();  // the first page needs no index: it shows at once
  try {
    state.filters = await api("filters", { config: state.config, split: state.split });
    drawFacets(state.filters);
    drawOverview(state.filters.predictions);
    await first;
    if (state.filters.predictions && !state.scored) await loadRows();  // scored after the first page showed
  } catch (error) {
    say(error.message);
  }
  await first;
  document.body.dataset.ready = `${state.config}/${state.split}`;
  document.body.dataset.settled = String(Number(document.body.dataset.settled || 0) + 1);
}

function wire() {
  $("config").addEventListener("change", () => { state.config = $("config").value; fillSplits(); loadSplit(); });
  $("domain").addEventListener("change", () => { fillSplits(); loadSplit(); });
  $("split").addEventListener("change", () => { state.split = $("split").value; loadSplit(); });
  $("wrong").addEventListener("change", () => { state.wrong = $("wrong").checked; state.offset = 0; loadRows(); });
  $("error").addEventListener("change", () => { state.error = $("error").value; state.offset = 0; loadRows(); });
  $("clear").addEventListener("click", () => loadSplit());
  $("jump").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    state.focus = $("jump").value.trim();
    if (state.focus) loadRows({ id: state.focus });
  });
  const move = (step) => () => {
    const next = state.offset + step * PAGE;
    if (next >= 0 && next < state.total) { state.offset = next; loadRows(); }
  };
  for (const id of ["prev", "prev2"]) $(id).addEventListener("click", move(-1));
  for (const id of ["next", "next2"]) $(id).addEventListener("click", move(1));
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
  state.config = state.info.start.config;
  state.split = state.info.start.split;
  fillSplits();
  await loadSplit();
}

document.addEventListener("DOMContentLoaded", start);
