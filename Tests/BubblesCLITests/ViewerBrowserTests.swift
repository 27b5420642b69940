import BubbleCore
import BubbleRender
import BubbleTestSupport
import Foundation
import Testing

/// A long conversation written as BubbleKit JSON: `count` messages 37 minutes apart from
/// 2024-01-01 (about 77 days), sides and lengths varied, message 1234 says "magicword".
enum LongChat {
    static let start = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01T00:00:00Z
    static let words = "the quick brown fox jumps over lazy dog photo tonight dinner later maybe sure thing weekend beach coffee".split(separator: " ")

    static func date(_ seq: Int) -> Date { start.addingTimeInterval(Double(seq) * 37 * 60) }

    static func text(_ seq: Int) -> String {
        if seq == 1234 { return "1234: the magicword is here" }
        var g = UInt64(seq) &* 6364136223846793005 &+ 1442695040888963407
        func next() -> Int { g = g &* 6364136223846793005 &+ 1442695040888963407; return Int(g >> 33) }
        let n = [2, 4, 8, 15, 30, 60][next() % 6]
        return "\(seq): " + (0..<n).map { _ in String(words[next() % words.count]) }.joined(separator: " ")
    }

    static func write(_ count: Int, to url: URL) throws {
        let f = ISO8601DateFormatter()
        let messages = (1...count).map { seq -> [String: Any] in
            ["from": seq % 3 == 0 ? "me" : "ann", "date": f.string(from: date(seq)), "text": text(seq)]
        }
        let doc: [String: Any] = [
            "format": "bubblekit-conversation", "version": 1, "title": "Long chat", "me": "me",
            "participants": [["id": "me", "name": "Me"], ["id": "ann", "name": "Ann"]], "messages": messages
        ]
        try JSONSerialization.data(withJSONObject: doc).write(to: url)
    }
}

/// `bubbles serve` driven in Chromium through WebDriver (chromium-driver), as a reader uses it.
@Suite("bubbles serve in Chromium (WebDriver)", .serialized)
struct ViewerBrowserTests {
    static func temp() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-viewer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Waits until the viewer has placed its rows and fetches nothing more.
    static func settle(_ b: WebDriver, _ what: String) throws {
        try b.wait(
            for: what, timeout: 30,
            """
            const v = window.bubbleViewer;
            return !!(v && v.state.mode === "virtual" && v.state.windows > 0 && !v.busy());
            """)
        usleep(150_000)
        try b.wait(for: what + " (settled)", timeout: 30, "return !window.bubbleViewer.busy();")
    }

    /// The screen top of message `seq`'s first row, nil when it is not in the page.
    static func rowTop(_ b: WebDriver, _ seq: Int) throws -> Double? {
        try b.run(
            """
            const m = document.querySelector('b[data-n="' + arguments[0] + '"]');
            return m && m.nextElementSibling ? m.nextElementSibling.getBoundingClientRect().top : null;
            """, [seq]) as? Double
    }

    @Test(
        "a 3,000-message conversation: opens at the newest, the scrollbar maps to the conversation, rows never jump as windows load, a date, a search hit, a resize, a theme"
    )
    func scrollJumpSearchResizeTheme() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let chat = dir.appendingPathComponent("long.json")
        try LongChat.write(3000, to: chat)
        let server = try ServedStore(exports: [chat.path])
        defer { server.stop() }
        let b = try WebDriver(width: 900, height: 700)
        defer { b.quit() }
        let base = "http://127.0.0.1:\(server.port)"

