// Disclosure rows, JSON toggles and the theme switch. Lives here, not in hx-on or
// trigger filters, because the page's CSP forbids eval (docs/product.md Safety).

import { request } from "./request.js";
import { fill } from "./wording.js";

/** @param {Element} header @returns {Element} the row or disclosure it heads */
function rootOf(header) { return /** @type {Element} */ (header.closest("[data-context-row], .disclosure")); }

/** @param {Element} root */
function slotOf(root) {
  for (let el = root.firstElementChild; el; el = el.nextElementSibling) {
    if (el.hasAttribute("data-disclosure-slot")) return el;
  }
  // a transcript row sends no slot, only its body's <template> (a one-file export) or, on a served page, not even
  // that until the body is fetched (`keepBody`): its slot is made when the body is first shown
  for (let el = root.firstElementChild; el; el = el.nextElementSibling) {
    if (el instanceof HTMLTemplateElement && el.hasAttribute("data-disclosure-body")) {
      const slot = document.createElement("div");
      slot.className = "slot";
      slot.setAttribute("data-disclosure-slot", "");
      el.before(slot);
      return slot;
    }
  }
  return null;
}

/** @param {Element} header @param {boolean} open */
function setOpen(header, open) {
  const root = rootOf(header);
  header.setAttribute("aria-expanded", open ? "true" : "false");
  if (open) root.setAttribute("data-open", "true"); else root.removeAttribute("data-open");
  const slot = slotOf(root);
  if (!slot) {
    if (!open) root.querySelector(":scope > [data-body-failed]")?.remove();
    else if (header.hasAttribute("data-lazy-body")) openWhenIn(header, root);
    return;
  }
  if (!open) { slot.replaceChildren(); return; }
  /** @type {HTMLTemplateElement | null} */
  let inline = null;
  for (let el = root.firstElementChild; el; el = el.nextElementSibling) {
    if (el instanceof HTMLTemplateElement && el.hasAttribute("data-disclosure-body")) inline = el;
  }
  if (inline) {
    slot.replaceChildren(inline.content.cloneNode(true));
    // htmx wires only what it swaps in itself: a body's "Show all" needs it done here
    if (window.htmx) window.htmx.process(slot);
  } else if (header.hasAttribute("hx-get") && window.htmx) {
    // htmx goes over the page once it is loaded (DOMContentLoaded); a header opened before that (a search
    // landing on its hit while a module is still loading) has no listener for dsh:open yet, and the open
    // card would stay empty. Processing an element htmx has wired already changes nothing.
    window.htmx.process(header);
    window.htmx.trigger(header, "dsh:open");
  }
}

// A transcript row's body, not sent with it (`data-lazy-body`: which of the row's bodies, rows/_parts.html), asked
// for when it first opens (or when search looks for words in it); it is then kept in the row as a <template>,
// as a one-file export sends it. Resolves with what went wrong ("" when the body is in): a status, or "—" when
// no answer came. One fetch at a time per header.
/** @type {WeakMap<Element, Promise<string>>} */
const asked = new WeakMap();
/** @param {Element} header @returns {Promise<string>} */
export function keepBody(header) {
  const pending = asked.get(header);
  if (pending) return pending;
  const row = header.closest(".flow-item");
  const session = document.querySelector("[data-session-url]");
  if (!row || !session || !header.hasAttribute("data-lazy-body")) return Promise.resolve("");
  const url = `${session.getAttribute("data-session-url")}/row-bodies/${row.getAttribute("data-seq")}?n=${header.getAttribute("data-lazy-body")}`;
  const done = request(url)
    .then((response) => {
      if (!response.ok) return `${response.status} ${response.statusText}`.trim();
      return response.text().then((html) => {
        const body = document.createElement("template");
        body.setAttribute("data-disclosure-body", "");
        body.innerHTML = html;
        rootOf(header).append(body);
        header.removeAttribute("data-lazy-body");
        return "";
      });
    })
    .catch(() => "—")  // no answer: the connection failed
    .finally(() => { asked.delete(header); });
  asked.set(header, done);
  return done;
}

// A row opened before its body is in: shown once it is, if the row is open still; or the row says it could not
// be fetched, until it closes (the next opening asks again).
/** @param {Element} header @param {Element} root */
function openWhenIn(header, root) {
  keepBody(header).then((failed) => {
    if (header.getAttribute("aria-expanded") !== "true") return;
    if (!failed) { setOpen(header, true); return; }
    root.querySelector(":scope > [data-body-failed]")?.remove();
    const note = document.createElement("p");
    note.className = "note error-text";
    note.setAttribute("data-body-failed", "");
    const pattern = document.querySelector("[data-label-body-failed]")?.getAttribute("data-label-body-failed");
    note.textContent = fill(pattern || "{status}", { status: failed });
    header.after(note);
  });
}

/** @param {Element} header */
function toggle(header) { setOpen(header, header.getAttribute("aria-expanded") !== "true"); }

/** @param {Element} button */
function toggleJson(button) {
  const pre = /** @type {HTMLElement | null} */ (button.nextElementSibling);
  const open = button.getAttribute("aria-expanded") !== "true";
  button.setAttribute("aria-expanded", open ? "true" : "false");
  button.textContent = (open ? "\u25BE" : "\u25B8") + (button.textContent || "").slice(1);
  if (pre) pre.hidden = !open;
}

function switchTheme() {
  const root = document.documentElement;
  const dark = root.dataset.theme ? root.dataset.theme === "dark"
    : window.matchMedia("(prefers-color-scheme: dark)").matches;
  root.dataset.theme = dark ? "light" : "dark";
  try { localStorage.setItem("dsh-inspect-theme", root.dataset.theme); } catch { /* not remembered */ }
}

