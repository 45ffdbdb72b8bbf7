// A one-file export's keyboard and permalinks. The served page does these in static/session.js and
// static/search.js, which also search and tail through the server, so they are not inlined: here j and k
// step from row to row (there is nothing to search; `dshStep`, inspect.js), and Enter or Space then opens
// the row (inspect.js). A permalink to a row inside a bookkeeping fold opens the fold (`dshReveal`), and
// one to an event inside a run row opens the run.
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    var typing = event.target instanceof Element && event.target.closest("input, select, textarea");
    if (typing) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j") { event.preventDefault(); window.dshStep(1); }
    else if (event.key === "k") { event.preventDefault(); window.dshStep(-1); }
  });

  // The run row holding the event a row anchor names (`seq-N`, `outside-N`): the export lists a run's
  // events as lines of the run (rows/run.html), with no element of their own to carry the anchor.
  function runHolding(id) {
    var found = /^(seq|outside)-([0-9]+)$/.exec(id);
    if (!found) return null;
    var seq = Number(found[2]);
    return Array.prototype.find.call(document.querySelectorAll("details[data-run]"), function (run) {
      return run.getAttribute("data-run-key").indexOf(found[1] + "-") === 0 &&
        Number(run.getAttribute("data-run-first")) <= seq && seq <= Number(run.getAttribute("data-run-last"));
    }) || null;
  }

  function revealTarget() {
    var id = location.hash.slice(1);
    try { id = decodeURIComponent(id); } catch (e) { /* the hash as written */ }
    var row = id && document.getElementById(id);
    var run = !row && id && runHolding(id);
    if (run) {  // opened, and scrolled to even when shown: no element has the anchor for the browser to go to
      run.open = true;
      window.dshReveal(run);
      run.scrollIntoView({ block: "start" });
      return;
    }
    if (!row || row.getClientRects().length) return;
    window.dshReveal(row);
    row.scrollIntoView({ block: "center" });
  }
  document.addEventListener("DOMContentLoaded", revealTarget);
  window.addEventListener("hashchange", revealTarget);
})();
