// A one-file export's keyboard and permalinks. The served page does these in static/session.js and
// static/search.js, which also search and tail through the server, so they are not inlined: here j and k
// step from row to row (there is nothing to search; `step`, folds.js), and Enter or Space then opens
// the row (inspect.js). A permalink to a row inside a bookkeeping fold opens the fold (`reveal`), and
// one to an event inside a run row opens the run.
// It is the entry of the export's bundle (static/export.bundle.js, docs/decisions/0027-export-bundle.md).
import "./inspect.js";
import { reveal, step } from "./folds.js";

document.addEventListener("keydown", (event) => {
  const typing = event.target instanceof Element && event.target.closest("input, select, textarea");
  if (typing) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "j") { event.preventDefault(); step(1); }
  else if (event.key === "k") { event.preventDefault(); step(-1); }
});

// The run row holding the event a row anchor names (`seq-N`, `outside-N`): the export lists a run's
// events as lines of the run (rows/run.html), with no element of their own to carry the anchor.
/** @param {string} id @returns {HTMLDetailsElement | null} */
function runHolding(id) {
  const found = /^(seq|outside)-([0-9]+)$/.exec(id);
  if (!found) return null;
  const seq = Number(found[2]);
  const runs = /** @type {NodeListOf<HTMLDetailsElement>} */ (document.querySelectorAll("details[data-run]"));
  return Array.from(runs).find((run) => (run.getAttribute("data-run-key") || "").startsWith(`${found[1]}-`) &&
      Number(run.getAttribute("data-run-first")) <= seq && seq <= Number(run.getAttribute("data-run-last"))) || null;
}

function revealTarget() {
  let id = location.hash.slice(1);
  try { id = decodeURIComponent(id); } catch { /* the hash as written */ }
  const row = id && document.getElementById(id);
  const run = !row && id && runHolding(id);
  if (run) {  // opened, and scrolled to even when shown: no element has the anchor for the browser to go to
    run.open = true;
    reveal(run);
    run.scrollIntoView({ block: "start" });
    return;
  }
  if (!row || row.getClientRects().length) return;
  reveal(row);
  row.scrollIntoView({ block: "center" });
}
document.addEventListener("DOMContentLoaded", revealTarget);
window.addEventListener("hashchange", revealTarget);
