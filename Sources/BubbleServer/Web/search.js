// search.js — search as the messaging apps have it. In the sidebar, as you type: the hits of
// every conversation (debounced; the words in any order, as `bubbles search` reads them), grouped
// by conversation with their real counts and a line of each hit with the words marked; ↓ walks
// them, Esc brings the list back. In a conversation: its matches counted ("3 of 1,204") and
// walked with ↑/↓ (Enter, Shift+Enter) without leaving it. A hit opened (`?at=SEQ&hl=words`):
// the message outlined and the searched words marked in it.

import { byId, tokenPart } from "./session.js";

/**
 * Where `wanted` occurs in `text`, ignoring case: the start of each occurrence (an index into
 * `text`), left to right, not overlapping. Nothing for an empty `wanted`.
 * @param {string} text
 * @param {string} wanted
 * @returns {number[]}
 */
export function occurrences(text, wanted) {
  const needle = wanted.toLowerCase();
  /** @type {number[]} */
  const found = [];
  if (!needle) return found;
  const hay = text.toLowerCase();
  if (hay.length === text.length) {
    for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + needle.length)) found.push(at);
    return found;
  }
  // Lower-casing changed the length ("İ" is two code units lower-cased): compare in place.
  for (let at = 0; at + wanted.length <= text.length;) {
    if (text.slice(at, at + wanted.length).toLowerCase() === needle) { found.push(at); at += wanted.length; } else at++;
  }
  return found;
}

/**
 * Outlines message `seq`'s rows in `main` and marks `words` in their text (`<mark>`).
 * @param {HTMLElement} main
 * @param {number} seq
 * @param {string} words
 */
export function markMessage(main, seq, words) {
  const start = main.querySelector('b[data-n="' + seq + '"]');
  if (!start) return;
  /** @type {Element[]} */
  const rows = [];
  for (let n = start.nextElementSibling; n && !(n.tagName === "B" && /** @type {HTMLElement} */ (n).dataset.n); n = n.nextElementSibling) rows.push(n);
  rows.forEach((el) => el.classList.add("hl"));
  const wanted = words;
  if (!wanted) return;
  for (const el of rows) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    /** @type {Text[]} */
    const hits = [];
    for (let t = walker.nextNode(); t; t = walker.nextNode()) if (occurrences(/** @type {Text} */ (t).data, wanted).length) hits.push(/** @type {Text} */ (t));
    for (const t of hits) {
      const word = t.splitText(occurrences(t.data, wanted)[0]);
      word.splitText(wanted.length);
      const m = document.createElement("mark");
      /** @type {Node} */ (word.parentNode).replaceChild(m, word);
      m.appendChild(word);
    }
  }
}

/**
 * The word a hit's message marks for a query: its first term that is not excluded (`-word`),
 * without quotes or `*` — as the server's search pages do.
 * @param {string} query
 * @returns {string}
 */
export function markedWord(query) {
  const first = query.trim().split(/\s+/).find((w) => w && !w.startsWith("-"));
  return first ? first.replace(/^["*]+|["*]+$/g, "") : "";
}

/**
 * "3 of 1,204" (the newest match is 1).
 * @param {number} index 0-based, from the newest
 * @param {number} count
 * @returns {string}
 */
export const matchLabel = (index, count) => count ? (index + 1).toLocaleString("en") + " of " + count.toLocaleString("en") : "No matches";

/**
 * The next match to show: `older` goes back in time (towards the first message), stopping at
 * either end.
 * @param {number} index 0-based, from the newest
 * @param {number} count
 * @param {boolean} older
 * @returns {number}
 */
export const stepMatch = (index, count, older) => Math.max(0, Math.min(count - 1, index + (older ? 1 : -1)));

/**
 * Hits grouped by conversation, in the order of `counts` (most matches first), each group with
 * its count.
 * @param {{ conversation: number }[]} hits
 * @param {{ id: number, count: number }[]} counts
 * @returns {{ id: number, count: number, hits: any[] }[]}
 */
export function groupHits(hits, counts) {
  const groups = counts.map((c) => ({ id: c.id, count: c.count, hits: /** @type {any[]} */ ([]) }));
  const byId = new Map(groups.map((g) => [g.id, g]));
  for (const h of hits) {
    let g = byId.get(h.conversation);
    if (!g) { g = { id: h.conversation, count: 0, hits: [] }; byId.set(h.conversation, g); groups.push(g); }
    g.hits.push(h);
  }
  return groups.filter((g) => g.hits.length || g.count);
}

