// Disclosure rows, JSON toggles and the theme switch. Lives here, not in hx-on or
// trigger filters, because the page's CSP forbids eval (docs/product.md Safety).
(function () {
  "use strict";

  // A script's request refused for want of an identity (a token revoked, a sign-in ended) answers 401 with
  // `HX-Redirect` to sign in (app/web/access.py `refusal`): the whole page goes there, as htmx's own do.
  var plainFetch = window.fetch;
  window.fetch = function () {
    return plainFetch.apply(this, arguments).then(function (response) {
      var signIn = response.status === 401 ? response.headers.get("HX-Redirect") : null;
      if (signIn) window.location.assign(signIn);
      return response;
    });
  };

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

  // Copy buttons (templates/rows/_copy.html), on the served page and in a one-file export: a button copies
  // its data-copy-text, or the text of what its data-copy-from selector finds in its row (never markup, and
  // not a capped body's footer), then reads "Copied" for a moment, announced. Caught before the row's own
  // click: a path button in a header copies, it does not toggle the row.
  function copiedText(button) {
    if (button.hasAttribute("data-copy-text")) return button.getAttribute("data-copy-text");
    var scope = button.closest(".flow-item") || document;
    var parts = [];
    scope.querySelectorAll(button.getAttribute("data-copy-from")).forEach(function (el) {
      var copy = el.cloneNode(true);
      copy.querySelectorAll("[data-copy], [data-truncated], [data-show-all]").forEach(function (e) { e.remove(); });
      parts.push(copy.textContent.replace(/\s+$/, ""));
    });
    return parts.join("\n\n");
  }

  function writeClipboard(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {  // a page served over plain http to another host
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      var done = document.execCommand("copy");
      area.remove();
      if (done) resolve(); else reject(new Error("copy refused"));
    });
  }

  // One live region for the page, added on the first copy: buttons that each held one would cost nodes.
  function announce(text) {
    var status = document.querySelector("[data-copy-status]");
    if (!status) {
      status = document.createElement("p");
      status.className = "visually-hidden";
      status.setAttribute("aria-live", "polite");
      status.setAttribute("data-copy-status", "");
      document.body.appendChild(status);
    }
    status.textContent = "";
    setTimeout(function () { status.textContent = text; }, 50);  // emptied first: the same word again is news
  }

  // A button's word is its data-label (drawn by the stylesheet) and aria-label; a path button's is its text.
  function showCopied(button) {
    var copied = button.getAttribute("data-copied-label") || "Copied";
    var shows = !button.hasAttribute("data-label");
    if (!button.hasAttribute("data-copy-idle")) {
      button.setAttribute("data-copy-idle", shows ? button.textContent : button.getAttribute("data-label"));
    }
    if (shows) button.textContent = copied;
    else { button.setAttribute("data-label", copied); button.setAttribute("aria-label", copied); }
    button.setAttribute("data-copied", "");
    announce(copied);
    clearTimeout(button.dshCopyTimer);
    button.dshCopyTimer = setTimeout(function () {
      var idle = button.getAttribute("data-copy-idle");
      if (shows) button.textContent = idle;
      else { button.setAttribute("data-label", idle); button.setAttribute("aria-label", idle); }
      button.removeAttribute("data-copied");
    }, 1000);  // docs/ui.md §5.1: "Copied" for 1s
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element && event.target.closest("[data-copy]");
    if (!button) return;
    event.stopPropagation();
    writeClipboard(copiedText(button)).then(function () { showCopied(button); }, function () { /* not permitted */ });
  }, true);

  // A row's time (templates/rows/_copy.html `clock`) comes in UTC; here it is worded in the reader's time
  // zone (YYYY-MM-DD HH:MM), the whole timestamp with its zone on hover.
  var clockParts = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" };
  function localClock(time) {
    var at = new Date(time.getAttribute("datetime"));
    if (isNaN(at.getTime())) return;
    var part = {};
    new Intl.DateTimeFormat("en-US", clockParts).formatToParts(at).forEach(function (p) { part[p.type] = p.value; });
    time.textContent = part.year + "-" + part.month + "-" + part.day + " " + part.hour + ":" + part.minute;
    time.title = new Intl.DateTimeFormat(document.documentElement.lang || undefined,
      { dateStyle: "full", timeStyle: "long" }).format(at) + " (" + time.getAttribute("datetime") + ")";
    time.removeAttribute("data-local-time");
  }
  function localClocks(root) {
    if (root.matches && root.matches("time[data-local-time]")) localClock(root);
    root.querySelectorAll("time[data-local-time]").forEach(localClock);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { localClocks(document); });
  } else localClocks(document);
  // and in every row added later, however it came (the live tail, windows the page loads, opened bodies)
  new MutationObserver(function (changes) {
    changes.forEach(function (change) {
      change.addedNodes.forEach(function (node) { if (node.nodeType === 1) localClocks(node); });
    });
  }).observe(document.documentElement, { childList: true, subtree: true });

  // A body that arrives after its row was closed again is dropped.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var elt = event.detail && event.detail.requestConfig && event.detail.requestConfig.elt;
    if (elt && elt.matches && elt.matches("[data-disclosure-row]") && elt.getAttribute("aria-expanded") !== "true") {
      event.detail.shouldSwap = false;
    }
  });
})();

