// feed.js — the conversation list as it changes, without reloading: one WebSocket per page
// (`/api/v1/feed`, the signed-in reader's) tells of each new message in any of their
// conversations — its line moves to the top with the message's first line, its time and the
// server's unread count — and of conversations they read on another device (the badge goes).
// Reconnects with back-off; a conversation the list does not have yet brings the list again.

import { setBadge } from "./reads.js";
import { reconnect } from "./live.js";
import { byId, tokenQuery } from "./session.js";
import { listTime } from "./dates.js";

/**
 * @param {string} openId the conversation open on this page ("" for none)
 */
export function setupFeed(openId) {
  if (!byId("library") || !("WebSocket" in window)) return;
  let backoff = 250;
  /** @type {any} */ (window).bubbleFeed = { frames: 0, connects: 0 };
  const connect = () => {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/v1/feed" + tokenQuery);
    ws.onopen = () => { backoff = 250; /** @type {any} */ (window).bubbleFeed.connects++; };
    ws.onmessage = (e) => {
      let f;
      try { f = JSON.parse(e.data); } catch (_) { return; }
      /** @type {any} */ (window).bubbleFeed.frames++;
      if (f.type === "message") message(f, openId);
      else if (f.type === "read") setBadge(String(f.conversation), String(f.conversation) === openId ? 0 : f.unread);
    };
    ws.onclose = () => {
      const next = reconnect(backoff, Math.random());
      backoff = next.next;
      setTimeout(connect, next.wait);
    };
  };
  connect();
}

/**
 * @param {{ conversation: number, seq: number, date: string, preview: string, unread: number }} f
 * @param {string} openId
 */
function message(f, openId) {
  const id = String(f.conversation);
  const a = /** @type {HTMLElement | null} */ (document.querySelector('#library a.chat[data-id="' + id + '"]'));
  if (!a) { refreshList(); return; }
  const line = a.querySelector(".p");
  if (line) line.textContent = f.preview;
  let when = a.querySelector("time");
  if (!when) { when = document.createElement("time"); const t = a.querySelector(".t"); if (t) t.after(when); }
  when.setAttribute("datetime", f.date);
  when.textContent = listTime(new Date(f.date), new Date());
  const li = a.closest("li"), list = li && li.parentElement;
  if (li && list && list.firstElementChild !== li) list.prepend(li);
  if (a.dataset.last !== undefined) a.dataset.last = String(f.seq);
  setBadge(id, id === openId ? 0 : f.unread);
}

function refreshList() {
  fetch("/" + tokenQuery, { credentials: "same-origin" }).then((r) => r.text()).then((html) => {
    const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("library");
    const old = byId("library");
    if (fresh && old) old.replaceWith(fresh);
  }).catch(() => {});
}
