// scheme.js — light or dark: the system's choice (prefers-color-scheme) until the reader picks
// one with the ◐ button, then theirs, kept for this site (`<html data-scheme>` switches both the
// app's colours and the bubbles' dark palette).

import { byId } from "./session.js";

export function setupScheme() {
  const root = document.documentElement, button = byId("scheme");
  const systemDark = () => !!window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  const isDark = () => root.dataset.scheme ? root.dataset.scheme === "dark" : systemDark();
  const show = () => {
    const dark = isDark();
    if (button) { button.textContent = dark ? "◐ Light" : "◐ Dark"; button.setAttribute("aria-pressed", String(dark)); }
  };
  try { const kept = localStorage.getItem("bk-scheme"); if (kept === "dark" || kept === "light") root.dataset.scheme = kept; } catch (_) { /* no storage */ }
  show();
  if (button) button.addEventListener("click", () => {
    root.dataset.scheme = isDark() ? "light" : "dark";
    try { localStorage.setItem("bk-scheme", root.dataset.scheme); } catch (_) { /* no storage */ }
    show();
  });
}
