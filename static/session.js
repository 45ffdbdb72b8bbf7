// The session page: a row opened anywhere in place (permalinks, `?at=`, the end), and a page that stays
// small at any length: a few windows of rows, each loaded as its loader nears the viewport, the farthest
// dropped (a loader put back in its place) with the scroll position kept.
// `open(anchor, index, params)` brings a row into view (the search uses it for matches outside the
// loaded windows): the row's element when it is loaded, else a Promise of it while its window is fetched
// in place; only when that fails is the page opened at row `index` (with `params`).
import { reveal } from "./folds.js";
import { request } from "./request.js";
import { keepingScroll as keepingPlace } from "./scrolling.js";
import { fill } from "./wording.js";

/**
 * A row brought into view: its element, a promise of it (null when it is not there), or null.
 * @typedef {(anchor: string, index?: number, params?: URLSearchParams) => Element | Promise<Element | null> | null} Opener
 */

/** @type {Opener | null} the session page's, once `showSession` has set the page up; no other page has rows */
let opener = null;

/** @type {Opener} */
export function open(anchor, index, params) { return opener ? opener(anchor, index, params) : null; }

/**
 * The element an htmx event was fired on (htmx fires them on elements only).
 * @param {Event} event
 */
function firedOn(event) { return /** @type {HTMLElement} */ (event.target); }

const sessionHead = document.querySelector("[data-session-url]");
const chatFlow = document.querySelector("[data-chat-flow]");
if (sessionHead && chatFlow) showSession(sessionHead, chatFlow);
const liveBar = document.querySelector("[data-live]");
if (liveBar && chatFlow) followLive(liveBar, chatFlow);

