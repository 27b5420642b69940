// frame.js — the app's frame around a page: unread counts in the conversation list (the newest
// message this browser has shown of each live conversation, kept for the site, against the
// newest there is), dates and numbers in the reader's locale, the open conversation scrolled
// into view in the list, the keyboard (↑/↓ through the list, Enter opens, "/" searches, Esc
// closes a panel) and the toolbar's panels (one open at a time, closed by a click elsewhere).

import { byId } from "./session.js";

/** @param {string} c */
const seenKey = (c) => "bk-seen-" + c;

/**
 * The newest message this browser has shown of conversation `c` (0: none).
 * @param {string} c
 * @returns {number}
 */
function seenOf(c) {
  try { return Number(localStorage.getItem(seenKey(c)) || 0); } catch (_) { return 0; }
}

/**
 * How many messages of a conversation are unread: the newest there is less the newest seen,
 * none for the conversation that is open.
 * @param {number} last
 * @param {number} seen
 * @param {boolean} isOpen
 * @returns {number}
 */
export function unreadCount(last, seen, isOpen) {
  return isOpen ? 0 : Math.max(0, last - seen);
}

/**
 * The open conversation's message `seq` has been shown: remembered, its unread badge gone.
 * @param {number} seq
 */
export function markSeen(seq) {
  const rows = byId("rows");
  if (!rows) return;
  const c = rows.dataset.id;
  if (seq > seenOf(c)) try { localStorage.setItem(seenKey(c), String(seq)); } catch (_) { /* no storage */ }
  const badge = document.querySelector('#library a.chat[href="/c/' + c + '"] .unread');
  if (badge) badge.remove();
}

function unreadBadges() {
  const rows = byId("rows");
  for (const a of /** @type {NodeListOf<HTMLAnchorElement>} */ (document.querySelectorAll("#library a.chat[data-last]"))) {
    const c = (a.getAttribute("href") || "").slice(3);
    const unread = unreadCount(Number(a.dataset.last), seenOf(c), !!rows && rows.dataset.id === c);
    if (unread > 0) {
      const b = document.createElement("span");
      b.className = "unread";
      b.textContent = unread.toLocaleString();
      b.setAttribute("aria-label", unread.toLocaleString() + " unread");
      a.appendChild(b);
    }
  }
  if (rows && rows.dataset.live === "true") markSeen(Number(rows.dataset.last || 0));
}

function localised() {
  const dayFormat = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
  for (const t of document.querySelectorAll("time[datetime]")) {
    const d = new Date(t.getAttribute("datetime") || "");
    if (!isNaN(d.getTime())) t.textContent = dayFormat.format(d);
  }
  for (const n of document.querySelectorAll("data[value]")) n.textContent = Number(n.getAttribute("value")).toLocaleString();
}

function keyboard() {
  const chats = () => /** @type {HTMLElement[]} */ (Array.from(document.querySelectorAll("#library a.chat")));
  const open = document.querySelector("#library a.chat[aria-current]");
  if (open) open.scrollIntoView({ block: "nearest" });
  const tools = () => /** @type {HTMLDetailsElement[]} */ (Array.from(document.querySelectorAll("details.tool")));
  for (const d of tools()) d.addEventListener("toggle", () => { if (d.open) for (const o of tools()) if (o !== d) o.open = false; });
  document.addEventListener("click", (e) => { for (const d of tools()) if (d.open && !d.contains(/** @type {Node} */ (e.target))) d.open = false; });
  document.addEventListener("keydown", (e) => {
    const target = /** @type {HTMLElement} */ (e.target);
    const typing = target.closest && target.closest("input, textarea, select, [contenteditable]");
    if (e.key === "Escape") {
      const d = tools().find((x) => x.open);
      if (d) { d.open = false; /** @type {HTMLElement} */ (d.querySelector("summary")).focus(); e.preventDefault(); }
      return;
    }
    if (typing || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "/") { const f = byId("findall"); if (f) { e.preventDefault(); f.focus(); } return; }
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      const list = chats(), at = list.indexOf(/** @type {HTMLElement} */ (document.activeElement));
      if (at < 0 && !target.closest("#library")) return;
      e.preventDefault();
      const next = list[Math.max(0, Math.min(list.length - 1, at + (e.key === "ArrowDown" ? 1 : -1)))];
      if (next) next.focus();
    }
  });
}

export function setupFrame() {
  unreadBadges();
  localised();
  keyboard();
}
