// The reading view of a session (docs/ui.md "Reading view"): rows without their meta lines, which show on
// hover and focus, or always in the "Details" mode ([data-details-toggle]) the reader switches and the
// browser remembers (theme.js applies it before first paint); and a head that stays in view naming the
// session, its project and verdict, and the turn in view ([data-reading-head]).

import { fill } from "./wording.js";

const root = document.documentElement;
const KEY = "dsh-inspect-details";

function syncSwitches() {
  /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll("[data-details-toggle]")).forEach((box) => {
    box.checked = root.hasAttribute("data-details");
  });
}

document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.hasAttribute("data-details-toggle")) return;
  if (box.checked) root.setAttribute("data-details", ""); else root.removeAttribute("data-details");
  try { localStorage.setItem(KEY, box.checked ? "shown" : "hidden"); } catch { /* not remembered */ }
  syncSwitches();
});
// the browser may restore a checkbox on reload or going back: the remembered choice rules
document.addEventListener("DOMContentLoaded", syncSwitches);
window.addEventListener("pageshow", syncSwitches);

const head = document.querySelector("[data-reading-head]");
const flow = document.querySelector("[data-chat-flow]");
if (head && flow) followReader(head, flow);

/** @param {Element} head @param {Element} flow */
function followReader(head, flow) {
  const turnOut = head.querySelector("[data-reading-turn]");
  const verdictOut = head.querySelector("[data-reading-verdict]");
  const bar = head.closest("[data-toolbar]") || head;
  const facts = document.querySelector(".session-head");

  // The turn in view: that of the last turn boundary at or above the line the sticky bar ends on. With none
  // above it, the first below, when it is on screen (the page's top); else the window starts inside a turn,
  // the one before it.
  function turnInView() {
    const line = bar.getBoundingClientRect().bottom + 1;
    /** @type {string | null} */
    let turn = null;
    for (const boundary of flow.querySelectorAll("[data-turn]")) {
      const top = boundary.getBoundingClientRect().top;
      if (top <= line) { turn = boundary.getAttribute("data-turn"); continue; }
      if (turn !== null) break;
      const below = Number(boundary.getAttribute("data-turn"));
      return top < innerHeight ? boundary.getAttribute("data-turn") : below > 1 ? String(below - 1) : null;
    }
    return turn;
  }

  let queued = false;
  function showTurn() {
    queued = false;
    if (!turnOut) return;
    const turn = turnInView();
    const text = turn === null ? "" : fill(turnOut.getAttribute("data-pattern") || "", { turn: Number(turn) || turn });
    if (turnOut.textContent !== text) turnOut.textContent = text;
  }
  function queue() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(showTurn);
  }
  window.addEventListener("scroll", queue, { passive: true });
  window.addEventListener("resize", queue);
  // and whenever the rows move without a scroll: windows loaded or dropped, rows opened, Details switched
  new ResizeObserver(queue).observe(flow);
  showTurn();

  // The verdict as the facts say it: they come after the first screen of a long log, and again from the live tail.
  function showVerdict() {
    const verdict = facts?.querySelector("[data-session-facts] [data-verdict]");
    if (!verdictOut || !verdict) return;
    verdictOut.setAttribute("data-reading-verdict", verdict.getAttribute("data-verdict") || "");
    verdictOut.textContent = verdict.textContent;
  }
  if (facts) new MutationObserver(showVerdict).observe(facts, { childList: true, subtree: true });
  showVerdict();
}
