// gallery.js — the gallery's grid, virtualised like the viewer's rows: the items are fetched
// once (newest first), grouped by month into rows of as many cells as fit, and only the rows near
// the screen are in the page. A cell is a thumbnail the server made (a video's poster with its
// length, a sticker, a GIF), or a card for a voice note, audio or a document. A click opens it
// large; ← and → go through the items, Esc closes; "Show in conversation" opens the viewer at its
// message. Filters: kind and sender.

import { byId } from "./session.js";

/**
 * "m:ss" of a length in seconds.
 * @param {number} s
 * @returns {string}
 */
export function duration(s) { s = Math.round(s || 0); const m = Math.floor(s / 60); return m + ":" + String(s % 60).padStart(2, "0"); }

/**
 * The grid's rows: a heading row per month, then rows of at most `cols` cells.
 * @param {{ month: string }[]} items in the order shown
 * @param {number} cols
 * @param {number} cellHeight a cell row's height (the cell and the gap)
 * @param {number} headHeight a month heading's height
 * @returns {{ rows: { top: number, height: number, month?: string, items?: number[] }[], height: number }}
 */
export function galleryRows(items, cols, cellHeight, headHeight) {
  /** @type {{ top: number, height: number, month?: string, items?: number[] }[]} */
  const rows = [];
  let y = 0, month = null;
  /** @type {number[]} */
  let run = [];
  const flush = () => { if (run.length) { rows.push({ top: y, height: cellHeight, items: run }); y += cellHeight; run = []; } };
  items.forEach((item, i) => {
    if (item.month !== month) {
      flush(); month = item.month;
      rows.push({ top: y, height: headHeight, month }); y += headHeight;
    }
    run.push(i); if (run.length === cols) flush();
  });
  flush();
  return { rows, height: y };
}

/**
 * The first of `rows` that reaches below `top` (binary search; rows.length when none does).
 * @param {{ top: number, height: number }[]} rows
 * @param {number} top
 * @returns {number}
 */
export function firstRowBelow(rows, top) {
  let lo = 0, hi = rows.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (rows[mid].top + rows[mid].height < top) lo = mid + 1; else hi = mid; }
  return lo;
}

