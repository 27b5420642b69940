// calendar.js — the conversation toolbar's dates: the day form, the month scrubber (each month
// with its messages, to its first day) and the calendar (a month of days, those with messages
// as buttons with a dot as big as their share of the month's busiest day; ‹ › go through the
// months that have any). Both come from the per-day counts (`/api/v1/conversations/ID/days`).

import { dayKey, dotSize, messagesText, monthGrid, monthLabel, monthsOf } from "./dates.js";
import { byId, tokenPart } from "./session.js";

/**
 * @param {{ id: string, jump: (q: string, where: "top") => any }} view
 */
export function setupCalendar(view) {
  const day = byId("day");
  if (day) day.addEventListener("submit", (/** @type {Event} */ e) => {
    const v = day.querySelector("input[type=date]").value;
    if (!v) return;
    e.preventDefault();
    view.jump("date=" + v, "top");
  });
  const months = byId("months");
  if (!months) return;
  fetch("/api/v1/conversations/" + view.id + "/days?tz=UTC" + tokenPart, { credentials: "same-origin" })
    .then((r) => r.ok ? r.json() : null).then((data) => {
      if (!data || !data.days.length) return;
      const byMonth = monthsOf(data.days);
      const none = document.createElement("option");
      none.textContent = "Month…"; none.value = "";
      months.appendChild(none);
      for (const [m, e] of byMonth) {
        const o = document.createElement("option");
        o.value = e.first;
        o.textContent = monthLabel(m, e.count);
        months.appendChild(o);
      }
      months.hidden = false;
      months.addEventListener("change", () => { if (months.value) view.jump("date=" + months.value, "top"); });
      const cal = byId("calendar");
      if (cal) calendar(cal, new Map(data.days.map((/** @type {{ date: string, count: number }} */ d) => [d.date, d.count])), Array.from(byMonth.keys()), view);
    });
}

/**
 * @param {HTMLElement} cal
 * @param {Map<string, number>} counts
 * @param {string[]} keys the months with messages
 * @param {{ jump: (q: string, where: "top") => any }} view
 */
function calendar(cal, counts, keys, view) {
  const monthName = new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric", timeZone: "UTC" });
  const dayName = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
  const weekday = new Intl.DateTimeFormat(undefined, { weekday: "narrow", timeZone: "UTC" });
  let shown = keys.length - 1;
  const render = () => {
    const key = keys[shown], grid = monthGrid(key);
    let busiest = 1;
    for (let d = 1; d <= grid.days; d++) busiest = Math.max(busiest, counts.get(dayKey(key, d)) || 0);
    cal.textContent = "";
    const head = document.createElement("div");
    head.className = "calhead";
    const prev = document.createElement("button"), next = document.createElement("button"), title = document.createElement("span");
    prev.type = next.type = "button";
    prev.textContent = "‹"; next.textContent = "›";
    prev.setAttribute("aria-label", "Previous month with messages"); next.setAttribute("aria-label", "Next month with messages");
    prev.disabled = shown === 0; next.disabled = shown === keys.length - 1;
    prev.addEventListener("click", () => { shown--; render(); });
    next.addEventListener("click", () => { shown++; render(); });
    title.textContent = monthName.format(grid.first);
    head.append(prev, title, next);
    const cells = document.createElement("div");
    cells.className = "calgrid";
    cells.setAttribute("role", "grid");
    cells.setAttribute("aria-label", monthName.format(grid.first));
    for (let k = 0; k < 7; k++) {
      const w = document.createElement("span");
      w.className = "wd";
      w.textContent = weekday.format(new Date(Date.UTC(2024, 0, 1 + k)));   // 1 January 2024 was a Monday
      cells.appendChild(w);
    }
    for (let k = 0; k < grid.blanks; k++) cells.appendChild(document.createElement("span"));
    for (let d = 1; d <= grid.days; d++) {
      const date = dayKey(key, d), n = counts.get(date) || 0;
      const cell = document.createElement(n ? "button" : "span");
      cell.className = "cd";
      cell.textContent = String(d);
      if (cell instanceof HTMLButtonElement) {
        cell.type = "button";
        cell.dataset.date = date;
        cell.setAttribute("aria-label", dayName.format(new Date(date + "T00:00:00Z")) + ": " + messagesText(n));
        const dot = document.createElement("i");
        dot.className = "dot s" + dotSize(n, busiest);
        cell.appendChild(dot);
        cell.addEventListener("click", () => {
          const panel = cal.closest("details");
          if (panel) panel.open = false;
          view.jump("date=" + date, "top");
        });
      }
      cells.appendChild(cell);
    }
    cal.append(head, cells);
  };
  render();
  cal.hidden = false;
}
