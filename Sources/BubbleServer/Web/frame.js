// frame.js — the app's frame around a page: dates and numbers in the reader's locale (the list's
// times as the messaging apps write them: today's time, "Yesterday", a weekday, a date), the open
// conversation scrolled into view in the list, the keyboard (↑/↓ through the list, Enter opens,
// "/" searches, Esc closes a panel) and the toolbar's panels (one open at a time, closed by a
// click elsewhere). Unread counts are the server's (reads.js, feed.js).

import { listTime } from "./dates.js";
import { byId } from "./session.js";

function localised() {
  const dayFormat = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
  const now = new Date();
  for (const t of document.querySelectorAll("header time[datetime], #library time[datetime]")) {
    const d = new Date(t.getAttribute("datetime") || "");
    if (!isNaN(d.getTime())) t.textContent = t.closest("#library") ? listTime(d, now) : dayFormat.format(d);
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
  localised();
  keyboard();
}
