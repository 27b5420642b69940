/// The conversation page's one script (`/assets/viewer.js`, the only script the CSP allows):
/// the page arrives with a window of rows, server-rendered; the script adds the rows before and
/// after as the reader scrolls (fetched from `/c/ID/rows`, written by the same `HTMLRowWriter`),
/// keeps at most `keep` messages in the page (removing the far side, the view kept still), moves
/// the slider over the whole conversation with the reading position, and marks the message
/// opened with `?at=` (and the words of `&hl=`). Without it the page still reads, with links.
enum Viewer {
    static let script = #"""
    (() => {
      "use strict";
      const main = document.getElementById("rows");
      if (!main) return;
      const id = main.dataset.id;
      const min = Number(main.dataset.min), max = Number(main.dataset.max);
      let first = Number(main.dataset.first), last = Number(main.dataset.last);
      const step = 100, keep = 400, margin = 1500;
      const scrub = document.getElementById("scrub");
      const label = document.getElementById("range");
      const token = new URLSearchParams(location.search).get("token");
      const tokenPart = token ? "&token=" + encodeURIComponent(token) : "";
      let busy = false;
      const state = { loads: 0, trims: 0 };
      // For tests and the curious: where the page is.
      window.bubbleViewer = {
        state, first: () => first, last: () => last,
        messages: () => main.querySelectorAll("b[data-n]").length,
        current: () => current(),
      };

      const marker = (n) => main.querySelector('b[data-n="' + n + '"]');
      // The rows of message n: from its marker to the next one.
      function rowsOf(n) {
        const out = [];
        let node = marker(n);
        if (!node) return out;
        for (node = node.nextElementSibling; node && !(node.tagName === "B" && node.dataset.n); node = node.nextElementSibling) out.push(node);
        return out;
      }

      function parse(html) {
        const t = document.createElement("template");
        t.innerHTML = html;
        return t.content;
      }

      async function load(direction) {
        if (busy || (direction < 0 && first <= min) || (direction > 0 && last >= max)) return;
        busy = true;
        try {
          const q = direction < 0 ? "before=" + first : "after=" + last;
          const r = await fetch("/c/" + id + "/rows?" + q + "&limit=" + step + tokenPart, { credentials: "same-origin" });
          if (!r.ok) return;
          const data = await r.json();
          if (data.first === null) return;
          const rows = parse(data.html);
          if (direction < 0) {
            const before = document.documentElement.scrollHeight;
            main.insertBefore(rows, main.firstChild);
            window.scrollBy(0, document.documentElement.scrollHeight - before);
            first = data.first;
          } else {
            main.appendChild(rows);
            last = data.last;
          }
          state.loads++;
          trim(direction);
          update();
        } finally {
          busy = false;
        }
      }

      // At most `keep` messages: drop the side away from where the reader is going.
      function trim(direction) {
        const excess = (last - first + 1) - keep;
        if (excess <= 0) return;
        if (direction > 0) {
          const stop = marker(first + excess);
          if (!stop) return;
          const before = document.documentElement.scrollHeight;
          while (main.firstChild && main.firstChild !== stop) main.removeChild(main.firstChild);
          window.scrollBy(0, document.documentElement.scrollHeight - before);
          first += excess;
        } else {
          const start = marker(last - excess + 1);
          if (!start) return;
          while (start.nextSibling) main.removeChild(start.nextSibling);
          main.removeChild(start);
          last -= excess;
        }
        state.trims++;
      }

      // The message at the middle of the window.
      function current() {
        let found = first;
        for (const b of main.querySelectorAll("b[data-n]")) {
          const next = b.nextElementSibling;
          if (next && next.getBoundingClientRect().top > window.innerHeight / 2) break;
          found = Number(b.dataset.n);
        }
        return found;
      }

      function update() {
        if (scrub && document.activeElement !== scrub) scrub.value = String(current());
        if (label) label.textContent = "messages " + first + "–" + last + " of " + max + " in the page";
      }

      function onScroll() {
        const doc = document.documentElement;
        if (window.scrollY < margin) load(-1);
        else if (doc.scrollHeight - window.scrollY - window.innerHeight < margin) load(1);
        update();
      }

      // The message opened with ?at=: outlined, its words marked, in the middle of the window.
      function mark(n, words) {
        const rows = rowsOf(n);
        rows.forEach((el) => el.classList.add("hl"));
        if (words) {
          const wanted = words.toLowerCase();
          for (const el of rows) {
            const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
            const hits = [];
            for (let t = walker.nextNode(); t; t = walker.nextNode()) if (t.data.toLowerCase().includes(wanted)) hits.push(t);
            for (const t of hits) {
              const at = t.data.toLowerCase().indexOf(wanted);
              const word = t.splitText(at);
              word.splitText(wanted.length);
              const m = document.createElement("mark");
              word.parentNode.replaceChild(m, word);
              m.appendChild(word);
            }
          }
        }
        if (rows.length) rows[0].scrollIntoView({ block: "center" });
      }

      if (main.dataset.at) mark(Number(main.dataset.at), main.dataset.hl);
      else if (main.dataset.newest === "true") window.scrollTo(0, document.documentElement.scrollHeight);
      if (scrub) scrub.addEventListener("change", () => scrub.form.submit());
      window.addEventListener("scroll", onScroll, { passive: true });
      window.addEventListener("resize", update);
      update();
      onScroll();
    })();
    """#
}
