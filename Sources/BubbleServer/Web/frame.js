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
  for (const t of document.querySelectorAll("header time[datetime], #library time[datetime], .found time[datetime], .invitation time[datetime]")) {
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
      if (d) { d.open = false; /** @type {HTMLElement} */ (d.querySelector("summary")).focus(); e.preventDefault(); return; }
      // Nothing open: Esc closes the chat (Signal Desktop, WhatsApp Web) unless one is typing.
      const text = /** @type {HTMLTextAreaElement | null} */ (byId("text"));
      if (byId("rows") && !e.defaultPrevented && !(typing && text && text.value) && !document.querySelector(".actions:not([hidden]), .banner:not([hidden])")) {
        location.href = "/";
      }
      return;
    }
    // Alt+↑/↓: the previous or next chat of the list (Signal Desktop's keys).
    if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
      const list = chats(), at = list.findIndex((a) => a.getAttribute("aria-current") === "page");
      const next = list[at < 0 ? 0 : at + (e.key === "ArrowDown" ? 1 : -1)];
      if (next) { e.preventDefault(); location.href = /** @type {HTMLAnchorElement} */ (next).href; }
      return;
    }
    // PgUp/PgDn scroll the messages wherever the focus is; Home/End too when not typing.
    const scroller = byId("scroller");
    if (scroller && (e.key === "PageUp" || e.key === "PageDown")) {
      e.preventDefault();
      scroller.scrollBy({ top: (e.key === "PageDown" ? 1 : -1) * scroller.clientHeight * 0.9 });
      return;
    }
    if (scroller && !typing && (e.key === "Home" || e.key === "End")) {
      e.preventDefault();
      if (e.key === "End") { const newest = byId("newest"); if (newest) newest.click(); else scroller.scrollTop = scroller.scrollHeight; }
      else scroller.scrollTop = 0;
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

/** On a phone: "⋮" shows the conversation's other tools (and hides them again). */
function moreTools() {
  const button = byId("moretools"), tools = byId("tools");
  if (!button || !tools) return;
  button.addEventListener("click", () => {
    const open = tools.classList.toggle("more");
    button.setAttribute("aria-expanded", String(open));
  });
}

export function setupFrame() {
  localised();
  moreTools();
  keyboard();
}
