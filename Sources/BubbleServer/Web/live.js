// live.js — a live conversation's connection: the socket, the outbox and what arrives.
//
// A message added shows at once in the outbox below the conversation ("Sending…"), goes over the
// socket with a UUID made here (kept in localStorage until the server acknowledges it, so a
// reload or a lost connection sends the same id again — the server stores it once), then "Sent"
// once committed; its row then comes in the conversation like everyone else's: every committed
// change arrives on the socket in revision order, and the window of rows is fetched again (the
// newest when the reader is at the bottom or it is their own message, else a "new messages"
// pill). The socket reconnects with back-off and asks for everything after the last revision it
// had. Who is typing shows for 4 s or until their message comes. The composer (composer.js)
// hands messages to `submit`.

import { byId, me, tokenPart, tokenQuery } from "./session.js";

/**
 * "3.2 KB", "64 KB": a size in kilobytes, one decimal under 10 KB.
 * @param {number} n bytes
 * @returns {string}
 */
export const kb = (n) => (n / 1024).toFixed(n < 10240 ? 1 : 0) + " KB";

/**
 * An RFC 4122 version-4 UUID from 16 random bytes.
 * @param {Uint8Array} b
 * @returns {string}
 */
export function uuidFrom(b) {
  b = Uint8Array.from(b);
  b[6] = (b[6] & 15) | 64; b[8] = (b[8] & 63) | 128;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20, 32);
}

/** A new message's client id. */
export const uuid = () => crypto.randomUUID ? crypto.randomUUID() : uuidFrom(crypto.getRandomValues(new Uint8Array(16)));

/**
 * What a message of the outbox says under it.
 * @param {"sending" | "sent" | "failed"} state
 * @param {string} [error]
 * @returns {string}
 */
export const outboxLabel = (state, error) => state === "sending" ? "Sending…" : state === "sent" ? "Sent" : "Failed — " + (error || "not sent") + " ";

/**
 * The wait before reconnecting (jittered ±25 %) and the back-off after it (doubling, at most 10 s).
 * @param {number} backoff
 * @param {number} random in [0, 1)
 * @returns {{ wait: number, next: number }}
 */
export const reconnect = (backoff, random) => ({ wait: backoff * (0.75 + random * 0.5), next: Math.min(backoff * 2, 10000) });

/**
 * The pill's text for `n` messages that came while the reader was elsewhere.
 * @param {number} n
 * @returns {string}
 */
export const newMessagesText = (n) => n + " new message" + (n > 1 ? "s" : "") + " ↓";

/**
 * What the last message of `me` ("" for the owner) at `seq` says: "Read" once another member's
 * read mark reaches it, "Delivered" once another member's delivered mark does, else "Sent";
 * null when nobody else keeps marks (an owner's server without accounts).
 * @param {number} seq
 * @param {Map<string, { read: number, delivered: number }>} marks
 * @param {string} self
 * @returns {string | null}
 */
export function receiptText(seq, marks, self) {
  let any = false, read = false, delivered = false;
  for (const [user, m] of marks) {
    if (user === self) continue;
    any = true;
    if (m.read >= seq) read = true;
    if (m.delivered >= seq) delivered = true;
  }
  return !any ? null : read ? "Read" : delivered ? "Delivered" : "Sent";
}

/**
 * @typedef {{ clientId: string, sender: string, text?: string, photo?: string, replyTo?: number }} OutgoingBody
 * @typedef {{ body: OutgoingBody, state: "sending" | "sent" | "failed", error?: string, seq?: number, el?: HTMLElement, label?: HTMLElement, timer?: ReturnType<typeof setTimeout> }} Outgoing
 */

/**
 * Connects the page's live conversation. `view` is the scroller (scroller.js).
 * @param {any} view
 */
