// Bookkeeping folds, on the served page and in a one-file export alike: a fold's head opens
// it; "Show bookkeeping" ([data-bookkeeping-toggle]) shows every fold unfolded and is remembered (theme.js
// applies it before first paint). `reveal(el)` opens the folds holding a row before it is scrolled to (a
// permalink, a search hit); `step(by)` marks the next (1) or previous (-1) row shown (j/k).
import { fill } from "./wording.js";

const root = document.documentElement;

/** @param {Element} fold @param {boolean} open */
function setFold(fold, open) {
  if (open) fold.setAttribute("data-open", "true"); else fold.removeAttribute("data-open");
  for (let el = fold.firstElementChild; el; el = el.nextElementSibling) {
    if (el.hasAttribute("data-fold-toggle")) el.setAttribute("aria-expanded", open ? "true" : "false");
  }
}

/**
 * Opens the folds holding `el`.
 * @param {Element} el
 */
export function reveal(el) {
  for (let fold = el.closest("[data-fold]"); fold; fold = fold.parentElement?.closest("[data-fold]") ?? null) {
    if (!fold.hasAttribute("data-open")) setFold(fold, true);
  }
}

// The rows on the page a reader can see, in order: a closed fold's are skipped (its head is a Tab stop).
function shownRows() {
  return Array.from(document.querySelectorAll("[data-chat-flow] .flow-item")).filter((row) => row.getClientRects().length > 0);
}

// The row j (by 1) or k (by -1) goes to: the next or previous to the one marked last, or, with
// none marked yet (or the marked one folded away), the first row on screen or the one before it.
/** @param {Element[]} list @param {number} by */
function destination(list, by) {
  for (let i = 0; i < list.length; i++) if (list[i].hasAttribute("data-current")) return i + by;
  for (let j = 0; j < list.length; j++) if (list[j].getBoundingClientRect().bottom > 0) return by > 0 ? j : j - 1;
  return list.length - 1;
}

/** @param {Element} row */
function markRow(row) {
  document.querySelectorAll(".flow-item[data-current]").forEach((e) => { e.removeAttribute("data-current"); });
  row.setAttribute("data-current", "true");
  row.scrollIntoView({ block: "center" });
  const header = /** @type {HTMLElement | null} */ (row.querySelector("[data-disclosure-row][data-expandable]"));
  if (header) header.focus({ preventScroll: true });
}

/**
 * Marks the next (`by` 1) or previous (-1) row shown, and scrolls to it.
 * @param {number} by
 */
export function step(by) {
  const list = shownRows();
  if (list.length) markRow(list[Math.max(0, Math.min(list.length - 1, destination(list, by)))]);
}

function syncSwitches() {
  /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll("[data-bookkeeping-toggle]")).forEach((box) => {
    box.checked = root.hasAttribute("data-show-bookkeeping");
  });
}

/** @param {boolean} shown */
function showBookkeeping(shown) {
  if (shown) root.setAttribute("data-show-bookkeeping", ""); else root.removeAttribute("data-show-bookkeeping");
  try { localStorage.setItem("dsh-inspect-bookkeeping", shown ? "shown" : "folded"); } catch { /* not remembered */ }
  syncSwitches();
}

document.addEventListener("click", (event) => {
  const head = event.target instanceof Element ? event.target.closest("[data-fold-toggle]") : null;
  if (head?.parentElement) setFold(head.parentElement, head.getAttribute("aria-expanded") !== "true");
});
document.addEventListener("change", (event) => {
  const box = event.target;
  if (box instanceof HTMLInputElement && box.hasAttribute("data-bookkeeping-toggle")) showBookkeeping(box.checked);
});
// the browser may restore a checkbox on reload or going back: the remembered choice rules
document.addEventListener("DOMContentLoaded", syncSwitches);
window.addEventListener("pageshow", syncSwitches);

// A bookkeeping row the live tail appends (static/session.js moves it into the last window) joins the
// fold just before it, or starts one (`data-fold-live`), worded with the patterns the switch carries:
// the same fold the server draws once that window is fetched again.
/** @param {Element} fold @param {Element} wording the switch, which carries the patterns */
function summarize(fold, wording) {
  const rows = fold.querySelectorAll("[data-fold-rows] > .flow-item");
  /** @type {string[]} */
  const types = [];
  rows.forEach((row) => {
    const typed = row.querySelector("[data-event-type]");
    const type = typed ? typed.getAttribute("data-event-type") : "";
    if (type && types.indexOf(type) < 0) types.push(type);
  });
  const head = /** @type {HTMLElement} */ (fold.firstElementChild);
  const pattern = wording.getAttribute(rows.length === 1 ? "data-fold-one" : "data-fold-many") || "";
  head.textContent = fill(pattern, { count: rows.length, types: types.slice(0, 3).join(", ") + (types.length > 3 ? ", …" : "") });
  head.title = types.join(", ");
  fold.setAttribute("data-fold-count", String(rows.length));
}

/** @param {Element} row @param {Element} wording */
function foldLive(row, wording) {
  let fold = row.previousElementSibling;
  if (!fold?.hasAttribute("data-fold")) {
    fold = document.createElement("div");
    fold.className = "fold";
    fold.setAttribute("data-fold", "");
    fold.setAttribute("data-fold-live", "");
    const head = document.createElement("button");
    head.type = "button";
    head.className = "fold-head";
    head.setAttribute("data-fold-toggle", "");
    head.setAttribute("aria-expanded", "false");
    const held = document.createElement("div");
    held.className = "fold-rows";
    held.id = `fold-${row.id}`;
    held.setAttribute("data-fold-rows", "");
    head.setAttribute("aria-controls", held.id);
    fold.append(head, held);
    row.before(fold);
  }
  fold.lastElementChild?.appendChild(row);
  summarize(fold, wording);
}

document.addEventListener("DOMContentLoaded", () => {
  const flow = document.querySelector("[data-chat-flow]");
  const wording = document.querySelector("[data-bookkeeping-toggle][data-fold-many]");
  if (!flow || !wording || !document.querySelector("[data-live]")) return;
  // a row already in a fold (a window's, or one swapped in place) stays where it is
  /** @param {Node} node @returns {node is Element} */
  function loose(node) {
    return node instanceof Element && node.matches(".flow-item[data-bookkeeping]") && node.parentElement !== null &&
      (node.parentElement === flow || node.parentElement.hasAttribute("data-window"));
  }
  new MutationObserver((records) => {
    records.forEach((record) => {
      record.addedNodes.forEach((node) => { if (loose(node)) foldLive(node, wording); });
      // rows the live tail takes back (to send them again) leave their fold counted anew, or gone
      const held = record.target;
      if (!record.removedNodes.length || record.addedNodes.length) return;
      if (!(held instanceof Element && held.hasAttribute("data-fold-rows"))) return;
      const fold = held.parentElement;
      if (!fold?.isConnected) return;
      if (held.querySelector(".flow-item")) summarize(fold, wording);
      else fold.remove();
    });
  }).observe(flow, { childList: true, subtree: true });
});
