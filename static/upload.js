// Uploads: drop zone and file picker, one XMLHttpRequest per file (its upload
// events drive the progress bar), and deleting an upload, from the list or from its page.
// Lives in static/ because the page's CSP allows no inline script.
(function () {
  "use strict";

  function message(zone, name, params) {
    var text = zone.getAttribute("data-msg-" + name) || "";
    Object.keys(params).forEach(function (key) { text = text.split("{" + key + "}").join(String(params[key])); });
    return text;
  }

  function item(className, role) {
    var li = document.createElement("li");
    li.className = className;
    if (role) li.setAttribute("role", role);
    return li;
  }

  function link(href, text) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function send(zone, file, onProgress, done) {
    var xhr = new XMLHttpRequest();
    xhr.open("POST", zone.getAttribute("data-upload-url") + "?name=" + encodeURIComponent(file.name));
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
    xhr.upload.addEventListener("progress", function (event) { onProgress(event.loaded); });
    xhr.upload.addEventListener("load", function () { onProgress(file.size); });
    xhr.addEventListener("load", function () {
      var body = null;
      try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
      done(xhr.status, body);
    });
    xhr.addEventListener("error", function () { done(0, null); });
    xhr.send(file);
  }

  function show(zone, outcome) {
    var results = zone.querySelector("[data-upload-results]");
    var name = outcome.file.name;
    var body = outcome.body;
    if (outcome.status === 200 || outcome.status === 201) {
      var sessions = body.upload.sessions;
      var li = item("upload-result", null);
      li.setAttribute("data-upload-result", "stored");
      li.appendChild(link(body.upload.url, message(zone, body.created ? "stored" : "duplicate",
        { name: name, count: sessions.length })));
      var list = document.createElement("ul");
      sessions.forEach(function (s) {
        var entry = document.createElement("li");
        entry.appendChild(link(s.url, s.id || s.key));
        list.appendChild(entry);
      });
      li.appendChild(list);
      results.appendChild(li);
      return;
    }
    var failure = item("upload-result error-text", "alert");
    failure.setAttribute("data-upload-result", "refused");
    // the server's refusals already name the file and say where reading stopped
    failure.textContent = body && body.detail ? body.detail : message(zone, "failed",
      { name: name, message: outcome.status ? "HTTP " + outcome.status : message(zone, "network", {}) });
    results.appendChild(failure);
  }

  function finish(zone, outcomes) {
    var stored = outcomes.filter(function (o) { return o.status === 200 || o.status === 201; });
    zone.setAttribute("data-upload-state", "done");
    if (outcomes.length === 1 && stored.length === 1) {
      var upload = stored[0].body.upload;
      window.location.assign(upload.sessions.length === 1 ? upload.sessions[0].url : upload.url);
      return;
    }
    zone.querySelector("[data-upload-status]").textContent =
      message(zone, "done", { ok: stored.length, m: outcomes.length });
    outcomes.forEach(function (o) { show(zone, o); });
    if (stored.length) document.body.dispatchEvent(new CustomEvent("dsh:uploaded", { bubbles: true }));
  }

  function uploadAll(zone, files) {
    if (!files.length || zone.getAttribute("data-upload-state") === "uploading") return;
    var progress = zone.querySelector("[data-upload-progress]");
    var status = zone.querySelector("[data-upload-status]");
    var total = 0;
    for (var f = 0; f < files.length; f++) total += files[f].size;
    zone.querySelector("[data-upload-results]").replaceChildren();
    zone.setAttribute("data-upload-state", "uploading");
    progress.hidden = false;
    progress.max = total || 1;
    progress.value = 0;
    var outcomes = [];
    var sent = 0;
    var i = 0;
    function next() {
      if (i >= files.length) { finish(zone, outcomes); return; }
      var file = files[i++];
      var before = sent;
      status.textContent = message(zone, "uploading", { name: file.name, n: i, m: files.length });
      send(zone, file, function (loaded) {
        progress.value = before + Math.min(loaded, file.size);
        if (loaded >= file.size) status.textContent = message(zone, "reading", { name: file.name });
      }, function (code, body) {
        sent = before + file.size;
        progress.value = sent;
        outcomes.push({ file: file, status: code, body: body });
        next();
      });
    }
    next();
  }

  function setUp(zone) {
    var input = zone.querySelector("[data-upload-input]");
    zone.querySelector("[data-upload-pick]").addEventListener("click", function () { input.click(); });
    input.addEventListener("change", function () {
      var files = Array.prototype.slice.call(input.files);
      input.value = "";
      uploadAll(zone, files);
    });
    zone.addEventListener("dragover", function (event) {
      event.preventDefault();
      zone.setAttribute("data-drag", "true");
    });
    zone.addEventListener("dragleave", function () { zone.removeAttribute("data-drag"); });
    zone.addEventListener("drop", function (event) {
      event.preventDefault();
      zone.removeAttribute("data-drag");
      if (event.dataTransfer) uploadAll(zone, Array.prototype.slice.call(event.dataTransfer.files));
    });
  }

  // Deleting asks first, in the page's one dialog (templates/_delete_upload.html), which names what goes: the
  // upload, and each of its sessions as the page shows them (title and id, as far as they are read by now).
  var asked = null; // the delete button whose dialog is open

  function sessionName(element) {
    var title = element.querySelector("[data-session-title]");
    var id = element.querySelector("[data-session-id]");
    var said = title ? title.textContent.trim() : "";
    var known = id ? id.textContent.trim() : "";
    return said && known && said !== known ? said + " · " + known : said || known;
  }

  function askToDelete(button) {
    var dialog = document.querySelector("[data-delete-dialog]");
    if (!dialog) return;
    asked = button;
    dialog.querySelector("[data-delete-title]").textContent = button.getAttribute("data-confirm-title");
    dialog.querySelector("[data-delete-said]").textContent = button.getAttribute("data-confirm-sessions");
    var list = dialog.querySelector("[data-delete-sessions]");
    list.replaceChildren();
    var digest = button.getAttribute("data-digest");
    document.querySelectorAll("[data-goes-with]").forEach(function (element) {
      if (element.getAttribute("data-goes-with") !== digest) return;
      var li = document.createElement("li");
      li.textContent = sessionName(element);
      list.appendChild(li);
    });
    var more = button.closest("[data-upload]");
    more = more && more.querySelector("[data-more-sessions]");
    if (more) {
      var rest = document.createElement("li");
      rest.textContent = more.textContent;
      list.appendChild(rest);
    }
    var error = dialog.querySelector("[data-delete-error]");
    error.hidden = true;
    error.textContent = "";
    dialog.querySelector("[data-delete-confirm]").disabled = false;
    dialog.showModal();
  }

  function deleteAsked(confirm) {
    var button = asked;
    var dialog = confirm.closest("dialog");
    if (!button) return;
    confirm.disabled = true;
    function failed(message) {
      var error = dialog.querySelector("[data-delete-error]");
      error.textContent = confirm.getAttribute("data-failed").split("{message}").join(message);
      error.hidden = false;
      confirm.disabled = false;
    }
    fetch(button.getAttribute("data-upload-delete"), { method: "DELETE", credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok && response.status !== 404) { // 404: gone already, deleted by someone else
          return response.json().catch(function () { return {}; }).then(function (body) {
            failed(body && body.detail ? String(body.detail) : "HTTP " + response.status);
          });
        }
        var after = button.getAttribute("data-after-delete");
        if (after) window.location.assign(after);
        else window.location.reload(); // the list again: its counts and its page as they now are
      }, function () { failed(confirm.getAttribute("data-network")); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-upload-zone]").forEach(setUp);
  });
  document.addEventListener("click", function (event) {
    if (!(event.target instanceof Element)) return;
    var target = event.target.closest("[data-upload-delete], [data-delete-confirm], [data-delete-cancel]");
    if (!target) return;
    if (target.hasAttribute("data-upload-delete")) askToDelete(target);
    else if (target.hasAttribute("data-delete-confirm")) deleteAsked(target);
    else target.closest("dialog").close();
  });
  // A file dropped beside the zone must not make the browser navigate away to it.
  document.addEventListener("dragover", function (event) { event.preventDefault(); });
  document.addEventListener("drop", function (event) { event.preventDefault(); });
})();
