// The session page: permalinks beyond the loaded window. `window.dshSession.open(anchor, params)`
// brings a row into view (the search uses it for matches outside the loaded windows).
(function () {
  "use strict";
  var head = document.querySelector("[data-session-url]");
  if (!head) return;
  var base = head.getAttribute("data-session-url");
  var api = "/api" + base;

  function anchorFromHash() {
    if (location.hash.length < 2) return null;
    try { return decodeURIComponent(location.hash.slice(1)); } catch (e) { return location.hash.slice(1); }
  }

  // A row inside a closed fold or body is opened first: `window.dshReveal(el)` (inspect.js) knows how.
  function mark(el) {
    if (window.dshReveal) window.dshReveal(el);
    document.querySelectorAll(".flow-item[data-current]").forEach(function (e) { e.removeAttribute("data-current"); });
    el.setAttribute("data-current", "true");
    el.scrollIntoView({ block: "center" });
  }

  function openWindowAt(index, anchor, extra) {
    var p = extra || new URLSearchParams();
    p.set("from", String(Math.max(0, index - 5)));
    location.assign(base + "?" + p.toString() + "#" + encodeURIComponent(anchor));
  }

  // The row at `anchor` marked and scrolled to; `index` (its row index) opens its window when it is not loaded.
  function open(anchor, index, extra) {
    var el = document.getElementById(anchor);
    if (el) { mark(el); return el; }
    openWindowAt(index, anchor, extra);
    return null;
  }
  window.dshSession = { open: open };

  // A permalink to a row outside the first window: find its window and open it there.
  var anchor = anchorFromHash();
  if (anchor) {
    var el = document.getElementById(anchor);
    if (el) { mark(el); }
    else {
      fetch(api + "/locate?anchor=" + encodeURIComponent(anchor))
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (data) { if (data) openWindowAt(data.index, anchor, new URLSearchParams(location.search)); });
    }
  }
})();

// Live tail: rows appended to the log arrive over SSE (static/htmx-ext-sse); the page keeps
// open disclosures and its scroll position, and follows the end when asked.
(function () {
  "use strict";
  var live = document.querySelector("[data-live]");
  if (!live) return;
  var flow = document.querySelector("[data-chat-flow]");
  var follow = live.querySelector("[data-follow]");
  // data-live-connected says the page is following the log now (the stylesheet shows it).
  document.body.addEventListener("htmx:sseOpen", function () { live.setAttribute("data-live-connected", ""); });
  document.body.addEventListener("htmx:sseError", function () { live.removeAttribute("data-live-connected"); });
  document.body.addEventListener("htmx:sseBeforeMessage", function (event) {
    // Rows past a window not loaded yet arrive with that window, not here.
    if (event.type && event.target.hasAttribute("data-live-rows") && flow.querySelector("[data-window-next]")) {
      event.preventDefault();
    }
  });
  // A row swapped in place (a tool row whose result arrived) comes back as the server renders
  // it, closed. The disclosures the reader had open in it are noted before the swap, by row id
  // and by their place among the row's disclosures, and opened again once the update is in, as a
  // click would open them (inline bodies copied, fetched bodies requested). Rows are noted by their
  // key, not their id: a tool row takes its result's message id as its id when the result arrives.
  var reopen = {};
  function disclosures(row) { return row.querySelectorAll("[data-disclosure-row][data-expandable]"); }
  document.body.addEventListener("htmx:oobBeforeSwap", function (event) {
    var row = event.detail.target;
    if (!row || !row.classList.contains("flow-item") || !row.hasAttribute("data-chat-flow-key")) return;
    var open = [];
    disclosures(row).forEach(function (header, i) {
      if (header.getAttribute("aria-expanded") === "true") open.push(i);
    });
    if (open.length) reopen[row.getAttribute("data-chat-flow-key")] = open;
  });
  function reopenSwapped() {
    Object.keys(reopen).forEach(function (key) {
      var row = flow.querySelector('.flow-item[data-chat-flow-key="' + key + '"]');
      if (!row) return;
      // htmx wires a swapped row's hx-get only when it settles, a moment later; wired now
      // (htmx then leaves it be), a body fetched on open is requested by the click below.
      if (window.htmx) window.htmx.process(row);
      // In document order: an opened body adds its own disclosures after its header, so the
      // places noted before the swap line up again for the ones that follow.
      reopen[key].forEach(function (i) {
        var header = disclosures(row)[i];
        if (header && header.getAttribute("aria-expanded") !== "true") header.click();
      });
    });
    reopen = {};
  }
  document.body.addEventListener("htmx:sseMessage", function (event) {
    reopenSwapped();  // after the whole update: a row removed and sent again is back by now too
    // A notice says the log was rewritten (its rows replaced in place along with it) or is gone.
    if (event.target.hasAttribute("data-live-notice")) {
      event.target.hidden = false;
    } else if (event.target.hasAttribute("data-live-rows") && follow && follow.checked) {
      window.scrollTo(0, document.documentElement.scrollHeight);
    }
  });
})();
