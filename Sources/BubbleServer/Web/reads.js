// reads.js — unread and read, kept by the server per user (not in this browser): the open
// conversation is marked read up to the newest message shown while the page is visible (every
// device of the reader then clears its badge), and the list's badges show the server's counts.

import { tokenQuery } from "./session.js";

let sent = 0, pending = 0, conversation = "";
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;

/**
 * Whether a read mark at `seq` is news: past what was sent, on a page the reader can see.
 * @param {number} seq
 * @param {number} already
 * @param {boolean} visible
 * @returns {boolean}
 */
export const worthSending = (seq, already, visible) => visible && Number.isFinite(seq) && seq > already;

/**
 * The reader has seen conversation `id` up to message `seq`: told to the server (at most a few
 * times a second; a hidden page waits until it is shown).
 * @param {string} id
 * @param {number} seq
 */
export function markRead(id, seq) {
  if (id !== conversation) { conversation = id; sent = 0; pending = 0; }
  pending = Math.max(pending, seq);
  if (!worthSending(pending, sent, document.visibilityState !== "hidden")) return;
  clearTimeout(timer);
  timer = setTimeout(() => {
    const seqToSend = pending;
    if (!worthSending(seqToSend, sent, document.visibilityState !== "hidden")) return;
    sent = seqToSend;
    // `keepalive`: sent even when the reader leaves the page at once.
    fetch("/api/v1/conversations/" + conversation + "/read" + tokenQuery, {
      method: "POST", credentials: "same-origin", keepalive: true,
      headers: { "Content-Type": "application/json" },   // the CSRF token: session.js's fetch
      body: JSON.stringify({ seq: seqToSend }),
    }).then((r) => { if (!r.ok) sent = 0; }, () => { sent = 0; });
  }, sent ? 250 : 0);
}

document.addEventListener("visibilitychange", () => { if (conversation && pending > sent) markRead(conversation, pending); });

/**
 * "1", "1,234", "99+" for a badge.
 * @param {number} n
 * @returns {string}
 */
export const badgeText = (n) => n > 99 ? "99+" : n.toLocaleString("en");

/**
 * Shows `n` unread on conversation `id`'s line of the list (none: no badge).
 * @param {string} id
 * @param {number} n
 */
export function setBadge(id, n) {
  const a = document.querySelector('#library a.chat[data-id="' + id + '"]');
  if (!a) return;
  let badge = a.querySelector(".unread");
  if (n <= 0) { if (badge) badge.remove(); return; }
  if (!badge) { badge = document.createElement("span"); badge.className = "unread"; a.appendChild(badge); }
  badge.textContent = badgeText(n);
  badge.setAttribute("aria-label", n.toLocaleString() + " unread");
}