        // Opens at the newest message, at the bottom of a column as tall as the conversation.
        try b.open(base + "/c/1")
        try Self.settle(b, "the conversation's rows")
        let g = try #require(
            try b.run(
                """
                const s = document.getElementById("scroller"), v = window.bubbleViewer;
                return {top: s.scrollTop, height: s.scrollHeight, view: s.clientHeight, total: v.total(), laidOut: v.laidOut(), scale: v.scale(), win: v.window()};
                """) as? [String: Any])
        let total = try #require(g["total"] as? Double), height = try #require(g["height"] as? Double), view = try #require(g["view"] as? Double)
        #expect(abs(height - total) <= 1, "the column is as tall as the layout: \(g)")
        #expect(abs((g["top"] as? Double ?? 0) + view - height) <= 2, "opened at the bottom: \(g)")
        #expect((g["win"] as? [String: Any])?["last"] as? Int == 3000)
        let lastTop = try #require(try Self.rowTop(b, 3000))
        #expect(lastTop > 0 && lastTop < 700, "the newest message is on screen: \(lastTop)")
        // … and not flush on the bottom edge: its bubble ends at least 12 px above it.
        let gap = try #require(
            try b.run(
                """
                const s = document.getElementById('scroller').getBoundingClientRect();
                const bubbles = Array.from(document.querySelectorAll('.vm')).pop().querySelectorAll('.b');
                return s.bottom - bubbles[bubbles.length - 1].getBoundingClientRect().bottom;
                """) as? Double)
        #expect(gap >= 12, "the newest bubble sits \(gap) px above the column's bottom")
        // The layout's height is the engine's (the same as the API's).
        let openWidth = try #require(try b.run("return bubbleViewer.width()") as? Double)
        let view0 = try #require(try server.get("/c/1/view?width=\(Int(openWidth))&at=1").json() as? [String: Any])
        #expect(abs((view0["height"] as? Double ?? 0) - (g["laidOut"] as? Double ?? -1)) < 0.01)
        #expect(abs(total - (g["laidOut"] as? Double ?? -1) - 16) < 0.01, "the column keeps 16 px under the newest message")

        // Dragging the thumb to the middle shows the middle of the conversation.
        try b.run("const s = document.getElementById('scroller'); s.scrollTop = (s.scrollHeight - s.clientHeight) / 2;")
        try Self.settle(b, "the middle")
        let middle = try #require(try b.run("return bubbleViewer.current()") as? Int)
        #expect((1300...1700).contains(middle), "the middle of the scrollbar shows message \(middle) of 3000")
        // While scrolling, the day of the message at the top floats over the column.
        let pill = try #require(
            try b.wait(
                for: "the date pill",
                """
                const p = document.querySelector('.datepill'); if (!p || p.hidden || !p.textContent) return null;
                const top = document.getElementById('scroller').getBoundingClientRect().top;
                const first = Array.from(document.querySelectorAll('.vm')).find((v) => v.getBoundingClientRect().bottom > top + 4);
                const t = first && first.querySelector('time[datetime]');
                return t ? [p.textContent, String(new Date(t.getAttribute('datetime')).getUTCDate()), String(new Date(t.getAttribute('datetime')).getUTCFullYear())] : null;
                """) as? [String])
        #expect(pill[0].contains(pill[1]) && pill[0].contains(pill[2]), "the pill says \(pill[0]) for a message of day \(pill[1]) \(pill[2])")

        // Scrolling in small steps across window loads: a row moves exactly as far as the scroll.
        var tracked = middle
        var jumps: [String] = []
        for step in 0..<14 {
            guard let before = try Self.rowTop(b, tracked) else { Issue.record("message \(tracked) not in the page"); break }
            try b.run("document.getElementById('scroller').scrollTop += 250;")
            try Self.settle(b, "step \(step)")
            if let after = try Self.rowTop(b, tracked) {
                if abs((before - 250) - after) > 1.5 { jumps.append("step \(step): message \(tracked) \(before) → \(after)") }
            } else {
                jumps.append("step \(step): message \(tracked) left the page")
            }
            tracked = try #require(try b.run("return bubbleViewer.current()") as? Int)
        }
        let windows = try #require(try b.run("return bubbleViewer.state.windows") as? Int)
        #expect(jumps.isEmpty, "\(jumps)")
        #expect(windows >= 3, "windows loaded while scrolling: \(windows)")

        // The top: message 1 in the page, at the top of the column.
        try b.run("document.getElementById('scroller').scrollTop = 0;")
        try Self.settle(b, "the top")
        let firstTop = try #require(try Self.rowTop(b, 1))
        let scrollerTop = try #require(try b.run("return document.getElementById('scroller').getBoundingClientRect().top") as? Double)
        #expect(firstTop >= scrollerTop - 1 && firstTop < scrollerTop + 60, "message 1 at the top: \(firstTop) vs \(scrollerTop)")

        // A day from the calendar: its first message at the top of the view.
        let day = LongChat.start.addingTimeInterval(40 * 86_400)
        let expected = Int((day.timeIntervalSince(LongChat.start) / (37 * 60)).rounded(.up))
        try b.run("const i = document.querySelector('#day input[type=date]'); i.value = '2024-02-10'; document.querySelector('#day button').click();")
        try b.wait(for: "the day's first message", "return !!document.querySelector('b[data-n=\"\(expected)\"]') && !bubbleViewer.busy();")
        let dayTop = try #require(try Self.rowTop(b, expected))
        #expect(dayTop >= scrollerTop - 1 && dayTop < scrollerTop + 40, "message \(expected) (the first of 10 February) at the top: \(dayTop)")
        let separator =
            try b.run(
                """
                const m = document.querySelector('b[data-n="\(expected)"]'); return m.nextElementSibling.textContent;
                """) as? String
        #expect(separator?.contains("February") == true, "a day separator opens the day: \(separator ?? "nil")")

        // The month scrubber from the per-day counts: every month with its messages; March → 1 March.
        let months = try #require(
            try b.wait(
                for: "the months",
                """
                const s = document.getElementById('months');
                return s && !s.hidden && s.options.length > 1 ? Array.from(s.options).slice(1).map((o) => o.textContent) : null;
                """) as? [String])
        #expect(months.count == 3 && months.first?.hasPrefix("January 2024 · ") == true, "\(months)")
        let counted = months.compactMap { Int($0.split(separator: "·").last!.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: "")) }
        #expect(counted.reduce(0, +) == 3000, "\(months)")
        let march = Int((60.0 * 1440 / 37).rounded(.up))
        try b.run("const s = document.getElementById('months'); s.selectedIndex = 3; s.dispatchEvent(new Event('change'));")
        try b.wait(for: "1 March", "return !!document.querySelector('b[data-n=\"\(march)\"]') && !bubbleViewer.busy();")
        let marchTop = try #require(try Self.rowTop(b, march))
        #expect(marchTop >= scrollerTop - 1 && marchTop < scrollerTop + 40, "message \(march) (the first of March) at the top: \(marchTop)")

        // Search: the hit opens the conversation at the message, its word marked and on screen.
        try b.open(base + "/search?q=magicword&conversation=1")
        try b.click(".found a.rhit")
        try Self.settle(b, "the search hit")
        let hit = try #require(
            try b.run(
                """
                const m = document.querySelector('.c mark'), s = document.getElementById('scroller').getBoundingClientRect();
                if (!m) return null;
                const r = m.getBoundingClientRect();
                return {text: m.textContent, inView: r.top >= s.top && r.bottom <= s.bottom, outlined: !!m.closest('.hl'), url: location.search};
                """) as? [String: Any], "no marked word")
        #expect(hit["text"] as? String == "magicword" && hit["inView"] as? Bool == true && hit["outlined"] as? Bool == true, "\(hit)")

        // Resize: the engine lays out at the new width; bubbles follow the theme's share of it,
        // and the message read stays in view.
        let reading = try #require(try b.run("return bubbleViewer.current()") as? Int)
        try b.resize(width: 480, height: 700)
        try b.wait(
            for: "the re-layout",
            "const m = document.getElementById('rows'); return bubbleViewer.state.relayouts > 0 && Math.abs(bubbleViewer.width() - m.getBoundingClientRect().width) < 1 && !bubbleViewer.busy();"
        )
        try Self.settle(b, "after the resize")
        let column = try #require(try b.run("return bubbleViewer.width()") as? Double)
        let widths = try #require(
            try b.run(
                """
                const s = document.getElementById('scroller').getBoundingClientRect();
                return Array.from(document.querySelectorAll('.c .b')).filter((e) => { const r = e.getBoundingClientRect(); return r.bottom > s.top && r.top < s.bottom; })
                  .map((e) => e.getBoundingClientRect().width);
                """) as? [Double])
        let style = try ThemeLibrary.load("imessage").theme.layoutStyle
        let widest = style.maxBubbleWidth(rowWidth: column)
        #expect(column < 481 && !widths.isEmpty)
        #expect(widths.allSatisfy { $0 <= widest + 1 }, "bubbles wider than \(widest) at \(column): \(widths)")
        #expect(widths.contains { $0 >= widest - 30 }, "long messages reach the share (\(widest)): \(widths)")
        let after = try #require(try b.run("return bubbleViewer.current()") as? Int)
        #expect(abs(after - reading) <= 3, "reading \(reading) before the resize, \(after) after")
        let relaid = try #require(try server.get("/c/1/view?width=\(Int(column))&at=1").json() as? [String: Any])
        #expect(abs((try b.run("return bubbleViewer.laidOut()") as? Double ?? 0) - (relaid["height"] as? Double ?? -1)) < 0.01)

        // A theme from the picker: the page in that theme's style sheet and bubbles.
        let colour =
            "return getComputedStyle(document.querySelector('.c .b.o') || document.querySelector('.c .b'), '::before').backgroundColor + '|' + getComputedStyle(document.querySelector('.c .b.o') || document.querySelector('.c .b')).backgroundColor;"
        let before = try b.run(colour) as? String
        try b.run("document.querySelector('#themes input[value=whatsapp]').click();")
        try b.wait(for: "the WhatsApp theme", "return document.getElementById('rows') && document.getElementById('rows').dataset.theme === 'whatsapp';")
        try Self.settle(b, "the rows in WhatsApp's theme")
        #expect(
            (try b.run("return document.querySelector('link[rel=stylesheet]').getAttribute('href')") as? String)?.wholeMatch(
                of: #/\/assets\/theme-whatsapp\.[0-9a-f]{16}\.css/#) != nil)
        #expect(try b.run(colour) as? String != before, "the bubbles look the same in both themes: \(before ?? "")")
        // Kept: the page's address has no theme, and opened again (another visit) it is WhatsApp's.
        #expect((try b.run("return location.search") as? String)?.contains("theme=") == false)
        #expect((try server.get("/api/v1/settings").json() as? [String: Any])?["theme"] as? String == "whatsapp")
        try b.open("http://127.0.0.1:\(server.port)/c/1")
        try b.wait(for: "the page again", "return document.getElementById('rows') && document.getElementById('rows').dataset.theme === 'whatsapp';")
    }

    @Test("the library: an upload imports a WhatsApp export and opens it; an upload that is not an export shows the importer's error and changes nothing")
    func upload() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ServedStore(exports: [])
        defer { server.stop() }
        let b = try WebDriver(width: 1000, height: 700)
        defer { b.quit() }
        let base = "http://127.0.0.1:\(server.port)"
        try b.open(base + "/")
        let fixtures = Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures")
        // Not an export: the importer's words, the library unchanged.
        try b.type("#file", fixtures.appendingPathComponent("not-a-chat.txt").path)
        try b.click("#upload button")
        let error = try #require(
            try b.wait(for: "the importer's error", "const s = document.getElementById('status'); return s.className === 'err' ? s.textContent : null;")
                as? String)
        #expect(error.contains("not-a-chat.txt: line 1") && error.contains("is not the start of a known export"), "\(error)")
        #expect((try server.get("/api/v1/conversations").json() as? [Any])?.count == 0)
        // A WhatsApp export: imported, then open.
        try b.run("document.getElementById('file').value = '';")
        try b.type("#file", fixtures.appendingPathComponent("whatsapp-ios-group.txt").path)
        try b.click("#upload button")
        try b.wait(for: "the imported conversation", "return /\\/c\\/\\d+$/.test(location.pathname);")
        try Self.settle(b, "the imported conversation's rows")
        let list = try #require(try server.get("/api/v1/conversations").json() as? [[String: Any]])
        #expect(list.count == 1 && (list.first?["messageCount"] as? Int ?? 0) > 3)
        let text = try b.run("return document.getElementById('rows').textContent") as? String ?? ""
        let newest = try #require(
            ((try server.get("/api/v1/conversations/1/messages?limit=1").json() as? [String: Any])?["messages"] as? [[String: Any]])?.first?["text"] as? String)
        #expect(text.contains(String(newest.prefix(20))), "the newest message \(newest) is on the page")
    }

    @Test(
        "the library: uploading a whole phone's SMS backup imports every conversation, shows them done one after another, then the summary and the library with all of them"
    )
    func uploadWholeBackup() throws {
        let server = try ServedStore(exports: [])
        defer { server.stop() }
        let b = try WebDriver(width: 1000, height: 700)
        defer { b.quit() }
        try b.open("http://127.0.0.1:\(server.port)/")
        try b.type("#file", Tool.root.appendingPathComponent("Tests/BubbleImportTests/Fixtures/sms/sms-backup.xml").path)
        try b.click("#upload button")
        let status = try #require(
            try b.wait(for: "the summary", "const s = document.getElementById('status'); return s.dataset.done === '1' ? s.textContent : null;") as? String)
        #expect(status.contains("3 conversations: 3 new, 0 grown, 0 unchanged; 10 messages added"), "\(status)")
        // The server told the page how far it was, conversation after conversation.
        let progress = try #require(try b.run("return JSON.stringify(window.bkImportProgress)") as? String)
        let steps = try #require(try JSONSerialization.jsonObject(with: Data(progress.utf8)) as? [[String: Int]])
        #expect(steps.map { $0["done"] ?? -1 } == [0, 1, 2], "\(progress)")
        #expect(steps.allSatisfy { $0["total"] == 3 }, "\(progress)")
        // The library on the page lists the three, linked.
        try b.wait(for: "the library's rows", "return document.querySelectorAll('#library a[href^=\"/c/\"]').length === 3 ? true : null;")
        let titles = try #require(try b.run("return [...document.querySelectorAll('#library a')].map((a) => a.textContent).join('|')") as? String)
        #expect(titles.contains("Ann Lee (+15550102000)") && titles.contains("+15550109876"), "\(titles)")
        #expect((try server.get("/api/v1/conversations").json() as? [Any])?.count == 3)
    }

    @Test("hostile text, names, links, file names and titles: no script runs in the browser, no request leaves loopback")
    func hostileContent() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let hostile = dir.appendingPathComponent("hostile.json")
        let payloads = [
            "<script>window.pwned1=1</script>", "<img src=x onerror=\"window.pwned2=1\">",
            "<svg onload=\"window.pwned3=1\"><circle r=9></svg>", "<a href=\"javascript:window.pwned4=1\">click</a> javascript:window.pwned4=1",
            "https://x.example/\"onmouseover=\"window.pwned5=1 https://x.example/'><script>window.pwned5=1</script>",
            "<iframe srcdoc=\"<script>parent.pwned6=1</script>\"></iframe>", "</main></div><script>window.pwned7=1</script>",
            "<img src=\"https://evil.example/x.png\"> <link rel=stylesheet href=\"https://evil.example/x.css\"> xsswordhere"
        ]
        let messages = payloads.enumerated().map { i, p -> [String: Any] in
            [
                "from": i % 2 == 0 ? "x" : "me", "date": "2026-01-01T10:0\(i):00Z", "text": p,
                "attachment": ["kind": "document", "fileName": "<img src=x onerror=window.pwned8=1>.pdf"]
            ]
        }
        let doc: [String: Any] = [
            "format": "bubblekit-conversation", "version": 1, "title": "<script>window.pwned9=1</script>", "me": "me",
            "participants": [["id": "me", "name": "Me"], ["id": "x", "name": "\"><img src=x onerror=window.pwned10=1>"]],
            "messages": messages
        ]
        try JSONSerialization.data(withJSONObject: doc).write(to: hostile)
        let server = try ServedStore(exports: [hostile.path])
        defer { server.stop() }
        let b = try WebDriver(width: 900, height: 700)
        defer { b.quit() }
        let base = "http://127.0.0.1:\(server.port)"
        let check = """
            const flags = Object.keys(window).filter((k) => k.startsWith('pwned'));
            const away = performance.getEntriesByType('resource').map((e) => e.name).filter((n) => !n.startsWith('http://127.0.0.1:') && !n.startsWith('data:'));
            return {flags, away, scripts: document.scripts.length, iframes: document.querySelectorAll('iframe, .c script, .c svg[onload]').length,
                    js: Array.from(document.querySelectorAll('a[href]')).filter((a) => a.href.startsWith('javascript:')).length};
            """
        for page in ["/", "/c/1", "/search?q=xsswordhere", "/c/1?at=3&q=xsswordhere&hl=xsswordhere"] {
            try b.open(base + page)
            if page.hasPrefix("/c/") { try Self.settle(b, page) }
            // Give event handlers a chance: hover every link, wait a moment.
            try b.run("document.querySelectorAll('a').forEach((a) => a.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})));")
            usleep(300_000)
            let r = try #require(try b.run(check) as? [String: Any])
            #expect((r["flags"] as? [String])?.isEmpty == true, "\(page): \(r)")
            #expect((r["away"] as? [String])?.isEmpty == true, "\(page): requests beyond loopback \(r)")
            #expect((r["js"] as? Int) == 0 && (r["iframes"] as? Int) == 0, "\(page): \(r)")
            #expect((r["scripts"] as? Int) ?? 9 <= 1, "\(page): only the viewer's script: \(r)")
        }
        let text = try b.run("return document.getElementById('rows').textContent") as? String ?? ""
        #expect(text.contains("<script>window.pwned1=1</script>"), "the text is shown as text")
    }

    @Test("the features sample: video frames and initials avatars keep their size under the CSP; each message starts at the engine's top")
    func featuresSample() throws {
        let server = try ServedStore(exports: [BundledSamples.featuresConversation])
        defer { server.stop() }
        let b = try WebDriver(width: 1000, height: 760)
        defer { b.quit() }
        try b.open("http://127.0.0.1:\(server.port)/c/1")
        try Self.settle(b, "the sample's rows")
        let r = try #require(
            try b.run(
                """
                const v = document.querySelector('.vf'), a = document.querySelector('.av');
                const blocks = Array.from(document.querySelectorAll('.vm')), w = bubbleViewer.window();
                const base = document.querySelector('.vw').getBoundingClientRect().top;
                // Where each message's first row starts, against the engine's top for it.
                const off = blocks.map((bl, i) => { const f = bl.children[1]; return f.getBoundingClientRect().top - base - w.tops[i]; });
                return {video: v ? v.getBoundingClientRect().height : 0, avatar: a ? a.getBoundingClientRect().width : 0, worst: Math.max(...off.map(Math.abs)), n: blocks.length};
                """) as? [String: Any])
        #expect((r["video"] as? Double ?? 0) > 100 && (r["avatar"] as? Double ?? 0) > 20, "\(r)")
        #expect((r["worst"] as? Double ?? 99) <= 1 && r["n"] as? Int == 23, "\(r)")
        // The three-photo grid (incoming, beside the avatar column) is the engine's size at this width.
        let column = try #require(try b.run("return bubbleViewer.width()") as? Double)
        let box = try #require(try b.run("const g = document.querySelector('.gr').getBoundingClientRect(); return [g.width, g.height];") as? [Double])
        let style = try ThemeLibrary.load("imessage").theme.layoutStyle
        let grid = style.photoGrid(count: 3, rowWidth: column, indent: style.avatarSize + style.besideGap).size
        #expect(abs(box[0] - grid.width) <= 1 && abs(box[1] - grid.height) <= 1, "grid \(box) vs the engine's \(grid)")
    }

    @Test("the viewer's bubbles and the Cairo PNG of the same rows: boxes within 2 px")
    func matchesCairo() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let chat = dir.appendingPathComponent("short.json")
        let texts = [
            "Hi!", "Are we still on for dinner tonight at the new place near the station?", "Yes 🍜",
            "Great, I will book a table for seven. Do you want me to ask Sam and Kai too, or just us this time?",
            "Just us", "ok", "See you at seven then, and bring the umbrella because it looks like rain later tonight"
        ]
        let f = ISO8601DateFormatter()
        let messages = texts.enumerated().map { i, t -> [String: Any] in
            ["from": i % 2 == 0 ? "ann" : "me", "date": f.string(from: LongChat.start.addingTimeInterval(Double(i) * 60)), "text": t]
        }
        try JSONSerialization.data(
            withJSONObject: [
                "format": "bubblekit-conversation", "version": 1, "title": "Short", "me": "me",
                "participants": [["id": "me", "name": "Me"], ["id": "ann", "name": "Ann"]],
                "messages": messages
            ] as [String: Any]
        ).write(to: chat)
        let server = try ServedStore(exports: [chat.path])
        defer { server.stop() }
        let b = try WebDriver(width: 1000, height: 900)
        defer { b.quit() }
        try b.open("http://127.0.0.1:\(server.port)/c/1")
        try Self.settle(b, "the rows")
        let column = try #require(try b.run("return document.getElementById('rows').getBoundingClientRect().left") as? Double)
        let width = try #require(try b.run("return bubbleViewer.width()") as? Double)
        let shotFile = dir.appendingPathComponent("shot.png")
        try b.screenshot().write(to: shotFile)
        let shot = try ImageSurface(pngFile: shotFile.path).rgbaImage()
        let png = dir.appendingPathComponent("cairo.png").path
        let rendered = try Tool.run([
            "render", "--conversation", "1", "--db", server.folder.appendingPathComponent("s.sqlite").path,
            "-o", png, "--width", String(Int(width)), "--scale", "1", "--tz", "UTC", "--theme", "imessage"
        ])
        try #require(rendered.status == 0, "\(rendered.stderr)")
        let cairo = try ImageSurface(pngFile: png).rgbaImage()
        let theme = try ThemeLibrary.load("imessage").theme
        func blobs(_ image: RGBAImage) -> [ColourBlob] {
            (colourBlobs(image, theme.incoming.fill) + colourBlobs(image, theme.outgoing.fill)).filter { $0.height >= 20 }.sorted { $0.minY < $1.minY }
        }
        // The column's bubbles (not the header's buttons nor the composer's Add below the column).
        let top = try #require(try b.run("return document.getElementById('scroller').getBoundingClientRect().top") as? Double)
        let bottom = try #require(try b.run("return document.getElementById('scroller').getBoundingClientRect().bottom") as? Double)
        // …and not the list of conversations beside it.
        let x0 = Int(column.rounded())
        let h = blobs(shot).filter { Double($0.minY) > top && Double($0.maxY) <= bottom && $0.minX >= x0 - 2 }, c = blobs(cairo)
        try #require(h.count == c.count && c.count == texts.count, "Chromium \(h.count) bubbles \(h), Cairo \(c.count) \(c)")
        for k in c.indices {
            let ch = c[k], hh = h[k]
            #expect(abs(hh.height - ch.height) <= 2, "bubble \(k) height: Cairo \(ch), Chromium \(hh)")
            #expect(abs((hh.minX - x0) - ch.minX) <= 2 || abs((hh.maxX - x0) - ch.maxX) <= 2, "bubble \(k) edge: Cairo \(ch), Chromium \(hh) (column at \(x0))")
            if k > 0 { #expect(abs((hh.minY - h[0].minY) - (ch.minY - c[0].minY)) <= 2, "bubble \(k) top: Cairo \(ch), Chromium \(hh)") }
        }
    }
}

