// search.js — a search hit opened in its conversation (`?at=SEQ&hl=words`): the message outlined
// and the searched words marked in it, wherever they are in its rows' text.

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