document.addEventListener("click", (event) => {
  const target = event.target;
  if (!(target instanceof Element)) return;
  const header = target.closest("[data-disclosure-row][data-expandable]");
  if (header) { toggle(header); return; }
  const json = target.closest("[data-json-toggle]");
  if (json) { toggleJson(json); return; }
  if (target.closest("[data-theme-toggle]")) switchTheme();
});

document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (!(target instanceof Element) || !target.matches("[data-disclosure-row][data-expandable]")) return;
  if (target.tagName === "BUTTON") return; // a native button already turns Enter and Space into a click
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    toggle(target);
  }
});

// Copy buttons (templates/rows/_copy.html), on the served page and in a one-file export: a button copies
// its data-copy-text, the whole address of its data-copy-link (a row's permalink), or the text of what its
// data-copy-from selector finds in its row (never markup, and not a capped body's footer), then reads
// "Copied" for a moment, announced. Caught before the row's own
// click: a path button in a header copies, it does not toggle the row.
/** @param {Element} button @returns {string} */
function copiedText(button) {
  const text = button.getAttribute("data-copy-text");
  if (text !== null) return text;
  const link = button.getAttribute("data-copy-link");
  if (link !== null) return new URL(link, location.href).href;
  const scope = button.closest(".flow-item") || document;
  /** @type {string[]} */
  const parts = [];
  scope.querySelectorAll(button.getAttribute("data-copy-from") || "").forEach((el) => {
    const copy = /** @type {Element} */ (el.cloneNode(true));
    copy.querySelectorAll("[data-copy], [data-truncated], [data-show-all]").forEach((e) => { e.remove(); });
    parts.push((copy.textContent || "").replace(/\s+$/, ""));
  });
  return parts.join("\n\n");
}

/** @param {string} text @returns {Promise<void>} */
function writeClipboard(text) {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  return new Promise((/** @type {(value?: void) => void} */ resolve, reject) => {  // a page served over plain http to another host
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    if (done) resolve(); else reject(new Error("copy refused"));
  });
}

// One live region for the page, added on the first copy: buttons that each held one would cost nodes.
/** @param {string} text */
function announce(text) {
  let status = document.querySelector("[data-copy-status]");
  if (!status) {
    status = document.createElement("p");
    status.className = "visually-hidden";
    status.setAttribute("aria-live", "polite");
    status.setAttribute("data-copy-status", "");
    document.body.appendChild(status);
  }
  const region = status;
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);  // emptied first: the same word again is news
}

// A button's word is its aria-label (the stylesheet draws it); a path button's is its text. "Copied" is the
// page's word (body[data-label-copied]: base.html, export.html).
/** @type {WeakMap<Element, number>} */
const copiedTimers = new WeakMap();
/** @param {Element} button */
function showCopied(button) {
  const copied = document.body.getAttribute("data-label-copied") || "Copied";
  const shows = !button.hasAttribute("aria-label");
  if (!button.hasAttribute("data-copy-idle")) {
    button.setAttribute("data-copy-idle", (shows ? button.textContent : button.getAttribute("aria-label")) || "");
  }
  if (shows) button.textContent = copied;
  else button.setAttribute("aria-label", copied);
  button.setAttribute("data-copied", "");
  announce(copied);
  clearTimeout(copiedTimers.get(button));
  copiedTimers.set(button, setTimeout(() => {
    const idle = button.getAttribute("data-copy-idle") || "";
    if (shows) button.textContent = idle;
    else button.setAttribute("aria-label", idle);
    button.removeAttribute("data-copied");
  }, 1000));  // docs/ui.md §5.1: "Copied" for 1s
}

document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  if (!button) return;
  event.stopPropagation();
  writeClipboard(copiedText(button)).then(() => { showCopied(button); }, () => { /* not permitted */ });
}, true);

// A row's time (templates/rows/_copy.html `clock`) comes in UTC; here it is worded in the reader's time
// zone (YYYY-MM-DD HH:MM), the whole timestamp with its zone on hover.
/** @type {Intl.DateTimeFormatOptions} */
const clockParts = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
/** @param {HTMLElement} time */
function localClock(time) {
  const at = new Date(time.getAttribute("datetime") || "");
  if (Number.isNaN(at.getTime())) return;
  /** @type {Partial<Record<Intl.DateTimeFormatPartTypes, string>>} */
  const part = {};
  new Intl.DateTimeFormat("en-US", clockParts).formatToParts(at).forEach((p) => { part[p.type] = p.value; });
  time.textContent = `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}`;
  time.title = `${new Intl.DateTimeFormat(document.documentElement.lang || undefined,
    { dateStyle: "full", timeStyle: "long" }).format(at)} (${time.getAttribute("datetime")})`;
  time.removeAttribute("data-local-time");
}
/** @param {Document | Element} root */
function localClocks(root) {
  if (root instanceof HTMLElement && root.matches("time[data-local-time]")) localClock(root);
  /** @type {NodeListOf<HTMLElement>} */ (root.querySelectorAll("time[data-local-time]")).forEach(localClock);
}
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", () => { localClocks(document); });
} else localClocks(document);
// and in every row added later, however it came (the live tail, windows the page loads, opened bodies)
new MutationObserver((changes) => {
  changes.forEach((change) => {
    change.addedNodes.forEach((node) => { if (node instanceof Element) localClocks(node); });
  });
}).observe(document.documentElement, { childList: true, subtree: true });

// A body that arrives after its row was closed again is dropped.
document.addEventListener("htmx:beforeSwap", (event) => {
  const detail = /** @type {CustomEvent} */ (event).detail;
  const elt = detail?.requestConfig?.elt;
  if (elt?.matches?.("[data-disclosure-row]") && elt.getAttribute("aria-expanded") !== "true") {
    detail.shouldSwap = false;
  }
});