// Bookkeeping folds, on the served page and in a one-file export alike: a fold's head opens
// it; "Show bookkeeping" ([data-bookkeeping-toggle]) shows every fold unfolded and is remembered (theme.js
// applies it before first paint). `window.dshReveal(el)` opens the folds holding a row before it is scrolled
// to (a permalink, a search hit); `window.dshStep(by)` marks the next (1) or previous (-1) row shown (j/k).
(function () {
  "use strict";
  var root = document.documentElement;

  function setFold(fold, open) {
    if (open) fold.setAttribute("data-open", "true"); else fold.removeAttribute("data-open");
    for (var el = fold.firstElementChild; el; el = el.nextElementSibling) {
      if (el.hasAttribute("data-fold-toggle")) el.setAttribute("aria-expanded", open ? "true" : "false");
    }
  }

  window.dshReveal = function (el) {
    for (var fold = el.closest("[data-fold]"); fold; fold = fold.parentElement && fold.parentElement.closest("[data-fold]")) {
      if (!fold.hasAttribute("data-open")) setFold(fold, true);
    }
  };

  // The rows on the page a reader can see, in order: a closed fold's are skipped (its head is a Tab stop).
  function shownRows() {
    return Array.prototype.filter.call(document.querySelectorAll("[data-chat-flow] .flow-item"), function (row) {
      return row.getClientRects().length > 0;
    });
  }

  // The row j (by 1) or k (by -1) goes to: the next or previous to the one marked last, or, with
  // none marked yet (or the marked one folded away), the first row on screen or the one before it.
  function destination(list, by) {
    for (var i = 0; i < list.length; i++) if (list[i].hasAttribute("data-current")) return i + by;
    for (var j = 0; j < list.length; j++) if (list[j].getBoundingClientRect().bottom > 0) return by > 0 ? j : j - 1;
    return list.length - 1;
  }

  function markRow(row) {
    document.querySelectorAll(".flow-item[data-current]").forEach(function (e) { e.removeAttribute("data-current"); });
    row.setAttribute("data-current", "true");
    row.scrollIntoView({ block: "center" });
    var header = row.querySelector("[data-disclosure-row][data-expandable]");
    if (header) header.focus({ preventScroll: true });
  }

  window.dshStep = function (by) {
    var list = shownRows();
    if (list.length) markRow(list[Math.max(0, Math.min(list.length - 1, destination(list, by)))]);
  };

  function syncSwitches() {
    document.querySelectorAll("[data-bookkeeping-toggle]").forEach(function (box) {
      box.checked = root.hasAttribute("data-show-bookkeeping");
    });
  }

  function showBookkeeping(shown) {
    if (shown) root.setAttribute("data-show-bookkeeping", ""); else root.removeAttribute("data-show-bookkeeping");
    try { localStorage.setItem("dsh-inspect-bookkeeping", shown ? "shown" : "folded"); } catch (e) { /* not remembered */ }
    syncSwitches();
  }

  document.addEventListener("click", function (event) {
    var head = event.target instanceof Element && event.target.closest("[data-fold-toggle]");
    if (head) setFold(head.parentElement, head.getAttribute("aria-expanded") !== "true");
  });
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (box instanceof HTMLInputElement && box.hasAttribute("data-bookkeeping-toggle")) showBookkeeping(box.checked);
  });
  // the browser may restore a checkbox on reload or going back: the remembered choice rules
  document.addEventListener("DOMContentLoaded", syncSwitches);
  window.addEventListener("pageshow", syncSwitches);

  // A count as the server prints one (`strings.count`): digits grouped by thousands, in either language.
  window.dshCount = function (n) { return String(n).replace(/\B(?=(\d{3})+$)/g, ","); };

  // A bookkeeping row the live tail appends (static/session.js moves it into the last window) joins the
  // fold just before it, or starts one (`data-fold-live`), worded with the patterns the switch carries:
  // the same fold the server draws once that window is fetched again.
  function summarize(fold, wording) {
    var rows = fold.querySelectorAll("[data-fold-rows] > .flow-item");
    var types = [];
    rows.forEach(function (row) {
      var typed = row.querySelector("[data-event-type]");
      var type = typed ? typed.getAttribute("data-event-type") : "";
      if (type && types.indexOf(type) < 0) types.push(type);
    });
    var head = fold.firstElementChild;
    var pattern = wording.getAttribute(rows.length === 1 ? "data-fold-one" : "data-fold-many");
    head.textContent = pattern.replace("{count}", window.dshCount(rows.length))
      .replace("{types}", types.slice(0, 3).join(", ") + (types.length > 3 ? ", …" : ""));
    head.title = types.join(", ");
    fold.setAttribute("data-fold-count", String(rows.length));
  }

  function foldLive(row, wording) {
    var fold = row.previousElementSibling;
    if (!fold || !fold.hasAttribute("data-fold")) {
      fold = document.createElement("div");
      fold.className = "fold";
      fold.setAttribute("data-fold", "");
      fold.setAttribute("data-fold-live", "");
      var head = document.createElement("button");
      head.type = "button";
      head.className = "fold-head";
      head.setAttribute("data-fold-toggle", "");
      head.setAttribute("aria-expanded", "false");
      var held = document.createElement("div");
      held.className = "fold-rows";
      held.id = "fold-" + row.id;
      held.setAttribute("data-fold-rows", "");
      head.setAttribute("aria-controls", held.id);
      fold.append(head, held);
      row.before(fold);
    }
    fold.lastElementChild.appendChild(row);
    summarize(fold, wording);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var flow = document.querySelector("[data-chat-flow]");
    var wording = document.querySelector("[data-bookkeeping-toggle][data-fold-many]");
    if (!flow || !wording || !document.querySelector("[data-live]")) return;
    // a row already in a fold (a window's, or one swapped in place) stays where it is
    function loose(node) {
      return node.nodeType === 1 && node.matches(".flow-item[data-bookkeeping]") && node.parentNode &&
        (node.parentNode === flow || node.parentNode.hasAttribute("data-window"));
    }
    new MutationObserver(function (records) {
      records.forEach(function (record) {
        record.addedNodes.forEach(function (node) { if (loose(node)) foldLive(node, wording); });
        // rows the live tail takes back (to send them again) leave their fold counted anew, or gone
        var held = record.target;
        if (!record.removedNodes.length || record.addedNodes.length || !held.hasAttribute("data-fold-rows")) return;
        var fold = held.parentNode;
        if (!fold || !fold.isConnected) return;
        if (held.querySelector(".flow-item")) summarize(fold, wording);
        else fold.remove();
      });
    }).observe(flow, { childList: true, subtree: true });
  });
})();
