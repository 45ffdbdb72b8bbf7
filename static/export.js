// A one-file export's keyboard and permalinks. The served page does these in static/session.js and
// static/search.js, which also search and tail through the server, so they are not inlined: here j and k
// step from row to row (there is nothing to search; `step`, folds.js), and Enter or Space then opens
// the row (inspect.js). A permalink to a row inside a bookkeeping fold opens the fold (`reveal`), and
// one to an event inside a run row opens the run.
// Its rows wait in windows, each an inert `<template data-export-window>` (app/web/render.py): a few are
// mounted around the viewport, as the served page keeps a few windows (static/session.js), so the page
// stays small however long the session.
// It is the entry of the export's bundle (static/export.bundle.js, docs/decisions/0027-export-bundle.md).
import "./inspect.js";
import "./reading.js";  // the Details switch and the head's turn in view, as on the served page
import { reveal, step } from "./folds.js";
import { keepingScroll as keepingPlace } from "./scrolling.js";

// At most KEPT windows mounted; one is mounted once its edge is MARGIN near the viewport, and the farthest
// goes once more than KEPT are, unless it lies within FAR of the viewport (it would come back at once).
// And no more than NODES nodes in the flow, for windows whose rows take nodes but little height (folded
// bookkeeping): past it a window comes in only when its edge is in view, and the windows out of view on
// the other side go.
const KEPT = 3;
const MARGIN = 400;  // px
const FAR = 1200;  // px
const NODES = 2400;

const flow = document.querySelector("[data-chat-flow]");
const chunks = /** @type {HTMLTemplateElement[]} */ (flow ? Array.from(flow.querySelectorAll(":scope > template[data-export-window]")) : []);
// The edges of what is mounted: reaching one mounts the window beyond it.
const earlierEdge = document.createElement("div");
const laterEdge = document.createElement("div");

/** @returns {HTMLElement[]} */
function mounted() {
  return flow ? Array.from(flow.querySelectorAll(":scope > [data-export-mounted]")) : [];
}

/** @param {HTMLElement} win */
function indexOf(win) { return Number(win.getAttribute("data-export-mounted")); }

// The first row on screen keeps its place on screen while `change` adds and drops windows around it.
/** @param {() => void} change */
function keepingScroll(change) { keepingPlace(document.querySelectorAll("[data-export-mounted] .flow-item"), change); }

// Window `i` in the page, after its template (so the windows keep their order), wrapped like a served window.
/** @param {number} i */
function mount(i) {
  const win = document.createElement("div");
  win.className = "flow-window";
  win.setAttribute("data-window", "");
  win.setAttribute("data-export-mounted", String(i));
  win.appendChild(chunks[i].content.cloneNode(true));
  if (!root.hasAttribute("data-show-bookkeeping")) win.querySelectorAll("[data-fold]:not([data-open]) > [data-fold-rows]").forEach(pack);
  chunks[i].after(win);
  return win;
}

// A closed fold's rows wait in a template of their own while their window is mounted: hidden, they would
// cost their nodes all the same, and a stretch of bookkeeping is many folds to a screen. They come out as the
// fold opens (before folds.js opens it), as "Show bookkeeping" shows every fold, or as a permalink names one.
const root = document.documentElement;
/** @param {Element} rows a fold's `[data-fold-rows]` */
function pack(rows) {
  const kept = document.createElement("template");
  kept.setAttribute("data-fold-kept", "");
  kept.content.append(...rows.childNodes);
  rows.append(kept);
}
/** @param {Element} rows */
function unpack(rows) {
  const kept = rows.querySelector(":scope > template[data-fold-kept]");
  if (kept instanceof HTMLTemplateElement) kept.replaceWith(kept.content);
}
function unpackAll() { document.querySelectorAll("[data-fold-rows]").forEach(unpack); }
document.addEventListener("click", (event) => {
  const head = event.target instanceof Element ? event.target.closest("[data-fold-toggle]") : null;
  const rows = head?.parentElement?.querySelector(":scope > [data-fold-rows]");
  if (rows) unpack(rows);
}, true);
new MutationObserver(() => { if (root.hasAttribute("data-show-bookkeeping")) unpackAll(); })
  .observe(root, { attributes: true, attributeFilter: ["data-show-bookkeeping"] });

// A window lies far beyond the viewport on one side; measured over its rows, since it draws no box itself.
/** @param {HTMLElement} win @param {boolean} earlier */
function far(win, earlier) {
  const rows = document.createRange();
  rows.selectNodeContents(win);
  const box = rows.getBoundingClientRect();
  return earlier ? box.bottom < -FAR : box.top > innerHeight + FAR;
}

/** @param {Node} root */
function nodes(root) {
  const walker = document.createTreeWalker(root);
  let n = 0;
  while (walker.nextNode()) n++;
  return n;
}
/** @type {Map<number, number>} */
const weights = new Map();
/** @param {number} i the nodes window `i` brings */
function weight(i) {
  if (!weights.has(i)) weights.set(i, nodes(chunks[i].content));
  return weights.get(i) || 0;
}

