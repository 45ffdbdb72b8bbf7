// The session page's search: live as the reader types (debounced), matches across windows,
// "n of m" in the sticky toolbar, every match in the loaded rows marked (<mark data-search-mark>) and the
// current one's collapsed body opened; the keys: "/" searches, j and k step through the matches (through
// the rows when no search is active: `dshStep`, inspect.js), "?" lists the shortcuts.
(function () {
  "use strict";
  var head = document.querySelector("[data-session-url]");
  var form = document.querySelector("[data-search]");
  var flow = document.querySelector("[data-chat-flow]");
  if (!head || !form || !flow) return;
  var api = "/api" + head.getAttribute("data-session-url");
  var input = form.querySelector("[data-search-input]");
  var output = form.querySelector("[data-search-count]");
  var shortcuts = document.querySelector("[data-shortcuts]");
  var DEBOUNCE = 200;  // ms after the last keystroke
  var OPEN_WAIT = 5000;  // ms a fetched body may take before the match is marked without it

  var matches = [];
  var current = -1;
  var needle = "";  // the words the matches were found for, lower-cased
  var searched = null;  // the query string the matches answer; null before any
  var asked = 0;  // the latest request: an earlier answer arriving late is dropped
  var timer = null;

  function params() {
    var p = new URLSearchParams();
    new FormData(form).forEach(function (value, key) { if (value) p.set(key, String(value)); });
    return p;
  }

  function showCount() {
    if (!matches.length) { output.textContent = searched ? output.getAttribute("data-none") : ""; return; }
    var pattern = current < 0 ? output.getAttribute("data-elsewhere") : output.getAttribute("data-pattern");
    output.textContent = pattern.replace("{n}", window.dshCount(current + 1)).replace("{m}", window.dshCount(matches.length));
  }

  // -- marks: the words found, in the text nodes of the loaded rows that match (never markup) ----------

  function clearMarks() {
    flow.querySelectorAll("mark[data-search-mark]").forEach(function (mark) {
      var parent = mark.parentNode;
      parent.replaceChild(document.createTextNode(mark.textContent), mark);
      parent.normalize();
    });
  }

  function markIn(row) {
    var walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        var parent = node.parentElement;
        return parent && !parent.closest("script, style, mark") ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
      }
    });
    var nodes = [];
    for (var node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
    nodes.forEach(function (text) {
      var lower = text.data.toLowerCase();
      if (lower.length !== text.data.length) return;  // a character whose lower case is longer: offsets would drift
      var at = lower.indexOf(needle);
      while (at >= 0) {
        var found = text.splitText(at);
        text = found.splitText(needle.length);
        var mark = document.createElement("mark");
        mark.setAttribute("data-search-mark", "");
        found.parentNode.replaceChild(mark, found);
        mark.appendChild(found);
        lower = text.data.toLowerCase();
        at = lower.indexOf(needle);
      }
    });
  }

  function rowOf(match) { return match ? document.getElementById(match.anchor) : null; }

  // Marks redrawn over the rows the page holds now; the DOM changes it makes are not watched.
  function markAll() {
    watching.disconnect();
    clearMarks();
    if (needle) {
      var wanted = {};
      matches.forEach(function (m) { wanted[m.anchor] = true; });
      flow.querySelectorAll(".flow-item").forEach(function (row) { if (wanted[row.id]) markIn(row); });
      var row = rowOf(matches[current]);
      var first = row && row.querySelector("mark[data-search-mark]");
      if (first) first.setAttribute("data-current-mark", "");
    }
    watching.observe(flow, { childList: true, subtree: true });
  }

  // Windows loaded or dropped, a body opened, a live row: the marks follow on the next frame.
  var pending = false;
  var watching = new MutationObserver(function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; markAll(); });
  });
  watching.observe(flow, { childList: true, subtree: true });

  // -- the current match: its fold (dshReveal) and the collapsed body holding the words opened -----------

  function closedHeaders(row) {
    return Array.prototype.slice.call(row.querySelectorAll('[data-disclosure-row][data-expandable][aria-expanded="false"]'));
  }

  function inlineBody(header) {
    var root = header.closest("[data-context-row], .disclosure");
    for (var el = root && root.firstElementChild; el; el = el.nextElementSibling) {
      if (el.matches("template[data-disclosure-body]")) return el;
    }
    return null;
  }

  // A fetched body is in once htmx has settled it (or after OPEN_WAIT, to mark what is there).
  function settled(header) {
    return new Promise(function (resolve) {
      var root = header.closest("[data-context-row], .disclosure") || header;
      var done = function (event) {
        if (event && !root.contains(event.target)) return;
        document.removeEventListener("htmx:afterSettle", done);
        clearTimeout(late);
        resolve();
      };
      var late = setTimeout(done, OPEN_WAIT);
      document.addEventListener("htmx:afterSettle", done);
    });
  }

  // Opens, in `row`, the body holding the words unless the row shows them already: an inline body whose
  // text has them, else the first body fetched on open (its text is unknown until it is in). Nested
  // bodies are looked into in turn, a few levels deep.
  function openHolding(row, depth) {
    if (!needle || depth > 3 || row.textContent.toLowerCase().indexOf(needle) >= 0) return Promise.resolve();
    var headers = closedHeaders(row);
    for (var i = 0; i < headers.length; i++) {
      var body = inlineBody(headers[i]);
      if (body && body.content.textContent.toLowerCase().indexOf(needle) >= 0) {
        headers[i].click();
        return openHolding(row, depth + 1);
      }
    }
    var fetched = headers.filter(function (h) { return h.hasAttribute("hx-get"); })[0];
    if (!fetched) return Promise.resolve();
    var wait = settled(fetched);
    fetched.click();
    return wait.then(function () { return openHolding(row, depth + 1); });
  }

  function showCurrent(row) {
    if (!row || matches[current] === undefined || row.id !== matches[current].anchor) return;
    if (window.dshReveal) window.dshReveal(row);
    openHolding(row, 0).then(function () {
      markAll();
      var mark = row.querySelector("mark[data-current-mark]");
      if (mark) mark.scrollIntoView({ block: "center" });
    });
  }

  function go(i) {
    if (!matches.length) return;
    current = (i + matches.length) % matches.length;
    showCount();
    var match = matches[current];
    var p = params();
    p.set("match", String(current));
    markAll();
    Promise.resolve(window.dshSession.open(match.anchor, match.index, p)).then(function (row) {
      if (!row) return;
      history.replaceState(null, "", location.pathname + location.search + "#" + encodeURIComponent(match.anchor));
      showCurrent(row);
    });
  }

  // The first match at or after the top of the screen among the rows loaded, else the first of all.
  function firstNear() {
    var loaded = -1;
    for (var i = 0; i < matches.length; i++) {
      var row = rowOf(matches[i]);
      if (!row) continue;
      if (loaded < 0) loaded = i;
      if (row.getBoundingClientRect().bottom > 0) return i;
    }
    return Math.max(loaded, 0);
  }

  // The matches for the form as it is now; `then` runs with them unless a later search overtook this one.
  function run(then) {
    clearTimeout(timer);
    timer = null;
    var query = params();
    var mine = ++asked;
    if (!query.toString()) {
      matches = []; current = -1; needle = ""; searched = null;
      showCount(); markAll();
      return;
    }
    fetch(api + "/search?" + query.toString())
      .then(function (r) { return r.json(); })
      .then(function (data) {
        if (mine !== asked) return;
        matches = data.matches; current = -1; searched = query.toString();
        needle = (query.get("q") || "").trim().toLowerCase();
        showCount(); markAll();
        if (then) then();
      });
  }

  function runSoon() {
    clearTimeout(timer);
    timer = setTimeout(function () { run(function () { go(firstNear()); }); }, DEBOUNCE);
  }

  form.addEventListener("input", function (event) {
    if (event.target instanceof HTMLInputElement && event.target.type !== "checkbox") runSoon();
  });
  form.addEventListener("change", function (event) {
    if (event.target instanceof HTMLSelectElement || event.target.type === "checkbox") run(function () { go(firstNear()); });
  });
  // Enter: the next match, or the first once the search for what was typed is in
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (timer !== null || searched !== params().toString()) run(function () { go(firstNear()); });
    else go(current + 1);
  });
  form.querySelector("[data-search-next]").addEventListener("click", function () { go(current + 1); });
  form.querySelector("[data-search-previous]").addEventListener("click", function () { go(current - 1); });

  // The list is copied in from its <template> the first time it opens.
  function openShortcuts() {
    if (!shortcuts || shortcuts.open) return;
    var body = shortcuts.querySelector("template[data-shortcuts-body]");
    if (body) shortcuts.replaceChildren(body.content.cloneNode(true));
    shortcuts.showModal();
  }
  var opener = document.querySelector("[data-shortcuts-open]");
  if (opener) opener.addEventListener("click", openShortcuts);
  if (shortcuts) {
    shortcuts.addEventListener("click", function (event) {
      if (event.target instanceof Element && event.target.closest("[data-shortcuts-close]")) shortcuts.close();
    });
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target instanceof Element && target.closest("input, select, textarea, [contenteditable]");
    // Esc leaves a field as it is (a search box would clear itself, the matches staying on)
    if (event.key === "Escape" && typing) { event.preventDefault(); target.blur(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey || (shortcuts && shortcuts.open)) return;
    if (event.key === "/") { event.preventDefault(); input.focus(); input.select(); }
    else if (event.key === "?") { event.preventDefault(); openShortcuts(); }
    else if (event.key === "j" || event.key === "k") {
      event.preventDefault();
      var by = event.key === "j" ? 1 : -1;
      if (matches.length) go(current + by);
      else if (window.dshStep) window.dshStep(by);
    }
  });

  // Restore a search carried over from another page (a match opened the page at its window).
  var query = new URLSearchParams(location.search);
  var restored = false;
  ["q", "kind", "form", "tool"].forEach(function (name) {
    if (query.get(name)) { form.elements[name].value = query.get(name); restored = true; }
  });
  ["errors", "raw"].forEach(function (name) {
    if (query.get(name)) { form.elements[name].checked = true; restored = true; }
  });
  if (restored) {
    run(function () {
      current = Math.min(Number(query.get("match") || 0), matches.length - 1);
      showCount();
      markAll();
      showCurrent(rowOf(matches[current]));
    });
  }
})();
