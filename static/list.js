// The session list's refresh: every `data-refresh-ms` (and after an upload) the page is read again
// and its rows and counts are patched in place, cell by cell, keyed by session; the cells a read
// fills are asked for (`/sessions-summaries`) and swapped in by id, on the uploads page too. The
// search form is never touched, so what the reader is typing, the caret and the focus stay where they are.
(function () {
  "use strict";

  var ASKED_AT_ONCE = 50; // keys in one `/sessions-summaries` request: as many as it answers

  function parse(html) { return new DOMParser().parseFromString(html, "text/html"); }

  function keyOf(row) { return row.getAttribute("data-session-key"); }

  // The markup each swapped-in cell came as: static/inspect.js words its times in the reader's zone,
  // so its markup differs from the server's, and a refresh that brings the same markup leaves it alone.
  var served = new WeakMap();
  function same(old, fresh) { return (served.has(old) ? served.get(old) : old.outerHTML) === fresh.outerHTML; }
  function swap(old, fresh) {
    var node = document.importNode(fresh, true);
    served.set(node, fresh.outerHTML);
    old.replaceWith(node);
  }

  // The cells of the sessions still waiting for their read (a list's rows, an uploads page's sessions),
  // asked for a page's worth at a time and filled in by id.
  var asking = false;
  var later = null; // a root asked for while a read was under way: asked once it ends
  function ask(root) {
    if (asking) { later = root; return; }
    var waiting = Array.prototype.slice.call(root.querySelectorAll("[data-summary-pending][data-session-key]"));
    function next() {
      var rows = waiting.splice(0, ASKED_AT_ONCE);
      if (!rows.length) {
        asking = false;
        if (later) { var queued = later; later = null; ask(queued); }
        return;
      }
      var body = new URLSearchParams();
      rows.forEach(function (row) { body.append("key", keyOf(row)); });
      fetch("/sessions-summaries", { method: "POST", body: body, credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
        .then(function (html) {
          var doc = parse(html);
          doc.body.querySelectorAll(":scope > [id]").forEach(function (cell) {
            var old = document.getElementById(cell.id);
            if (old && !same(old, cell)) swap(old, cell);
          });
          rows.forEach(function (row) {
            if (document.getElementById("verdict-" + keyOf(row)) && doc.getElementById("verdict-" + keyOf(row))) {
              row.removeAttribute("data-summary-pending");
            }
          });
        })
        .then(next, function () { asking = false; /* asked again at the next refresh */ });
    }
    asking = true;
    next();
  }

  // The uploads page: its titles asked for, and its list read again after an upload from its zone.
  var uploads = document.querySelector("[data-uploads-region]");
  if (uploads) {
    ask(uploads);
    document.body.addEventListener("dsh:uploaded", function () {
      fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
        .then(function (html) {
          var fresh = parse(html).querySelector("[data-uploads-region]");
          if (!fresh) return;
          uploads.innerHTML = fresh.innerHTML;
          ask(uploads);
        })
        .catch(function () { /* a reload shows them */ });
    });
  }

  var region = document.querySelector("[data-session-list-region]");
  if (!region) return;
  var every = parseInt(region.getAttribute("data-refresh-ms"), 10) || 4000;
  var timer = null;
  var reading = false;
  var again = false; // an upload arrived while a read was under way: read once more after it

  function cellsOf(tr) {
    var cells = {};
    for (var td = tr.firstElementChild; td; td = td.nextElementSibling) cells[td.getAttribute("data-cell")] = td;
    return cells;
  }

  // A row already shown takes the new row's cells that differ. While the new row's read is pending,
  // the values shown from an earlier read stay until the new ones come (no flicker to "…").
  function patchRow(tr, fresh) {
    var pending = fresh.hasAttribute("data-summary-pending");
    var keep = pending && !tr.hasAttribute("data-summary-pending");
    var mine = cellsOf(tr);
    for (var td = fresh.firstElementChild; td; td = td.nextElementSibling) {
      var old = mine[td.getAttribute("data-cell")];
      if (!old || (keep && td.hasAttribute("data-summary-cell"))) continue;
      if (!same(old, td)) swap(old, td);
    }
    if (pending) tr.setAttribute("data-summary-pending", "");
    else tr.removeAttribute("data-summary-pending");
  }

  // The rows in the new page's order: patched when shown already, inserted when new, dropped when gone.
  function patchRows(doc) {
    var body = region.querySelector("[data-session-list] tbody");
    var fresh = doc.querySelector("[data-session-list] tbody");
    if (!body || !fresh) return;
    var shown = new Map();
    for (var tr = body.firstElementChild; tr; tr = tr.nextElementSibling) shown.set(keyOf(tr), tr);
    var at = body.firstElementChild; // where the next row belongs
    for (var row = fresh.firstElementChild; row; row = row.nextElementSibling) {
      var mine = shown.get(keyOf(row));
      if (mine) patchRow(mine, row);
      else mine = document.importNode(row, true);
      if (mine === at) at = at.nextElementSibling;
      else body.insertBefore(mine, at);
    }
    while (at) {
      var next = at.nextElementSibling;
      at.remove();
      at = next;
    }
    var table = region.querySelector("[data-session-list]");
    table.hidden = !body.firstElementChild;
  }

  function patchParts(doc) {
    region.querySelectorAll("[data-list-part]").forEach(function (part) {
      var fresh = doc.querySelector('[data-list-part="' + part.getAttribute("data-list-part") + '"]');
      if (!fresh) return;
      if (part.innerHTML !== fresh.innerHTML) part.innerHTML = fresh.innerHTML;
      part.hidden = fresh.hidden;
    });
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, every);
  }

  function refresh() {
    if (reading) { again = true; return; }
    reading = true;
    fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var doc = parse(html);
        patchRows(doc);
        patchParts(doc);
        region.setAttribute("data-refreshed", String(Number(region.getAttribute("data-refreshed") || 0) + 1));
        ask(region);
      })
      .catch(function () { /* the server may be restarting: try again later */ })
      .then(function () {
        reading = false;
        if (again) { again = false; refresh(); } else schedule();
      });
  }

  document.body.addEventListener("dsh:uploaded", refresh);
  ask(region);
  schedule();
})();