/** @param {Element} el */
function inView(el) {
  const rows = document.createRange();
  rows.selectNodeContents(el);
  const box = el === earlierEdge || el === laterEdge ? el.getBoundingClientRect() : rows.getBoundingClientRect();
  return box.top <= innerHeight && box.bottom >= 0;
}

// The window beyond one edge mounted, then the farthest on the other side dropped while too many are: beyond
// KEPT when far, beyond NODES when out of view.
/** @param {boolean} earlier */
function grow(earlier) {
  const wins = mounted();
  if (!wins.length || !flow) return;
  const next = earlier ? indexOf(wins[0]) - 1 : indexOf(wins[wins.length - 1]) + 1;
  if (next < 0 || next >= chunks.length) return;
  if (nodes(flow) + weight(next) > NODES && !inView(earlier ? earlierEdge : laterEdge)) return;
  keepingScroll(() => { mount(next); });
  let all = mounted();
  while (all.length > 1) {
    const gone = earlier ? all[all.length - 1] : all[0];
    const crowded = all.length > KEPT && far(gone, !earlier);
    if (!crowded && !(nodes(flow) > NODES && !inView(gone))) break;
    keepingScroll(() => { gone.remove(); });
    all = mounted();
  }
  edges();
}

const watcher = new IntersectionObserver((entries) => {
  entries.forEach((entry) => { if (entry.isIntersecting) grow(entry.target === earlierEdge); });
}, { rootMargin: `${MARGIN}px 0px` });
// an edge already near when the page was full says so again once the reader brings it into view
const seen = new IntersectionObserver((entries) => {
  entries.forEach((entry) => { if (entry.isIntersecting) grow(entry.target === earlierEdge); });
});

// The edges put around what is mounted and watched afresh: an edge still near after a window came in
// reports so again, and the next window comes in too.
function edges() {
  const wins = mounted();
  if (!wins.length) return;
  wins[0].before(earlierEdge);
  wins[wins.length - 1].after(laterEdge);
  [watcher, seen].forEach((observer) => {
    [earlierEdge, laterEdge].forEach((edge) => { observer.unobserve(edge); observer.observe(edge); });
  });
}

// Only window `i` mounted (the others come as the reader scrolls from it).
/** @param {number} i */
function showWindow(i) {
  mounted().forEach((win) => { win.remove(); });
  mount(i);
  edges();
}

// The window holding the element `found` finds in a window's rows.
/** @param {(rows: DocumentFragment) => Element | null | undefined} found */
function windowHolding(found) {
  return chunks.findIndex((chunk) => found(chunk.content));
}

if (chunks.length) showWindow(0);

document.addEventListener("keydown", (event) => {
  const typing = event.target instanceof Element && event.target.closest("input, select, textarea");
  if (typing) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "j") { event.preventDefault(); step(1); }
  else if (event.key === "k") { event.preventDefault(); step(-1); }
});

// The run row holding the event a row anchor names (`seq-N`, `outside-N`): the export lists a run's
// events as lines of the run (rows/run.html), with no element of their own to carry the anchor.
/** @param {string} id @param {Document | DocumentFragment} within @returns {HTMLDetailsElement | null} */
function runHolding(id, within) {
  const found = /^(seq|outside)-([0-9]+)$/.exec(id);
  if (!found) return null;
  const seq = Number(found[2]);
  const runs = /** @type {NodeListOf<HTMLDetailsElement>} */ (within.querySelectorAll("details[data-run]"));
  return Array.from(runs).find((run) => (run.getAttribute("data-run-key") || "").startsWith(`${found[1]}-`) &&
      Number(run.getAttribute("data-run-first")) <= seq && seq <= Number(run.getAttribute("data-run-last"))) || null;
}

function revealTarget() {
  let id = location.hash.slice(1);
  try { id = decodeURIComponent(id); } catch { /* the hash as written */ }
  if (!id) return;
  if (!document.getElementById(id) && !runHolding(id, document)) {  // in a window not mounted: mount it
    const at = windowHolding((rows) => rows.getElementById(id) || runHolding(id, rows));
    if (at >= 0) showWindow(at);
  }
  document.querySelectorAll("template[data-fold-kept]").forEach((kept) => {  // in a fold's rows: out with them
    if (kept instanceof HTMLTemplateElement && (kept.content.getElementById(id) || runHolding(id, kept.content))) {
      if (kept.parentElement) unpack(kept.parentElement);
    }
  });
  const row = document.getElementById(id);
  const run = !row && runHolding(id, document);
  if (run) {  // opened, and scrolled to even when shown: no element has the anchor for the browser to go to
    run.open = true;
    reveal(run);
    run.scrollIntoView({ block: "start" });
    return;
  }
  if (!row) return;  // the browser scrolls to no row: it was not in the page when the file was read
  reveal(row);
  row.scrollIntoView({ block: "center" });
}
document.addEventListener("DOMContentLoaded", revealTarget);
window.addEventListener("hashchange", revealTarget);