export function setupLive(view) {
  const { main, id, state } = view;
  const outboxEl = byId("outbox"), cerr = byId("cerr"), sendas = byId("sendas");
  const pill = byId("pill"), typingEl = byId("typing"), typingName = byId("typingname");
  const api = "/api/v1/conversations/" + id;
  const storeKey = "bk-outbox-" + id;
  /** @type {{ rev: number, ws: WebSocket | null, ready: boolean, backoff: number, fresh: number }} */
  const live = { rev: Number(main.dataset.rev) || 0, ws: null, ready: false, backoff: 250, fresh: 0 };
  /** @type {Map<string, Outgoing>} */
  const outbox = new Map();
  state.live = { sent: 0, acked: 0, changes: 0, connects: 0, typing: 0, typingLog: [] };
  /** @type {any} */ (window).bubbleViewer.live = {
    rev: () => live.rev, ready: () => live.ready, drop: () => { if (live.ws) live.ws.close(); },
    outbox: () => Array.from(outbox.values()).map((o) => ({ id: o.body.clientId, state: o.state, text: o.body.text || "", seq: o.seq || null })),
  };

  function save() {
    const waiting = Array.from(outbox.values()).filter((o) => o.state !== "sent" && (o.body.text || o.body.photo)).map((o) => o.body);
    if (waiting.length) localStorage.setItem(storeKey, JSON.stringify(waiting)); else localStorage.removeItem(storeKey);
  }

  // A message on its way, as a bubble of the outbox.
  /** @param {Outgoing} o @param {string} [label] */
  function bubble(o, label) {
    const el = document.createElement("div");
    el.className = "ob" + (o.body.sender === sendas.value ? "" : " in");
    const b = document.createElement("div");
    b.textContent = label || o.body.text || "📷 Photo";
    const small = document.createElement("small");
    el.append(b, small);
    outboxEl.appendChild(el);
    o.el = el; o.label = small;
    show(o);
  }
  /** @param {Outgoing} o */
  function show(o) {
    const el = /** @type {HTMLElement} */ (o.el), label = /** @type {HTMLElement} */ (o.label);
    el.classList.toggle("failed", o.state === "failed");
    el.dataset.state = o.state;
    label.textContent = outboxLabel(o.state, o.error);
    if (o.state === "failed") {
      const retry = document.createElement("button");
      retry.type = "button"; retry.textContent = "Retry";
      retry.addEventListener("click", () => { o.state = "sending"; show(o); transmit(o); });
      label.appendChild(retry);
    }
  }
  /** @param {Outgoing} o */
  function transmit(o) {
    clearTimeout(o.timer);
    if (!o.body.text && !o.body.photo) { o.state = "failed"; o.error = "the photo did not upload; choose it again"; show(o); return; }
    // No answer in 10 s (no socket, or no acknowledgement): failed, with a retry.
    o.timer = setTimeout(() => { if (o.state === "sending") { o.state = "failed"; o.error = "no answer from the server"; show(o); } }, 10000);
    if (live.ws && live.ready) { live.ws.send(JSON.stringify(Object.assign({ type: "send" }, o.body))); state.live.sent++; }
  }
  /**
   * Puts a message in the outbox and sends it (a photo's once it has uploaded).
   * @param {OutgoingBody} body
   * @param {string} [label]
   * @returns {Outgoing}
   */
  function submit(body, label) {
    /** @type {Outgoing} */
    const o = { body, state: "sending" };
    outbox.set(body.clientId, o);
    bubble(o, label);
    save();
    if (body.text || body.photo) transmit(o);
    return o;
  }
  for (const body of JSON.parse(localStorage.getItem(storeKey) || "[]")) submit(body);

  // The socket, opened again with back-off; it asks for what came after the last revision.
  function connect() {
    live.ready = false;
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + api + "/live?since=" + live.rev + tokenPart);
    live.ws = ws;
    ws.onmessage = (e) => {
      let data;
      try { data = JSON.parse(e.data); } catch (_) { return; }
      for (const f of Array.isArray(data) ? data : [data]) frame(f);
    };
    let opened = false;
    ws.onopen = () => { opened = true; };
    ws.onclose = () => {
      if (live.ws !== ws) return;
      live.ws = null; live.ready = false;
      // Refused at the handshake: the same URL asked plainly says why (token, origin, gone).
      if (!opened) fetch(api + "/live" + tokenQuery, { credentials: "same-origin" }).then((r) => r.status !== 426 ? r.json() : null)
        .then((why) => { if (why && why.error) cerr.textContent = "Live updates are off: " + why.error; }).catch(() => {});
      const next = reconnect(live.backoff, Math.random());
      live.backoff = next.next;
      setTimeout(connect, next.wait);
    };
  }
  /** @param {any} f */
  function frame(f) {
    if (f.type === "ready") {
      live.ready = true; live.backoff = 250; state.live.connects++;
      for (const o of outbox.values()) if (o.state === "sending") transmit(o);
    } else if (f.type === "change") change(f);
    else if (f.type === "ack") acked(f);
    else if (f.type === "error") refused(f);
    else if (f.type === "typing") typing(f);
    else if (f.type === "receipt") { receipts.set(f.user, { read: f.read, delivered: f.delivered }); showReceipt(); }
  }

  // The ticks under one's last message: Read when another member has read it, Delivered when it
  // reached another member's device, else Sent (receipt frames: each member's marks).
  /** @type {Map<string, { read: number, delivered: number }>} */
  const receipts = new Map();
  function showReceipt() {
    const own = Array.from(main.querySelectorAll(".vm .b.o")).pop();
    const block = own && own.closest(".vm"), marker = block && block.querySelector("b[data-n]");
    if (!block || !marker) return;
    const text = receiptText(Number(/** @type {HTMLElement} */ (marker).dataset.n), receipts, me);
    if (!text) return;
    let line = /** @type {HTMLElement | null} */ (block.querySelector(".st:not(.f)"));
    if (!line) { line = document.createElement("div"); line.className = "st"; block.appendChild(line); }
    line.textContent = text;
    line.dataset.receipt = text;
  }
  /** @param {{ ref: string, seq: number }} f */
  function acked(f) {
    const o = outbox.get(f.ref);
    if (!o) return;
    clearTimeout(o.timer);
    o.state = "sent"; o.seq = f.seq; show(o); save();
    state.live.acked++;
    // Its row takes its place once placed (or soon, when the reader is elsewhere).
    setTimeout(() => forget(o), 4000);
    settle();
  }
  /** @param {{ ref: string, error: string, status: number }} f */
  function refused(f) {
    const o = outbox.get(f.ref);
    if (!o) { cerr.textContent = f.error; return; }
    clearTimeout(o.timer);
    if (f.status === 429) { setTimeout(() => transmit(o), 600); return; }
    o.state = "failed"; o.error = f.error; show(o); save();
  }
  /** @param {Outgoing} o */
  function forget(o) { if (o.el) o.el.remove(); outbox.delete(o.body.clientId); }
  function settle() {
    for (const o of Array.from(outbox.values())) {
      if (o.state === "sent" && main.querySelector('b[data-n="' + o.seq + '"]')) forget(o);
    }
  }
  view.onPlaced = () => { settle(); showReceipt(); };

  // A committed change: the rows fetched again where it shows.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let refreshTimer;
  let wantEnd = false, wantHere = false;
  /** @param {any} f */
  function change(f) {
    if (f.rev <= live.rev) return;
    live.rev = f.rev; state.live.changes++;
    const m = f.message, win = view.window();
    // The typist's own change hides the indicator, unless it is older than what they were
    // typing when the indicator came (their previous message, arriving after the frame).
    if (typingFrom === m.sender && f.rev > typingRev) hideTyping("message");
    if (f.kind === "message" && !outbox.has(m.clientId)) {
      // Said aloud by screen readers (the visible rows come and go as windows load).
      const who = (m.senderName || m.sender || "") + ": ", text = m.text || (m.attachments && m.attachments.length ? "a photo or file" : "");
      const line = document.createElement("p");
      line.textContent = "New message from " + who + text;
      const announce = byId("announce");
      if (announce) { announce.appendChild(line); while (announce.childNodes.length > 5) announce.firstChild.remove(); }
    }
    if (f.kind === "message" && (!win || win.last === null || m.seq > win.last)) {
      if (view.atBottom() || outbox.has(m.clientId)) wantEnd = true;
      else {
        live.fresh++; wantHere = true;
        pill.textContent = newMessagesText(live.fresh);
        pill.hidden = false;
      }
    } else if (win && m.seq >= win.first && m.seq <= win.last) {
      // A reader at the bottom stays there (an edit or a reaction may make the rows taller).
      if (view.atBottom()) wantEnd = true; else wantHere = true;
    }
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refresh, 30);
  }
  function refresh() {
    if (view.busy()) { refreshTimer = setTimeout(refresh, 60); return; }
    if (wantEnd) { wantEnd = wantHere = false; view.jump("", "end"); }
    else if (wantHere) { wantHere = false; view.reload(); }
  }
  pill.addEventListener("click", () => { pill.hidden = true; live.fresh = 0; view.jump("", "end"); });
  view.onScrolled = () => { if (!pill.hidden && view.atBottom()) { pill.hidden = true; live.fresh = 0; } };

  // Who is typing (told by the server; gone after 4 s or with their message). The frame's rev
  // is the newest change the typist had made or seen.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typingTimer;
  /** @type {string | null} */
  let typingFrom = null;
  let typingRev = 0;
  /** @param {{ sender: string, name: string, rev?: number }} f */
  function typing(f) {
    typingFrom = f.sender; typingRev = f.rev || 0;
    typingName.textContent = f.name + " is typing…";
    typingEl.hidden = false; state.live.typing++;
    state.live.typingLog.push({ sender: f.sender, rev: typingRev, hidden: null });
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => hideTyping("timeout"), 4000);
  }
  /** @param {string} why */
  function hideTyping(why) {
    if (typingFrom !== null) state.live.typingLog[state.live.typingLog.length - 1].hidden = why;
    typingEl.hidden = true; typingFrom = null;
  }

  return {
    api, outbox, submit, transmit, bubble, show, save,
    /** Tells the others that `sender` is typing (when connected). @param {string} sender */
    sendTyping: (sender) => { if (live.ws && live.ready) live.ws.send(JSON.stringify({ type: "typing", sender })); },
    ready: () => live.ready,
    connect,
  };
}
