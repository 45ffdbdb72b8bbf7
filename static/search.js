// The session page's search: matches across windows, "n of m", j/k and "/".
(function () {
  "use strict";
  var head = document.querySelector("[data-session-url]");
  if (!head) return;
  var base = head.getAttribute("data-session-url");
  var api = "/api" + base;
  var form = document.querySelector("[data-search]");
  var input = form.querySelector("[data-search-input]");
  var output = form.querySelector("[data-search-count]");
  var matches = [];
  var current = -1;

  function params() {
    var p = new URLSearchParams();
    new FormData(form).forEach(function (value, key) { if (value) p.set(key, value); });
    return p;
  }

  function showCount() {
    if (!matches.length) { output.textContent = params().toString() ? output.getAttribute("data-none") : ""; return; }
    output.textContent = output.getAttribute("data-pattern")
      .replace("{n}", String(current + 1)).replace("{m}", String(matches.length));
  }

  function go(i) {
    if (!matches.length) return;
    current = (i + matches.length) % matches.length;
    showCount();
    var match = matches[current];
    var p = params();
    p.set("match", String(current));
    if (window.dshSession.open(match.anchor, match.index, p)) {
      history.replaceState(null, "", location.pathname + location.search + "#" + encodeURIComponent(match.anchor));
    }
  }

  function run(then) {
    if (!params().toString()) { matches = []; current = -1; showCount(); return; }
    fetch(api + "/search?" + params().toString())
      .then(function (r) { return r.json(); })
      .then(function (data) { matches = data.matches; current = -1; showCount(); if (then) then(); });
  }

  form.addEventListener("submit", function (event) { event.preventDefault(); run(function () { go(0); }); });
  form.addEventListener("change", function (event) {
    if (event.target !== input) run(function () { go(0); });
  });
  form.querySelector("[data-search-next]").addEventListener("click", function () { go(current + 1); });
  form.querySelector("[data-search-previous]").addEventListener("click", function () { go(current - 1); });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target instanceof Element && target.closest("input, select, textarea");
    if (event.key === "Escape" && typing) { target.blur(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/") { event.preventDefault(); input.focus(); input.select(); }
    else if (event.key === "j") { event.preventDefault(); go(current + 1); }
    else if (event.key === "k") { event.preventDefault(); go(current - 1); }
  });

  // Restore a search carried over from another window.
  var query = new URLSearchParams(location.search);
  var restored = false;
  ["q", "kind", "form", "tool"].forEach(function (name) {
    if (query.get(name)) { form.elements[name].value = query.get(name); restored = true; }
  });
  if (query.get("errors")) { form.elements.errors.checked = true; restored = true; }
  if (restored) {
    run(function () {
      current = Math.min(Number(query.get("match") || 0), matches.length - 1);
      showCount();
    });
  }
})();