/// A conversation taller than Chromium can lay out (its largest layout coordinate is ~33.5 million
/// px): 200,000 messages, nine in ten a tall photo, ~47 million px at the widest column. The
/// viewer's scaled mode (a column of at most 8 million px standing for it) must show bubbles
/// everywhere, its end included.
@Suite("bubbles serve in Chromium: a conversation past the browser's largest coordinate (WebDriver)", .serialized)
struct ScaledViewerTests {
    static let count = 200_000

    static func write(to dir: URL) throws -> URL {
        // A 100 × 400 PNG (laid out at the theme's largest photo height).
        let png = try ImageSurface(width: 100, height: 400)
        let photo = dir.appendingPathComponent("tall.png")
        try png.writePNG(to: photo.path)
        let f = ISO8601DateFormatter()
        let start = 1_698_796_800.0  // 2023-11-01T00:00:00Z; a message every 20 s (~46 days)
        var messages: [[String: Any]] = []
        messages.reserveCapacity(count)
        for i in 0..<count {
            var m: [String: Any] = ["from": i % 2 == 0 ? "ann" : "me", "date": f.string(from: Date(timeIntervalSince1970: start + Double(i) * 20))]
            if i % 10 == 0 { m["text"] = "message \(i + 1)" } else { m["images"] = [["path": "tall.png"]] }
            messages.append(m)
        }
        let doc: [String: Any] = [
            "format": "bubblekit-conversation", "version": 2, "title": "Tall", "me": "me",
            "participants": [["id": "me", "name": "Me"], ["id": "ann", "name": "Ann"]], "messages": messages
        ]
        let url = dir.appendingPathComponent("tall.json")
        try JSONSerialization.data(withJSONObject: doc).write(to: url)
        return url
    }

