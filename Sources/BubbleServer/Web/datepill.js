// datepill.js — while the messages scroll, the day of the message at the top of the view floats
// at the top of the column ("Today", "Yesterday", "Monday", "Tue, 5 March 2024"), as the
// messaging apps show it; it fades a moment after the scrolling stops.

import { pillDay } from "./dates.js";

/**
 * @param {{ scroller: HTMLElement, onPlaced: (() => void) | null }} view the messages' column (scroller.js)
 */
export function setupDatePill(view) {
  const scroller = view.scroller;
  const pill = document.createElement("div");
  pill.className = "datepill";
  pill.setAttribute("aria-hidden", "true");
  pill.hidden = true;
  scroller.parentElement?.insertBefore(pill, scroller);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let hide;
  let frame = 0;
  /** @param {boolean} appear shown again (a scroll), or its words only (rows placed) */
  const update = (appear) => {
    const { top, bottom } = scroller.getBoundingClientRect();
    // The first message in the view (its block reaching below the view's top, starting above its bottom).
    let found = null;
    for (const block of scroller.querySelectorAll(".vm, #rows:not(.virtual) > *")) {
      const r = block.getBoundingClientRect();
      if (r.bottom <= top + 4 || r.top >= bottom) continue;
      found = block.querySelector("time[datetime]");
      if (found) break;
    }
    if (!found) return;
    const date = new Date(found.getAttribute("datetime") || "");
    if (isNaN(date.getTime())) return;
    pill.textContent = pillDay(date, new Date());
    if (!appear) return;
    pill.hidden = false;
    pill.classList.remove("gone");
    clearTimeout(hide);
    hide = setTimeout(() => pill.classList.add("gone"), 1200);
  };
  scroller.addEventListener("scroll", () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; update(true); });
  }, { passive: true });
  // A window placed after a jump: the pill says the day of the rows now there.
  const placed = view.onPlaced;
  view.onPlaced = () => {
    if (placed) placed();
    if (!pill.hidden) update(false);
  };
}
