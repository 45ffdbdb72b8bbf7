// Uploads: drop zone and file picker, one XMLHttpRequest per file (its upload
// events drive the progress bar), and deleting an upload, from the list or from its page.
// Lives in static/ because the page's CSP allows no inline script.
import { request } from "./request.js";
import { fill } from "./wording.js";

/**
 * What `POST /api/uploads` answers for a stored file (app/web/routes/uploads.py), as far as it is read here,
 * and what a refusal carries.
 * @typedef {{ url: string, id: string | null, key: string }} StoredSession
 * @typedef {{ created: boolean, upload: { url: string, sessions: StoredSession[] } }} Stored
 * @typedef {{ detail?: string }} Refused
 * @typedef {{ file: File, status: number, body: Stored | Refused | null }} Outcome status 0: no answer
 */

/** @param {Element} zone @param {string} name @param {Record<string, string | number>} params */
function message(zone, name, params) {
  return fill(zone.getAttribute(`data-msg-${name}`) || "", params);
}

/** @param {string} className @param {string | null} role */
function item(className, role) {
  const li = document.createElement("li");
  li.className = className;
  if (role) li.setAttribute("role", role);
  return li;
}

/** @param {string} href @param {string} text */
function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  return a;
}

/**
 * @param {Element} zone
 * @param {File} file
 * @param {(loaded: number) => void} onProgress bytes sent so far
 * @param {(status: number, body: Stored | Refused | null) => void} done
 */
function send(zone, file, onProgress, done) {
  const xhr = new XMLHttpRequest();
  xhr.open("POST", `${zone.getAttribute("data-upload-url")}?name=${encodeURIComponent(file.name)}`);
  xhr.setRequestHeader("Content-Type", "application/octet-stream");
  xhr.upload.addEventListener("progress", (event) => { onProgress(event.loaded); });
  xhr.upload.addEventListener("load", () => { onProgress(file.size); });
  xhr.addEventListener("load", () => {
    let body = null;
    try { body = JSON.parse(xhr.responseText); } catch { body = null; }
    done(xhr.status, body);
  });
  xhr.addEventListener("error", () => { done(0, null); });
  xhr.send(file);
}

/** @param {Element} zone @param {Outcome} outcome */
function show(zone, outcome) {
  const results = /** @type {Element} */ (zone.querySelector("[data-upload-results]"));
  const name = outcome.file.name;
  if (isStored(outcome)) {
    const body = /** @type {Stored} */ (outcome.body);
    const sessions = body.upload.sessions;
    const li = item("upload-result", null);
    li.setAttribute("data-upload-result", "stored");
    li.appendChild(link(body.upload.url, message(zone, body.created ? "stored" : "duplicate",
      { name: name, count: sessions.length })));
    const list = document.createElement("ul");
    sessions.forEach((s) => {
      const entry = document.createElement("li");
      entry.appendChild(link(s.url, s.id || s.key));
      list.appendChild(entry);
    });
    li.appendChild(list);
    results.appendChild(li);
    return;
  }
  const failure = item("upload-result error-text", "alert");
  failure.setAttribute("data-upload-result", "refused");
  // the server's refusals already name the file and say where reading stopped
  const body = /** @type {Refused | null} */ (outcome.body);
  failure.textContent = body?.detail ? body.detail : message(zone, "failed",
    { name: name, message: outcome.status ? `HTTP ${outcome.status}` : message(zone, "network", {}) });
  results.appendChild(failure);
}

/** @param {Outcome} outcome */
function isStored(outcome) { return outcome.status === 200 || outcome.status === 201; }

/** @param {Element} zone @param {Outcome[]} outcomes */
function finish(zone, outcomes) {
  const stored = outcomes.filter(isStored);
  zone.setAttribute("data-upload-state", "done");
  if (outcomes.length === 1 && stored.length === 1) {
    const upload = /** @type {Stored} */ (stored[0].body).upload;
    window.location.assign(upload.sessions.length === 1 ? upload.sessions[0].url : upload.url);
    return;
  }
  /** @type {Element} */ (zone.querySelector("[data-upload-status]")).textContent =
    message(zone, "done", { ok: stored.length, m: outcomes.length });
  outcomes.forEach((o) => { show(zone, o); });
  if (stored.length) document.body.dispatchEvent(new CustomEvent("dsh:uploaded", { bubbles: true }));
}

/** @param {Element} zone @param {File[]} files */
function uploadAll(zone, files) {
  if (!files.length || zone.getAttribute("data-upload-state") === "uploading") return;
  const progress = /** @type {HTMLProgressElement} */ (zone.querySelector("[data-upload-progress]"));
  const status = /** @type {Element} */ (zone.querySelector("[data-upload-status]"));
  let total = 0;
  for (let f = 0; f < files.length; f++) total += files[f].size;
  zone.querySelector("[data-upload-results]")?.replaceChildren();
  zone.setAttribute("data-upload-state", "uploading");
  progress.hidden = false;
  progress.max = total || 1;
  progress.value = 0;
  /** @type {Outcome[]} */
  const outcomes = [];
  let sent = 0;
  let i = 0;
  function next() {
    if (i >= files.length) { finish(zone, outcomes); return; }
    const file = files[i++];
    const before = sent;
    status.textContent = message(zone, "uploading", { name: file.name, n: i, m: files.length });
    send(zone, file, (loaded) => {
      progress.value = before + Math.min(loaded, file.size);
      if (loaded >= file.size) status.textContent = message(zone, "reading", { name: file.name });
    }, (code, body) => {
      sent = before + file.size;
      progress.value = sent;
      outcomes.push({ file: file, status: code, body: body });
      next();
    });
  }
  next();
}

