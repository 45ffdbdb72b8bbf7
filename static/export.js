// A one-file export's keyboard and path buttons. The served page does these in static/session.js,
// which also searches and tails through the server, so it is not inlined: here j and k step from
// row to row (there is nothing to search), and Enter or Space then opens the row (inspect.js).
(function () {
  "use strict";

  function rows() { return Array.prototype.slice.call(document.querySelectorAll("[data-chat-flow] > .flow-item")); }

  // The row j (by 1) or k (by -1) goes to: the next or previous to the one marked last, or, with
  // none marked yet, the first row on screen or the one before it.
  function destination(list, by) {
    for (var i = 0; i < list.length; i++) if (list[i].hasAttribute("data-current")) return i + by;
    for (var j = 0; j < list.length; j++) if (list[j].getBoundingClientRect().bottom > 0) return by > 0 ? j : j - 1;
    return list.length - 1;
  }

  function mark(row) {
    document.querySelectorAll(".flow-item[data-current]").forEach(function (e) { e.removeAttribute("data-current"); });
    row.setAttribute("data-current", "true");
    row.scrollIntoView({ block: "center" });
    var header = row.querySelector("[data-disclosure-row][data-expandable]");
    if (header) header.focus({ preventScroll: true });
  }

  function step(by) {
    var list = rows();
    if (!list.length) return;
    mark(list[Math.max(0, Math.min(list.length - 1, destination(list, by)))]);
  }

  document.addEventListener("keydown", function (event) {
    var typing = event.target instanceof Element && event.target.closest("input, select, textarea");
    if (typing) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j") { event.preventDefault(); step(1); }
    else if (event.key === "k") { event.preventDefault(); step(-1); }
  });
})();
