// The session page's search: live as the reader types (debounced), matches across windows,
// "n of m" in the sticky toolbar, every match in the loaded rows marked (<mark data-search-mark>) and the
// current one's collapsed body opened; the keys: "/" searches, j and k step through the matches (through
// the rows when no search is active: `step`, folds.js), "?" lists the shortcuts.
import { reveal, step } from "./folds.js";
import { keepBody } from "./inspect.js";
import { request } from "./request.js";
import { open } from "./session.js";
import { fill } from "./wording.js";

/**
 * A match as `GET /api/sessions/{key}/search` lists it: the row's anchor and its place among the rows.
 * @typedef {{ anchor: string, index: number }} Match
 */

const sessionHead = document.querySelector("[data-session-url]");
const searchForm = document.querySelector("[data-search]");
const chatFlow = document.querySelector("[data-chat-flow]");
if (sessionHead && searchForm instanceof HTMLFormElement && chatFlow) searchSession(sessionHead, searchForm, chatFlow);

/** @param {Element} head @param {HTMLFormElement} form @param {Element} flow */
function searchSession(head, form, flow) {
  const api = `/api${head.getAttribute("data-session-url")}`;
  const input = /** @type {HTMLInputElement} */ (form.querySelector("[data-search-input]"));
  const output = /** @type {HTMLOutputElement} */ (form.querySelector("[data-search-count]"));
  const shortcuts = /** @type {HTMLDialogElement | null} */ (document.querySelector("[data-shortcuts]"));
  const DEBOUNCE = 200;  // ms after the last keystroke
  const OPEN_WAIT = 5000;  // ms a fetched body may take before the match is marked without it

  /** @type {Match[]} */
  let matches = [];
  let current = -1;
  let needle = "";  // the words the matches were found for, lower-cased
  /** @type {string | null} */
  let searched = null;  // the query string the matches answer; null before any
  let asked = 0;  // the latest request: an earlier answer arriving late is dropped
  /** @type {number | null} */
  let timer = null;  // a search waiting for the typing to pause

  function params() {
    const p = new URLSearchParams();
    new FormData(form).forEach((value, key) => { if (value) p.set(key, String(value)); });
    return p;
  }

  function showCount() {
    if (!matches.length) { output.textContent = searched ? output.getAttribute("data-none") : ""; return; }
    const pattern = output.getAttribute(current < 0 ? "data-elsewhere" : "data-pattern") || "";
    output.textContent = fill(pattern, { n: current + 1, m: matches.length });
  }

  // -- marks: the words found, in the text nodes of the loaded rows that match (never markup) ----------

  function clearMarks() {
    flow.querySelectorAll("mark[data-search-mark]").forEach((mark) => {
      const parent = mark.parentNode;
      if (!parent) return;
      parent.replaceChild(document.createTextNode(mark.textContent || ""), mark);
      parent.normalize();
    });
  }

  /** @param {Element} row */
  function markIn(row) {
    const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => {
        const parent = node.parentElement;
        return parent && !parent.closest("script, style, mark") ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
      }
    });
    /** @type {Text[]} */
    const nodes = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(/** @type {Text} */ (node));
    nodes.forEach((text) => {
      let lower = text.data.toLowerCase();
      if (lower.length !== text.data.length) return;  // a character whose lower case is longer: offsets would drift
      let at = lower.indexOf(needle);
      while (at >= 0) {
        const found = text.splitText(at);
        text = found.splitText(needle.length);
        const mark = document.createElement("mark");
        mark.setAttribute("data-search-mark", "");
        found.replaceWith(mark);
        mark.appendChild(found);
        lower = text.data.toLowerCase();
        at = lower.indexOf(needle);
      }
    });
  }

  /** @param {Match | undefined} match */
  function rowOf(match) { return match ? document.getElementById(match.anchor) : null; }

  // Marks redrawn over the rows the page holds now; the DOM changes it makes are not watched.
  function markAll() {
    watching.disconnect();
    clearMarks();
    if (needle) {
      const wanted = new Set(matches.map((m) => m.anchor));
      flow.querySelectorAll(".flow-item").forEach((row) => { if (wanted.has(row.id)) markIn(row); });
      const row = rowOf(matches[current]);
      const first = row?.querySelector("mark[data-search-mark]");
      if (first) first.setAttribute("data-current-mark", "");
    }
    watching.observe(flow, { childList: true, subtree: true });
  }

  // Windows loaded or dropped, a body opened, a live row: the marks follow on the next frame.
  let pending = false;
  const watching = new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; markAll(); });
  });
  watching.observe(flow, { childList: true, subtree: true });

  // -- the current match: its fold (`reveal`) and the collapsed body holding the words opened -----------

  /** @param {Element} row */
  function closedHeaders(row) {
    const closed = row.querySelectorAll('[data-disclosure-row][data-expandable][aria-expanded="false"]');
    return Array.from(/** @type {NodeListOf<HTMLElement>} */ (closed));
  }

  /** @param {Element} header */
  function inlineBody(header) {
    const root = header.closest("[data-context-row], .disclosure");
    for (let el = root?.firstElementChild; el; el = el.nextElementSibling) {
      if (el instanceof HTMLTemplateElement && el.hasAttribute("data-disclosure-body")) return el;
    }
    return null;
  }

  // A fetched body is in once htmx has settled it (or after OPEN_WAIT, to mark what is there).
  /** @param {Element} header @returns {Promise<void>} */
  function settled(header) {
    return new Promise((resolve) => {
      const root = header.closest("[data-context-row], .disclosure") || header;
      /** @param {Event} [event] */
      const done = (event) => {
        if (event && !root.contains(/** @type {Node | null} */ (event.target))) return;
        document.removeEventListener("htmx:afterSettle", done);
        clearTimeout(late);
        resolve();
      };
      const late = setTimeout(done, OPEN_WAIT);
      document.addEventListener("htmx:afterSettle", done);
    });
  }

  // Opens, in `row`, the body holding the words unless the row shows them already: an inline body whose
  // text has them (a transcript row's bodies fetched first, kept inline: static/inspect.js `keepBody`), else
  // the first body fetched on open (its text is unknown until it is in). Nested bodies are looked into in
  // turn, a few levels deep.
  /** @param {Element} row @param {number} depth @param {boolean} [kept] its lazy bodies asked for already
   * @returns {Promise<void>} */
  function openHolding(row, depth, kept = false) {
    if (!needle || depth > 3 || (row.textContent || "").toLowerCase().includes(needle)) return Promise.resolve();
    const lazy = kept ? [] : closedHeaders(row).filter((h) => h.hasAttribute("data-lazy-body"));
    if (lazy.length) return Promise.all(lazy.map(keepBody)).then(() => openHolding(row, depth, true));
    const headers = closedHeaders(row);
    for (let i = 0; i < headers.length; i++) {
      const body = inlineBody(headers[i]);
      if (body && (body.content.textContent || "").toLowerCase().includes(needle)) {
        headers[i].click();
        return openHolding(row, depth + 1);
      }
    }
    const fetched = headers.filter((h) => h.hasAttribute("hx-get"))[0];
    if (!fetched) return Promise.resolve();
    const wait = settled(fetched);
    fetched.click();
    return wait.then(() => openHolding(row, depth + 1));
  }

  /** @param {Element | null} row */
  function showCurrent(row) {
    if (!row || matches[current] === undefined || row.id !== matches[current].anchor) return;
    reveal(row);
    openHolding(row, 0).then(() => {
      markAll();
      const mark = row.querySelector("mark[data-current-mark]");
      if (!mark) return;
      // a match behind a card's own <details> (a search's "… N more lines", the text the model read) shows too
      for (let shut = mark.closest("details:not([open])"); shut; shut = shut.closest("details:not([open])")) {
        /** @type {HTMLDetailsElement} */ (shut).open = true;
      }
      mark.scrollIntoView({ block: "center" });
    });
  }

  /** @param {number} i */
  function go(i) {
    if (!matches.length) return;
    current = (i + matches.length) % matches.length;
    showCount();
    const match = matches[current];
    const p = params();
    p.set("match", String(current));
    markAll();
    Promise.resolve(open(match.anchor, match.index, p)).then((row) => {
      if (!row) return;
      history.replaceState(null, "", `${location.pathname + location.search}#${encodeURIComponent(match.anchor)}`);
      showCurrent(row);
    });
  }

  // The first match at or after the top of the screen among the rows loaded, else the first of all.
  function firstNear() {
    let loaded = -1;
    for (let i = 0; i < matches.length; i++) {
      const row = rowOf(matches[i]);
      if (!row) continue;
      if (loaded < 0) loaded = i;
      if (row.getBoundingClientRect().bottom > 0) return i;
    }
    return Math.max(loaded, 0);
  }

  // The matches for the form as it is now; `then` runs with them unless a later search overtook this one.
  /** @param {() => void} [then] */
  function run(then) {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const query = params();
    const mine = ++asked;
    if (!query.toString()) {
      matches = []; current = -1; needle = ""; searched = null;
      showCount(); markAll();
      return;
    }
    request(`${api}/search?${query.toString()}`)
      .then((r) => r.json())
      .then((/** @type {{ matches: Match[] }} */ data) => {
        if (mine !== asked) return;
        matches = data.matches; current = -1; searched = query.toString();
        needle = (query.get("q") || "").trim().toLowerCase();
        showCount(); markAll();
        if (then) then();
      });
  }

  function runSoon() {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => { run(() => { go(firstNear()); }); }, DEBOUNCE);
  }

  form.addEventListener("input", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.type !== "checkbox") runSoon();
  });
  form.addEventListener("change", (event) => {
    const field = event.target;
    if (field instanceof HTMLSelectElement || (field instanceof HTMLInputElement && field.type === "checkbox")) run(() => { go(firstNear()); });
  });
  // Enter: the next match, or the first once the search for what was typed is in
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (timer !== null || searched !== params().toString()) run(() => { go(firstNear()); });
    else go(current + 1);
  });
  form.querySelector("[data-search-next]")?.addEventListener("click", () => { go(current + 1); });
  form.querySelector("[data-search-previous]")?.addEventListener("click", () => { go(current - 1); });

  // The list is copied in from its <template> the first time it opens.
  function openShortcuts() {
    if (!shortcuts || shortcuts.open) return;
    const body = /** @type {HTMLTemplateElement | null} */ (shortcuts.querySelector("template[data-shortcuts-body]"));
    if (body) shortcuts.replaceChildren(body.content.cloneNode(true));
    shortcuts.showModal();
  }
  const opener = document.querySelector("[data-shortcuts-open]");
  if (opener) opener.addEventListener("click", openShortcuts);
  if (shortcuts) {
    shortcuts.addEventListener("click", (event) => {
      if (event.target instanceof Element && event.target.closest("[data-shortcuts-close]")) shortcuts.close();
    });
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target instanceof HTMLElement && target.closest("input, select, textarea, [contenteditable]") !== null;
    // Esc leaves a field as it is (a search box would clear itself, the matches staying on)
    if (event.key === "Escape" && typing) { event.preventDefault(); target.blur(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey || (shortcuts?.open)) return;
    if (event.key === "/") { event.preventDefault(); input.focus(); input.select(); }
    else if (event.key === "?") { event.preventDefault(); openShortcuts(); }
    else if (event.key === "j" || event.key === "k") {
      event.preventDefault();
      const by = event.key === "j" ? 1 : -1;
      if (matches.length) go(current + by);
      else step(by);
    }
  });

  // Restore a search carried over from another page: a match of this search opened the page at its window
  // (`match`, its place), or a hit of the search across sessions did (`at`, its row; none of these matches
  // when the row's words read otherwise here: then the matches are marked and none is current).
  const query = new URLSearchParams(location.search);
  let restored = false;
  /** @param {string} name */
  const field = (name) => /** @type {HTMLInputElement | HTMLSelectElement} */ (form.elements.namedItem(name));
  ["q", "kind", "form", "tool"].forEach((name) => {
    const value = query.get(name);
    if (value) { field(name).value = value; restored = true; }
  });
  ["errors", "raw"].forEach((name) => {
    if (query.get(name)) { /** @type {HTMLInputElement} */ (field(name)).checked = true; restored = true; }
  });
  if (restored) {
    run(() => {
      const at = query.get("at");
      current = at !== null
        ? matches.findIndex((m) => m.anchor === at)
        : Math.min(Number(query.get("match") || 0), matches.length - 1);
      showCount();
      markAll();
      showCurrent(rowOf(matches[current]));
    });
  }
}
