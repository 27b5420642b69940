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
          xhr.open("POST", "/api/v1/imports" + (token ? "?token=" + encodeURIComponent(token) : ""));
          bar.hidden = false; bar.value = 0; status.className = ""; status.textContent = "Uploading…";
          xhr.upload.onprogress = (p) => { if (p.lengthComputable) bar.value = p.loaded / p.total; };
          xhr.upload.onload = () => { bar.removeAttribute("value"); status.textContent = "Importing…"; };
          xhr.onload = () => {
            bar.hidden = true;
            let answer = {};
            try { answer = JSON.parse(xhr.responseText); } catch (_) {}
            if (xhr.status >= 200 && xhr.status < 300) {
              status.textContent = "Imported " + answer.added + " messages into “" + answer.title + "”.";
              location.href = "/c/" + answer.id + (token ? "?token=" + encodeURIComponent(token) : "");
            } else {
              status.className = "err";
              status.textContent = answer.error || ("The upload failed (" + xhr.status + ").");
            }
          };
          xhr.onerror = () => { bar.hidden = true; status.className = "err"; status.textContent = "The upload failed: no answer from the server."; };
          xhr.send(body);
        });
      }

      const main = document.getElementById("rows");
      const scroller = document.getElementById("scroller");
      if (!main || !scroller) return;
      const id = main.dataset.id, theme = main.dataset.theme;
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
        current: () => current(), busy: () => loading || queued !== null, goTo: (seq) => jump("at=" + seq, "centre"),
      };

      function columnWidth() { return Math.round(main.getBoundingClientRect().width); }
      const viewHeight = () => scroller.clientHeight;

      async function get(q) {
        for (;;) {
          state.fetches++;
          const r = await fetch("/c/" + id + "/view?width=" + width + "&theme=" + encodeURIComponent(theme) + "&" + q + tokenPart, { credentials: "same-origin" });
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
        const shifts = blocks.map((b) => { const first = b.children[1]; return first ? first.offsetTop : 0; });
        blocks.forEach((b, i) => { b.style.top = (data.tops[i] - shifts[i]) + "px"; });
        const old = win;
        win = { el, first: data.first, last: data.last, top: data.tops.length ? data.tops[0] : 0, bottom: data.bottom, tops: data.tops };
        position();
        if (old) old.el.remove();
        state.windows++;
        if (marked) mark();
      }

      function position() { if (win) win.el.style.top = (-offset) + "px"; }

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
        if (label && n !== null) label.textContent = "message " + n + " of " + count;
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

      // The window covers the view and a screen on each side, else the rows there are fetched.
      function ensure() {
        if (!virtual) return;
        const y = scroller.scrollTop + offset, vh = viewHeight();
        if (win && win.top <= Math.max(0, y - vh / 2) && win.bottom >= Math.min(total, y + vh * 1.5)) return;
        load("y=" + Math.max(0, Math.floor(y - vh)) + "&h=" + Math.ceil(vh * 3));
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
      }

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
        });
      const newest = document.getElementById("newest");
      if (newest) newest.addEventListener("click", (e) => { e.preventDefault(); jump("", "end"); });
      const themes = document.getElementById("themes");
      if (themes) themes.querySelector("select").addEventListener("change", () => themes.submit());
      scroller.addEventListener("scroll", onScroll, { passive: true });
      window.addEventListener("resize", onResize);
      start();
    })();
    """#
}
