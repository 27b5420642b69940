// library.js — the library page: an upload with its progress bar and the importer's answer (a
// line per step as the server imports: a whole phone is conversation after conversation), and a
// new live conversation of the people named (you first), then opened.

import { byId, csrf, me, reason, tokenQuery } from "./session.js";

/**
 * The complete lines of newline-delimited JSON in `text` from offset `from`: their values
 * (a line that is not JSON is `{}`) and where the next line starts.
 * @param {string} text
 * @param {number} from
 * @returns {{ lines: any[], next: number }}
 */
export function ndjsonLines(text, from) {
  const lines = [];
  let end, at = from;
  while ((end = text.indexOf("\n", at)) >= 0) {
    let line = {};
    try { line = JSON.parse(text.slice(at, end)); } catch (_) { /* not JSON: skipped */ }
    lines.push(line);
    at = end + 1;
  }
  return { lines, next: at };
}

/**
 * What the status line says while a backup imports.
 * @param {{ done: number, total: number }} p
 * @returns {string}
 */
export function progressText(p) {
  return p.total > 1
    ? "Importing conversation " + Math.min(p.done + 1, p.total).toLocaleString() + " of " + p.total.toLocaleString() + "…"
    : "Importing…";
}

/**
 * The participants typed ("You, Ann, …"): trimmed, empty ones dropped; a signed-in user first
 * when they did not name themselves.
 * @param {string} typed
 * @param {string} user
 * @returns {string[]}
 */
export function participants(typed, user) {
  const people = typed.split(",").map((p) => p.trim()).filter(Boolean);
  if (user && !people.some((p) => p.toLowerCase() === user)) people.unshift(user);
  return people;
}

function setupUpload() {
  const upload = byId("upload");
  if (!upload) return;
  const bar = byId("progress"), status = byId("status");
  upload.addEventListener("submit", (/** @type {Event} */ e) => {
    e.preventDefault();
    const file = byId("file").files[0];
    if (!file) { status.textContent = "Choose a file first."; return; }
    const body = new FormData();
    body.append("file", file);
    // An encrypted iPhone backup's password (sent with the upload only; the field is cleared).
    const password = byId("backuppassword");
    if (password && password.value) { body.append("password", password.value); password.value = ""; }
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/v1/imports" + tokenQuery);
    xhr.setRequestHeader("Accept", "application/x-ndjson");
    if (csrf) xhr.setRequestHeader("X-CSRF-Token", csrf);
    bar.hidden = false; bar.value = 0; status.className = ""; status.textContent = "Uploading…";
    /** @type {any} */ (window).bkImportProgress = [];
    let seen = 0, answer = null, failure = null;
    const lines = () => {
      const read = ndjsonLines(xhr.responseText, seen);
      seen = read.next;
      for (const line of read.lines) {
        if (line.progress) {
          /** @type {any} */ (window).bkImportProgress.push(line.progress);
          if (line.progress.total > 0) bar.value = line.progress.done / line.progress.total;
          status.textContent = progressText(line.progress);
        } else if (line.result) answer = line.result;
        else if (line.error) failure = line.error;
      }
    };
    xhr.upload.onprogress = (p) => { if (p.lengthComputable) bar.value = p.loaded / p.total; };
    xhr.upload.onload = () => { bar.removeAttribute("value"); status.textContent = "Importing…"; };
    xhr.onprogress = lines;
    xhr.onload = () => {
      bar.hidden = true;
      lines();
      if (xhr.status >= 200 && xhr.status < 300 && answer) {
        const list = answer.conversations || [];
        if (list.length <= 1) {
          status.textContent = "Imported " + answer.added.toLocaleString() + " messages into “" + answer.title + "”.";
          location.href = "/c/" + answer.id + tokenQuery;
          return;
        }
        // A whole backup: what it did, and the library with the new conversations.
        status.textContent = "Imported " + answer.summary + (answer.failed.length ? " — failed: " + answer.failed.map((/** @type {any} */ f) => f.name).join(", ") : "") + ".";
        status.dataset.done = "1";
        fetch("/" + tokenQuery, { credentials: "same-origin" }).then((r) => r.text()).then((html) => {
          const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("library");
          const old = byId("library");
          if (fresh && old) old.replaceWith(fresh);
        });
      } else {
        status.className = "err";
        let plain = {};
        try { plain = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
        status.textContent = (failure && failure.message) || /** @type {any} */ (plain).error || ("The upload failed (" + xhr.status + ").");
      }
    };
    xhr.onerror = () => { bar.hidden = true; status.className = "err"; status.textContent = "The upload failed: no answer from the server."; };
    xhr.send(body);
  });
}

function setupNewChat() {
  const newchat = byId("newchat");
  if (!newchat) return;
  newchat.hidden = false;
  newchat.addEventListener("submit", async (/** @type {Event} */ e) => {
    e.preventDefault();
    const status = byId("newstatus");
    const people = participants(byId("newpeople").value, me);
    if (!people.length) { status.className = "err"; status.textContent = "Name the people in it, you first."; return; }
    try {
      const r = await fetch("/api/v1/conversations" + tokenQuery, {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ title: byId("newtitle").value, participants: people }) });
      const answer = await r.json();
      if (!r.ok) throw new Error(answer.error || String(r.status));
      location.href = "/c/" + answer.id + tokenQuery;
    } catch (err) { status.className = "err"; status.textContent = reason(err); }
  });
}

export function setupLibrary() {
  setupUpload();
  setupNewChat();
}
