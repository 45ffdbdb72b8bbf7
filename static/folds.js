// Bookkeeping folds, on the served page and in a one-file export alike: a fold's head opens
// it; "Show bookkeeping" ([data-bookkeeping-toggle]) shows every fold unfolded and is remembered (theme.js
// applies it before first paint). `reveal(el)` opens the folds holding a row before it is scrolled to (a
// permalink, a search hit); `step(by)` marks the next (1) or previous (-1) row shown (j/k).

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

// The live tail sends a fold's head again, worded by the server, as rows join the fold
// (app/web/routes/live.py): the new head keeps whether the reader had the fold open.
document.addEventListener("htmx:oobBeforeSwap", (event) => {
  const { target, fragment } = /** @type {CustomEvent} */ (event).detail;
  const head = fragment instanceof DocumentFragment ? fragment.firstElementChild : null;
  if (target instanceof Element && target.hasAttribute("data-fold-toggle") && head?.hasAttribute("data-fold-toggle")) {
    head.setAttribute("aria-expanded", target.getAttribute("aria-expanded") || "false");
  }
});
