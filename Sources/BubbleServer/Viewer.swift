/// The pages' one script (`/assets/viewer.js`, the only script the CSP allows).
///
/// On a conversation page it makes the column as tall as the whole conversation laid out by the
/// layout engine at the column's width (`/c/ID/view`), and keeps one window of rows in it, each
/// message where the engine put it: the scrollbar's thumb is the place in the conversation
/// (dragging to the middle shows the middle, the end is one drag away) and nothing jumps when rows
/// load. Browsers cap an element's height (~33 million px in Chromium), so past 8 million px the
/// column is shorter than the conversation by a factor `scale`: a drag or a jump maps the thumb
/// exactly (`anchor`), small scrolls move the rows by as much as the wheel and ease the offset
/// back toward the thumb's place. Resizing re-lays out at the new width and keeps the message on
/// top of the view where it was. `?at=SEQ&hl=words` outlines that message and marks the words;
/// the calendar jumps to a day.
///
/// On the library it sends an upload with a progress bar and shows the importer's answer.
/// Without the script every page still reads, with links.
enum Viewer {
    static let script = #"""
    (() => {
      "use strict";
      const token = new URLSearchParams(location.search).get("token");
      const tokenPart = token ? "&token=" + encodeURIComponent(token) : "";
      const tokenQuery = token ? "?token=" + encodeURIComponent(token) : "";

      // Accounts: a signed-in page carries its session's CSRF token; every write sends it.
      const meta = (name) => { const m = document.querySelector('meta[name="' + name + '"]'); return m ? m.content : ""; };
      const csrf = meta("bk-csrf"), me = meta("bk-user");
      if (csrf) {
        const plain = window.fetch.bind(window);
        window.fetch = (url, options = {}) => {
          const method = (options.method || "GET").toUpperCase();
          if (method !== "GET" && method !== "HEAD") options = Object.assign({}, options, { headers: Object.assign({}, options.headers || {}, { "X-CSRF-Token": csrf }) });
          return plain(url, options);
        };
      }
      const post = async (url, body) => {
        const r = await fetch(url, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
        const answer = r.status === 204 ? {} : await r.json().catch(() => ({}));
        if (!r.ok) throw new Error(answer.error || String(r.status));
        return answer;
      };
      for (const [button, everywhere] of [["signout", false], ["signoutall", true]]) {
        const b = document.getElementById(button);
        if (b) b.addEventListener("click", async () => {
          try { await post("/api/v1/logout", { everywhere }); } catch (_) {}
          location.href = "/login";
        });
      }
      const signin = document.getElementById("signin");
      if (signin) signin.addEventListener("submit", async (e) => {
        e.preventDefault();
        const err = document.getElementById("signerr");
        err.textContent = "";
        try {
          await post("/api/v1/login", { name: document.getElementById("signname").value, password: document.getElementById("signpassword").value });
          location.href = signin.dataset.next || "/";
        } catch (x) { err.textContent = String(x.message || x); }
      });
      const invite = document.getElementById("invite"), rowsOf = document.getElementById("rows");
      if (invite && rowsOf) invite.addEventListener("click", async () => {
        const field = document.getElementById("invitelink");
        try {
          const answer = await post("/api/v1/conversations/" + rowsOf.dataset.id + "/invites", {});
          field.value = location.origin + answer.url;
          field.title = "Single use, until " + answer.expires;
        } catch (x) { field.value = String(x.message || x); }
        field.hidden = false;
        field.select();
      });
      const join = document.getElementById("join");
      if (join) join.addEventListener("submit", async (e) => {
        e.preventDefault();
        const err = document.getElementById("signerr"), field = (id) => { const f = document.getElementById(id); return f ? f.value : undefined; };
        err.textContent = "";
        try {
          const answer = await post("/api/v1/invites/" + encodeURIComponent(join.dataset.token) + "/accept",
            me ? {} : { name: field("joinname"), displayName: field("joindisplay"), password: field("joinpassword") });
          location.href = "/c/" + answer.conversation;
        } catch (x) { err.textContent = String(x.message || x); }
      });

      // Light or dark: the system's choice (prefers-color-scheme) until the reader picks one,
      // kept for this site (`<html data-scheme>`: the app's colours and the bubbles' dark palette).
      const root = document.documentElement, schemeButton = document.getElementById("scheme");
      const systemDark = () => window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
      const showScheme = () => {
        const dark = root.dataset.scheme ? root.dataset.scheme === "dark" : systemDark();
        if (schemeButton) { schemeButton.textContent = dark ? "◐ Light" : "◐ Dark"; schemeButton.setAttribute("aria-pressed", String(dark)); }
      };
      try { const kept = localStorage.getItem("bk-scheme"); if (kept === "dark" || kept === "light") root.dataset.scheme = kept; } catch (_) {}
      showScheme();
      if (schemeButton) schemeButton.addEventListener("click", () => {
        const dark = root.dataset.scheme ? root.dataset.scheme === "dark" : systemDark();
        root.dataset.scheme = dark ? "light" : "dark";
        try { localStorage.setItem("bk-scheme", root.dataset.scheme); } catch (_) {}
        showScheme();
      });

      // Unread counts of live conversations: the newest message this browser has shown of each
      // (kept for the site), against the newest there is (`data-last`).
      const seenKey = (c) => "bk-seen-" + c;
      const seenOf = (c) => { try { return Number(localStorage.getItem(seenKey(c)) || 0); } catch (_) { return 0; } };
      const openRows = document.getElementById("rows");
      function seen(seq) {
        if (!openRows) return;
        const c = openRows.dataset.id;
        if (seq > seenOf(c)) try { localStorage.setItem(seenKey(c), String(seq)); } catch (_) {}
        const badge = document.querySelector('#library a.chat[href="/c/' + c + '"] .unread');
        if (badge) badge.remove();
      }
      for (const a of document.querySelectorAll("#library a.chat[data-last]")) {
        const c = a.getAttribute("href").slice(3), last = Number(a.dataset.last);
        const unread = openRows && openRows.dataset.id === c ? 0 : last - seenOf(c);
        if (unread > 0) {
          const b = document.createElement("span");
          b.className = "unread";
          b.textContent = unread.toLocaleString();
          b.setAttribute("aria-label", unread.toLocaleString() + " unread");
          a.appendChild(b);
        }
      }
      if (openRows && openRows.dataset.live === "true") seen(Number(openRows.dataset.last || 0));

      // The app's frame: dates and numbers in the reader's locale; the open conversation in view
      // in the list; ↑/↓ move through the list (Enter opens), "/" searches, Esc closes a panel;
      // one toolbar panel open at a time, closed by a click elsewhere.
      const dayFormat = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
      for (const t of document.querySelectorAll("time[datetime]")) { const d = new Date(t.getAttribute("datetime")); if (!isNaN(d)) t.textContent = dayFormat.format(d); }
      for (const n of document.querySelectorAll("data[value]")) n.textContent = Number(n.getAttribute("value")).toLocaleString();
      const chats = () => Array.from(document.querySelectorAll("#library a.chat"));
      const open = document.querySelector("#library a.chat[aria-current]");
      if (open) open.scrollIntoView({ block: "nearest" });
      const tools = () => Array.from(document.querySelectorAll("details.tool"));
      for (const d of tools()) d.addEventListener("toggle", () => { if (d.open) for (const o of tools()) if (o !== d) o.open = false; });
      document.addEventListener("click", (e) => { for (const d of tools()) if (d.open && !d.contains(e.target)) d.open = false; });
      document.addEventListener("keydown", (e) => {
        const typing = e.target.closest && e.target.closest("input, textarea, select, [contenteditable]");
        if (e.key === "Escape") {
          const d = tools().find((x) => x.open);
          if (d) { d.open = false; d.querySelector("summary").focus(); e.preventDefault(); }
          return;
        }
        if (typing || e.altKey || e.ctrlKey || e.metaKey) return;
        if (e.key === "/") { const f = document.getElementById("findall"); if (f) { e.preventDefault(); f.focus(); } return; }
        if (e.key === "ArrowDown" || e.key === "ArrowUp") {
          const list = chats(), at = list.indexOf(document.activeElement);
          if (at < 0 && !e.target.closest("#library")) return;
          e.preventDefault();
          const next = list[Math.max(0, Math.min(list.length - 1, at + (e.key === "ArrowDown" ? 1 : -1)))];
          if (next) next.focus();
        }
      });

      // The library: an upload with its progress, then the importer's answer.
      const upload = document.getElementById("upload");
      if (upload) {
        const bar = document.getElementById("progress"), status = document.getElementById("status");
        upload.addEventListener("submit", (e) => {
          e.preventDefault();
          const file = document.getElementById("file").files[0];
          if (!file) { status.textContent = "Choose a file first."; return; }
          const body = new FormData();
          body.append("file", file);
          const xhr = new XMLHttpRequest();
          xhr.open("POST", "/api/v1/imports" + tokenQuery);
          // A line per step as the server imports (a whole phone: conversation after conversation).
          xhr.setRequestHeader("Accept", "application/x-ndjson");
          if (csrf) xhr.setRequestHeader("X-CSRF-Token", csrf);
          bar.hidden = false; bar.value = 0; status.className = ""; status.textContent = "Uploading…";
          window.bkImportProgress = [];
          let seen = 0, answer = null, failure = null;
          const lines = () => {
            const text = xhr.responseText;
            let end;
            while ((end = text.indexOf("\n", seen)) >= 0) {
              let line = {};
              try { line = JSON.parse(text.slice(seen, end)); } catch (_) {}
              seen = end + 1;
              if (line.progress) {
                const p = line.progress;
                window.bkImportProgress.push(p);
                if (p.total > 0) { bar.value = p.done / p.total; }
                status.textContent = p.total > 1 ? "Importing conversation " + Math.min(p.done + 1, p.total).toLocaleString() + " of " + p.total.toLocaleString() + "…" : "Importing…";
              } else if (line.result) { answer = line.result; } else if (line.error) { failure = line.error; }
            }
          };
          xhr.upload.onprogress = (p) => { if (p.lengthComputable) bar.value = p.loaded / p.total; };
          xhr.upload.onload = () => { bar.removeAttribute("value"); status.textContent = "Importing…"; };
          xhr.onprogress = lines;
          xhr.onload = () => {
            bar.hidden = true;
            lines();
            if (xhr.status >= 200 && xhr.status < 300 && answer) {
              const list = answer.conversations || [];
              if (list.length <= 1) {
                status.textContent = "Imported " + answer.added.toLocaleString() + " messages into “" + answer.title + "”.";
                location.href = "/c/" + answer.id + tokenQuery;
                return;
              }
              // A whole backup: what it did, and the library with the new conversations.
              status.textContent = "Imported " + answer.summary + (answer.failed.length ? " — failed: " + answer.failed.map((f) => f.name).join(", ") : "") + ".";
              status.dataset.done = "1";
              fetch("/" + tokenQuery, { credentials: "same-origin" }).then((r) => r.text()).then((html) => {
                const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("library");
                const old = document.getElementById("library");
                if (fresh && old) { old.replaceWith(fresh); }
              });
            } else {
              status.className = "err";
              let plain = {};
              try { plain = JSON.parse(xhr.responseText); } catch (_) {}
              status.textContent = (failure && failure.message) || plain.error || ("The upload failed (" + xhr.status + ").");
            }
          };
          xhr.onerror = () => { bar.hidden = true; status.className = "err"; status.textContent = "The upload failed: no answer from the server."; };
          xhr.send(body);
        });
      }

      // The library: a new conversation of the people named (you first), then opened.
      const newchat = document.getElementById("newchat");
      if (newchat) {
        newchat.hidden = false;
        newchat.addEventListener("submit", async (e) => {
          e.preventDefault();
          const status = document.getElementById("newstatus");
          const people = document.getElementById("newpeople").value.split(",").map((p) => p.trim()).filter(Boolean);
          // Signed in: you are in it (first, the owner), whoever you name besides.
          if (me && !people.some((p) => p.toLowerCase() === me)) people.unshift(me);
          if (!people.length) { status.className = "err"; status.textContent = "Name the people in it, you first."; return; }
          try {
            const r = await fetch("/api/v1/conversations" + tokenQuery, {
              method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
              body: JSON.stringify({ title: document.getElementById("newtitle").value, participants: people }) });
            const answer = await r.json();
            if (!r.ok) throw new Error(answer.error || String(r.status));
            location.href = "/c/" + answer.id + tokenQuery;
          } catch (err) { status.className = "err"; status.textContent = String(err.message || err); }
        });
      }

      const main = document.getElementById("rows");
      const scroller = document.getElementById("scroller");
      if (!main || !scroller) return;
      const id = main.dataset.id, theme = main.dataset.theme;
      // Whose messages are on the right: the one the page sends as (`?as=`, the "send as" switch).
      let viewAs = main.dataset.as || "";
      const label = document.getElementById("range");
      const MAX = 8000000;
      let total = 0, spacer = 0, scale = 1, offset = 0, width = 0, lastTop = 0, count = Number(main.dataset.count);
      let win = null, virtual = false, loading = false, again = false, queued = null;
      let marked = main.dataset.at ? { seq: Number(main.dataset.at), words: main.dataset.hl } : null;
      const state = { fetches: 0, windows: 0, relayouts: 0, mode: "static", error: "" };
      // For tests and the curious: where the page is.
      window.bubbleViewer = {
        state,
        position: () => scroller.scrollTop + offset, total: () => total, scale: () => scale, width: () => width,
        window: () => win && { first: win.first, last: win.last, top: win.top, bottom: win.bottom, tops: win.tops },
        // Busy too while the page's fonts load (they come by URL; rows are measured once they are in).
        current: () => current(), busy: () => loading || queued !== null || (document.fonts && document.fonts.status !== "loaded"),
        goTo: (seq) => jump("at=" + seq, "centre"),
      };

      function columnWidth() { return Math.round(main.getBoundingClientRect().width); }
      const viewHeight = () => scroller.clientHeight;

      async function get(q) {
        for (;;) {
          state.fetches++;
          const r = await fetch("/c/" + id + "/view?width=" + width + "&theme=" + encodeURIComponent(theme) + (viewAs ? "&as=" + encodeURIComponent(viewAs) : "") + "&" + q + tokenPart, { credentials: "same-origin" });
          if (r.status === 202) {
            const p = await r.json();
            if (label) label.textContent = "laying out " + p.done + " of " + p.total + " messages…";
            await new Promise((ok) => setTimeout(ok, 250));
            continue;
          }
          const data = await r.json();
          if (!r.ok) throw new Error(data.error || String(r.status));
          return data;
        }
      }

      function setHeight(h) {
        total = h;
        spacer = Math.max(Math.min(total, MAX), 1);
        main.style.height = spacer + "px";
        const vh = viewHeight();
        scale = spacer < total && spacer > vh ? (total - vh) / (spacer - vh) : 1;
      }

      // The thumb's place is the conversation's place.
      function anchor() { offset = scroller.scrollTop * (scale - 1); }

      function setPosition(y) {
        const vh = viewHeight();
        y = Math.max(0, Math.min(y, total - vh));
        const top = scale > 1 ? y / scale : y;
        offset = y - top;
        lastTop = top;
        scroller.scrollTop = top;
        // The browser may round: keep the offset exact for what it took.
        offset = y - scroller.scrollTop;
        lastTop = scroller.scrollTop;
      }

      // A window of rows placed where the engine put them.
      // Each message's rows in a block of their own at the top the engine gave that message
      // (its first row's margin taken off), so that a message the browser draws a little
      // taller or shorter than the engine moves nothing after it.
      function place(data) {
        const el = document.createElement("div");
        el.className = "vw";
        const t = document.createElement("template");
        t.innerHTML = data.html;
        const blocks = [];
        let block = null;
        for (const node of Array.from(t.content.childNodes)) {
          if (node.nodeType === 1 && node.tagName === "B" && node.dataset.n) {
            block = document.createElement("div");
            block.className = data.avatars ? "c vm w" : "c vm";
            blocks.push(block);
            el.appendChild(block);
          }
          if (block) block.appendChild(node);
        }
        main.appendChild(el);
        // Blocks are placed from the window's own top, and the window where the view is: a
        // block's offset stays small. (Placed from the conversation's top, rows past ~33.5
        // million px — Chromium's largest layout coordinate — all landed on that limit, and a
        // million-message conversation showed nothing at its end.)
        const base = data.tops.length ? data.tops[0] : 0;
        const shifts = blocks.map((b) => { const first = b.children[1]; return first ? first.offsetTop : 0; });
        blocks.forEach((b, i) => { b.style.top = (data.tops[i] - base - shifts[i]) + "px"; });
        const old = win;
        win = { el, base, first: data.first, last: data.last, top: base, bottom: data.bottom, tops: data.tops };
        position();
        if (old) old.el.remove();
        state.windows++;
        if (marked) mark();
        if (onPlaced) onPlaced();
      }
      let onPlaced = null;

      function position() { if (win) win.el.style.top = (win.base - offset) + "px"; }

      // The message at the middle of the view.
      function current() {
        if (!win) return null;
        const y = scroller.scrollTop + offset + viewHeight() / 2;
        let k = 0;
        while (k + 1 < win.tops.length && win.tops[k + 1] <= y) k++;
        return win.first + k;
      }

      function update() {
        const n = current();
        if (label && n !== null) label.textContent = "message " + n.toLocaleString() + " of " + count.toLocaleString();
      }

      async function load(q, then) {
        if (loading) { if (then) queued = [q, then]; else again = true; return; }
        loading = true;
        try {
          const data = await get(q);
          if (data.width !== width) return;
          if (Math.abs(data.height - total) > 0.5) { setHeight(data.height); }
          count = data.count;
          if (then) then(data);
          place(data);
        } catch (e) {
          state.error = String(e.message || e);
          if (label) label.textContent = "could not load rows: " + state.error;
        } finally {
          loading = false;
          if (queued) { const [a, b] = queued; queued = null; load(a, b); } else if (again) { again = false; ensure(); }
          update();
        }
      }

      // The rows of the view and a screen on each side.
      function aroundView() {
        const y = scroller.scrollTop + offset, vh = viewHeight();
        return "y=" + Math.max(0, Math.floor(y - vh)) + "&h=" + Math.ceil(vh * 3);
      }

      // The window covers the view and a screen on each side, else the rows there are fetched.
      function ensure() {
        if (!virtual) return;
        const y = scroller.scrollTop + offset, vh = viewHeight();
        if (win && win.top <= Math.max(0, y - vh / 2) && win.bottom >= Math.min(total, y + vh * 1.5)) return;
        load(aroundView());
      }

      function onScroll() {
        if (!virtual) return;
        const st = scroller.scrollTop, moved = st - lastTop, vh = viewHeight();
        lastTop = st;
        if (scale > 1) {
          if (st <= 0) offset = 0;
          else if (st >= spacer - vh - 1) offset = total - spacer;
          else if (Math.abs(moved) > vh) anchor();
          else {
            const wanted = st * (scale - 1) - offset;
            offset += Math.sign(wanted) * Math.min(Math.abs(wanted), Math.abs(moved) * 0.5);
          }
          position();
        }
        ensure();
        update();
        if (onScrolled) onScrolled();
      }
      let onScrolled = null;

      // Jumps: to a message (centred), to a day (on top), to the newest (at the bottom).
      // `where`: "end", "centre" (the message in the middle), "top" (8 px below the top) or
      // "flush" (at the very top, where the server's first screen had it); `before` runs first.
      function jump(q, where, before) {
        virtual = true;
        return load(q, (data) => {
          if (before) before();
          if (where === "end") { setPosition(total); return; }
          const k = Math.max(0, data.target - data.first);
          const top = data.tops[k];
          const next = k + 1 < data.tops.length ? data.tops[k + 1] : data.bottom;
          setPosition(where === "centre" ? top - (viewHeight() - (next - top)) / 2 : where === "top" ? top - 8 : top);
        });
      }

      // The message opened with ?at=: outlined, its words marked.
      function mark() {
        const start = main.querySelector('b[data-n="' + marked.seq + '"]');
        if (!start) return;
        const rows = [];
        for (let n = start.nextElementSibling; n && !(n.tagName === "B" && n.dataset.n); n = n.nextElementSibling) rows.push(n);
        rows.forEach((el) => el.classList.add("hl"));
        const wanted = (marked.words || "").toLowerCase();
        if (!wanted) return;
        for (const el of rows) {
          const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
          const hits = [];
          for (let t = walker.nextNode(); t; t = walker.nextNode()) if (t.data.toLowerCase().includes(wanted)) hits.push(t);
          for (const t of hits) {
            const word = t.splitText(t.data.toLowerCase().indexOf(wanted));
            word.splitText(wanted.length);
            const m = document.createElement("mark");
            word.parentNode.replaceChild(m, word);
            m.appendChild(word);
          }
        }
      }

      // A new width: the engine lays the conversation out again; the message on top stays on top.
      let resizing = 0;
      function onResize() {
        clearTimeout(resizing);
        resizing = setTimeout(() => {
          const w = columnWidth();
          if (!virtual || w === width) { setHeight(total); anchor(); position(); ensure(); return; }
          const y = scroller.scrollTop + offset;
          let k = 0;
          while (win && k + 1 < win.tops.length && win.tops[k + 1] <= y) k++;
          const seq = win ? win.first + k : null, into = win ? y - win.tops[k] : 0;
          width = w;
          state.relayouts++;
          if (seq === null) { jump("", "end"); return; }
          load("at=" + seq, (data) => setPosition(data.tops[data.target - data.first] + into));
        }, 120);
      }

      // Start: the server's rows stay until the layout is there, then the same place, virtual.
      function start() {
        width = columnWidth();
        main.classList.add("virtual");
        const flow = Array.from(main.childNodes);
        state.mode = "virtual";
        let q = "", where = "end";
        if (main.dataset.at) { q = "at=" + main.dataset.at; where = "centre"; }
        else if (main.dataset.date) { q = "date=" + encodeURIComponent(main.dataset.date); where = "flush"; }
        else if (main.dataset.newest !== "true") {
          const b = main.querySelector("b[data-n]");
          if (b) { q = "at=" + b.dataset.n; where = "flush"; }
        }
        jump(q, where, () => flow.forEach((n) => n.remove()));
      }

      const day = document.getElementById("day");
      if (day) day.addEventListener("submit", (e) => {
        const v = day.querySelector("input[type=date]").value;
        if (!v) return;
        e.preventDefault();
        jump("date=" + v, "top");
      });
      // A month scrubber from the per-day counts: each month with its messages, to its first day.
      const months = document.getElementById("months");
      if (months) fetch("/api/v1/conversations/" + id + "/days?tz=UTC" + tokenPart, { credentials: "same-origin" })
        .then((r) => r.ok ? r.json() : null).then((data) => {
          if (!data || !data.days.length) return;
          const byMonth = new Map();
          for (const d of data.days) {
            const m = d.date.slice(0, 7);
            const e = byMonth.get(m) || { first: d.date, count: 0 };
            e.count += d.count;
            byMonth.set(m, e);
          }
          const names = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
          const none = document.createElement("option");
          none.textContent = "Month…"; none.value = "";
          months.appendChild(none);
          for (const [m, e] of byMonth) {
            const o = document.createElement("option");
            o.value = e.first;
            o.textContent = names[Number(m.slice(5, 7)) - 1] + " " + m.slice(0, 4) + " · " + e.count.toLocaleString("en");
            months.appendChild(o);
          }
          months.hidden = false;
          months.addEventListener("change", () => { if (months.value) jump("date=" + months.value, "top"); });
          // The calendar: a month of days, those with messages as buttons with a dot as big as
          // their share of the month's busiest day; ‹ › go through the months that have any.
          const cal = document.getElementById("calendar");
          if (!cal) return;
          const counts = new Map(data.days.map((d) => [d.date, d.count]));
          const keys = Array.from(byMonth.keys());
          const monthName = new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric", timeZone: "UTC" });
          const dayName = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
          const weekday = new Intl.DateTimeFormat(undefined, { weekday: "narrow", timeZone: "UTC" });
          let shown = keys.length - 1;
          const render = () => {
            const key = keys[shown], y = Number(key.slice(0, 4)), m = Number(key.slice(5, 7)) - 1;
            const first = new Date(Date.UTC(y, m, 1)), days = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
            let busiest = 1;
            for (let d = 1; d <= days; d++) busiest = Math.max(busiest, counts.get(key + "-" + String(d).padStart(2, "0")) || 0);
            cal.textContent = "";
            const head = document.createElement("div");
            head.className = "calhead";
            const prev = document.createElement("button"), next = document.createElement("button"), title = document.createElement("span");
            prev.type = next.type = "button";
            prev.textContent = "‹"; next.textContent = "›";
            prev.setAttribute("aria-label", "Previous month with messages"); next.setAttribute("aria-label", "Next month with messages");
            prev.disabled = shown === 0; next.disabled = shown === keys.length - 1;
            prev.addEventListener("click", () => { shown--; render(); });
            next.addEventListener("click", () => { shown++; render(); });
            title.textContent = monthName.format(first);
            head.append(prev, title, next);
            const grid = document.createElement("div");
            grid.className = "calgrid";
            grid.setAttribute("role", "grid");
            grid.setAttribute("aria-label", monthName.format(first));
            for (let k = 0; k < 7; k++) {
              const w = document.createElement("span");
              w.className = "wd";
              w.textContent = weekday.format(new Date(Date.UTC(2024, 0, 1 + k)));   // 1 January 2024 was a Monday
              grid.appendChild(w);
            }
            for (let k = 0; k < (first.getUTCDay() + 6) % 7; k++) grid.appendChild(document.createElement("span"));
            for (let d = 1; d <= days; d++) {
              const date = key + "-" + String(d).padStart(2, "0"), n = counts.get(date) || 0;
              const cell = document.createElement(n ? "button" : "span");
              cell.className = "cd";
              cell.textContent = String(d);
              if (n) {
                cell.type = "button";
                cell.dataset.date = date;
                cell.setAttribute("aria-label", dayName.format(new Date(date + "T00:00:00Z")) + ": " + n.toLocaleString() + (n === 1 ? " message" : " messages"));
                const dot = document.createElement("i");
                dot.className = "dot s" + Math.max(1, Math.ceil(3 * n / busiest));
                cell.appendChild(dot);
                cell.addEventListener("click", () => {
                  const panel = cal.closest("details");
                  if (panel) panel.open = false;
                  jump("date=" + date, "top");
                });
              }
              grid.appendChild(cell);
            }
            cal.append(head, grid);
          };
          render();
          cal.hidden = false;
        });
      const newest = document.getElementById("newest");
      if (newest) newest.addEventListener("click", (e) => { e.preventDefault(); jump("", "end"); });
      const themes = document.getElementById("themes");
      if (themes) themes.querySelector("select").addEventListener("change", () => themes.submit());

      // The live conversation: the composer, the socket, messages on their way.
      //
      // A message typed and added shows at once in the outbox below the conversation
      // ("Sending…"), goes over the socket with a UUID made here (kept in localStorage until the
      // server acknowledges it, so a reload or a lost connection sends the same id again — the
      // server stores it once), then "Sent" once committed; its row then comes in the
      // conversation like everyone else's: every committed change arrives on the socket in
      // revision order, and the window of rows is fetched again (the newest when the reader is
      // at the bottom or it is their own message, else a "new messages" pill). The socket
      // reconnects with back-off and asks for everything after the last revision it had.
      const liveBox = document.getElementById("live");
      if (liveBox) setupLive();
      function setupLive() {
        liveBox.hidden = false;
        const text = document.getElementById("text"), form = document.getElementById("composer");
        const sendas = document.getElementById("sendas"), photo = document.getElementById("photo");
        const outboxEl = document.getElementById("outbox"), cerr = document.getElementById("cerr");
        const pill = document.getElementById("pill"), typingEl = document.getElementById("typing"), typingName = document.getElementById("typingname");
        const banner = document.getElementById("banner"), bannerText = document.getElementById("bannertext");
        const actions = document.getElementById("actions");
        const maxText = Number(main.dataset.maxText) || 65536;
        const api = "/api/v1/conversations/" + id;
        const storeKey = "bk-outbox-" + id;
        const owner = sendas.options.length ? sendas.options[0].value : "";
        const live = { rev: Number(main.dataset.rev) || 0, ws: null, ready: false, backoff: 250, mode: null, fresh: 0 };
        const outbox = new Map();
        state.live = { sent: 0, acked: 0, changes: 0, connects: 0, typing: 0, typingLog: [] };
        window.bubbleViewer.live = {
          rev: () => live.rev, ready: () => live.ready, drop: () => { if (live.ws) live.ws.close(); },
          outbox: () => Array.from(outbox.values()).map((o) => ({ id: o.body.clientId, state: o.state, text: o.body.text || "", seq: o.seq || null })),
        };

        // Sending as someone is seeing the conversation from their side: theirs on the right.
        const remembered = viewAs || sessionStorage.getItem("bk-sendas-" + id);
        if (remembered && Array.from(sendas.options).some((o) => o.value === remembered)) sendas.value = remembered;
        const side = () => { viewAs = sendas.value === owner ? "" : sendas.value; };
        side();
        sendas.addEventListener("change", () => {
          sessionStorage.setItem("bk-sendas-" + id, sendas.value);
          side();
          for (const o of outbox.values()) if (o.el) o.el.classList.toggle("in", o.body.sender !== sendas.value);
          jump("", "end");
        });

        function uuid() {
          if (crypto.randomUUID) return crypto.randomUUID();
          const b = crypto.getRandomValues(new Uint8Array(16));
          b[6] = (b[6] & 15) | 64; b[8] = (b[8] & 63) | 128;
          const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
          return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
        }
        const kb = (n) => (n / 1024).toFixed(n < 10240 ? 1 : 0) + " KB";
        function save() {
          const waiting = Array.from(outbox.values()).filter((o) => o.state !== "sent" && (o.body.text || o.body.photo)).map((o) => o.body);
          if (waiting.length) localStorage.setItem(storeKey, JSON.stringify(waiting)); else localStorage.removeItem(storeKey);
        }

        // A message on its way, as a bubble of the outbox.
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
        function show(o) {
          o.el.classList.toggle("failed", o.state === "failed");
          o.el.dataset.state = o.state;
          o.label.textContent = o.state === "sending" ? "Sending…" : o.state === "sent" ? "Sent" : "Failed — " + (o.error || "not sent") + " ";
          if (o.state === "failed") {
            const retry = document.createElement("button");
            retry.type = "button"; retry.textContent = "Retry";
            retry.addEventListener("click", () => { o.state = "sending"; show(o); transmit(o); });
            o.label.appendChild(retry);
          }
        }
        function transmit(o) {
          clearTimeout(o.timer);
          if (!o.body.text && !o.body.photo) { o.state = "failed"; o.error = "the photo did not upload; choose it again"; show(o); return; }
          // No answer in 10 s (no socket, or no acknowledgement): failed, with a retry.
          o.timer = setTimeout(() => { if (o.state === "sending") { o.state = "failed"; o.error = "no answer from the server"; show(o); } }, 10000);
          if (live.ws && live.ready) { live.ws.send(JSON.stringify(Object.assign({ type: "send" }, o.body))); state.live.sent++; }
        }
        function submit(body, label) {
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
            const wait = live.backoff * (0.75 + Math.random() * 0.5);
            live.backoff = Math.min(live.backoff * 2, 10000);
            setTimeout(connect, wait);
          };
        }
        function frame(f) {
          if (f.type === "ready") {
            live.ready = true; live.backoff = 250; state.live.connects++;
            for (const o of outbox.values()) if (o.state === "sending") transmit(o);
          } else if (f.type === "change") change(f);
          else if (f.type === "ack") acked(f);
          else if (f.type === "error") refused(f);
          else if (f.type === "typing") typing(f);
        }
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
        function refused(f) {
          const o = outbox.get(f.ref);
          if (!o) { cerr.textContent = f.error; return; }
          clearTimeout(o.timer);
          if (f.status === 429) { setTimeout(() => transmit(o), 600); return; }
          o.state = "failed"; o.error = f.error; show(o); save();
        }
        function forget(o) { if (o.el) o.el.remove(); outbox.delete(o.body.clientId); }
        function settle() {
          for (const o of Array.from(outbox.values())) {
            if (o.state === "sent" && main.querySelector('b[data-n="' + o.seq + '"]')) forget(o);
          }
        }
        onPlaced = settle;

        // A committed change: the rows fetched again where it shows.
        let refreshTimer = 0, wantEnd = false, wantHere = false;
        const atBottom = () => !win || scroller.scrollTop + offset + viewHeight() >= total - 60;
        function change(f) {
          if (f.rev <= live.rev) return;
          live.rev = f.rev; state.live.changes++;
          const m = f.message;
          // The typist's own change hides the indicator, unless it is older than what they were
          // typing when the indicator came (their previous message, arriving after the frame).
          if (typingFrom === m.sender && f.rev > typingRev) hideTyping("message");
          if (f.kind === "message" && !outbox.has(m.clientId)) {
            // Said aloud by screen readers (the visible rows come and go as windows load).
            const who = (m.senderName || m.sender || "") + ": ", text = m.text || (m.attachments && m.attachments.length ? "a photo or file" : "");
            const line = document.createElement("p");
            line.textContent = "New message from " + who + text;
            const announce = document.getElementById("announce");
            if (announce) { announce.appendChild(line); while (announce.childNodes.length > 5) announce.firstChild.remove(); }
          }
          if (f.kind === "message") seen(m.seq);
          if (f.kind === "message" && (!win || win.last === null || m.seq > win.last)) {
            if (atBottom() || outbox.has(m.clientId)) wantEnd = true;
            else {
              live.fresh++; wantHere = true;
              pill.textContent = live.fresh + " new message" + (live.fresh > 1 ? "s" : "") + " ↓";
              pill.hidden = false;
            }
          } else if (win && m.seq >= win.first && m.seq <= win.last) {
            // A reader at the bottom stays there (an edit or a reaction may make the rows taller).
            if (atBottom()) wantEnd = true; else wantHere = true;
          }
          clearTimeout(refreshTimer);
          refreshTimer = setTimeout(refresh, 30);
        }
        function refresh() {
          if (loading || queued) { refreshTimer = setTimeout(refresh, 60); return; }
          if (wantEnd) { wantEnd = wantHere = false; jump("", "end"); }
          else if (wantHere) { wantHere = false; load(aroundView()); }
        }
        pill.addEventListener("click", () => { pill.hidden = true; live.fresh = 0; jump("", "end"); });
        onScrolled = () => { if (!pill.hidden && atBottom()) { pill.hidden = true; live.fresh = 0; } };

        // Who is typing (told by the server; gone after 4 s or with their message). The frame's
        // rev is the newest change the typist had made or seen.
        let typingTimer = 0, typingFrom = null, typingRev = 0, lastTyping = 0;
        function typing(f) {
          typingFrom = f.sender; typingRev = f.rev || 0;
          typingName.textContent = f.name + " is typing…";
          typingEl.hidden = false; state.live.typing++;
          state.live.typingLog.push({ sender: f.sender, rev: typingRev, hidden: null });
          clearTimeout(typingTimer);
          typingTimer = setTimeout(() => hideTyping("timeout"), 4000);
        }
        function hideTyping(why) {
          if (typingFrom !== null) state.live.typingLog[state.live.typingLog.length - 1].hidden = why;
          typingEl.hidden = true; typingFrom = null;
        }

        // The composer: grows with its text; Enter adds, Shift+Enter is a new line.
        function grow() { text.style.height = "auto"; text.style.height = Math.min(text.scrollHeight, 160) + "px"; }
        text.addEventListener("input", () => {
          grow(); cerr.textContent = "";
          const now = Date.now();
          if (text.value.trim() && now - lastTyping > 1500 && live.ready) {
            lastTyping = now;
            live.ws.send(JSON.stringify({ type: "typing", sender: sendas.value }));
          }
        });
        text.addEventListener("keydown", (e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); add(); }
          else if (e.key === "Escape") setMode(null);
        });
        form.addEventListener("submit", (e) => { e.preventDefault(); add(); });
        function add() {
          const value = text.value;
          cerr.textContent = "";
          if (!value.trim()) return;
          const bytes = new TextEncoder().encode(value).length;
          if (bytes > maxText) { cerr.textContent = "This message is " + kb(bytes) + "; a message may have at most " + kb(maxText) + "."; return; }
          if (live.mode && live.mode.kind === "edit") {
            request("PATCH", "/messages/" + live.mode.seq, { text: value, sender: sendas.value });
          } else {
            const body = { clientId: uuid(), text: value, sender: sendas.value };
            if (live.mode && live.mode.kind === "reply") body.replyTo = live.mode.seq;
            submit(body);
          }
          text.value = ""; grow(); setMode(null);
          lastTyping = 0;   // the next words typed are news again
          if (!atBottom()) jump("", "end");
        }
        photo.addEventListener("change", async () => {
          const file = photo.files[0];
          photo.value = "";
          if (!file) return;
          const body = { clientId: uuid(), sender: sendas.value };
          if (text.value.trim()) body.text = text.value;
          text.value = ""; grow();
          const o = { body, state: "sending" };
          outbox.set(body.clientId, o);
          bubble(o, "📷 " + file.name + (body.text ? "\n" + body.text : ""));
          try {
            const r = await fetch(api + "/photos" + tokenQuery, { method: "POST", body: file, credentials: "same-origin",
                                                              headers: { "Content-Type": file.type || "application/octet-stream" } });
            const answer = await r.json();
            if (!r.ok) throw new Error(answer.error || String(r.status));
            body.photo = answer.photo;
            save(); transmit(o);
          } catch (err) { o.state = "failed"; o.error = String(err.message || err); show(o); }
        });

        // Edits, deletions and reactions go through the JSON API; everyone (this page too) sees
        // them arrive on the socket.
        async function request(method, path, body) {
          try {
            const r = await fetch(api + path + (path.includes("?") ? tokenPart : tokenQuery), {
              method, credentials: "same-origin", headers: body ? { "Content-Type": "application/json" } : {},
              body: body ? JSON.stringify(body) : undefined });
            if (!r.ok) { const answer = await r.json().catch(() => ({})); cerr.textContent = answer.error || ("refused (" + r.status + ")"); }
          } catch (err) { cerr.textContent = "No answer from the server: " + (err.message || err); }
        }
        function setMode(mode) {
          live.mode = mode;
          banner.hidden = !mode;
          if (!mode) return;
          bannerText.textContent = mode.kind === "edit" ? "Editing your message" : "Replying to " + (mode.name || "") + ": " + (mode.snippet || "");
          text.focus();
        }
        document.getElementById("bannercancel").addEventListener("click", () => { if (live.mode && live.mode.kind === "edit") text.value = ""; setMode(null); });

        // A message's actions: reactions, reply, and edit/delete for its author.
        let acting = null;
        main.addEventListener("click", async (e) => {
          if (e.target.closest("a")) return;
          const block = e.target.closest(".vm");
          const marker = block && block.querySelector("b[data-n]");
          if (!marker) return;
          const seq = Number(marker.dataset.n);
          const r = await fetch(api + "/messages?at=" + seq + "&limit=1" + tokenPart, { credentials: "same-origin" });
          const data = r.ok ? await r.json() : null;
          const m = data && data.messages.find((x) => x.seq === seq);
          if (!m || m.side === "system") return;
          acting = m;
          const mine = m.sender === sendas.value, gone = !!m.deleted || (m.attachments || []).some((a) => a.kind === "deleted");
          for (const b of actions.querySelectorAll(".re")) {
            const r2 = (m.reactions || []).find((x) => x.emoji === b.dataset.emoji);
            b.classList.toggle("on", !!(r2 && (r2.senders || []).includes(sendas.value)));
            b.hidden = gone;
          }
          actions.querySelector('[data-act="reply"]').hidden = gone;
          actions.querySelector('[data-act="edit"]').hidden = !mine || gone || !m.text;
          const del = actions.querySelector('[data-act="delete"]');
          del.hidden = !mine || gone; del.textContent = "Delete";
          actions.hidden = false;
          actions.style.left = Math.max(8, Math.min(e.clientX, window.innerWidth - actions.offsetWidth - 8)) + "px";
          actions.style.top = Math.max(8, e.clientY - actions.offsetHeight - 8) + "px";
          e.stopPropagation();
        });
        actions.addEventListener("click", (e) => {
          const b = e.target.closest("button");
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
          actions.hidden = true; acting = null;
        });
        document.addEventListener("click", (e) => { if (!actions.hidden && !actions.contains(e.target)) { actions.hidden = true; acting = null; } });
        document.addEventListener("keydown", (e) => { if (e.key === "Escape") { actions.hidden = true; acting = null; } });

        connect();
      }
      scroller.addEventListener("scroll", onScroll, { passive: true });
      window.addEventListener("resize", onResize);
      start();
    })();
    """#
}
