// scroller.js — the conversation column as tall as the whole conversation laid out by the layout
// engine at the column's width (`/c/ID/view`), holding one window of rows, each message where the
// engine put it: the scrollbar's thumb is the place in the conversation (dragging to the middle
// shows the middle, the end is one drag away) and nothing jumps when rows load. Past
// MAX_COLUMN px the column is scaled (geometry.js). Resizing lays out again at the new width and
// keeps the message on top of the view where it was. Jumps: to a message, a day, the newest.
// `window.bubbleViewer` tells tests (and the curious) where the page is. Under the newest message
// the column keeps END_GAP px, so its tail and reactions never sit on the footer.

import { bandQuery, column, covers, easedOffset, indexAt, jumpTarget, scrollFor } from "./geometry.js";
import { markRead } from "./reads.js";
import { markMessage } from "./search.js";
import { reason, tokenPart } from "./session.js";

/**
 * @typedef {{ el: HTMLElement, base: number, first: number, last: number, top: number, bottom: number, tops: number[] }} RowWindow
 * @typedef {{ height: number, width: number, count: number, max: number, first: number, last: number, tops: number[], bottom: number, html: string, avatars: boolean, target?: number }} ViewAnswer
 */

/**
 * Makes `main` (the rows) inside `scroller` (the scrolling box) a virtual column.
 * @param {HTMLElement} main
 * @param {HTMLElement} scroller
 */
/** The space under the newest message (px): the column is the layout's height plus this. */
export const END_GAP = 16;

