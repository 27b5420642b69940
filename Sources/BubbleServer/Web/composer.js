// composer.js — writing in a live conversation: "send as" any participant (sending as someone is
// seeing the conversation from their side: theirs on the right), the text field (grows with its
// text; Enter adds, Shift+Enter is a new line, Esc ends a reply or an edit), a photo, and a
// message's actions (reactions, reply, and edit or delete for its author). Messages go to the
// outbox (live.js); edits, deletions and reactions go through the JSON API and everyone — this
// page too — sees them arrive on the socket.

import { kb, uuid } from "./live.js";
import { byId, reason, tokenPart, tokenQuery } from "./session.js";

/**
 * The participant the page last sent as in this conversation (this tab), when still a choice.
 * @param {any} view the scroller (scroller.js)
 */
export function restoreSendAs(view) {
  const sendas = byId("sendas");
  if (!sendas) return;
  const owner = sendas.options.length ? sendas.options[0].value : "";
  const remembered = view.as || sessionStorage.getItem("bk-sendas-" + view.id);
  if (remembered && Array.from(sendas.options).some((/** @type {HTMLOptionElement} */ o) => o.value === remembered)) sendas.value = remembered;
  view.as = sendas.value === owner ? "" : sendas.value;
}

/**
 * Whether a message of `bytes` UTF-8 bytes may be sent, and if not, why.
 * @param {number} bytes
 * @param {number} maxText
 * @returns {string | null}
 */
export function tooLong(bytes, maxText) {
  return bytes > maxText ? "This message is " + kb(bytes) + "; a message may have at most " + kb(maxText) + "." : null;
}

/**
 * @param {any} view the scroller (scroller.js)
 * @param {ReturnType<typeof import("./live.js").setupLive>} channel
 */