    /// Bubbles whose box meets the visible part of the scroller.
    static func visibleBubbles(_ b: WebDriver) throws -> Int {
        try b.run(
            """
            const s = document.getElementById('scroller').getBoundingClientRect();
            let n = 0;
            for (const e of document.querySelectorAll('#rows .vm .b')) {
              const r = e.getBoundingClientRect();
              if (r.height > 0 && r.bottom > s.top && r.top < s.bottom) n++;
            }
            return n;
            """) as? Int ?? 0
    }

    @Test(
        "47 million px of conversation: bubbles in view at the bottom (where it opens), the top, the middle, 90 %, after a jump to a date, after a resize, and at phone width"
    )
    func bubblesEverywhere() throws {
        let dir = try ViewerBrowserTests.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ServedStore(exports: [try Self.write(to: dir).path])
        defer { server.stop() }
        let b = try WebDriver(width: 1280, height: 900)
        defer { b.quit() }
        try b.open("http://127.0.0.1:\(server.port)/c/1")
        try b.wait(for: "the layout", timeout: 120, "const v = window.bubbleViewer; return !!(v && v.state.mode === 'virtual' && v.total() > 0);")
        try ViewerBrowserTests.settle(b, "the newest rows")
        let total = try #require(try b.run("return bubbleViewer.total()") as? Double)
        #expect(total > 34_000_000, "taller than Chromium's largest coordinate: \(total)")
        #expect(try b.run("return bubbleViewer.scale()") as? Double ?? 1 > 4)
        var seen: [String: Int] = [:]
        func check(_ place: String, near expected: ClosedRange<Int>? = nil) throws {
            try ViewerBrowserTests.settle(b, place)
            seen[place] = try Self.visibleBubbles(b)
            if let expected, let current = try b.run("return bubbleViewer.current()") as? Int {
                #expect(expected.contains(current), "\(place): message \(current)")
            }
        }
        try check("bottom", near: (Self.count - 20)...Self.count)
        #expect(try b.run("return !!document.querySelector('b[data-n=\"\(Self.count)\"]')") as? Bool == true)
        try b.run("document.getElementById('scroller').scrollTop = 0;")
        try check("top", near: 1...20)
        try b.run("const s = document.getElementById('scroller'); s.scrollTop = (s.scrollHeight - s.clientHeight) / 2;")
        try check("middle", near: 90_000...110_000)
        try b.run("const s = document.getElementById('scroller'); s.scrollTop = (s.scrollHeight - s.clientHeight) * 0.9;")
        try check("90 %", near: 170_000...190_000)
        // 2023-12-10: day 39, its first message is 39 × 4,320 + 1.
        try b.run("const i = document.querySelector('#day input[type=date]'); i.value = '2023-12-10'; document.querySelector('#day button').click();")
        try b.wait(for: "10 December", timeout: 30, "return !!document.querySelector('b[data-n=\"168481\"]') && !bubbleViewer.busy();")
        try check("10 December", near: 168_470...168_520)
        try b.run("const s = document.getElementById('scroller'); s.scrollTop = s.scrollHeight;")
        try check("bottom again", near: (Self.count - 20)...Self.count)
        try b.resize(width: 640, height: 800)
        try b.wait(for: "the re-layout", timeout: 120, "return bubbleViewer.state.relayouts > 0 && !bubbleViewer.busy();")
        try check("bottom after a resize", near: (Self.count - 40)...Self.count)
        try b.resize(width: 390, height: 844)
        try b.wait(for: "the phone-width layout", timeout: 120, "return bubbleViewer.state.relayouts > 1 && !bubbleViewer.busy();")
        try check("bottom at phone width", near: (Self.count - 40)...Self.count)
        try b.run("const s = document.getElementById('scroller'); s.scrollTop = (s.scrollHeight - s.clientHeight) * 0.75;")
        try check("75 % at phone width")
        for (place, n) in seen { #expect(n >= 2, "\(place): \(n) bubbles in view") }
        #expect(seen.count == 9)
    }

    @Test(
        "search as the peers have it: two words typed in the sidebar, in the other order, find messages holding both, grouped with their real counts; the search form's + is a space; in a conversation \"1 of N\" and ↑ walks to the next older match, outlined and marked"
    )
    func searchFromThePage() throws {
        let dir = try ViewerBrowserTests.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let chat = dir.appendingPathComponent("long.json")
        try LongChat.write(3000, to: chat)
        let server = try ServedStore(exports: [chat.path])
        defer { server.stop() }
        let both = (1...3000).filter {
            let t = LongChat.text($0); return t.contains(" fox") && t.contains(" tonight")
        }
        #expect(both.count > 20, "the fixture has \(both.count) messages with both words")
        let b = try WebDriver(width: 1100, height: 700)
        defer { b.quit() }
        let base = "http://127.0.0.1:\(server.port)"
        try b.open(base + "/")
        try b.click("#findall")
        try b.type("#findall", "tonight fox")
        let summary =
            try b.wait(
                for: "the sidebar's results", timeout: 20,
                """
                const r = document.getElementById('results'); const s = r && r.querySelector('.rsum');
                return !!r && !r.hidden && !!s && s.textContent.includes('messages') ? s.textContent : false;
                """) as? String ?? ""
        #expect(summary == "\(both.count.formatted(.number.locale(Locale(identifier: "en_US")))) messages in 1 chat", "\(summary)")
        #expect(try b.run("return document.getElementById('library').hidden") as? Bool == true)
        let hits = try #require(
            try b.run("return Array.from(document.querySelectorAll('#results a.rhit')).map((a) => Number(new URL(a.href).searchParams.get('at')))") as? [Int])
        #expect(!hits.isEmpty && hits.allSatisfy { both.contains($0) }, "a hit without both words: \(hits.filter { !both.contains($0) })")
        let counted = try b.run("return document.querySelector('#results .rgroup small').textContent") as? String
        #expect(counted == "\(both.count.formatted(.number.locale(Locale(identifier: "en_US")))) matches", "\(counted ?? "none")")
        // Esc brings the list back.
        try b.press("\u{E00C}")
        try b.wait(for: "the list again", "return !document.getElementById('library').hidden && document.getElementById('results').hidden;")
        // The form as a browser sends it: q=tonight+fox.
        let page = try HTTP.request(port: server.port, method: "GET", path: "/search?q=tonight+fox")
        let found = page.text.matches(of: #/\?at=(\d+)&amp;q=tonight%20fox/#).map { Int($0.output.1)! }
        #expect(!found.isEmpty && found.allSatisfy { both.contains($0) } && page.text.contains("value=\"tonight fox\""), "\(found.prefix(5))")

        // In the conversation: "1 of N", then ↑ to the next older match.
        let fox = (1...3000).filter { LongChat.text($0).contains(" fox") }
        try b.open(base + "/c/1")
        try ViewerBrowserTests.settle(b, "the conversation")
        try b.click("details.tool:has(#insearch) summary")
        try b.type("#insearch input[type=search]", "fox\u{E007}")
        try b.wait(
            for: "1 of N",
            "return document.getElementById('matchcount').textContent === '1 of \(fox.count.formatted(.number.locale(Locale(identifier: "en_US"))))';")
        try ViewerBrowserTests.settle(b, "the newest match")
        try b.wait(
            for: "the newest match outlined",
            "return !!document.querySelector('b[data-n=\"\(fox.last!)\"] ~ .hl') || !!document.querySelector('.vm:has(b[data-n=\"\(fox.last!)\"]) .hl');")
        try b.click("#matchup")
        try b.wait(for: "2 of N", "return document.getElementById('matchcount').textContent.startsWith('2 of ');")
        try ViewerBrowserTests.settle(b, "the older match")
        let older = fox[fox.count - 2]
        try b.wait(
            for: "message \(older) outlined with fox marked",
            """
            const block = document.querySelector('.vm:has(b[data-n="\(older)"])');
            return !!block && !!block.querySelector('.hl') && Array.from(block.querySelectorAll('mark')).some((m) => m.textContent === 'fox');
            """)
    }
}