export function createScroller(main, scroller) {
  const id = main.dataset.id || "", theme = main.dataset.theme || "";
  const label = document.getElementById("range");
  let total = 0, laidOut = 0, spacer = 0, scale = 1, offset = 0, width = 0, lastTop = 0, count = Number(main.dataset.count);
  /** @type {RowWindow | null} */
  let win = null;
  let virtual = false, loading = false, again = false;
  /** @type {[string, (data: ViewAnswer) => void] | null} */
  let queued = null;
  let marked = main.dataset.at ? { seq: Number(main.dataset.at), words: main.dataset.hl || "" } : null;
  /** @type {{ fetches: number, windows: number, relayouts: number, mode: string, error: string, live?: any }} */
  const state = { fetches: 0, windows: 0, relayouts: 0, mode: "static", error: "" };

  const view = {
    main, scroller, id, state,
    /** Whose messages are on the right ("" as stored): the participant the page sends as. */
    as: main.dataset.as || "",
    /** @type {(() => void) | null} called after a window is placed */
    onPlaced: null,
    /** @type {(() => void) | null} called after each scroll */
    onScrolled: null,
    window: () => win,
    busy: () => loading || queued !== null,
    viewHeight: () => scroller.clientHeight,
    /** Whether the view is at the conversation's end (within 60 px). */
    atBottom: () => !win || scroller.scrollTop + offset + view.viewHeight() >= total - 60,
    jump, load, start,
    /** Outlines message `seq`, marks `words` in it, and shows it centred. @param {number} seq @param {string} words */
    highlight: (seq, words) => {
      for (const old of main.querySelectorAll(".hl")) old.classList.remove("hl");
      for (const m of main.querySelectorAll("mark")) m.replaceWith(document.createTextNode(m.textContent || ""));
      marked = { seq, words };
      return jump("at=" + seq, "centre");
    },
    /** The rows around the view fetched again (a change there). */
    reload: () => load(bandQuery(scroller.scrollTop + offset, view.viewHeight())),
  };

  /** @type {any} */ (window).bubbleViewer = {
    state,
    position: () => scroller.scrollTop + offset, total: () => total, laidOut: () => laidOut, scale: () => scale, width: () => width,
    window: () => win && { first: win.first, last: win.last, top: win.top, bottom: win.bottom, tops: win.tops },
    // Busy too while the page's fonts load (they come by URL; rows are measured once they are in).
    current: () => current(), busy: () => view.busy() || (document.fonts && document.fonts.status !== "loaded"),
    goTo: (/** @type {number} */ seq) => jump("at=" + seq, "centre"),
  };

  const columnWidth = () => Math.round(main.getBoundingClientRect().width);

  /**
   * @param {string} q
   * @returns {Promise<ViewAnswer>}
   */
  async function get(q) {
    for (;;) {
      state.fetches++;
      const r = await fetch("/c/" + id + "/view?width=" + width + "&theme=" + encodeURIComponent(theme) + (view.as ? "&as=" + encodeURIComponent(view.as) : "") + "&" + q + tokenPart, { credentials: "same-origin" });
      if (r.status === 202) {
        const p = await r.json();
        const said = "Laying out " + p.done.toLocaleString() + " of " + p.total.toLocaleString() + " messages…";
        if (p.total > 0) { if (label) label.textContent = said; note("loading", said); }
        await new Promise((ok) => setTimeout(ok, 250));
        continue;
      }
      note("loading", "");
      const data = await r.json();
      if (!r.ok) throw new Error(data.error || String(r.status));
      return data;
    }
  }

  /** @param {number} h */
  function setHeight(h) {
    laidOut = h;
    total = h + END_GAP;
    ({ spacer, scale } = column(total, view.viewHeight()));
    main.style.height = spacer + "px";
  }

  // The thumb's place is the conversation's place.
  function anchor() { offset = scroller.scrollTop * (scale - 1); }

  /** @param {number} y */
  function setPosition(y) {
    const to = scrollFor(y, total, view.viewHeight(), scale);
    scroller.scrollTop = to.top;
    // The browser may round: keep the offset exact for what it took.
    offset = to.y - scroller.scrollTop;
    lastTop = scroller.scrollTop;
  }

  // A window of rows placed where the engine put them: each message's rows in a block of their
  // own at the top the engine gave that message (its first row's margin taken off), so that a
  // message the browser draws a little taller or shorter than the engine moves nothing after it.
  /** @param {ViewAnswer} data */
  function place(data) {
    const el = document.createElement("div");
    el.className = "vw";
    const t = document.createElement("template");
    t.innerHTML = data.html;
    /** @type {HTMLElement[]} */
    const blocks = [];
    /** @type {HTMLElement | null} */
    let block = null;
    for (const node of Array.from(t.content.childNodes)) {
      if (node instanceof HTMLElement && node.tagName === "B" && node.dataset.n) {
        block = document.createElement("div");
        block.className = data.avatars ? "c vm w" : "c vm";
        blocks.push(block);
        el.appendChild(block);
      }
      if (block) block.appendChild(node);
    }
    main.appendChild(el);
    // Blocks are placed from the window's own top, and the window where the view is: a block's
    // offset stays small. (Placed from the conversation's top, rows past ~33.5 million px —
    // Chromium's largest layout coordinate — all landed on that limit.)
    const base = data.tops.length ? data.tops[0] : 0;
    const shifts = blocks.map((b) => { const first = /** @type {HTMLElement | undefined} */ (b.children[1]); return first ? first.offsetTop : 0; });
    blocks.forEach((b, i) => { b.style.top = (data.tops[i] - base - shifts[i]) + "px"; });
    const old = win;
    win = { el, base, first: data.first, last: data.last, top: base, bottom: data.bottom, tops: data.tops };
    position();
    if (old) old.el.remove();
    state.windows++;
    note("emptystate", data.count === 0 ? (main.dataset.live === "true" ? "No messages yet. Say hello below." : "This conversation holds no messages.") : "");
    if (marked) markMessage(main, marked.seq, marked.words);
    // The newest message is on the page: the conversation is read up to it.
    if (data.last >= data.max) markRead(id, data.last);
    if (view.onPlaced) view.onPlaced();
  }

  /**
   * A line shown over the messages (`kind`: "loading" while the server lays the conversation
   * out, "emptystate" for a conversation without messages); "" takes it away.
   * @param {string} kind
   * @param {string} text
   */
  function note(kind, text) {
    let e = /** @type {HTMLElement | null} */ (scroller.querySelector(":scope > ." + kind));
    if (!text) { if (e) e.remove(); return; }
    if (!e) {
      e = document.createElement("div");
      e.className = kind;
      e.setAttribute("role", "status");
      scroller.appendChild(e);
    }
    e.textContent = text;
  }

  function position() { if (win) win.el.style.top = (win.base - offset) + "px"; }

  // The message at the middle of the view.
  function current() {
    if (!win) return null;
    return win.first + indexAt(win.tops, scroller.scrollTop + offset + view.viewHeight() / 2);
  }

  function update() {
    const n = current();
    if (label && count === 0) label.textContent = "no messages";
    else if (label && n !== null) label.textContent = "message " + n.toLocaleString() + " of " + count.toLocaleString();
  }

  /**
   * Fetches a window (`q`: a `/view` query) and places it; `then` runs first with the answer.
   * One fetch at a time: a load asked for meanwhile waits (the last one asked wins).
   * @param {string} q
   * @param {(data: ViewAnswer) => void} [then]
   */
  async function load(q, then) {
    if (loading) { if (then) queued = [q, then]; else again = true; return; }
    loading = true;
    try {
      const data = await get(q);
      if (data.width !== width) return;
      if (Math.abs(data.height - laidOut) > 0.5) setHeight(data.height);
      if (data.count !== count) {
        count = data.count;
        const shown = document.getElementById("msgcount");
        if (shown) shown.textContent = count.toLocaleString() + (count === 1 ? " message" : " messages");
      }
      if (then) then(data);
      place(data);
    } catch (e) {
      state.error = reason(e);
      if (label) label.textContent = "could not load rows: " + state.error;
    } finally {
      loading = false;
      if (queued) { const [a, b] = queued; queued = null; load(a, b); } else if (again) { again = false; ensure(); }
      update();
    }
  }

  // The window covers the view and a screen on each side, else the rows there are fetched.
  function ensure() {
    if (!virtual) return;
    if (covers(win, scroller.scrollTop + offset, view.viewHeight(), laidOut)) return;
    view.reload();
  }

  function onScroll() {
    if (!virtual) return;
    const st = scroller.scrollTop, moved = st - lastTop;
    lastTop = st;
    if (scale > 1) {
      offset = easedOffset({ scrollTop: st, moved, viewHeight: view.viewHeight(), spacer, total, scale, offset });
      position();
    }
    ensure();
    update();
    if (view.onScrolled) view.onScrolled();
  }

  /**
   * Jumps: to a message (centred), to a day (on top), to the newest (at the bottom). `where`:
   * "end", "centre", "top" (8 px below the top) or "flush" (at the very top, where the server's
   * first screen had it); `before` runs first.
   * @param {string} q
   * @param {"end" | "centre" | "top" | "flush"} where
   * @param {() => void} [before]
   */
  function jump(q, where, before) {
    virtual = true;
    return load(q, (data) => {
      if (before) before();
      if (where === "end") { setPosition(total); return; }
      const k = Math.max(0, (data.target || 0) - data.first);
      const top = data.tops[k];
      const next = k + 1 < data.tops.length ? data.tops[k + 1] : data.bottom;
      setPosition(jumpTarget(where, top, next, view.viewHeight()));
    });
  }

  // A new width: the engine lays the conversation out again; the message on top stays on top.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let resizing;
  function onResize() {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      const w = columnWidth();
      if (!virtual || w === width) { setHeight(laidOut); anchor(); position(); ensure(); return; }
      const y = scroller.scrollTop + offset;
      const k = win ? indexAt(win.tops, y) : 0;
      const seq = win ? win.first + k : null, into = win ? y - win.tops[k] : 0;
      width = w;
      state.relayouts++;
      if (seq === null) { jump("", "end"); return; }
      load("at=" + seq, (data) => setPosition(data.tops[(data.target || 0) - data.first] + into));
    }, 120);
  }

  // Start: the server's rows stay until the layout is there, then the same place, virtual.
  function start() {
    width = columnWidth();
    main.classList.add("virtual");
    const flow = Array.from(main.childNodes);
    state.mode = "virtual";
    let q = "", where = /** @type {"end" | "centre" | "flush"} */ ("end");
    if (main.dataset.at) { q = "at=" + main.dataset.at; where = "centre"; }
    else if (main.dataset.date) { q = "date=" + encodeURIComponent(main.dataset.date); where = "flush"; }
    else if (main.dataset.newest !== "true") {
      const b = /** @type {HTMLElement | null} */ (main.querySelector("b[data-n]"));
      if (b) { q = "at=" + b.dataset.n; where = "flush"; }
    }
    jump(q, where, () => flow.forEach((n) => /** @type {ChildNode} */ (n).remove()));
  }

  scroller.addEventListener("scroll", onScroll, { passive: true });
  window.addEventListener("resize", onResize);
  return view;
}