/** @param {string} tag @param {string} [cls] @param {string} [text] */
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Search as you type in the sidebar (`#findall`). */
export function setupSidebarSearch() {
  const input = byId("findall"), list = byId("library");
  if (!input || !list) return;
  const results = el("div", "results");
  results.id = "results";
  results.setAttribute("role", "region");
  results.setAttribute("aria-label", "Search results");
  results.hidden = true;
  list.before(results);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let asked = 0;
  const close = () => { results.hidden = true; results.textContent = ""; byId("library").hidden = false; };
  const run = async () => {
    const q = input.value.trim();
    const mine = ++asked;
    if (!q) { close(); return; }
    results.setAttribute("aria-busy", "true");
    let data;
    try {
      const r = await fetch("/api/v1/search?limit=40&q=" + encodeURIComponent(q) + tokenPart, { credentials: "same-origin" });
      data = await r.json();
      if (!r.ok) throw new Error(data.error || String(r.status));
    } catch (x) {
      if (mine !== asked) return;
      results.textContent = "";
      results.append(el("p", "none", String((x && /** @type {any} */ (x).message) || x)));
      results.hidden = false; byId("library").hidden = true;
      return;
    }
    if (mine !== asked) return;
    results.removeAttribute("aria-busy");
    render(q, data);
  };
  /** @param {string} q @param {any} data */
  const render = (q, data) => {
    results.textContent = "";
    const word = markedWord(q);
    const head = el("p", "rsum", data.total ? data.total.toLocaleString() + (data.total === 1 ? " message" : " messages") + " in "
      + data.conversations.length.toLocaleString() + (data.conversations.length === 1 ? " chat" : " chats") : "No messages match.");
    head.setAttribute("role", "status");
    results.append(head);
    for (const g of groupHits(data.hits, data.conversations)) {
      const section = el("section", "rgroup");
      const title = document.querySelector('#library a.chat[data-id="' + g.id + '"] .t');
      const h = el("h3", "", title ? title.textContent || "" : "Chat " + g.id);
      h.append(" ", el("small", "", g.count.toLocaleString() + (g.count === 1 ? " match" : " matches")));
      section.append(h);
      const ul = el("ul");
      for (const hit of g.hits) {
        const a = /** @type {HTMLAnchorElement} */ (el("a", "rhit"));
        a.href = "/c/" + hit.conversation + "?at=" + hit.seq + "&q=" + encodeURIComponent(q) + "&hl=" + encodeURIComponent(word) + tokenPart;
        const when = el("time", "", new Date(hit.date).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" }));
        when.setAttribute("datetime", hit.date);
        const line = el("span", "rline");
        const [before, match, after] = hit.parts && hit.parts.length === 3 ? hit.parts : [hit.snippet, "", ""];
        line.append(before, el("mark", "", match), after);
        a.append(el("b", "", hit.sender || ""), " ", when, line);
        const li = el("li");
        li.append(a);
        ul.append(li);
      }
      section.append(ul);
      results.append(section);
    }
    results.hidden = false;
    byId("library").hidden = true;
  };
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(run, 200); });
  input.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.key === "Escape") { input.value = ""; close(); e.stopPropagation(); }
    else if (e.key === "ArrowDown" && !results.hidden) {
      const first = /** @type {HTMLElement | null} */ (results.querySelector("a.rhit"));
      if (first) { e.preventDefault(); first.focus(); }
    }
  });
  results.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp" && e.key !== "Escape") return;
    e.preventDefault();
    e.stopPropagation();
    if (e.key === "Escape") { input.focus(); return; }
    const all = /** @type {HTMLElement[]} */ (Array.from(results.querySelectorAll("a.rhit")));
    const at = all.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    const next = all[at + (e.key === "ArrowDown" ? 1 : -1)];
    if (next) next.focus(); else if (e.key === "ArrowUp") input.focus();
  });
}

/**
 * Search within the open conversation (`#insearch`): its matches, newest first, walked with
 * ↑/↓; each shown centred with the words marked.
 * @param {{ id: string, highlight: (seq: number, words: string) => any }} view
 */
export function setupConversationSearch(view) {
  const form = byId("insearch");
  if (!form) return;
  const input = form.querySelector("input[type=search]"), nav = byId("matchnav"), count = byId("matchcount");
  /** @type {number[]} */
  let seqs = [];
  let index = 0, words = "", query = "";
  /** @type {any} */ (window).bubbleSearch = { state: () => ({ count: seqs.length, index, label: count.textContent }) };
  const show = () => {
    count.textContent = matchLabel(index, seqs.length);
    nav.hidden = false;
    byId("matchup").disabled = index >= seqs.length - 1;
    byId("matchdown").disabled = index <= 0;
    if (seqs.length) view.highlight(seqs[seqs.length - 1 - index], words);
  };
  const find = async () => {
    const q = input.value.trim();
    if (!q) return;
    if (q === query && seqs.length) { index = stepMatch(index, seqs.length, true); show(); return; }
    query = q; words = markedWord(q);
    try {
      const r = await fetch("/api/v1/conversations/" + view.id + "/matches?q=" + encodeURIComponent(q) + tokenPart, { credentials: "same-origin" });
      const data = await r.json();
      if (!r.ok) throw new Error(data.error || String(r.status));
      seqs = data.seqs; index = 0;
      show();
    } catch (x) { count.textContent = String((x && /** @type {any} */ (x).message) || x); nav.hidden = false; }
  };
  form.addEventListener("submit", (/** @type {Event} */ e) => { e.preventDefault(); find(); });
  input.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.key === "Enter" && e.shiftKey) { e.preventDefault(); if (seqs.length) { index = stepMatch(index, seqs.length, false); show(); } }
  });
  input.addEventListener("input", () => { if (input.value.trim() !== query) { nav.hidden = true; } });
  byId("matchup").addEventListener("click", () => { index = stepMatch(index, seqs.length, true); show(); });
  byId("matchdown").addEventListener("click", () => { index = stepMatch(index, seqs.length, false); show(); });
}
