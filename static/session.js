// The session page: a row opened anywhere in place (permalinks, `?at=`, the end), and a page that stays
// small at any length: a few windows of rows, each loaded as its loader nears the viewport, the farthest
// dropped (a loader put back in its place) with the scroll position kept.
// `window.dshSession.open(anchor, index, params)` brings a row into view (the search uses it for matches
// outside the loaded windows): the row's element when it is loaded, else a Promise of it while its window
// is fetched in place; only when that fails is the page opened at row `index` (with `params`).
(function () {
  "use strict";
  var head = document.querySelector("[data-session-url]");
  var flow = document.querySelector("[data-chat-flow]");
  if (!head || !flow) return;
  var base = head.getAttribute("data-session-url");
  // What the flow holds while the reader scrolls: at most KEPT windows, and no more than NODES nodes
  // (elements and text) while rows lie FAR beyond the viewport: the farthest windows go whole, then the far
  // rows of the outermost ones, so the page stays under 3,000 nodes at any length, however rich its rows.
  // A loader loads its window once it is MARGIN near the viewport; FAR is farther, so that the loader put
  // back in the place of what went does not load it again at once.
  var KEPT = 4;
  var NODES = 2400;
  var MARGIN = 400;  // px
  var FAR = 1200;  // px

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

  function toEnd() { window.scrollTo(0, document.documentElement.scrollHeight); }

  // Rows parsed from a window's HTML, wired by htmx as if it had swapped them in.
  function fragment(html) {
    var template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }
  function wire(nodes) {
    if (!window.htmx) return;
    nodes.forEach(function (node) { if (node.nodeType === 1) window.htmx.process(node); });
  }

  // -- the windows in the page ------------------------------------------------------------------

  function windows() { return flow.querySelectorAll(":scope > [data-window]"); }

  // The element from `el` on (going `step`) that draws a box: the wrapper draws none, nor do hidden rows.
  function boxed(el, step) {
    while (el && !(el.nodeType === 1 && el.getClientRects().length)) el = el[step];
    return el;
  }

  // An element lies far beyond the viewport on one side: above it (earlier), or below it.
  function beyond(el, earlier) {
    var box = el.getBoundingClientRect();
    return earlier ? box.bottom < -FAR : box.top > innerHeight + FAR;
  }

  // A window is near the viewport when any of its rows is not far beyond it.
  function near(win) {
    var first = boxed(win.firstChild, "nextSibling");
    var last = boxed(win.lastChild, "previousSibling");
    return Boolean(first) && !beyond(last, true) && !beyond(first, false);
  }

  function nodes() {
    var walker = document.createTreeWalker(flow, NodeFilter.SHOW_ALL), n = 0;
    while (walker.nextNode()) n++;
    return n;
  }

  // The transcript rows a node of a window holds: a row, or a fold of them.
  function rowsOf(node) {
    if (node.nodeType !== 1) return 0;
    return (node.matches(".flow-item") ? 1 : 0) + node.querySelectorAll(".flow-item").length;
  }

  // A loader for the window of rows that ends at row `at` (earlier), or that starts there.
  function loader(earlier, at) {
    var el = document.createElement(earlier ? "button" : "div");
    el.className = "window-loader";
    if (earlier) {
      el.type = "button";
      el.setAttribute("data-window-earlier", "");
      el.setAttribute("data-window-href", base + "/rows?to=" + at + "&direction=earlier");
    } else {
      el.setAttribute("data-window-next", String(at));
      el.setAttribute("data-window-href", base + "/rows?from=" + at + "&direction=later");
    }
    el.textContent = flow.getAttribute(earlier ? "data-label-earlier" : "data-label-later");
    return el;
  }

  // What lies beyond `win` on one side goes (a loader; on the later side the rows the live tail appended),
  // and a loader for the rows before row `at` (earlier), or from it on, takes its place.
  function edge(win, earlier, at) {
    if (earlier) {
      while (flow.firstChild !== win) flow.removeChild(flow.firstChild);
      flow.insertBefore(loader(true, at), win);
    } else {
      while (win.nextSibling) flow.removeChild(win.nextSibling);
      flow.appendChild(loader(false, at));
    }
  }

  // The window farthest on one side goes whole: the loader that brings it back lies where it was.
  function drop(win, earlier) {
    edge(win, earlier, Number(win.getAttribute(earlier ? "data-to" : "data-from")));
    win.remove();
  }

  // The rows of the outermost window on one side that lie far beyond the viewport go; true when any did.
  function trim(win, earlier) {
    var step = earlier ? "nextSibling" : "previousSibling";
    var keep = earlier ? win.firstChild : win.lastChild;
    while (keep && !(boxed(keep, step) === keep && !beyond(keep, earlier))) keep = keep[step];
    var node = earlier ? win.firstChild : win.lastChild, gone = 0;
    if (!keep || node === keep) return false;
    while (node !== keep) {
      var next = node[step];
      gone += rowsOf(node);
      win.removeChild(node);
      node = next;
    }
    var attribute = earlier ? "data-from" : "data-to";
    var at = Number(win.getAttribute(attribute)) + (earlier ? gone : -gone);
    win.setAttribute(attribute, String(at));
    edge(win, earlier, at);
    return true;
  }

  function crowded(all) { return all.length > KEPT || (all.length > 1 && nodes() > NODES); }

  // After rows came in on the other side: the farthest windows on `side` go while the page is crowded,
  // then, while it holds over NODES nodes, the far rows of the outermost windows, this side first.
  // Each step keeps the scroll position before the next one measures what is near.
  function prune(side) {
    var earlier = side === "earlier", all = windows();
    while (crowded(all)) {
      var far = earlier ? all[0] : all[all.length - 1];
      if (near(far)) break;
      keepingScroll(function () { drop(far, earlier); });
      all = windows();
    }
    [earlier, !earlier].forEach(function (which) {
      var outer = windows();
      if (!outer.length || nodes() <= NODES) return;
      keepingScroll(function () { trim(outer[which ? 0 : outer.length - 1], which); });
    });
  }

  // The first row on screen keeps its place on screen while `change` adds and drops rows around it.
  function keepingScroll(change) {
    var rows = flow.querySelectorAll(".flow-item"), ref = null;
    for (var i = 0; i < rows.length && !ref; i++) if (rows[i].getBoundingClientRect().bottom > 0) ref = rows[i];
    var before = ref ? ref.getBoundingClientRect().top : 0;
    change();
    if (ref && ref.isConnected) {
      var moved = ref.getBoundingClientRect().top - before;
      if (moved) window.scrollBy(0, moved);
    }
  }

  // A loader's window in its place, then the farthest window on the other side dropped.
  function load(el) {
    if (el.hasAttribute("data-loading")) return;
    el.setAttribute("data-loading", "");
    var earlier = el.hasAttribute("data-window-earlier");
    fetch(el.getAttribute("data-window-href"))
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then(function (html) {
        if (!el.isConnected) return;
        keepingScroll(function () {
          var added = Array.prototype.slice.call(fragment(html).childNodes);
          el.replaceWith.apply(el, added);
          wire(added);
        });
        prune(earlier ? "later" : "earlier");
      })
      .catch(function () { el.removeAttribute("data-loading"); });  // a click tries again
  }

  var watcher = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) { if (entry.isIntersecting) load(entry.target); });
  }, { rootMargin: MARGIN + "px 0px" });
  function watch() { flow.querySelectorAll(":scope > [data-window-href]").forEach(function (el) { watcher.observe(el); }); }
  // loaders come and go with the windows (and the live tail's rewrite notice replaces the flow)
  new MutationObserver(function (records) {
    records.forEach(function (record) {
      record.removedNodes.forEach(function (node) { if (node.nodeType === 1) watcher.unobserve(node); });
    });
    watch();
  }).observe(flow, { childList: true });
  watch();
  document.addEventListener("click", function (event) {
    var el = event.target instanceof Element && event.target.closest("[data-chat-flow] > [data-window-href]");
    if (el) load(el);
  });
  // Rows the live tail appends (after the last window: it arrives only when that is in the page) join
  // that window, which ends where the log does now; they weigh on the page like any, so the earliest
  // rows make room for them.
  function adopt(win) {
    var count = 0;
    while (win.nextSibling && !(win.nextSibling.nodeType === 1 && win.nextSibling.hasAttribute("data-window-href"))) {
      win.appendChild(win.nextSibling);
    }
    win.childNodes.forEach(function (node) { count += rowsOf(node); });
    win.setAttribute("data-to", String(Number(win.getAttribute("data-from")) + count));
  }
  document.body.addEventListener("htmx:sseMessage", function (event) {
    if (!event.target.hasAttribute("data-live-rows")) return;
    var all = windows();
    if (all.length) adopt(all[all.length - 1]);
    prune("earlier");
  });

  // -- opening a row, or the end, in place -------------------------------------------------------

  // The window `at` opens (an anchor, or "end") in place of the flow's rows; the latest asked wins.
  var asked = 0;
  function openWindow(at) {
    var mine = ++asked;
    return fetch(base + "/rows?at=" + encodeURIComponent(at))
      .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then(function (html) {
        if (mine !== asked) return false;
        flow.replaceChildren(fragment(html));
        wire(Array.prototype.slice.call(flow.childNodes));
        return true;
      });
  }

  function openWindowAt(index, anchor, extra) {
    var p = extra || new URLSearchParams();
    p.set("from", String(Math.max(0, index - 5)));
    location.assign(base + "?" + p.toString() + "#" + encodeURIComponent(anchor));
  }

  // The row at `anchor` marked and scrolled to, its window fetched first when it is not loaded.
  function open(anchor, index, extra) {
    var el = document.getElementById(anchor);
    if (el) { mark(el); return el; }
    return openWindow(anchor).then(function (shown) {
      var found = shown ? document.getElementById(anchor) : null;
      if (found) mark(found);
      return found;
    }, function () {
      if (typeof index === "number") openWindowAt(index, anchor, extra);
      return null;
    });
  }

  // The session's end in view, its last window fetched first when the page does not hold it.
  function openEnd() {
    var ready = flow.querySelector("[data-window-next]") ? openWindow("end") : Promise.resolve(true);
    return ready.then(function (shown) { if (shown) toEnd(); }, function () { /* the page stays as it is */ });
  }
  window.dshSession = { open: open };

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target instanceof Element && target.closest("input, select, textarea, [contenteditable]")) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "End" || event.key === "G") { event.preventDefault(); openEnd(); }
  });
  var latest = document.querySelector("[data-latest]");
  if (latest) latest.addEventListener("click", function (event) { event.preventDefault(); openEnd(); });
  var follow = document.querySelector("[data-follow]");
  if (follow) follow.addEventListener("change", function () { if (follow.checked) openEnd(); });

  // A permalink (the hash) names a row, on this load or later in this page (a link followed, Back, Forward).
  window.addEventListener("hashchange", function () {
    var anchor = anchorFromHash();
    if (anchor) open(anchor);
  });
  // The row the page was opened at (`?at=`) is scrolled to, unless the hash names another.
  var hashed = anchorFromHash();
  var at = flow.getAttribute("data-open-at");
  if (hashed) open(hashed);
  else if (at === "end") toEnd();
  else if (at && document.getElementById(at)) mark(document.getElementById(at));
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
  function noteOpen(row) {
    var open = [];
    disclosures(row).forEach(function (header, i) {
      if (header.getAttribute("aria-expanded") === "true") open.push(i);
    });
    if (open.length) reopen[row.getAttribute("data-chat-flow-key")] = open;
  }
  document.body.addEventListener("htmx:oobBeforeSwap", function (event) {
    var row = event.detail.target;
    if (!row || !row.classList.contains("flow-item") || !row.hasAttribute("data-chat-flow-key")) return;
    noteOpen(row);
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
  // The tail sends the rows from `key` on again (the log moved on before it connected, or it connected
  // again): the page drops that row and every one after it first, noting the disclosures open in them,
  // so each row is there once and opens again as it was. Windows left empty go, but the one the rows
  // join (`adopt` counts it again); folds left empty go with them (static/inspect.js).
  function dropRowsFrom(key) {
    var first = flow.querySelector('.flow-item[data-chat-flow-key="' + key + '"]');
    if (!first) {
      // dropped as the reader read on since the page was drawn: what it holds is not known any more
      window.location.reload();
      return;
    }
    var joined = first.closest("[data-window]");
    flow.querySelectorAll(".flow-item[data-chat-flow-key]").forEach(function (row) {
      if (!row.isConnected || (row !== first && !(first.compareDocumentPosition(row) & Node.DOCUMENT_POSITION_FOLLOWING))) return;
      noteOpen(row);
      row.remove();
    });
    flow.querySelectorAll(":scope > [data-window]").forEach(function (win) {
      if (win !== joined && !win.querySelector(".flow-item")) win.remove();
    });
  }
  document.body.addEventListener("htmx:sseMessage", function (event) {
    if (event.target.hasAttribute("data-live-resend")) {
      if (flow.querySelector("[data-window-next]")) return;  // its rows are not sent here (see above)
      var key = String(event.detail.data || "").trim();
      if (/^[a-z]+(-[0-9]+)+$/.test(key)) dropRowsFrom(key);
      return;
    }
    reopenSwapped();  // after the whole update: a row removed and sent again is back by now too
    // A notice says the log was rewritten (its rows replaced in place along with it) or is gone.
    if (event.target.hasAttribute("data-live-notice")) {
      event.target.hidden = false;
    } else if (event.target.hasAttribute("data-live-rows") && follow && follow.checked) {
      window.scrollTo(0, document.documentElement.scrollHeight);
    }
  });
})();