export function setupGallery() {
  var root = byId('gallery');
  if (!root) return;
  var space = byId('gspace');
  var kindSel = byId('gkind'), senderSel = byId('gsender');
  var counter = byId('gcount');
  var box = byId('lightbox'), media = byId('lbmedia');
  var caption = byId('lbcaption'), open = byId('lbopen');
  var CELL = 120, GAP = 6, HEAD = 36, AHEAD = 600;
  var all = [], shown = [], rows = [], drawn = new Map(), current = -1, frame = 0;
  var monthName = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });
  var dayName = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; }
  function label(item) {
    var kinds = { photo: 'Photo', video: 'Video', gif: 'GIF', sticker: 'Sticker', voice: 'Voice note', audio: 'Audio', document: 'Document' };
    return (kinds[item.kind] || item.kind) + (item.senderName || item.sender ? ' from ' + (item.senderName || item.sender) : '') + ', ' + dayName.format(new Date(item.date));
  }
  function layout() {
    var width = root.clientWidth - 2 * GAP;
    var cols = Math.max(2, Math.floor((width + GAP) / (CELL + GAP)));
    // Cells grow to fill the row (up to 1.5 × the base size).
    var size = Math.min(Math.floor(CELL * 1.5), Math.floor((width - (cols - 1) * GAP) / cols));
    space.style.setProperty('--cell', size + 'px');
    var grid = galleryRows(shown, cols, size + GAP, HEAD);
    rows = grid.rows;
    space.style.height = grid.height + 'px';
    drawn.forEach(function (node) { node.remove(); }); drawn.clear();
    paint();
  }
  function cell(i) {
    var item = shown[i];
    var b = el('button', 'gc gk-' + item.kind); b.type = 'button'; b.dataset.i = i; b.dataset.seq = item.seq;
    b.setAttribute('aria-label', label(item));
    if (item.thumb) {
      var img = el('img'); img.alt = ''; img.loading = 'lazy'; img.decoding = 'async';
      img.src = item.thumb + '?size=256';
      img.onerror = function () { b.classList.add('broken'); img.remove(); };
      b.appendChild(img);
    } else {
      b.appendChild(el('span', 'gi', { voice: '🎤', audio: '🎵', document: '📄', video: '🎬', gif: '🎞', sticker: '💟', photo: '📷' }[item.kind] || '📎'));
      if (item.name) b.appendChild(el('span', 'gn', item.name));
      if (!item.file) b.classList.add('missing');
    }
    if (item.duration) b.appendChild(el('span', 'gd', duration(item.duration)));
    if (item.pages) b.appendChild(el('span', 'gd', item.pages + (item.pages === 1 ? ' page' : ' pages')));
    return b;
  }
  function paint() {
    frame = 0;
    var top = root.scrollTop - AHEAD, bottom = root.scrollTop + root.clientHeight + AHEAD;
    var lo = firstRowBelow(rows, top);
    var wanted = new Set();
    for (var r = lo; r < rows.length && rows[r].top <= bottom; r++) wanted.add(r);
    drawn.forEach(function (node, r) { if (!wanted.has(r)) { node.remove(); drawn.delete(r); } });
    wanted.forEach(function (r) {
      if (drawn.has(r)) return;
      var row = rows[r], node;
      if (row.month) {
        var parts = row.month.split('-');
        node = el('h2', 'gm', monthName.format(new Date(Date.UTC(+parts[0], +parts[1] - 1, 1))));
      } else {
        node = el('div', 'gr'); row.items.forEach(function (i) { node.appendChild(cell(i)); });
      }
      node.style.top = row.top + 'px'; node.dataset.row = r;
      space.appendChild(node); drawn.set(r, node);
    });
  }
  function filter() {
    var kind = kindSel.value, sender = senderSel.value;
    shown = all.filter(function (item) {
      return (!kind || item.kind === kind) && (!sender || (item.senderName || item.sender) === sender);
    });
    counter.textContent = shown.length + (shown.length === 1 ? ' item' : ' items');
    root.scrollTop = 0;
    layout();
    // Nothing to show: said, not a blank page.
    var empty = root.querySelector(':scope > .emptystate');
    if (shown.length > 0) { if (empty) empty.remove(); return; }
    if (!empty) { empty = el('div', 'emptystate'); empty.setAttribute('role', 'status'); root.appendChild(empty); }
    empty.textContent = all.length === 0 ? 'No photos, videos or files yet. What is sent in the conversations shows here.'
      : 'Nothing of this kind or from this person.';
  }
  function show(i) {
    if (i < 0 || i >= shown.length) return;
    current = i; var item = shown[i];
    media.textContent = '';
    if (item.kind === 'video' && item.file) {
      var v = el('video'); v.controls = true; v.src = '/api/v1/attachments/' + item.file; if (item.thumb) v.poster = item.thumb + '?size=1024'; media.appendChild(v);
    } else if ((item.kind === 'voice' || item.kind === 'audio') && item.file) {
      var a = el('audio'); a.controls = true; a.src = '/api/v1/attachments/' + item.file; media.appendChild(a);
    } else if (item.thumb) {
      var img = el('img'); img.alt = label(item); img.src = item.thumb + '?size=1024'; media.appendChild(img);
    } else {
      media.appendChild(el('p', 'gn', item.name || label(item)));
      if (item.file) { var d = el('a', null, 'Download'); d.href = '/api/v1/attachments/' + item.file + '?download=1'; media.appendChild(d); }
    }
    caption.textContent = label(item) + (item.caption ? ' — ' + item.caption : '');
    open.href = '/c/' + item.conversation + '?at=' + item.seq;
    box.hidden = false; byId('lbclose').focus();
  }
  function close() {
    box.hidden = true; media.textContent = '';
    var back = space.querySelector('[data-i="' + current + '"]'); if (back) back.focus();
  }
  space.addEventListener('click', function (e) {
    var b = /** @type {HTMLElement | null} */ (/** @type {HTMLElement} */ (e.target).closest(".gc")); if (b) show(Number(b.dataset.i));
  });
  byId('lbclose').addEventListener('click', close);
  byId('lbprev').addEventListener('click', function () { show(current - 1); });
  byId('lbnext').addEventListener('click', function () { show(current + 1); });
  document.addEventListener('keydown', function (e) {
    if (box.hidden) return;
    if (e.key === 'ArrowLeft') { show(current - 1); e.preventDefault(); }
    else if (e.key === 'ArrowRight') { show(current + 1); e.preventDefault(); }
    else if (e.key === 'Escape') { close(); e.preventDefault(); }
  });
  root.addEventListener('scroll', function () { if (!frame) frame = requestAnimationFrame(paint); }, { passive: true });
  window.addEventListener('resize', function () { layout(); });
  kindSel.addEventListener('change', filter); senderSel.addEventListener('change', filter);
  fetch(root.dataset.src, { credentials: 'same-origin' }).then(function (r) {
    if (!r.ok) throw new Error(r.status + ' ' + r.statusText);
    return r.json();
  }).then(function (data) {
    all = data.items;
    data.people.forEach(function (p) { var o = el('option', null, p); o.value = p; senderSel.appendChild(o); });
    root.dataset.loaded = all.length;
    filter();
  }).catch(function (err) { counter.textContent = 'The gallery could not be loaded: ' + err.message; });
}
