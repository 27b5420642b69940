// scheme.js — light or dark: the system's choice (prefers-color-scheme) until the reader picks
// one with ◐ in the list's ⋮ menu, then theirs — kept by the server for their account (the page
// comes with `<html data-scheme>`, so every device opens in it without a flash), and in this
// browser when the server cannot keep it. `data-scheme` switches both the app's colours and the
// bubbles' dark palette.

import { byId, post } from "./session.js";

/**
 * The scheme to show: the server's setting first, then this browser's, else the system's (null).
 * @param {string | undefined} server `<html data-scheme>` as the page came
 * @param {string | null} kept this browser's `bk-scheme`
 * @returns {"light" | "dark" | null}
 */
export function chosenScheme(server, kept) {
  for (const s of [server, kept]) if (s === "dark" || s === "light") return s;
  return null;
}

export function setupScheme() {
  const root = document.documentElement, button = byId("scheme");
  const systemDark = () => !!window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  const isDark = () => root.dataset.scheme ? root.dataset.scheme === "dark" : systemDark();
  const show = () => {
    const dark = isDark();
    if (button) { button.textContent = dark ? "◐ Light" : "◐ Dark"; button.setAttribute("aria-pressed", String(dark)); }
  };
  let kept = null;
  try { kept = localStorage.getItem("bk-scheme"); } catch (_) { /* no storage */ }
  const chosen = chosenScheme(root.dataset.scheme, kept);
  if (chosen) root.dataset.scheme = chosen;
  show();
  if (button) button.addEventListener("click", () => {
    const scheme = isDark() ? "light" : "dark";
    root.dataset.scheme = scheme;
    try { localStorage.setItem("bk-scheme", scheme); } catch (_) { /* no storage */ }
    show();
    post("/api/v1/settings", { scheme }).catch(() => { /* kept in this browser */ });
  });
}
