// The session list's refresh: every `data-refresh-ms` (and after an upload) the page is read again
// and its rows and counts are patched in place, cell by cell, keyed by session; the cells a read
// fills are asked for (`/sessions-summaries`) and swapped in by id. The search form is never
// touched, so what the reader is typing, the caret and the focus stay where they are.
(function () {
  "use strict";

  var region = document.querySelector("[data-session-list-region]");
  if (!region) return;
  var every = parseInt(region.getAttribute("data-refresh-ms"), 10) || 4000;
  var timer = null;
  var reading = false;
  var asking = false;
  var again = false; // an upload arrived while a read was under way: read once more after it

  function parse(html) { return new DOMParser().parseFromString(html, "text/html"); }

  function keyOf(tr) { return tr.getAttribute("data-session-key"); }

  // The markup each swapped-in cell came as: static/inspect.js words its times in the reader's zone,
  // so its markup differs from the server's, and a refresh that brings the same markup leaves it alone.
  var served = new WeakMap();
  function same(old, fresh) { return (served.has(old) ? served.get(old) : old.outerHTML) === fresh.outerHTML; }
  function swap(old, fresh) {
    var node = document.importNode(fresh, true);
    served.set(node, fresh.outerHTML);
    old.replaceWith(node);
  }

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

  // The cells of the rows still waiting for their read, filled in by id.
  function ask() {
    if (asking) return;
    var rows = region.querySelectorAll("tr[data-summary-pending]");
    if (!rows.length) return;
    var body = new URLSearchParams();
    rows.forEach(function (tr) { body.append("key", keyOf(tr)); });
    asking = true;
    fetch("/sessions-summaries", { method: "POST", body: body, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var doc = parse(html);
        doc.body.querySelectorAll(":scope > [id]").forEach(function (cell) {
          var old = document.getElementById(cell.id);
          if (old && !same(old, cell)) swap(old, cell);
        });
        rows.forEach(function (tr) {
          if (document.getElementById("verdict-" + keyOf(tr)) && doc.getElementById("verdict-" + keyOf(tr))) {
            tr.removeAttribute("data-summary-pending");
          }
        });
      })
      .catch(function () { /* asked again at the next refresh */ })
      .then(function () { asking = false; });
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
        ask();
      })
      .catch(function () { /* the server may be restarting: try again later */ })
      .then(function () {
        reading = false;
        if (again) { again = false; refresh(); } else schedule();
      });
  }

  document.body.addEventListener("dsh:uploaded", refresh);
  ask();
  schedule();
})();
