// The outline in the session page's margin (issue 39, item 3): each turn with its first prompt, and the errors,
// compactions and subagents, from the outline's twin (/api/sessions/{key}/outline). It stays small at any
// length: the list is as tall as all its entries, but only those in and near its view are drawn, each one node: a
// link whose words the stylesheet draws from its `data-label`, as the copy buttons' are. A click opens the row in place as `?at=` would (`open`, session.js), and the entry of the row
// at the top of the transcript is marked as the reader scrolls. Where the window has no room for it in the margin,
// the reading head's Outline button ([data-outline-open]) opens it over the page, under the button, until the
// button, Esc, a jump or a click elsewhere closes it; closed there, nothing is fetched or drawn.
import { open } from "./session.js";
import { request } from "./request.js";
import { fill } from "./wording.js";

/** @typedef {{ kind: string, index: number, anchor: string, seq: number, turn: number | null, text: string }} Entry */

const ITEM = 28;  // px: an entry's height, as the stylesheet sets it (.outline-item)
const AROUND = 4;  // entries drawn beyond each edge of the list's view

const nav = document.querySelector("[data-outline]");
const list = nav?.querySelector("[data-outline-list]");
if (nav instanceof HTMLElement && list instanceof HTMLElement) showOutline(nav, list);

/** @param {HTMLElement} nav @param {HTMLElement} list */
function showOutline(nav, list) {
  /** @type {Entry[]} */
  let entries = [];
  let current = -1;
  let drawn = "";  // the range drawn, so a scroll that changes nothing redraws nothing
  let asked = false;

  /** @param {Entry} entry */
  function label(entry) {
    const kind = entry.kind === "turn"
      ? fill(nav.getAttribute("data-label-turn") || "", { turn: entry.turn ?? "" })
      : nav.getAttribute(`data-label-${entry.kind}`) || entry.kind;
    return entry.text ? `${kind} · ${entry.text}` : kind;
  }

  /** @param {number} i */
  function item(i) {
    const entry = entries[i];
    const link = document.createElement("a");
    link.className = "outline-item";
    link.href = `?at=${encodeURIComponent(entry.anchor)}`;
    link.setAttribute("data-outline-kind", entry.kind);
    link.setAttribute("data-outline-index", String(i));
    link.style.top = `${i * ITEM}px`;
    link.setAttribute("data-label", label(entry));
    link.title = label(entry);
    if (i === current) link.setAttribute("aria-current", "location");
    return link;
  }

  // The entries in and near the list's view, and only those.
  function draw() {
    const first = Math.max(0, Math.floor(list.scrollTop / ITEM) - AROUND);
    const last = Math.min(entries.length, Math.ceil((list.scrollTop + list.clientHeight) / ITEM) + AROUND);
    const range = `${first}-${last}-${current}`;
    if (range === drawn) return;
    drawn = range;
    const links = [];
    for (let i = first; i < last; i++) links.push(item(i));
    list.replaceChildren(...links);
  }

  // The row the reader is at: the one marked (a jump, j and k) while it is on screen, else the first under the toolbar.
  function rowInView() {
    const top = /** @type {HTMLElement | null} */ (document.querySelector("[data-toolbar]"))?.getBoundingClientRect().bottom ?? 0;
    /** @param {Element} r */
    const shown = (r) => r.getClientRects().length > 0 && r.getBoundingClientRect().bottom > top;
    const marked = document.querySelector("[data-chat-flow] .flow-item[data-current][data-seq]");
    if (marked && shown(marked) && marked.getBoundingClientRect().top < innerHeight) return marked;
    return Array.from(document.querySelectorAll("[data-chat-flow] .flow-item[data-seq]")).find(shown);
  }

  // The entry of the row in view: the last whose row comes at or before it.
  function follow() {
    const row = rowInView();
    if (!row) return;
    const seq = Number(row.getAttribute("data-seq"));
    let lo = 0;
    let hi = entries.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (entries[mid].seq <= seq) { found = mid; lo = mid + 1; } else hi = mid - 1;
    }
    if (found === current) return;
    current = found;
    const at = current * ITEM;
    if (at < list.scrollTop || at + ITEM > list.scrollTop + list.clientHeight) list.scrollTop = at - list.clientHeight / 3;
    draw();
  }

  let stale = false;  // rows came while the outline was being read: read it again once that is in
  let missing = false;  // the session is not there (gone from disk, or never was): nothing more to ask
  function load() {
    if (asked || missing || !nav.getClientRects().length) return;  // hidden: no room for it
    if (document.querySelector("[data-live-gone]")) return;  // the live tail said the log is gone
    asked = true;
    stale = false;
    request(nav.getAttribute("data-outline-url") || "")
      .then((r) => {
        if (r.status === 404) missing = true;
        if (!r.ok) throw new Error(String(r.status));
        return r.json();
      })
      .then((/** @type {{ entries: Entry[] }} */ data) => {
        entries = data.entries;
        list.style.setProperty("--outline-entries", String(entries.length));
        nav.setAttribute("data-outline-ready", "");
        current = -1;
        drawn = "";
        follow();
        draw();
        asked = false;
        if (stale) load();
      })
      .catch(() => { asked = false; });  // the next resize or scroll asks again
  }
  // A live session's new rows may bring turns, errors, compactions or subagents: the outline is read again.
  document.body.addEventListener("htmx:sseMessage", (event) => {
    if (!(event.target instanceof Element && event.target.hasAttribute("data-live-rows"))) return;
    if (!entries.length && !nav.hasAttribute("data-outline-ready")) return;  // not read yet: it will be whole
    stale = true;
    load();
  });

  // The outline starts under the toolbar, which spans the margin too where the window is wide (it stays at the top
  // once the page scrolls, so the outline grows to its full height there); opened over a narrow page, under its
  // button, which stays in reach to close it.
  const opener = document.querySelector("[data-outline-open]");
  function place() {
    const toolbar = document.querySelector("[data-toolbar]");
    const under = toolbar ? Math.round(toolbar.getBoundingClientRect().bottom) + 12 : 0;
    nav.style.setProperty("--outline-top", `${Math.max(under, 0)}px`);
    const button = opener?.getBoundingClientRect().bottom ?? 0;
    nav.style.setProperty("--outline-opener", `${Math.max(Math.round(button) + 6, 0)}px`);
  }

  let pending = false;
  function soon() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      place();
      if (nav.hasAttribute("data-outline-ready")) { follow(); draw(); } else load();
    });
  }

  // Opened over a narrow page: read (once) and drawn around the entry in view. The list takes the focus (its
  // entries are drawn again as it scrolls), and Esc gives it back to the button.
  /** @param {boolean} shown @param {boolean} [refocus] */
  function toggle(shown, refocus = false) {
    if (!(opener instanceof HTMLElement) || shown === nav.hasAttribute("data-outline-open")) return;
    opener.setAttribute("aria-expanded", String(shown));
    if (!shown) {
      nav.removeAttribute("data-outline-open");
      if (refocus) opener.focus();
      return;
    }
    nav.setAttribute("data-outline-open", "");
    place();
    current = -1;  // its list's scroll was lost while it was hidden: put the entry in view in view again
    drawn = "";
    if (nav.hasAttribute("data-outline-ready")) { follow(); draw(); } else load();
    list.focus({ preventScroll: true });
  }
  opener?.addEventListener("click", () => { toggle(!nav.hasAttribute("data-outline-open")); });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && nav.hasAttribute("data-outline-open")) { event.preventDefault(); toggle(false, true); }
  });
  document.addEventListener("click", (event) => {  // a click elsewhere on the page closes it
    const on = event.target instanceof Node ? event.target : null;
    if (on && !nav.contains(on) && !opener?.contains(on)) toggle(false);
  });

  list.addEventListener("scroll", () => { requestAnimationFrame(draw); });
  list.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest("a[data-outline-index]") : null;
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const entry = entries[Number(link.getAttribute("data-outline-index"))];
    toggle(false);  // a jump closes the outline opened over the page
    if (entry && open(entry.anchor, entry.index)) event.preventDefault();  // opened in place, or loading there
  });
  window.addEventListener("scroll", soon, { passive: true });
  window.addEventListener("resize", soon);
  new ResizeObserver(soon).observe(document.body);  // the facts and windows that come later move the toolbar
  place();
  load();
}