/** @param {Element} zone */
function setUp(zone) {
  const input = /** @type {HTMLInputElement} */ (zone.querySelector("[data-upload-input]"));
  zone.querySelector("[data-upload-pick]")?.addEventListener("click", () => { input.click(); });
  input.addEventListener("change", () => {
    const files = Array.from(input.files || []);
    input.value = "";
    uploadAll(zone, files);
  });
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.setAttribute("data-drag", "true");
  });
  zone.addEventListener("dragleave", () => { zone.removeAttribute("data-drag"); });
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.removeAttribute("data-drag");
    const dropped = /** @type {DragEvent} */ (event).dataTransfer;
    if (dropped) uploadAll(zone, Array.from(dropped.files));
  });
}

// Deleting asks first, in the page's one dialog (templates/_delete_upload.html), which names what goes: the
// upload, and each of its sessions as the page shows them (title and id, as far as they are read by now).
/** @type {Element | null} */
let asked = null; // the delete button whose dialog is open

/** @param {Element} element */
function sessionName(element) {
  const said = element.querySelector("[data-session-title]")?.textContent?.trim() || "";
  const known = element.querySelector("[data-session-id]")?.textContent?.trim() || "";
  return said && known && said !== known ? `${said} · ${known}` : said || known;
}

/**
 * The dialog's part `selector` finds (templates/_delete_upload.html has each).
 * @param {Element} dialog @param {string} selector
 */
function partOf(dialog, selector) { return /** @type {HTMLElement} */ (dialog.querySelector(selector)); }

/** @param {Element} button */
function askToDelete(button) {
  const dialog = /** @type {HTMLDialogElement | null} */ (document.querySelector("[data-delete-dialog]"));
  if (!dialog) return;
  asked = button;
  partOf(dialog, "[data-delete-title]").textContent = button.getAttribute("data-confirm-title");
  partOf(dialog, "[data-delete-said]").textContent = button.getAttribute("data-confirm-sessions");
  const list = partOf(dialog, "[data-delete-sessions]");
  list.replaceChildren();
  const digest = button.getAttribute("data-digest");
  document.querySelectorAll("[data-goes-with]").forEach((element) => {
    if (element.getAttribute("data-goes-with") !== digest) return;
    const li = document.createElement("li");
    li.textContent = sessionName(element);
    list.appendChild(li);
  });
  const more = button.closest("[data-upload]")?.querySelector("[data-more-sessions]");
  if (more) {
    const rest = document.createElement("li");
    rest.textContent = more.textContent;
    list.appendChild(rest);
  }
  const error = partOf(dialog, "[data-delete-error]");
  error.hidden = true;
  error.textContent = "";
  /** @type {HTMLButtonElement} */ (partOf(dialog, "[data-delete-confirm]")).disabled = false;
  dialog.showModal();
}

/** @param {HTMLButtonElement} confirm */
function deleteAsked(confirm) {
  const button = asked;
  const dialog = /** @type {HTMLDialogElement} */ (confirm.closest("dialog"));
  if (!button) return;
  confirm.disabled = true;
  /** @param {string} message */
  function failed(message) {
    const error = partOf(dialog, "[data-delete-error]");
    error.textContent = fill(confirm.getAttribute("data-failed") || "", { message: message });
    error.hidden = false;
    confirm.disabled = false;
  }
  request(button.getAttribute("data-upload-delete") || "", { method: "DELETE", credentials: "same-origin" })
    .then((response) => {
      if (!response.ok && response.status !== 404) { // 404: gone already, deleted by someone else
        return response.json().catch(() => ({})).then((body) => {
          failed(body?.detail ? String(body.detail) : `HTTP ${response.status}`);
        });
      }
      const after = button.getAttribute("data-after-delete");
      if (after) window.location.assign(after);
      else window.location.reload(); // the list again: its counts and its page as they now are
    }, () => { failed(confirm.getAttribute("data-network") || ""); });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-upload-zone]").forEach(setUp);
});
document.addEventListener("click", (event) => {
  if (!(event.target instanceof Element)) return;
  const target = event.target.closest("[data-upload-delete], [data-delete-confirm], [data-delete-cancel]");
  if (!target) return;
  if (target.hasAttribute("data-upload-delete")) askToDelete(target);
  else if (target instanceof HTMLButtonElement && target.hasAttribute("data-delete-confirm")) deleteAsked(target);
  else target.closest("dialog")?.close();
});
// A file dropped beside the zone must not make the browser navigate away to it.
document.addEventListener("dragover", (event) => { event.preventDefault(); });
document.addEventListener("drop", (event) => { event.preventDefault(); });