export function setupComposer(view, channel) {
  const text = byId("text"), form = byId("composer"), sendas = byId("sendas"), photo = byId("photo");
  const cerr = byId("cerr"), banner = byId("banner"), bannerText = byId("bannertext"), actions = byId("actions");
  const maxText = Number(view.main.dataset.maxText) || 65536;
  const owner = sendas.options.length ? sendas.options[0].value : "";
  /** @typedef {{ kind: "edit" | "reply", seq: number, name?: string, snippet?: string } | null} Mode */
  /** @type {Mode} */
  let mode = null;
  let lastTyping = 0;

  sendas.addEventListener("change", () => {
    sessionStorage.setItem("bk-sendas-" + view.id, sendas.value);
    view.as = sendas.value === owner ? "" : sendas.value;
    for (const o of channel.outbox.values()) if (o.el) o.el.classList.toggle("in", o.body.sender !== sendas.value);
    view.jump("", "end");
  });

  function grow() { text.style.height = "auto"; text.style.height = Math.min(text.scrollHeight, 160) + "px"; }
  text.addEventListener("input", () => {
    grow(); cerr.textContent = "";
    const now = Date.now();
    if (text.value.trim() && now - lastTyping > 1500 && channel.ready()) {
      lastTyping = now;
      channel.sendTyping(sendas.value);
    }
  });
  text.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); add(); }
    else if (e.key === "Escape" && mode) { e.preventDefault(); setMode(null); }   // not also closing the chat
  });
  form.addEventListener("submit", (/** @type {Event} */ e) => { e.preventDefault(); add(); });

  function add() {
    const value = text.value;
    cerr.textContent = "";
    if (!value.trim()) return;
    const refusal = tooLong(new TextEncoder().encode(value).length, maxText);
    if (refusal) { cerr.textContent = refusal; return; }
    if (mode && mode.kind === "edit") {
      request("PATCH", "/messages/" + mode.seq, { text: value, sender: sendas.value });
    } else {
      /** @type {import("./live.js").OutgoingBody} */
      const body = { clientId: uuid(), text: value, sender: sendas.value };
      if (mode && mode.kind === "reply") body.replyTo = mode.seq;
      channel.submit(body);
    }
    text.value = ""; grow(); setMode(null);
    lastTyping = 0;   // the next words typed are news again
    if (!view.atBottom()) view.jump("", "end");
  }

  photo.addEventListener("change", async () => {
    const file = photo.files[0];
    photo.value = "";
    if (!file) return;
    /** @type {import("./live.js").OutgoingBody} */
    const body = { clientId: uuid(), sender: sendas.value };
    if (text.value.trim()) body.text = text.value;
    text.value = ""; grow();
    /** @type {import("./live.js").Outgoing} */
    const o = { body, state: "sending" };
    channel.outbox.set(body.clientId, o);
    channel.bubble(o, "📷 " + file.name + (body.text ? "\n" + body.text : ""));
    try {
      const r = await fetch(channel.api + "/photos" + tokenQuery, { method: "POST", body: file, credentials: "same-origin",
                                                                   headers: { "Content-Type": file.type || "application/octet-stream" } });
      const answer = await r.json();
      if (!r.ok) throw new Error(answer.error || String(r.status));
      body.photo = answer.photo;
      channel.save(); channel.transmit(o);
    } catch (err) { o.state = "failed"; o.error = reason(err); channel.show(o); }
  });

  /**
   * An edit, a deletion or a reaction through the JSON API; a refusal is shown under the field.
   * @param {string} method
   * @param {string} path
   * @param {object} [body]
   */
  async function request(method, path, body) {
    try {
      const r = await fetch(channel.api + path + (path.includes("?") ? tokenPart : tokenQuery), {
        method, credentials: "same-origin", headers: body ? { "Content-Type": "application/json" } : {},
        body: body ? JSON.stringify(body) : undefined });
      if (!r.ok) { const answer = await r.json().catch(() => ({})); cerr.textContent = answer.error || ("refused (" + r.status + ")"); }
    } catch (err) { cerr.textContent = "No answer from the server: " + reason(err); }
  }

  /** @param {Mode} next */
  function setMode(next) {
    mode = next;
    banner.hidden = !mode;
    if (!mode) return;
    bannerText.textContent = mode.kind === "edit" ? "Editing your message" : "Replying to " + (mode.name || "") + ": " + (mode.snippet || "");
    text.focus();
  }
  byId("bannercancel").addEventListener("click", () => { if (mode && mode.kind === "edit") text.value = ""; setMode(null); });

  // A message's actions: reactions, reply, and edit/delete for its author.
  /** @type {any} */
  let acting = null;
  /** @type {HTMLElement | null} the message whose actions are open from the keyboard */
  let from = null;
  /**
   * Opens the actions of the message `block` shows, at (`x`, `y`) of the window.
   * @param {HTMLElement} block
   * @param {number} x
   * @param {number} y
   * @param {boolean} keyboard the focus goes into the menu (and back to the message after)
   */
  async function openActions(block, x, y, keyboard) {
    const marker = /** @type {HTMLElement | null} */ (block.querySelector("b[data-n]"));
    if (!marker) return;
    const seq = Number(marker.dataset.n);
    const r = await fetch(channel.api + "/messages?at=" + seq + "&limit=1" + tokenPart, { credentials: "same-origin" });
    const data = r.ok ? await r.json() : null;
    const m = data && data.messages.find((/** @type {any} */ x) => x.seq === seq);
    if (!m || m.side === "system") return;
    acting = m;
    const mine = m.sender === sendas.value, gone = !!m.deleted || (m.attachments || []).some((/** @type {any} */ a) => a.kind === "deleted");
    for (const b of actions.querySelectorAll(".re")) {
      const reaction = (m.reactions || []).find((/** @type {any} */ x) => x.emoji === b.dataset.emoji);
      b.classList.toggle("on", !!(reaction && (reaction.senders || []).includes(sendas.value)));
      b.setAttribute("aria-pressed", String(b.classList.contains("on")));
      b.hidden = gone;
    }
    actions.querySelector('[data-act="reply"]').hidden = gone;
    actions.querySelector('[data-act="edit"]').hidden = !mine || gone || !m.text;
    const del = actions.querySelector('[data-act="delete"]');
    del.hidden = !mine || gone; del.textContent = "Delete";
    actions.hidden = false;
    actions.style.left = Math.max(8, Math.min(x, window.innerWidth - actions.offsetWidth - 8)) + "px";
    actions.style.top = Math.max(8, y - actions.offsetHeight - 8) + "px";
    from = keyboard ? block : null;
    if (keyboard) { const first = actions.querySelector("button:not([hidden])"); if (first) first.focus(); }
  }
  function closeActions() {
    actions.hidden = true; acting = null;
    if (from && from.isConnected) from.focus();
    from = null;
  }
  view.main.addEventListener("click", (/** @type {MouseEvent} */ e) => {
    const target = /** @type {HTMLElement} */ (e.target);
    if (target.closest("a")) return;
    const block = /** @type {HTMLElement | null} */ (target.closest(".vm"));
    if (!block) return;
    e.stopPropagation();
    openActions(block, e.clientX, e.clientY, false);
  });
  // The keyboard: Tab reaches the messages; ↑/↓ walk them; Enter, the menu key or Shift+F10
  // opens a message's actions (←/→ through them, Esc back to the message).
  view.main.tabIndex = 0;
  view.main.setAttribute("aria-description", "Use the arrow keys to move through messages, Enter for a message's actions");
  view.main.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    const blocks = /** @type {HTMLElement[]} */ (Array.from(view.main.querySelectorAll(".vm")));
    if (!blocks.length) return;
    const at = blocks.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      let k;
      if (at < 0) {
        // From the column itself: the message in the middle of the view.
        const middle = view.scroller.getBoundingClientRect().top + view.viewHeight() / 2;
        k = blocks.findIndex((b) => b.getBoundingClientRect().bottom >= middle);
        if (k < 0) k = blocks.length - 1;
      } else k = Math.max(0, Math.min(blocks.length - 1, at + (e.key === "ArrowDown" ? 1 : -1)));
      const b = blocks[k];
      b.tabIndex = -1;
      b.focus({ preventScroll: true });
      b.scrollIntoView({ block: "nearest" });
      return;
    }
    if (at >= 0 && (e.key === "Enter" || e.key === "ContextMenu" || (e.key === "F10" && e.shiftKey))) {
      e.preventDefault();
      const rect = blocks[at].getBoundingClientRect();
      openActions(blocks[at], rect.left + rect.width / 2, rect.top, true);
    }
  });
  actions.setAttribute("role", "toolbar");
  actions.setAttribute("aria-label", "Message actions");
  actions.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    const buttons = /** @type {HTMLElement[]} */ (Array.from(actions.querySelectorAll("button:not([hidden])")));
    const k = buttons.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    const next = buttons[(k + (e.key === "ArrowRight" ? 1 : -1) + buttons.length) % buttons.length];
    if (next) { e.preventDefault(); next.focus(); }
  });
  actions.addEventListener("click", (/** @type {MouseEvent} */ e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest("button");
    if (!b || !acting) return;
    e.stopPropagation();
    const m = acting;
    if (b.dataset.emoji) {
      if (b.classList.contains("on")) request("DELETE", "/messages/" + m.seq + "/reactions?emoji=" + encodeURIComponent(b.dataset.emoji) + "&sender=" + encodeURIComponent(sendas.value));
      else request("POST", "/messages/" + m.seq + "/reactions", { emoji: b.dataset.emoji, sender: sendas.value });
    } else if (b.dataset.act === "reply") {
      setMode({ kind: "reply", seq: m.seq, name: m.senderName || m.sender, snippet: (m.text || "Photo").slice(0, 60) });
    } else if (b.dataset.act === "edit") {
      setMode({ kind: "edit", seq: m.seq });
      text.value = m.markup || m.text || ""; grow();
    } else if (b.dataset.act === "delete") {
      if (b.textContent !== "Delete?") { b.textContent = "Delete?"; return; }
      request("DELETE", "/messages/" + m.seq + "?sender=" + encodeURIComponent(sendas.value));
    }
    const back = from;
    closeActions();
    // A reply or an edit goes on in the composer.
    if (back && (b.dataset.act === "reply" || b.dataset.act === "edit")) text.focus();
  });
  document.addEventListener("click", (e) => { if (!actions.hidden && !actions.contains(/** @type {Node} */ (e.target))) closeActions(); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !actions.hidden) closeActions(); });
}
