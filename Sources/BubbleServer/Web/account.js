// account.js — accounts on the page: sign in, sign out (here or everywhere), make an invitation
// link for the open conversation, accept an invitation (joining, or signing up and joining).

import { byId, me, post, reason } from "./session.js";

/**
 * A refused sign-in as a sentence for the page (the server's reason otherwise, capitalised).
 * @param {string} why the server's error text
 * @returns {string}
 */
export function signInError(why) {
  if (/^401$|name or password|wrong|unknown|not right/i.test(why)) return "That name and password don't match. Try again.";
  if (/too many/i.test(why)) return "Too many tries. " + why.charAt(0).toUpperCase() + why.slice(1) + ".";
  return why ? why.charAt(0).toUpperCase() + why.slice(1) : "Signing in failed.";
}

export function setupAccount() {
  for (const [button, everywhere] of /** @type {[string, boolean][]} */ ([["signout", false], ["signoutall", true]])) {
    const b = byId(button);
    if (b) b.addEventListener("click", async () => {
      try { await post("/api/v1/logout", { everywhere }); } catch (_) { /* signed out either way */ }
      location.href = "/login";
    });
  }
  const signin = byId("signin");
  if (signin) signin.addEventListener("submit", async (/** @type {Event} */ e) => {
    e.preventDefault();
    const err = byId("signerr");
    err.textContent = "";
    try {
      await post("/api/v1/login", { name: byId("signname").value, password: byId("signpassword").value });
      location.href = signin.dataset.next || "/";
    } catch (x) {
      // Said plainly; the password is typed again (never kept in the field).
      err.textContent = signInError(reason(x));
      byId("signpassword").value = "";
      byId("signpassword").focus();
    }
  });
  const invite = byId("invite"), rows = byId("rows");
  if (invite && rows) invite.addEventListener("click", async () => {
    const field = byId("invitelink"), status = byId("invitestatus");
    status.textContent = "";
    try {
      const answer = await post("/api/v1/conversations/" + rows.dataset.id + "/invites", {});
      field.value = location.origin + answer.url;
      status.textContent = "Works once, until " + new Date(answer.expires).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) + ".";
      byId("inviterow").hidden = false;
      invite.textContent = "Make another link";
      field.select();
    } catch (x) { status.textContent = reason(x); }
  });
  setupCopyButtons();
  const join = byId("join");
  if (join) join.addEventListener("submit", async (/** @type {Event} */ e) => {
    e.preventDefault();
    const err = byId("signerr");
    /** @param {string} id */
    const field = (id) => { const f = byId(id); return f ? f.value : undefined; };
    err.textContent = "";
    try {
      const answer = await post("/api/v1/invites/" + encodeURIComponent(join.dataset.token) + "/accept",
        me ? {} : { name: field("joinname"), displayName: field("joindisplay"), password: field("joinpassword") });
      location.href = "/c/" + answer.conversation;
    } catch (x) { err.textContent = reason(x); }
  });
}

/**
 * Copy buttons (`data-copy` names the field): the field's text to the clipboard, said in the
 * button ("Copied") for a moment; where the clipboard is refused, the text is selected to copy.
 */
export function setupCopyButtons() {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const b = /** @type {HTMLButtonElement} */ (button);
    b.addEventListener("click", async () => {
      const field = /** @type {HTMLInputElement} */ (byId(b.dataset.copy || ""));
      if (!field) return;
      let done = false;
      try { await navigator.clipboard.writeText(field.value); done = true; } catch (_) { field.select(); }
      b.textContent = done ? "Copied" : "Press Ctrl+C";
      setTimeout(() => { b.textContent = "Copy"; }, 2000);
    });
  }
}
