// app.js — the pages' one script (the only one the CSP allows, served as /assets/app.HASH.js): it
// sets up what the page has. Every page: the session (CSRF), accounts, light/dark, the frame,
// the list's feed (new messages and unread counts as they change).
// The library: upload and new conversation. A conversation: the virtual scroller, its calendar,
// the theme switch and, when live, the socket and the composer. The gallery: its grid.
// Without the script every page still reads, with links.

import { setupAccount } from "./account.js";
import { setupCalendar } from "./calendar.js";
import { restoreSendAs, setupComposer } from "./composer.js";
import { setupDatePill } from "./datepill.js";
import { setupFeed } from "./feed.js";
import { setupFrame } from "./frame.js";
import { setupGallery } from "./gallery.js";
import { setupLibrary } from "./library.js";
import { setupLive } from "./live.js";
import { markRead } from "./reads.js";
import { setupScheme } from "./scheme.js";
import { createScroller } from "./scroller.js";
import { setupConversationSearch, setupSidebarSearch } from "./search.js";
import { byId, installCsrf } from "./session.js";
import { setupThemePicker } from "./settings.js";
import { setupStats } from "./stats.js";

installCsrf();
setupAccount();
setupScheme();
setupFrame();
setupLibrary();
setupGallery();
setupSidebarSearch();
setupStats();

const main = byId("rows"), scrollBox = byId("scroller");
setupFeed(main ? main.dataset.id : "");
if (main && scrollBox) {
  const view = createScroller(main, scrollBox);
  // Opened at its newest messages: read up to them at once (the scroller marks later ones).
  if (main.dataset.newest === "true" && Number(main.dataset.last) > 0) markRead(main.dataset.id, Number(main.dataset.last));
  setupCalendar(view);
  setupConversationSearch(view);
  const newest = byId("newest");
  if (newest) newest.addEventListener("click", (/** @type {Event} */ e) => { e.preventDefault(); view.jump("", "end"); });
  setupThemePicker(main.dataset.id);
  const liveBox = byId("live");
  if (liveBox) {
    liveBox.hidden = false;
    restoreSendAs(view);
    const channel = setupLive(view);
    setupComposer(view, channel);
    channel.connect();
    // Opening a chat puts the cursor in the composer (not on a phone: its keyboard would cover the chat).
    if (!window.matchMedia("(max-width: 600px)").matches) byId("text").focus({ preventScroll: true });
  }
  // After live.js has its onPlaced: the pill adds to it.
  setupDatePill(view);
  view.start();
}
