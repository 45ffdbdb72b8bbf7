// The session list's refresh: every `data-refresh-ms` (and after an upload) the page is read again
// and its rows and counts are patched in place, cell by cell, keyed by session; the cells a read
// fills are asked for (`/sessions-summaries`) and swapped in by id, on the uploads page too. The
// search form is never touched, so what the reader is typing, the caret and the focus stay where they are.
import { request } from "./request.js";

const ASKED_AT_ONCE = 50; // keys in one `/sessions-summaries` request: as many as it answers

/** @param {string} html */
function parse(html) { return new DOMParser().parseFromString(html, "text/html"); }

/** @param {Element} row */
function keyOf(row) { return row.getAttribute("data-session-key") || ""; }

// The markup each swapped-in cell came as: static/inspect.js words its times in the reader's zone,
// so its markup differs from the server's, and a refresh that brings the same markup leaves it alone.
/** @type {WeakMap<Element, string>} */
const served = new WeakMap();
/** @param {Element} old @param {Element} fresh */
function same(old, fresh) { return (served.has(old) ? served.get(old) : old.outerHTML) === fresh.outerHTML; }
/** @param {Element} old @param {Element} fresh */
function swap(old, fresh) {
  const node = document.importNode(fresh, true);
  served.set(node, fresh.outerHTML);
  old.replaceWith(node);
}

// The cells of the sessions still waiting for their read (a list's rows, an uploads page's sessions),
// asked for a page's worth at a time and filled in by id.
let asking = false;
/** @type {Element | null} */
let later = null; // a root asked for while a read was under way: asked once it ends
/** @param {Element} root */
function ask(root) {
  if (asking) { later = root; return; }
  const waiting = Array.from(root.querySelectorAll("[data-summary-pending][data-session-key]"));
  function next() {
    const rows = waiting.splice(0, ASKED_AT_ONCE);
    if (!rows.length) {
      asking = false;
      if (later) { const queued = later; later = null; ask(queued); }
      return;
    }
    const body = new URLSearchParams();
    rows.forEach((row) => { body.append("key", keyOf(row)); });
    request("/sessions-summaries", { method: "POST", body: body, credentials: "same-origin" })
      .then((response) => response.ok ? response.text() : Promise.reject(response.status))
      .then((html) => {
        const doc = parse(html);
        doc.body.querySelectorAll(":scope > [id]").forEach((cell) => {
          const old = document.getElementById(cell.id);
          if (old && !same(old, cell)) swap(old, cell);
        });
        rows.forEach((row) => {
          if (document.getElementById(`verdict-${keyOf(row)}`) && doc.getElementById(`verdict-${keyOf(row)}`)) {
            row.removeAttribute("data-summary-pending");
          }
        });
      })
      .then(next, () => { asking = false; /* asked again at the next refresh */ });
  }
  asking = true;
  next();
}

// The uploads page: its titles asked for, and its list read again after an upload from its zone.
const uploads = document.querySelector("[data-uploads-region]");
if (uploads) {
  ask(uploads);
  document.body.addEventListener("dsh:uploaded", () => {
    request(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then((response) => response.ok ? response.text() : Promise.reject(response.status))
      .then((html) => {
        const fresh = parse(html).querySelector("[data-uploads-region]");
        if (!fresh) return;
        uploads.innerHTML = fresh.innerHTML;
        ask(uploads);
      })
      .catch(() => { /* a reload shows them */ });
  });
}

// The session list's rows and counts, read again every `data-refresh-ms` and after an upload.
const listRegion = document.querySelector("[data-session-list-region]");
if (listRegion) refreshList(listRegion);

/** @param {Element} region */
function refreshList(region) {
  const every = parseInt(region.getAttribute("data-refresh-ms") || "", 10) || 4000;
  /** @type {number | undefined} */
  let timer;
  let reading = false;
  let again = false; // an upload arrived while a read was under way: read once more after it

  /** @param {Element} tr @returns {Map<string | null, Element>} */
  function cellsOf(tr) {
    const cells = new Map();
    for (let td = tr.firstElementChild; td; td = td.nextElementSibling) cells.set(td.getAttribute("data-cell"), td);
    return cells;
  }

  // A row already shown takes the new row's cells that differ. While the new row's read is pending,
  // the values shown from an earlier read stay until the new ones come (no flicker to "…").
  /** @param {Element} tr @param {Element} fresh */
  function patchRow(tr, fresh) {
    const pending = fresh.hasAttribute("data-summary-pending");
    const keep = pending && !tr.hasAttribute("data-summary-pending");
    const mine = cellsOf(tr);
    for (let td = fresh.firstElementChild; td; td = td.nextElementSibling) {
      const old = mine.get(td.getAttribute("data-cell"));
      if (!old || (keep && td.hasAttribute("data-summary-cell"))) continue;
      if (!same(old, td)) swap(old, td);
    }
    if (pending) tr.setAttribute("data-summary-pending", "");
    else tr.removeAttribute("data-summary-pending");
  }

  // The rows in the new page's order: patched when shown already, inserted when new, dropped when gone.
  /** @param {Document} doc */
  function patchRows(doc) {
    const body = region.querySelector("[data-session-list] tbody");
    const fresh = doc.querySelector("[data-session-list] tbody");
    if (!body || !fresh) return;
    /** @type {Map<string, Element>} */
    const shown = new Map();
    for (let tr = body.firstElementChild; tr; tr = tr.nextElementSibling) shown.set(keyOf(tr), tr);
    let at = body.firstElementChild; // where the next row belongs
    for (let row = fresh.firstElementChild; row; row = row.nextElementSibling) {
      let mine = shown.get(keyOf(row));
      if (mine) patchRow(mine, row);
      else mine = document.importNode(row, true);
      if (mine === at) at = at.nextElementSibling;
      else body.insertBefore(mine, at);
    }
    while (at) {
      const next = at.nextElementSibling;
      at.remove();
      at = next;
    }
    const table = /** @type {HTMLElement} */ (region.querySelector("[data-session-list]"));
    table.hidden = !body.firstElementChild;
  }

  /** @param {Document} doc */
  function patchParts(doc) {
    /** @type {NodeListOf<HTMLElement>} */ (region.querySelectorAll("[data-list-part]")).forEach((part) => {
      const fresh = /** @type {HTMLElement | null} */ (doc.querySelector(`[data-list-part="${part.getAttribute("data-list-part")}"]`));
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
    request(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then((response) => response.ok ? response.text() : Promise.reject(response.status))
      .then((html) => {
        const doc = parse(html);
        patchRows(doc);
        patchParts(doc);
        region.setAttribute("data-refreshed", String(Number(region.getAttribute("data-refreshed") || 0) + 1));
        ask(region);
      })
      .catch(() => { /* the server may be restarting: try again later */ })
      .then(() => {
        reading = false;
        if (again) { again = false; refresh(); } else schedule();
      });
  }

  document.body.addEventListener("dsh:uploaded", refresh);
  ask(region);
  schedule();
}
