// settings.js — what the reader picks is kept for their account (POST /api/v1/settings): the
// bubbles' theme from the conversation's 🎨 panel. The page opens again in it, here and on
// their other devices. Without the script the panel's form shows the theme for one visit.

import { byId, post } from "./session.js";

/**
 * The conversation's address without `theme=` (the kept setting decides from now on).
 * @param {string} search `location.search`
 * @param {string} id the conversation
 * @returns {string}
 */
export function withoutTheme(search, id) {
  const q = new URLSearchParams(search);
  q.delete("theme");
  const rest = q.toString();
  return "/c/" + encodeURIComponent(id) + (rest ? "?" + rest : "");
}

/** @param {string} id the open conversation */
export function setupThemePicker(id) {
  const form = byId("themes");
  if (!form) return;
  const pick = async (/** @type {string} */ theme) => {
    try {
      await post("/api/v1/settings", { theme });
      location.href = withoutTheme(location.search, id);
    } catch (_) {
      form.submit(); // not kept (a read-only token): this visit only
    }
  };
  for (const radio of form.querySelectorAll("input[name=theme]")) {
    radio.addEventListener("change", () => pick(/** @type {HTMLInputElement} */ (radio).value));
  }
  form.addEventListener("submit", (/** @type {Event} */ e) => {
    const on = /** @type {HTMLInputElement | null} */ (form.querySelector("input[name=theme]:checked"));
    if (!on) return;
    e.preventDefault();
    pick(on.value);
  });
}