/** @param {Element} head @param {Element} flow */
function showSession(head, flow) {
  const base = head.getAttribute("data-session-url");
  const size = Number(flow.getAttribute("data-window-rows")) || Infinity;  // the most rows a window holds
  // What the flow holds while the reader scrolls: at most KEPT windows, and no more than NODES nodes
  // (elements and text) while rows lie FAR beyond the viewport: the farthest windows go whole, then the far
  // rows of the outermost ones, so the page stays under 3,000 nodes at any length, however rich its rows.
  // A loader loads its window once it is MARGIN near the viewport; FAR is farther, so that the loader put
  // back in the place of what went does not load it again at once.
  const KEPT = 4;
  const NODES = 2400;
  const MARGIN = 400;  // px
  const FAR = 1000;  // px
  // Rows the reader leaves behind go sooner, once BEHIND (still beyond MARGIN, so the loader put back does not
  // load them again at once); a window asks for rows to fill the page to FILLED nodes, NODES less a margin for
  // rows heavier than those it holds, and for at least FEWEST (see `room`).
  const BEHIND = 600;  // px
  const FILLED = 2000;
  const FEWEST = 10;

  function anchorFromHash() {
    if (location.hash.length < 2) return null;
    try { return decodeURIComponent(location.hash.slice(1)); } catch { return location.hash.slice(1); }
  }

  // A row inside a closed fold or body is opened first: `reveal(el)` (folds.js) knows how.
  /** @param {Element} el */
  function mark(el) {
    reveal(el);
    document.querySelectorAll(".flow-item[data-current]").forEach((e) => { e.removeAttribute("data-current"); });
    el.setAttribute("data-current", "true");
    el.scrollIntoView({ block: "center" });
  }

  function toEnd() { window.scrollTo(0, document.documentElement.scrollHeight); }

  // Rows parsed from a window's HTML, wired by htmx as if it had swapped them in.
  /** @param {string} html */
  function fragment(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  }
  /** @param {Node[]} nodes */
  function wire(nodes) {
    const htmx = window.htmx;
    if (!htmx) return;
    nodes.forEach((node) => { if (node instanceof Element) htmx.process(node); });
  }

  // -- the windows in the page ------------------------------------------------------------------

  function windows() { return flow.querySelectorAll(":scope > [data-window]"); }

  // The element from `el` on (going `step`) that draws a box: the wrapper draws none, nor do hidden rows.
  /** @param {ChildNode | null} node @param {"nextSibling" | "previousSibling"} step @returns {Element | null} */
  function boxed(node, step) {
    while (node && !(node instanceof Element && node.getClientRects().length)) node = node[step];
    return node;
  }

  // An element lies `far` beyond the viewport on one side: above it (earlier), or below it.
  /** @param {Element} el @param {boolean} earlier @param {number} [far] */
  function beyond(el, earlier, far = FAR) {
    const box = el.getBoundingClientRect();
    return earlier ? box.bottom < -far : box.top > innerHeight + far;
  }

  // A window is near the viewport when any of its rows is not far beyond it.
  /** @param {Element} win */
  function near(win) {
    const first = boxed(win.firstChild, "nextSibling");
    const last = boxed(win.lastChild, "previousSibling");
    return first !== null && last !== null && !beyond(last, true) && !beyond(first, false);
  }

  function nodes() {
    const walker = document.createTreeWalker(flow, NodeFilter.SHOW_ALL);
    let n = 0;
    while (walker.nextNode()) n++;
    return n;
  }

  // The transcript rows a node of a window holds: a row, or a fold of them.
  /** @param {Node} node */
  function rowsOf(node) {
    if (!(node instanceof Element)) return 0;
    return (node.matches(".flow-item") ? 1 : 0) + node.querySelectorAll(".flow-item").length;
  }

  // A loader for the window of rows that ends at row `at` (earlier), or that starts there.
  /** @param {boolean} earlier @param {number} at */
  function loader(earlier, at) {
    const el = earlier ? document.createElement("button") : document.createElement("div");
    el.className = "window-loader";
    if (el instanceof HTMLButtonElement) {
      el.type = "button";
      el.setAttribute("data-window-earlier", "");
      el.setAttribute("data-window-href", `${base}/rows?to=${at}&direction=earlier`);
    } else {
      el.setAttribute("data-window-next", String(at));
      el.setAttribute("data-window-href", `${base}/rows?from=${at}&direction=later`);
    }
    el.textContent = flow.getAttribute(earlier ? "data-label-earlier" : "data-label-later");
    return el;
  }

  // What lies beyond `win` on one side goes (a loader; on the later side the rows the live tail appended),
  // and a loader for the rows before row `at` (earlier), or from it on, takes its place.
  /** @param {Element} win @param {boolean} earlier @param {number} at */
  function edge(win, earlier, at) {
    if (earlier) {
      while (flow.firstChild && flow.firstChild !== win) flow.removeChild(flow.firstChild);
      flow.insertBefore(loader(true, at), win);
    } else {
      while (win.nextSibling) flow.removeChild(win.nextSibling);
      flow.appendChild(loader(false, at));
    }
  }

  // The window farthest on one side goes whole: the loader that brings it back lies where it was.
  /** @param {Element} win @param {boolean} earlier */
  function drop(win, earlier) {
    edge(win, earlier, Number(win.getAttribute(earlier ? "data-to" : "data-from")));
    win.remove();
  }

  // The rows of the outermost window on one side that lie `far` beyond the viewport go (the window, when all
  // of them do); true when any did.
  /** @param {Element} win @param {boolean} earlier @param {number} far */
  function trim(win, earlier, far) {
    const step = earlier ? "nextSibling" : "previousSibling";
    let keep = earlier ? win.firstChild : win.lastChild;
    while (keep && !(keep instanceof Element && boxed(keep, step) === keep && !beyond(keep, earlier, far))) keep = keep[step];
    let node = earlier ? win.firstChild : win.lastChild;
    let gone = 0;
    if (!keep) {  // the whole window lies beyond: it goes, unless it is the only one, or draws no row at all
      if (windows().length < 2 || !boxed(win.firstChild, "nextSibling")) return false;
      drop(win, earlier);
      return true;
    }
    if (node === keep) return false;
    while (node && node !== keep) {
      const next = node[step];
      gone += rowsOf(node);
      win.removeChild(node);
      node = next;
    }
    const attribute = earlier ? "data-from" : "data-to";
    const at = Number(win.getAttribute(attribute)) + (earlier ? gone : -gone);
    win.setAttribute(attribute, String(at));
    edge(win, earlier, at);
    return true;
  }

  /** @param {NodeListOf<Element>} all */
  function crowded(all) { return all.length > KEPT || (all.length > 1 && nodes() > NODES); }

  // After rows came in on the other side: the farthest windows on `side` go while the page is crowded, then
  // the far rows of the outermost windows: on this side past BEHIND once the page holds over FILLED nodes,
  // on the other past FAR once it holds over NODES.
  // Each step keeps the scroll position before the next one measures what is near.
  /** @param {"earlier" | "later"} side */
  function prune(side) {
    const earlier = side === "earlier";
    let all = windows();
    while (crowded(all)) {
      const far = earlier ? all[0] : all[all.length - 1];
      if (near(far)) break;
      keepingScroll(() => { drop(far, earlier); });
      all = windows();
    }
    [earlier, !earlier].forEach((which) => {
      const behind = which === earlier;
      let cut = true;
      while (cut && nodes() > (behind ? FILLED : NODES)) {
        const outer = windows();
        if (!outer.length) return;
        keepingScroll(() => { cut = trim(outer[which ? 0 : outer.length - 1], which, behind ? BEHIND : FAR); });
      }
    });
  }

  // The first row on screen keeps its place on screen while `change` adds and drops rows around it.
  /** @param {() => void} change */
  function keepingScroll(change) { keepingPlace(flow.querySelectorAll(".flow-item"), change); }

  // The rows a window may bring: as many as fill the page to FILLED nodes besides the rows it keeps, those near
  // the viewport (BEHIND on the side the reader leaves, FAR ahead), at the weight of the rows it has. A whole
  // window instead (60 rows) had its far rows trimmed as it came and fetched again a moment later: a third of
  // the bytes a long session's read cost (issue 37). A folded row lies where its fold does; a row hidden
  // whole (a bookkeeping fold in the reading view) where the row drawn before it does.
  /** @param {boolean} earlier */
  function room(earlier) {
    const rows = flow.querySelectorAll(".flow-item");
    if (!rows.length) return size;
    let kept = 0;
    let near = false;
    rows.forEach((row) => {
      const shown = row.getClientRects().length ? row : row.closest("[data-fold]");
      if (shown?.getClientRects().length) {
        near = !beyond(shown, true, earlier ? FAR : BEHIND) && !beyond(shown, false, earlier ? BEHIND : FAR);
      }
      if (near) kept++;
    });
    return Math.min(size, Math.max(FEWEST, Math.floor((FILLED * rows.length) / nodes()) - kept));
  }

  // A window's address with no more rows than `room` allows: ending where its loader says, or starting there.
  /** @param {Element} el a loader @param {boolean} earlier */
  function windowUrl(el, earlier) {
    const url = new URL(el.getAttribute("data-window-href") || "", location.href);
    const rows = room(earlier);
    const at = Number(url.searchParams.get(earlier ? "to" : "from"));
    if (earlier) url.searchParams.set("from", String(Math.max(0, at - rows)));
    else url.searchParams.set("to", String(at + rows));
    return url.pathname + url.search;
  }

  // A loader's window in its place, then the farthest window on the other side dropped.
  /** @param {Element} el a loader */
  function load(el) {
    if (el.hasAttribute("data-loading")) return;
    el.setAttribute("data-loading", "");
    const earlier = el.hasAttribute("data-window-earlier");
    request(windowUrl(el, earlier))
      .then((r) => { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then((html) => {
        if (!el.isConnected) return;
        keepingScroll(() => {
          const added = Array.from(fragment(html).childNodes);
          el.replaceWith(...added);
          wire(added);
        });
        prune(earlier ? "later" : "earlier");
      })
      .catch(() => { el.removeAttribute("data-loading"); });  // a click tries again
  }

  const watcher = new IntersectionObserver((entries) => {
    entries.forEach((entry) => { if (entry.isIntersecting) load(entry.target); });
  }, { rootMargin: `${MARGIN}px 0px` });
  function watch() { flow.querySelectorAll(":scope > [data-window-href]").forEach((el) => { watcher.observe(el); }); }
  // loaders come and go with the windows (and the live tail's rewrite notice replaces the flow)
  new MutationObserver((records) => {
    records.forEach((record) => {
      record.removedNodes.forEach((node) => { if (node instanceof Element) watcher.unobserve(node); });
    });
    watch();
  }).observe(flow, { childList: true });
  watch();
  document.addEventListener("click", (event) => {
    const el = event.target instanceof Element ? event.target.closest("[data-chat-flow] > [data-window-href]") : null;
    if (el) load(el);
  });
  // Rows the live tail appends (after the last window: it arrives only when that is in the page) join
  // that window, which ends where the log does now; they weigh on the page like any, so the earliest
  // rows make room for them.
  /** @param {Element} win */
  function adopt(win) {
    let count = 0;
    while (win.nextSibling && !(win.nextSibling instanceof Element && win.nextSibling.hasAttribute("data-window-href"))) {
      win.appendChild(win.nextSibling);
    }
    win.childNodes.forEach((node) => { count += rowsOf(node); });
    win.setAttribute("data-to", String(Number(win.getAttribute("data-from")) + count));
  }
  document.body.addEventListener("htmx:sseMessage", (event) => {
    if (!firedOn(event).hasAttribute("data-live-rows")) return;
    const all = windows();
    if (all.length) adopt(all[all.length - 1]);
    prune("earlier");
  });

  // -- opening a row, or the end, in place -------------------------------------------------------

  // The window `at` opens (an anchor, or "end") in place of the flow's rows; the latest asked wins.
  let asked = 0;
  /** @param {string} at @returns {Promise<boolean>} whether it opened (a later one may have overtaken it) */
  function openWindow(at) {
    const mine = ++asked;
    return request(`${base}/rows?at=${encodeURIComponent(at)}`)
      .then((r) => { if (!r.ok) throw new Error(String(r.status)); return r.text(); })
      .then((html) => {
        if (mine !== asked) return false;
        flow.replaceChildren(fragment(html));
        wire(Array.from(flow.childNodes));
        return true;
      });
  }

  /** @param {number} index @param {string} anchor @param {URLSearchParams} [extra] */
  function openWindowAt(index, anchor, extra) {
    const p = extra || new URLSearchParams();
    p.set("from", String(Math.max(0, index - 5)));
    location.assign(`${base}?${p.toString()}#${encodeURIComponent(anchor)}`);
  }

  // The row at `anchor` marked and scrolled to, its window fetched first when it is not loaded. An anchor no
  // row has, with no place to fall back on (a permalink's hash), is said to be missing.
  /** @type {Opener} */
  function open(anchor, index, extra) {
    const el = document.getElementById(anchor);
    if (el) { mark(el); return el; }
    return openWindow(anchor).then((shown) => {
      const found = shown ? document.getElementById(anchor) : null;
      if (found) mark(found);
      return found;
    }, (/** @type {Error} */ failed) => {
      if (typeof index === "number") openWindowAt(index, anchor, extra);
      else if (failed.message === "404") noteMissing(anchor);
      return null;
    });
  }

  // The note a `?at=` naming no row gets from the server (session.html), for a hash naming none.
  /** @param {string} anchor */
  function noteMissing(anchor) {
    const pattern = flow.getAttribute("data-at-missing-pattern");
    if (!pattern) return;
    let note = document.querySelector("[data-at-missing]");
    if (!note) {
      note = document.createElement("p");
      note.className = "at-missing";
      note.setAttribute("role", "note");
      note.setAttribute("data-at-missing", "");
      flow.before(note);
    }
    note.textContent = fill(pattern, { anchor });
  }

  // The next (`by` 1) or previous (-1) row of a kind, from the row marked or else the first on screen: the
  // session's search lists them all, loaded or not (a long session's rows are not all in the page). Keys
  // pressed in a row go one after another, each from where the one before it landed.
  const api = `/api${base}/search`;
  let going = Promise.resolve();
  /** @param {string} facet a search's parameters (`kind=turn`, `errors=true`) @param {number} by */
  function goTo(facet, by) {
    going = going.then(() => {
      const rows = Array.from(flow.querySelectorAll(".flow-item[data-seq]")).filter((r) => r.getClientRects().length > 0);
      const here = rows.find((r) => r.hasAttribute("data-current")) || rows.find((r) => r.getBoundingClientRect().bottom > 0);
      const seq = here ? Number(here.getAttribute("data-seq")) : -1;
      return request(`${api}?${facet}`)
        .then((r) => { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
        .then((/** @type {{ matches: { anchor: string, index: number, seq: number }[] }} */ found) => {
          const list = by > 0 ? found.matches : found.matches.slice().reverse();
          const next = list.find((m) => m.anchor !== here?.id && (by > 0 ? m.seq >= seq : m.seq <= seq));
          if (next) return open(next.anchor, next.index);
          return null;
        });
    }).then(() => undefined, () => undefined);  // a key that found nothing, or failed, leaves the page as it is
  }
  /** @type {Record<string, string>} a key (its Shift form going back) → the rows it steps through */
  const KINDS = { t: "kind=turn", e: "errors=true", c: "kind=tool-call" };

  // The session's end in view, its last window fetched first when the page does not hold it.
  function openEnd() {
    const ready = flow.querySelector("[data-window-next]") ? openWindow("end") : Promise.resolve(true);
    return ready.then((shown) => { if (shown) toEnd(); }, () => { /* the page stays as it is */ });
  }
  opener = open;

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (target instanceof Element && target.closest("input, select, textarea, [contenteditable]")) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "End" || event.key === "G") { event.preventDefault(); openEnd(); return; }
    const facet = KINDS[event.key.toLowerCase()];
    if (facet && !document.querySelector("dialog[open]")) {
      event.preventDefault();
      goTo(facet, event.key === event.key.toLowerCase() ? 1 : -1);
    }
  });
  const latest = document.querySelector("[data-latest]");
  if (latest) latest.addEventListener("click", (event) => { event.preventDefault(); openEnd(); });
  const follow = document.querySelector("[data-follow]");
  if (follow instanceof HTMLInputElement) follow.addEventListener("change", () => { if (follow.checked) openEnd(); });

  // A permalink (the hash) names a row, on this load or later in this page (a link followed, Back, Forward).
  window.addEventListener("hashchange", () => {
    const anchor = anchorFromHash();
    if (anchor) open(anchor);
  });
  // The row the page was opened at (`?at=`) is scrolled to, unless the hash names another.
  const hashed = anchorFromHash();
  const at = flow.getAttribute("data-open-at");
  if (hashed) open(hashed);
  else if (at === "end") toEnd();
  else if (at) {
    const row = document.getElementById(at);
    if (row) mark(row);
  }
}

// Live tail: rows appended to the log arrive over SSE (static/htmx-ext-sse); the page keeps
// open disclosures and its scroll position, and follows the end when asked.
/** @param {Element} live @param {Element} flow */
function followLive(live, flow) {
  const follow = /** @type {HTMLInputElement | null} */ (live.querySelector("[data-follow]"));
  // data-live-connected says the page is following the log now (the stylesheet shows it).
  document.body.addEventListener("htmx:sseOpen", () => { live.setAttribute("data-live-connected", ""); });
  document.body.addEventListener("htmx:sseError", () => { live.removeAttribute("data-live-connected"); });
  document.body.addEventListener("htmx:sseBeforeMessage", (event) => {
    // Rows past a window not loaded yet arrive with that window, not here.
    if (event.type && firedOn(event).hasAttribute("data-live-rows") && flow.querySelector("[data-window-next]")) {
      event.preventDefault();
    }
  });
  // A row swapped in place (a tool row whose result arrived) comes back as the server renders
  // it, closed. The disclosures the reader had open in it are noted before the swap, by row id
  // and by their place among the row's disclosures, and opened again once the update is in, as a
  // click would open them (inline bodies copied, fetched bodies requested). Rows are noted by their
  // key, not their id: a tool row takes its result's message id as its id when the result arrives.
  /** @type {Map<string, number[]>} row key: the places of its open disclosures */
  let reopen = new Map();
  /** @param {Element} row */
  function disclosures(row) {
    return /** @type {NodeListOf<HTMLElement>} */ (row.querySelectorAll("[data-disclosure-row][data-expandable]"));
  }
  /** @param {Element} row */
  function noteOpen(row) {
    /** @type {number[]} */
    const open = [];
    disclosures(row).forEach((header, i) => {
      if (header.getAttribute("aria-expanded") === "true") open.push(i);
    });
    if (open.length) reopen.set(row.getAttribute("data-chat-flow-key") || "", open);
  }
  document.body.addEventListener("htmx:oobBeforeSwap", (event) => {
    const row = /** @type {CustomEvent} */ (event).detail.target;
    if (!row?.classList.contains("flow-item") || !row.hasAttribute("data-chat-flow-key")) return;
    noteOpen(row);
  });
  function reopenSwapped() {
    reopen.forEach((places, key) => {
      const row = flow.querySelector(`.flow-item[data-chat-flow-key="${key}"]`);
      if (!row) return;
      // htmx wires a swapped row's hx-get only when it settles, a moment later; wired now
      // (htmx then leaves it be), a body fetched on open is requested by the click below.
      if (window.htmx) window.htmx.process(row);
      // In document order: an opened body adds its own disclosures after its header, so the
      // places noted before the swap line up again for the ones that follow.
      places.forEach((i) => {
        const header = disclosures(row)[i];
        if (header && header.getAttribute("aria-expanded") !== "true") header.click();
      });
    });
    reopen = new Map();
  }
  // Rows the tail takes back or deletes may leave a fold with none: it goes. The rows come again folded as
  // the server folds them, and so does the head of a fold they left rows in (app/web/routes/live.py).
  function dropEmptyFolds() {
    flow.querySelectorAll("[data-fold]").forEach((fold) => { if (!fold.querySelector(".flow-item")) fold.remove(); });
  }
  // The tail sends the rows from `key` on again (the log moved on before it connected, or it connected
  // again): the page drops that row and every one after it first, noting the disclosures open in them,
  // so each row is there once and opens again as it was. Windows left empty go, but the one the rows
  // join (`adopt` counts it again); folds left empty go with them.
  /** @param {string} key */
  function dropRowsFrom(key) {
    const first = flow.querySelector(`.flow-item[data-chat-flow-key="${key}"]`);
    if (!first) {
      // dropped as the reader read on since the page was drawn: what it holds is not known any more
      window.location.reload();
      return;
    }
    const joined = first.closest("[data-window]");
    flow.querySelectorAll(".flow-item[data-chat-flow-key]").forEach((row) => {
      if (!row.isConnected || (row !== first && !(first.compareDocumentPosition(row) & Node.DOCUMENT_POSITION_FOLLOWING))) return;
      noteOpen(row);
      row.remove();
    });
    flow.querySelectorAll(":scope > [data-window]").forEach((win) => {
      if (win !== joined && !win.querySelector(".flow-item")) win.remove();
    });
    dropEmptyFolds();
  }
  document.body.addEventListener("htmx:sseMessage", (event) => {
    const source = firedOn(event);
    if (source.hasAttribute("data-live-resend")) {
      if (flow.querySelector("[data-window-next]")) return;  // its rows are not sent here (see above)
      const key = String(/** @type {CustomEvent} */ (event).detail.data || "").trim();
      if (/^[a-z]+(-[0-9]+)+$/.test(key)) dropRowsFrom(key);
      return;
    }
    dropEmptyFolds();  // rows that moved were deleted (out of band) and came again
    reopenSwapped();  // after the whole update: a row removed and sent again is back by now too
    // A notice says the log was rewritten (its rows replaced in place along with it) or is gone.
    if (source.hasAttribute("data-live-notice")) {
      source.hidden = false;
    } else if (source.hasAttribute("data-live-rows") && follow?.checked) {
      window.scrollTo(0, document.documentElement.scrollHeight);
    }
  });
}
