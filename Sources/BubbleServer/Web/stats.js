// stats.js — a conversation's statistics page: in the browser's time zone unless the reader
// picked one (the server's default is UTC), a new zone picked from the list is shown at once,
// and the charts are drawn at the width of the column they are shown in (so a phone's text
// stays readable) in the page's light or dark.

import { byId } from "./session.js";

/**
 * Where to go to see the statistics in the browser's zone, or null to stay.
 * @param {string} search `location.search`
 * @param {string} browserZone the browser's IANA zone ("" when unknown)
 * @param {string} shownZone the zone the page is in
 * @returns {string | null} the new query
 */
export function zoneRedirect(search, browserZone, shownZone) {
  const q = new URLSearchParams(search);
  // UTC goes by many names (Linux's Foundation calls it GMT).
  const utc = (/** @type {string} */ z) => /^(Etc\/)?(UTC|GMT|UCT|Universal|Zulu|GMT[+-]0)$/.test(z);
  if (q.has("tz") || !browserZone || browserZone === shownZone || (utc(browserZone) && utc(shownZone))) return null;
  q.set("tz", browserZone);
  return "?" + q.toString();
}

/**
 * The chart's address for a column `width` px wide (the server draws 300…1200).
 * @param {string} base the chart's URL as the page has it
 * @param {number} width
 * @param {boolean} dark
 * @returns {string}
 */
export function chartURL(base, width, dark) {
  const w = Math.max(300, Math.min(1200, Math.round(width)));
  return base + "&width=" + w + (dark ? "&dark=1" : "");
}

export function setupStats() {
  const img = /** @type {HTMLImageElement | null} */ (byId("chart"));
  if (!img) return;
  let zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (_) { /* unknown */ }
  const go = zoneRedirect(location.search, zone, img.dataset.tz || "");
  if (go) { location.replace(location.pathname + go); return; }
  const select = byId("tz");
  if (select) select.addEventListener("change", () => byId("tzform").submit());
  // The <source> follows the system's scheme; the page's own (◐) decides instead.
  const picture = img.parentElement;
  if (picture) for (const s of picture.querySelectorAll("source")) s.remove();
  const root = document.documentElement;
  const dark = () => root.dataset.scheme ? root.dataset.scheme === "dark"
    : !!window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  let drawn = "";
  const draw = () => {
    const column = /** @type {HTMLElement} */ (img.closest("main") || document.body);
    const style = getComputedStyle(column);
    const url = chartURL(img.dataset.src || "", column.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight), dark());
    if (url !== drawn) { drawn = url; img.src = url; }
  };
  draw();
  /** @type {number | undefined} */
  let later;
  window.addEventListener("resize", () => { clearTimeout(later); later = setTimeout(draw, 250); });
  new MutationObserver(draw).observe(root, { attributes: true, attributeFilter: ["data-scheme"] });
}
