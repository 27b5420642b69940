// dates.js — the days and months the conversation toolbar shows, as plain values: the months with
// messages (from the per-day counts), a month's calendar grid (Monday first, blanks before the
// 1st), the size of a day's dot, and the month scrubber's labels. No page, no clock: the days are
// the server's (UTC), formatted here in English for the scrubber and by Intl for the calendar.

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/**
 * The months that have messages, in the order of `days`: "YYYY-MM" → their first day with
 * messages and how many messages.
 * @param {{ date: string, count: number }[]} days
 * @returns {Map<string, { first: string, count: number }>}
 */
export function monthsOf(days) {
  const byMonth = new Map();
  for (const d of days) {
    const m = d.date.slice(0, 7);
    const e = byMonth.get(m) || { first: d.date, count: 0 };
    e.count += d.count;
    byMonth.set(m, e);
  }
  return byMonth;
}

/**
 * The scrubber's label of a month: "March 2024 · 1,204".
 * @param {string} month "YYYY-MM"
 * @param {number} count
 * @returns {string}
 */
export function monthLabel(month, count) {
  return MONTHS[Number(month.slice(5, 7)) - 1] + " " + month.slice(0, 4) + " · " + count.toLocaleString("en");
}

/**
 * "YYYY-MM-DD" of day `d` of month "YYYY-MM".
 * @param {string} month
 * @param {number} d
 * @returns {string}
 */
export const dayKey = (month, d) => month + "-" + String(d).padStart(2, "0");

/**
 * A month's grid: how many blank cells come before its 1st (weeks start on Monday) and how
 * many days it has.
 * @param {string} month "YYYY-MM"
 * @returns {{ blanks: number, days: number, first: Date }}
 */
export function monthGrid(month) {
  const y = Number(month.slice(0, 4)), m = Number(month.slice(5, 7)) - 1;
  const first = new Date(Date.UTC(y, m, 1));
  return { blanks: (first.getUTCDay() + 6) % 7, days: new Date(Date.UTC(y, m + 1, 0)).getUTCDate(), first };
}

/**
 * A day's dot: 1, 2 or 3 by its share of the month's busiest day (0 for a day without).
 * @param {number} n
 * @param {number} busiest
 * @returns {number}
 */
export function dotSize(n, busiest) {
  return n > 0 ? Math.max(1, Math.min(3, Math.ceil(3 * n / Math.max(busiest, 1)))) : 0;
}

/**
 * "1 message", "1,204 messages".
 * @param {number} n
 * @returns {string}
 */
export const messagesText = (n) => n.toLocaleString() + (n === 1 ? " message" : " messages");

/**
 * A list line's time, as the messaging apps write it: the time for today, "Yesterday", the
 * weekday within the last week, else the date — in the reader's locale.
 * @param {Date} date
 * @param {Date} now
 * @param {string} [locale]
 * @returns {string}
 */
export function listTime(date, now, locale) {
  const day = (/** @type {Date} */ d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((day(now) - day(date)) / 86400000);
  if (days <= 0) return date.toLocaleTimeString(locale, { hour: "2-digit", minute: "2-digit" });
  if (days === 1) return new Intl.RelativeTimeFormat(locale, { numeric: "auto" }).format(-1, "day").replace(/^./, (c) => c.toUpperCase());
  if (days < 7) return date.toLocaleDateString(locale, { weekday: "long" });
  return date.toLocaleDateString(locale, { day: "numeric", month: "short", year: date.getFullYear() === now.getFullYear() ? undefined : "numeric" });
}

/**
 * The floating date pill's words for a message's day, in the pages' time zone (UTC, as the
 * day separators): "Today", "Yesterday", the weekday within the week, else the date (the year
 * only when it is not this one) — in the reader's locale.
 * @param {Date} date
 * @param {Date} now
 * @param {string} [locale]
 * @returns {string}
 */
export function pillDay(date, now, locale) {
  const day = (/** @type {Date} */ d) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const days = Math.round((day(now) - day(date)) / 86400000);
  const cap = (/** @type {string} */ s) => s.replace(/^./, (c) => c.toUpperCase());
  const relative = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  if (days === 0) return cap(relative.format(0, "day"));
  if (days === 1) return cap(relative.format(-1, "day"));
  if (days > 1 && days < 7) return date.toLocaleDateString(locale, { weekday: "long", timeZone: "UTC" });
  return date.toLocaleDateString(locale, { weekday: "short", day: "numeric", month: "long", timeZone: "UTC",
    year: date.getUTCFullYear() === now.getUTCFullYear() ? undefined : "numeric" });
}
