// The session list and the uploads page are read again and morphed in place by htmx with idiomorph
// (templates/sessions/list.html, templates/uploads.html say when and what); this says what a refresh leaves
// as it is, for every morph on the page.

/**
 * What the page's scripts use of idiomorph (static/idiomorph-ext-*.min.js, a classic script that sets
 * `window.Idiomorph`): the callbacks every morph runs.
 * @typedef {{ defaults: { callbacks: { beforeNodeMorphed: (old: Node, fresh: Node) => boolean } } }} Idiomorph
 */

/**
 * Whether a refresh leaves `old` as it is rather than morph it into `fresh`: a time static/inspect.js has
 * worded in the reader's zone, still the same instant; or a cell a read filled that the fresh page has not
 * read again yet (`data-summary-pending`): what it showed stays until the new values come, no flicker to "…".
 * @param {Node} old
 * @param {Node} fresh
 * @returns {boolean}
 */
function kept(old, fresh) {
  if (!(old instanceof Element) || !(fresh instanceof Element)) return false;
  if (old.localName === "time") {
    return !old.hasAttribute("data-local-time") && old.getAttribute("datetime") === fresh.getAttribute("datetime");
  }
  return fresh.hasAttribute("data-summary-pending") && !old.hasAttribute("data-summary-pending");
}

// base.html loads idiomorph before the modules; a page without it (a one-file export) morphs nothing
const idiomorph = /** @type {Window & { Idiomorph?: Idiomorph }} */ (window).Idiomorph;
if (idiomorph) idiomorph.defaults.callbacks.beforeNodeMorphed = (old, fresh) => !kept(old, fresh);

// The list's refresh reads the list the address bar names: a choice made in the form moves it (hx-push-url),
// while the region's `hx-get`, drawn with the page and left as it was by a morph, names the choice before.
document.body.addEventListener("htmx:configRequest", (event) => {
  const detail = /** @type {CustomEvent<{ elt: Element, path: string }>} */ (event).detail;
  if (detail.elt.matches("[data-session-list-region]")) detail.path = location.pathname + location.search;
});

/**
 * A read's cells come out of band, by id (templates/sessions/cells.html): when the list has moved on while
 * they were read (a filter, a sort), rows asked about may be gone, and their cells are dropped here rather
 * than swapped into nothing (which htmx reports as an error). Listened for on the asking element itself: a
 * morph may have taken it out of the page, where its events no longer reach the body.
 * @param {Event} event
 */
function dropCellsOfGoneRows(event) {
  const detail = /** @type {CustomEvent<{ serverResponse: string }>} */ (event).detail;
  const fresh = document.createElement("template");
  fresh.innerHTML = detail.serverResponse;
  for (const cell of fresh.content.querySelectorAll("[hx-swap-oob][id]")) {
    if (!document.getElementById(cell.id)) cell.remove();
  }
  detail.serverResponse = fresh.innerHTML;
}

document.body.addEventListener("htmx:beforeRequest", (event) => {
  const asking = /** @type {CustomEvent<{ elt: Element }>} */ (event).detail.elt;
  if (asking.matches("[data-summaries-ask]")) asking.addEventListener("htmx:beforeSwap", dropCellsOfGoneRows);
});
