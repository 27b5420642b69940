import BubbleTestSupport
import Foundation
import Testing

/// The viewer as a messaging app, in Chromium at a desktop's and a phone's size: the list of
/// conversations beside the open one, its header and toolbar, search → hit → back, the export
/// menu, read-only archives, the keyboard.
@Suite("bubbles serve: the app in Chromium (WebDriver)", .serialized)
struct AppBrowserTests {
    enum Size: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case wide, phone
        var testDescription: String { self == .wide ? "1280×900" : "390×844" }
        var window: (Int, Int) { self == .wide ? (1280, 900) : (390, 844) }
    }

    static let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures")

    /// Whether the element `css` is drawn (has a box on screen).
    static func shown(_ b: WebDriver, _ css: String) throws -> Bool {
        try b.run(
            "const e = document.querySelector(arguments[0]); if (!e || !e.checkVisibility()) return false; const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0;",
            [css]) as? Bool ?? false
    }

    /// Texts of the frame whose contrast with what is behind them is under 4.5:1 (WCAG's
    /// relative luminance; the background is the nearest opaque one up the tree).
    static let contrast = """
        const lum = (c) => { const v = c.match(/[\\d.]+/g).map(Number); const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); };
          return { l: 0.2126 * f(v[0]) + 0.7152 * f(v[1]) + 0.0722 * f(v[2]), a: v.length > 3 ? v[3] : 1 }; };
        const back = (e) => { for (; e; e = e.parentElement) { const b = getComputedStyle(e).backgroundColor; if (lum(b).a > 0.9) return lum(b).l; }
          return lum(getComputedStyle(document.documentElement).backgroundColor).l; };
        const low = [];
        for (const sel of ['.sidehead .home', '.chat .t', '.chat .p', '.chat .k', '.chat time', '.head h1', '.head .meta', '.pager small', '.pager a', '.tool summary', '.ro', '#scheme']) {
          for (const e of document.querySelectorAll(sel)) {
            if (!e.checkVisibility()) continue;
            const f = lum(getComputedStyle(e).color).l, b = back(e);
            const ratio = (Math.max(f, b) + 0.05) / (Math.min(f, b) + 0.05);
            if (ratio < 4.5) low.push(sel + ' ' + ratio.toFixed(2));
          }
        }
        return low;
        """

    @Test(
        "the list beside the conversation (one pane at a time on a phone): titles, last lines, apps, sizes in the reader's locale; the header and toolbar; read-only archives without a composer, a live one with it; search → hit → back; the export menu opens and Esc closes it; / and the arrows walk the list",
        arguments: Size.allCases)
    func app(size: Size) throws {
        let server = try ServedStore(exports: [
            Self.fixtures.appendingPathComponent("telegram-single/result.json").path,
            Self.fixtures.appendingPathComponent("whatsapp-ios-group.txt").path
        ])
        defer { server.stop() }
        let made = try HTTP.request(
            port: server.port, method: "POST", path: "/api/v1/conversations",
            body: Data(#"{"title":"Dinner plans","participants":["Me","Ann"]}"#.utf8))
        #expect(made.status == 201)
        // Two messages in the live conversation before the reader comes: unread.
        for text in ["are we on for 8?", "I booked the table"] {
            let sent = try HTTP.request(
                port: server.port, method: "POST", path: "/api/v1/conversations/3/messages",
                body: try JSONSerialization.data(withJSONObject: ["clientId": UUID().uuidString, "text": text, "sender": "ann"]))
            #expect(sent.status == 201)
        }
        // An imported archive takes no live writes.
        let refused = try HTTP.request(
            port: server.port, method: "POST", path: "/api/v1/conversations/1/messages",
            body: try JSONSerialization.data(withJSONObject: ["clientId": UUID().uuidString, "text": "hi", "sender": "me"]))
        #expect(refused.status == 403 && refused.text.contains("read-only"), "\(refused.status) \(refused.text)")
        let b = try WebDriver(width: size.window.0, height: size.window.1)
        defer { b.quit() }
        let base = "http://127.0.0.1:\(server.port)"

        // The list: newest first, each with its app and size; numbers and dates rewritten for the reader.
        try b.open(base + "/")
        try b.wait(for: "the list", "return document.querySelectorAll('#library a.chat').length === 3;")
        #expect(try Self.shown(b, "#library"), "the list shows on \(size)")
        let items = try #require(
            try b.run(
                """
                return Array.from(document.querySelectorAll('#library a.chat')).map((a) => ({
                  title: a.querySelector('.t').textContent, line: a.querySelector('.p').textContent, kind: a.querySelector('.k').textContent,
                  count: a.querySelector('data').textContent, value: Number(a.querySelector('data').getAttribute('value')).toLocaleString() }));
                """) as? [[String: Any]])
        #expect(items.map { $0["title"] as? String ?? "" }.contains("Mira Chen"))
        let mira = try #require(items.first { $0["title"] as? String == "Mira Chen" })
        #expect((mira["kind"] as? String)?.hasPrefix("Telegram · ") == true && mira["count"] as? String == mira["value"] as? String, "\(mira)")
        #expect(items.contains { ($0["kind"] as? String)?.hasPrefix("WhatsApp · ") == true })
        #expect(items.contains { $0["title"] as? String == "Dinner plans" && ($0["kind"] as? String)?.hasPrefix("Live · ") == true })

        // Keyboard: / searches; Tab leads into the list (past the light/dark switch); ↓ moves; Enter opens.
        try b.press("/")
        #expect(try b.run("return document.activeElement.id") as? String == "findall")
        try b.press("\u{E004}")
        #expect(try b.run("return document.activeElement.classList.contains('chat')") as? Bool == true)
        let firstTitle = try b.run("return document.activeElement.querySelector('.t').textContent") as? String
        try b.press("\u{E015}")
        let second = try #require(try b.run("return document.activeElement.querySelector('.t').textContent") as? String)
        #expect(second != firstTitle, "↓ moved to the next conversation")
        try b.press("\u{E007}")
        try b.wait(for: "the conversation opened from the keyboard", "return location.pathname.startsWith('/c/') && !!document.querySelector('.head h1');")
        #expect(try b.run("return document.querySelector('.head h1').textContent") as? String == second)
        #expect(try b.run("return document.querySelector('#library a[aria-current=page] .t').textContent") as? String == second)

        // An imported archive: header, toolbar with named buttons, no composer, says read-only.
        let miraID = try #require(
            try b.run(
                "return Array.from(document.querySelectorAll('#library a.chat')).find((a) => a.querySelector('.t').textContent === 'Mira Chen').getAttribute('href')"
            ) as? String)
        try b.open(base + miraID)
        try b.wait(for: "Mira Chen's rows", "return !!document.querySelector('#rows b[data-n]') && !!window.bubbleViewer;")
        #expect(try b.run("return document.getElementById('announce').getAttribute('role')") as? String == "log", "new messages are said in a log")
        #expect(
            try b.run("return Array.from(document.querySelectorAll('.tools summary')).map((s) => s.getAttribute('aria-label')).join(',')") as? String
                == "Search,Date,Export,Theme")
        #expect(try b.run("return !!document.getElementById('composer')") as? Bool == false)
        #expect((try b.run("return document.querySelector('.ro').textContent") as? String)?.contains("Imported from Telegram · read-only") == true)
        #expect(try Self.shown(b, "#side") == (size == .wide), "the list beside the conversation only when there is room")
        #expect(try Self.shown(b, ".head .back") == (size == .phone), "a back button on a phone")
        // The header stays one band: nothing wraps into it.
        let headHeight = try #require(try b.run("return document.querySelector('.head').getBoundingClientRect().height") as? Double)
        #expect(headHeight < 90, "header \(headHeight) px tall")

        // Every control has an accessible name.
        let unnamed = try #require(
            try b.run(
                """
                const out = [];
                for (const e of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary')) {
                  const named = (e.getAttribute('aria-label') || '').trim() || (e.getAttribute('title') || '').trim() || (e.textContent || '').trim()
                    || (e.labels && e.labels.length) || (e.getAttribute('placeholder') || '').trim();
                  if (!named) out.push(e.outerHTML.slice(0, 80));
                }
                return out;
                """) as? [String])
        #expect(unnamed.isEmpty, "\(unnamed)")

        // Text contrast ≥ 4.5:1 in the frame, light and dark (the switch; kept for the site).
        for scheme in ["light", "dark"] {
            for _ in 0..<2 where try b.run("return document.documentElement.dataset.scheme || 'system'") as? String != scheme {
                try b.run("document.getElementById('scheme').click()")
            }
            #expect(try b.run("return document.documentElement.dataset.scheme") as? String == scheme)
            let low = try #require(try b.run(Self.contrast) as? [String])
            #expect(low.isEmpty, "\(scheme): \(low)")
        }
        let darkBackground = try b.run("return getComputedStyle(document.querySelector('.side')).backgroundColor") as? String
        #expect(darkBackground == "rgb(28, 28, 30)", "\(darkBackground ?? "nil")")
        try b.run("document.getElementById('scheme').click()")

        // The calendar: days with messages are buttons with a dot; one jumps there. (On a phone
        // the tools beyond search are behind ⋮.)
        if try Self.shown(b, "#moretools") { try b.click("#moretools") }
        try b.click(".tools details:nth-of-type(2) summary")
        let dayButton = try #require(
            try b.wait(for: "the calendar", "const c = document.querySelector('#calendar button.cd'); return c ? c.dataset.date : null;") as? String)
        #expect(dayButton == "2021-03-05")
        #expect(try b.run("return document.querySelector('#calendar button.cd .dot') !== null") as? Bool == true)
        try b.click("#calendar button.cd")
        try b.wait(
            for: "the jump to 5 March",
            "return !document.querySelectorAll('details.tool')[1].open && !bubbleViewer.busy() && !!document.querySelector('#rows b[data-n=\"1\"]');")

        // The export menu: a click opens it, Esc closes it.
        try b.click(".tools details:nth-of-type(3) summary")
        #expect(try Self.shown(b, "#export input[name=format]"))
        #expect(
            try b.run("return Array.from(document.querySelectorAll('#export input[name=format]')).map((r) => r.value + (r.checked ? '*' : '')).join(',')")
                as? String
                == "pdf*,png,html,json,csv")
        // The panel stays inside the window (on a phone too).
        let panel = try #require(
            try b.run("const r = document.querySelector('#export').getBoundingClientRect(); return [r.left, r.right, innerWidth];") as? [Double])
        #expect(panel[0] >= 0 && panel[1] <= panel[2], "the export panel spills out of the window: \(panel)")
        try b.press("\u{E00C}")
        #expect(try !Self.shown(b, "#export input[name=format]"), "Esc closes the menu")

        // Search from the list's field: hits grouped by conversation; a hit opens the message; back returns.
        try b.open(base + "/")
        try b.type("#findall", "eclipse\u{E007}")
        try b.wait(for: "the hits", "return location.pathname === '/search' && !!document.querySelector('.found .rgroup h2');")
        #expect((try b.run("return document.querySelector('.found .rgroup h2').textContent") as? String)?.hasPrefix("Mira Chen") == true)
        #expect(try Self.shown(b, "#side") == (size == .wide), "on a phone the results alone, not below the list")
        try b.click(".found a.rhit")
        try b.wait(for: "the hit in its conversation", "return !!document.querySelector('.c mark') && !!window.bubbleViewer && !bubbleViewer.busy();")
        try b.run("history.back()")
        try b.wait(for: "back at the hits", "return location.pathname === '/search' && !!document.querySelector('.found .rgroup h2');")

        // A live conversation: unread in the list until opened; it has the composer.
        try b.open(base + "/")
        #expect(
            try b.wait(for: "the unread count", "const u = document.querySelector('#library a[href=\"/c/3\"] .unread'); return u ? u.textContent : null;")
                as? String == "2")
        #expect((try b.run("return document.querySelector('#library a[href=\"/c/3\"] .p').textContent") as? String) == "I booked the table")
        try b.open(base + "/c/3")
        try b.wait(for: "the live conversation", "return !!document.getElementById('composer');")
        #expect(try Self.shown(b, "#composer"))
        #expect(try b.run("return !!document.querySelector('.ro')") as? Bool == false)
        try b.open(base + "/")
        try b.wait(for: "the list again", "return document.querySelectorAll('#library a.chat').length === 3;")
        #expect(try b.run("return !!document.querySelector('#library .unread')") as? Bool == false, "read once opened")
    }

    /// The scripts and style sheets the page loaded: name, bytes over the wire, status.
    static let assetsLoaded = """
        return performance.getEntriesByType('resource')
          .filter((e) => /\\/assets\\/[a-z-]+\\.[0-9a-f]{16}\\.(js|css)$/.test(new URL(e.name).pathname))
          .map((e) => ({ name: new URL(e.name).pathname, transfer: e.transferSize, body: e.decodedBodySize, status: e.responseStatus || 0 }));
        """

    @Test(
        "a second visit fetches no script or style sheet body: every module and sheet comes from the browser's cache (or a 304), and the page works as on the first"
    )
    func secondVisitCached() throws {
        let server = try ServedStore(exports: [Self.fixtures.appendingPathComponent("telegram-single/result.json").path])
        defer { server.stop() }
        let b = try WebDriver(width: 1000, height: 700)
        defer { b.quit() }
        let page = "http://127.0.0.1:\(server.port)/c/1"
        try b.open(page)
        try ViewerBrowserTests.settle(b, "the first visit")
        let first = try #require(try b.run(Self.assetsLoaded) as? [[String: Any]])
        let names = Set(first.compactMap { $0["name"] as? String })
        #expect(
            names.contains { $0.hasPrefix("/assets/app.") && $0.hasSuffix(".js") } && names.contains { $0.hasPrefix("/assets/scroller.") }
                && names.contains { $0.hasPrefix("/assets/app.") && $0.hasSuffix(".css") } && names.contains { $0.hasPrefix("/assets/theme-") },
            "\(names.sorted())")
        #expect(first.contains { ($0["transfer"] as? Int ?? 0) > 1_000 }, "the first visit downloaded nothing: \(first)")
        // A second visit: a new navigation to the page, as following a link to it.
        try b.run("location.href = arguments[0] + '?theme=imessage';", [page])
        try b.wait(for: "the second visit", "return location.search === '?theme=imessage' && document.readyState === 'complete';")
        try ViewerBrowserTests.settle(b, "the second visit")
        let second = try #require(try b.run(Self.assetsLoaded) as? [[String: Any]])
        #expect(Set(second.compactMap { $0["name"] as? String }) == names, "the second visit loaded other assets")
        for entry in second {
            let transfer = entry["transfer"] as? Int ?? -1, status = entry["status"] as? Int ?? 0
            #expect(transfer == 0 || status == 304, "\(entry["name"] ?? "?") was downloaded again (\(transfer) bytes, status \(status))")
            #expect(entry["body"] as? Int ?? 0 > 0, "\(entry["name"] ?? "?") is empty")
        }
        #expect(try b.run("return document.querySelectorAll('#rows .b').length") as? Int ?? 0 > 0)
    }

    @Test(
        "the messaging app's basics: at 390 px a 12-character title is not cut and ⋮ shows the other tools; the whatsapp theme keeps its pane colour; Alt+↓ opens the next chat, Esc closes it, the composer has the cursor on opening; screenshots at 1280 and 390 px, light and dark (docs/ with BUBBLEKIT_UPDATE_SCREENSHOTS=1)"
    )
    func basics() throws {
        let server = try ServedStore(exports: [
            Self.fixtures.appendingPathComponent("telegram-single/result.json").path,
            Self.fixtures.appendingPathComponent("whatsapp-ios-group.txt").path
        ])
        defer { server.stop() }
        let made = try HTTP.request(
            port: server.port, method: "POST", path: "/api/v1/conversations",
            body: Data(#"{"title":"Weekend trip","participants":["Me","Ann"]}"#.utf8))
        #expect(made.status == 201)
        for (text, sender) in [("are we still on for saturday?", "ann"), ("yes! I booked the cabin 🏕", "me"), ("bringing the board games", "ann")] {
            _ = try HTTP.request(
                port: server.port, method: "POST", path: "/api/v1/conversations/3/messages",
                body: try JSONSerialization.data(withJSONObject: ["clientId": UUID().uuidString, "text": text, "sender": sender]))
        }
        let base = "http://127.0.0.1:\(server.port)"
        let update = ProcessInfo.processInfo.environment["BUBBLEKIT_UPDATE_SCREENSHOTS"] == "1"
        let out =
            update ? Tool.root.appendingPathComponent("docs") : FileManager.default.temporaryDirectory.appendingPathComponent("bk-screens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { if !update { try? FileManager.default.removeItem(at: out) } }

        for (width, height, name) in [(1280, 800, "wide"), (390, 844, "phone")] {
            let b = try WebDriver(width: width, height: height)
            defer { b.quit() }
            for scheme in ["light", "dark"] {
                try b.open(base + "/c/3")
                try b.run("localStorage.setItem('bk-scheme', arguments[0]);", [scheme])
                try b.open(base + "/c/3")
                try ViewerBrowserTests.settle(b, "the live chat at \(width) px, \(scheme)")
                let cut = try b.run("const h = document.querySelector('.head h1'); return h.scrollWidth > h.clientWidth + 1;") as? Bool
                #expect(cut == false, "\(width) px: the title is cut")
                #expect(try b.run("return document.querySelector('.head h1').textContent") as? String == "Weekend trip")
                try b.screenshot().write(to: out.appendingPathComponent("app-\(name)\(scheme == "dark" ? "-dark" : "").png"))
            }
            if name == "phone" {
                #expect(try b.run("return getComputedStyle(document.querySelectorAll('.tools > .tool')[2]).display") as? String == "none")
                try b.click("#moretools")
                #expect(try b.run("return getComputedStyle(document.querySelectorAll('.tools > .tool')[2]).display") as? String != "none", "⋮ shows the tools")
                #expect(try b.run("return document.getElementById('moretools').getAttribute('aria-expanded')") as? String == "true")
            } else {
                #expect(try b.run("return document.activeElement && document.activeElement.id") as? String == "text", "the composer has the cursor")
                // Alt+↓: the next chat of the list; Esc closes it.
                let next =
                    try b.run(
                        "const l = Array.from(document.querySelectorAll('#library a.chat')); const i = l.findIndex((a) => a.getAttribute('aria-current') === 'page'); return l[i + 1] ? new URL(l[i + 1].href).pathname : null;"
                    ) as? String
                try b.run("document.activeElement.blur();")
                try b.press("\u{E015}", holding: "\u{E00A}")
                if let next { try b.wait(for: "the next chat", "return location.pathname === '\(next)';") }
                try ViewerBrowserTests.settle(b, "the next chat")
                try b.run("document.activeElement.blur();")
                try b.press("\u{E00C}")
                try b.wait(for: "the chat closed", "return location.pathname === '/';")
                // WhatsApp's pane colour behind its bubbles (light: #efeae2).
                try b.run("localStorage.setItem('bk-scheme', 'light');")
                try b.open(base + "/c/2?theme=whatsapp")
                try ViewerBrowserTests.settle(b, "the chat in whatsapp's theme")
                #expect(try b.run("return getComputedStyle(document.getElementById('scroller')).backgroundColor") as? String == "rgb(239, 234, 226)")
            }
        }
    }
}
