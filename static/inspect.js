// Disclosure rows, JSON toggles and the theme switch. Lives here, not in hx-on or
// trigger filters, because the page's CSP forbids eval (PRODUCT.md Safety).
(function () {
  "use strict";

  function rootOf(header) { return header.closest("[data-context-row], .disclosure"); }

  function slotOf(root) {
    for (var el = root.firstElementChild; el; el = el.nextElementSibling) {
      if (el.hasAttribute("data-disclosure-slot")) return el;
    }
    return null;
  }

  function setOpen(header, open) {
    var root = rootOf(header);
    header.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) root.setAttribute("data-open", "true"); else root.removeAttribute("data-open");
    var slot = slotOf(root);
    if (!slot) return;
    if (!open) { slot.replaceChildren(); return; }
    var inline = null;
    for (var el = root.firstElementChild; el; el = el.nextElementSibling) {
      if (el.matches("template[data-disclosure-body]")) inline = el;
    }
    if (inline) {
      slot.replaceChildren(inline.content.cloneNode(true));
      // htmx wires only what it swaps in itself: a body's "Show all" needs it done here
      if (window.htmx) window.htmx.process(slot);
    } else if (header.hasAttribute("hx-get") && window.htmx) window.htmx.trigger(header, "dsh:open");
  }

  function toggle(header) { setOpen(header, header.getAttribute("aria-expanded") !== "true"); }

  function toggleJson(button) {
    var pre = button.nextElementSibling;
    var open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.textContent = (open ? "\u25BE" : "\u25B8") + button.textContent.slice(1);
    if (pre) pre.hidden = !open;
  }

  function switchTheme() {
    var root = document.documentElement;
    var dark = root.dataset.theme ? root.dataset.theme === "dark"
      : window.matchMedia("(prefers-color-scheme: dark)").matches;
    root.dataset.theme = dark ? "light" : "dark";
    try { localStorage.setItem("dsh-inspect-theme", root.dataset.theme); } catch (e) { /* not remembered */ }
  }

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    var header = target.closest("[data-disclosure-row][data-expandable]");
    if (header) { toggle(header); return; }
    var json = target.closest("[data-json-toggle]");
    if (json) { toggleJson(json); return; }
    if (target.closest("[data-theme-toggle]")) switchTheme();
  });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (!(target instanceof Element) || !target.matches("[data-disclosure-row][data-expandable]")) return;
    if (target.tagName === "BUTTON") return; // a native button already turns Enter and Space into a click
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      toggle(target);
    }
  });

  // A path button in a row header copies its path instead of toggling the row (served page and export).
  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element && event.target.closest("[data-copy-path]");
    if (!button || !navigator.clipboard) return;
    event.stopPropagation();
    navigator.clipboard.writeText(button.getAttribute("data-copy-path")).catch(function () { /* not permitted */ });
  }, true);

  // A body that arrives after its row was closed again is dropped.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var elt = event.detail && event.detail.requestConfig && event.detail.requestConfig.elt;
    if (elt && elt.matches && elt.matches("[data-disclosure-row]") && elt.getAttribute("aria-expanded") !== "true") {
      event.detail.shouldSwap = false;
    }
  });
})();
