// A one-file export's keyboard and permalinks. The served page does these in static/session.js and
// static/search.js, which also search and tail through the server, so they are not inlined: here j and k
// step from row to row (there is nothing to search; `dshStep`, inspect.js), and Enter or Space then opens
// the row (inspect.js). A permalink to a row inside a bookkeeping fold opens the fold (`dshReveal`).
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    var typing = event.target instanceof Element && event.target.closest("input, select, textarea");
    if (typing) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j") { event.preventDefault(); window.dshStep(1); }
    else if (event.key === "k") { event.preventDefault(); window.dshStep(-1); }
  });

  function revealTarget() {
    var id = location.hash.slice(1);
    try { id = decodeURIComponent(id); } catch (e) { /* the hash as written */ }
    var row = id && document.getElementById(id);
    if (!row || row.getClientRects().length) return;
    window.dshReveal(row);
    row.scrollIntoView({ block: "center" });
  }
  document.addEventListener("DOMContentLoaded", revealTarget);
  window.addEventListener("hashchange", revealTarget);
})();
