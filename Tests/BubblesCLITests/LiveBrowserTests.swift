import BubbleTestSupport
import Foundation
import Testing

/// Two Chromium windows (two WebDriver sessions) chatting in one live conversation, as two people
/// would: typed, added with Enter, seen on the other side at once, a photo, a reload, an edit,
/// the typing indicator.
@Suite("bubbles serve: two windows chatting (WebDriver)", .serialized)
struct LiveBrowserTests {
    /// The text of message `seq`'s rows in the page, nil when it is not there.
    static func rowText(_ b: WebDriver, _ seq: Int) throws -> String? {
        try b.run(
            """
            const m = document.querySelector('b[data-n="' + arguments[0] + '"]');
            return m ? m.parentElement.textContent : null;
            """, [seq]) as? String
    }

    /// Where message `seq`'s bubble is: "left" or "right" of the column's middle.
    static func side(_ b: WebDriver, _ seq: Int) throws -> String? {
        try b.run(
            """
            const m = document.querySelector('b[data-n="' + arguments[0] + '"]');
            if (!m) return null;
            const box = m.parentElement, col = document.getElementById('rows').getBoundingClientRect();
            let l = 1e9, r = -1e9;
            for (const el of box.querySelectorAll('*')) {
              const q = el.getBoundingClientRect();
              if (q.width > 0 && q.height > 0 && q.width < col.width * 0.9) { l = Math.min(l, q.left); r = Math.max(r, q.right); }
            }
            const middle = col.left + col.width / 2;
            return (l + r) / 2 < middle ? "left" : "right";
            """, [seq]) as? String
    }

    static func ready(_ b: WebDriver, _ what: String) throws {
        try b.wait(
            for: what, timeout: 30,
            """
            const v = window.bubbleViewer;
            return !!(v && v.live && v.live.ready() && v.state.windows > 0 && !v.busy());
            """)
    }

    /// One server, or two `bubbles serve` nodes on one PostgreSQL with A on node 1 and B on node 2.
    enum Nodes: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case oneSQLite, twoPostgres
        var testDescription: String { self == .oneSQLite ? "one node, SQLite" : "two nodes, one PostgreSQL" }
    }

    @Test(
        "A types hello + Enter and at once the next words → B sees hello on the other side and that A types again; B replies with a photo; A reloads: both in order; B edits, A sees it; A reacts, B sees it",
        arguments: Nodes.allCases)
    func twoWindows(nodes: Nodes) throws {
        let w = try TwoWindows(title: "Two windows", height: 640, nodes: nodes)
        defer { w.stop() }
        let (s, c, base, a, b) = (w.server, w.conversation, w.base, w.a, w.b)
        #expect(try b.run("return document.getElementById('sendas').value") as? String == "ann")

        // A: "hello", Enter, and at once the start of the next message ("ab"). The bubble shows
        // at once in A (sending), then in B.
        try a.type("#text", "hello")
        try a.type("#text", "\u{E007}ab")
        let optimistic = try a.run("return bubbleViewer.live.outbox().map(o => o.text + ':' + o.state).join(',')") as? String
        #expect(optimistic?.hasPrefix("hello:") == true, "A shows its message at once: \(optimistic ?? "nil")")
        try b.wait(for: "hello in window B", timeout: 15, "return !!document.querySelector('b[data-n=\"1\"]') && !bubbleViewer.busy();")
        if nodes == .twoPostgres { #expect(w.serverB.port != s.port, "B is on the other node") }
        #expect(try Self.rowText(b, 1)?.contains("hello") == true)
        #expect(try Self.side(b, 1) == "left", "A's message is on the other side in B")
        try a.wait(for: "hello as a row in A", timeout: 15, "return !!document.querySelector('b[data-n=\"1\"]') && bubbleViewer.live.outbox().length === 0;")
        #expect(try Self.side(a, 1) == "right", "A's own message on the right in A")
        #expect(try Self.rowText(a, 1)?.contains("Sent") == true, "A's newest message says Sent")

        // B is told that A types the next message — a typing frame after "hello" (rev ≥ 1) — and
        // "hello" arriving does not hide it, whichever of the two reaches B first. What B was
        // told is logged by the page, so no timing decides the outcome.
        try b.wait(
            for: "the typing indicator for A's next message in B", timeout: 15,
            "return bubbleViewer.state.live.typingLog.some(t => t.sender === 'me' && t.rev >= 1);")
        let told =
            try b.run(
                """
                const t = bubbleViewer.state.live.typingLog.filter(t => t.sender === 'me' && t.rev >= 1)[0];
                return t.hidden === null ? 'shown' : t.hidden;
                """) as? String
        #expect(told == "shown" || told == "timeout", "B hid A's typing because of: \(told ?? "nil")")
        if told == "shown" {
            #expect(try b.run("return document.getElementById('typingname').textContent") as? String == "Me is typing…")
        }
        try a.run("document.getElementById('text').value = '';")

        // B replies with a photo (its caption typed first); A sees the picture.
        let photo = Tool.root.appendingPathComponent("Sources/BubbleCore/Samples/demo-photo.png").path
        try b.type("#text", "look")
        try b.type("#photo", photo)
        try a.wait(
            for: "B's photo in A", timeout: 10,
            """
            const m = document.querySelector('b[data-n="2"]');
            return !!m && !!m.parentElement.querySelector('img') && m.parentElement.textContent.includes('look') && !bubbleViewer.busy();
            """)
        #expect(try Self.side(a, 2) == "left" && Self.side(b, 2) == "right")

        // A reloads: both messages there, in order.
        try a.open(base + "/c/\(c)")
        try Self.ready(a, "A after its reload")
        let order = try a.run("return Array.from(document.querySelectorAll('b[data-n]')).map(b => Number(b.dataset.n))") as? [Int]
        #expect(order == [1, 2])
        #expect(try Self.rowText(a, 1)?.contains("hello") == true && Self.rowText(a, 2)?.contains("look") == true)

        // B edits its message through its actions; A sees the new text, marked edited.
        try b.run("document.querySelector('b[data-n=\"2\"]').parentElement.querySelector('img, span, div').click();")
        try b.wait(
            for: "B's actions", timeout: 15, "return !document.getElementById('actions').hidden && !document.querySelector('[data-act=\"edit\"]').hidden;")
        try b.click("[data-act=\"edit\"]")
        #expect(try b.run("return document.getElementById('text').value") as? String == "look")
        try b.run("document.getElementById('text').value = '';")
        try b.type("#text", "look at this\u{E007}")
        try a.wait(
            for: "the edit in A", timeout: 15,
            """
            const m = document.querySelector('b[data-n="2"]');
            return !!m && m.parentElement.textContent.includes('look at this') && /edited/i.test(m.parentElement.textContent);
            """)
        // A reacts to B's message from the keyboard alone: into the column, ↓/↑ to the message,
        // Enter opens its actions (the focus in them), → to ❤️, Enter; the focus is back on the message.
        let focused =
            "const m = document.activeElement.closest && document.activeElement.closest('.vm'); const b = m && m.querySelector('b[data-n]'); return b ? Number(b.dataset.n) : 0;"
        try a.run("document.getElementById('rows').focus();")
        try a.press("\u{E015}")
        for _ in 0..<3 where try a.run(focused) as? Int != 2 { try a.press(try a.run(focused) as? Int ?? 0 > 2 ? "\u{E013}" : "\u{E015}") }
        #expect(try a.run(focused) as? Int == 2, "↑/↓ reach message 2")
        try a.press("\u{E007}")
        try a.wait(
            for: "A's actions from the keyboard", timeout: 15,
            "return !document.getElementById('actions').hidden && !!document.activeElement.closest('#actions');")
        for _ in 0..<8 where try a.run("return document.activeElement.dataset.emoji || ''") as? String != "❤️" { try a.press("\u{E014}") }
        #expect(try a.run("return document.activeElement.dataset.emoji") as? String == "❤️")
        try a.press("\u{E007}")
        try a.wait(
            for: "the menu closed, the focus on the message", timeout: 15,
            "return document.getElementById('actions').hidden && !!document.activeElement.closest('.vm');")
        // Esc closes the actions and keeps the chat open (the next Esc would close it).
        try a.press("\u{E007}")
        try a.wait(for: "the actions again", timeout: 15, "return !document.getElementById('actions').hidden;")
        try a.press("\u{E00C}")
        #expect(try a.run("return document.getElementById('actions').hidden && location.pathname") as? String == "/c/\(c)")
        try b.wait(
            for: "the reaction in B", timeout: 15,
            """
            const m = document.querySelector('b[data-n="2"]'); return !!m && m.parentElement.textContent.includes('❤️');
            """)
        let stored = try s.stored(c)
        #expect(stored.map(\.text) == ["hello", "look at this"])
        // BUBBLEKIT_LIVE_SHOTS=docs writes the README's pictures of the two windows.
        if let folder = ProcessInfo.processInfo.environment["BUBBLEKIT_LIVE_SHOTS"] {
            let dir = URL(fileURLWithPath: folder, relativeTo: Tool.root)
            for w in [a, b] {
                try w.resize(width: 720, height: 1000)
                usleep(400_000)
                try Self.ready(w, "the window at its picture's size")
                try w.run("document.getElementById('scroller').scrollTop = 1e9;")
                usleep(300_000)
            }
            try a.run("document.getElementById('text').value = 'Gorgeous! Where is that?';")
            try b.type("#text", "W")
            try a.wait(for: "the typing indicator in A", timeout: 15, "return !document.getElementById('typing').hidden;")
            try a.screenshot().write(to: dir.appendingPathComponent("live-a.png"))
            try b.screenshot().write(to: dir.appendingPathComponent("live-b.png"))
        }
    }

    @Test("A message typed while its frame is lost stays in the outbox across a reload and is stored once; a window whose socket drops catches up in order")
    func outboxAndReconnect() throws {
        let w = try TwoWindows(title: "Offline", height: 700)
        defer { w.stop() }
        let (s, c, base, a, b) = (w.server, w.conversation, w.base, w.a, w.b)

        // A's frames never reach the server (a network that swallows them): the bubble waits.
        try a.run("WebSocket.prototype.send = function () {};")
        try a.type("#text", "sent while offline\u{E007}")
        let waiting = try a.run("return JSON.parse(localStorage.getItem('bk-outbox-\(c)') || '[]').map(m => m.text)") as? [String]
        #expect(waiting == ["sent while offline"])
        #expect(try a.run("return bubbleViewer.live.outbox()[0].state") as? String == "sending")
        #expect(try s.stored(c).isEmpty)
        // A reload sends it again with the same UUID: stored once, seen by B, the outbox empty.
        try a.open(base + "/c/\(c)")
        try Self.ready(a, "A after its reload")
        try b.wait(for: "the message in B", timeout: 10, "return !!document.querySelector('b[data-n=\"1\"]');")
        try a.wait(for: "A's outbox emptied", timeout: 10, "return bubbleViewer.live.outbox().length === 0 && !localStorage.getItem('bk-outbox-\(c)');")
        #expect(try s.stored(c).map(\.text) == ["sent while offline"])

        // B's socket drops; three messages are added meanwhile; B catches up, in order, once each.
        try b.run("bubbleViewer.live.drop();")
        for text in ["one", "two", "three"] {
            #expect(try s.call("POST", "/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "text": text, "sender": "me"]).status == 201)
        }
        try b.wait(
            for: "B caught up", timeout: 15, "return bubbleViewer.live.rev() === 4 && !!document.querySelector('b[data-n=\"4\"]') && !bubbleViewer.busy();")
        let order = try b.run("return Array.from(document.querySelectorAll('b[data-n]')).map(x => Number(x.dataset.n))") as? [Int]
        #expect(order == [1, 2, 3, 4])
        #expect(try b.run("return bubbleViewer.state.live.connects") as? Int ?? 0 >= 2)
        #expect(try Self.rowText(b, 4)?.contains("three") == true)
    }
}

/// A server with a new conversation of Me (outgoing) and Ann, window A open on it as Me and B as
/// Ann, both live; `stop()` ends the browsers and the server (call it in a `defer`).
final class TwoWindows {
    let server: LiveServer
    /// B's server: the same, or the second node.
    let serverB: LiveServer
    let conversation: Int
    let base: String
    let a: WebDriver
    let b: WebDriver

    init(title: String, height: Int, nodes: LiveBrowserTests.Nodes = .oneSQLite) throws {
        if nodes == .twoPostgres {
            let url = try TestPostgres.shared().createDatabase("nodes")
            let media = FileManager.default.temporaryDirectory.appendingPathComponent("bk-nodes-media-\(UUID().uuidString)").path
            mediaFolder = media
            server = try LiveServer(binary: Tool.binary, fontconfig: LiveCLITests.fonts, db: url, media: media)
            do { serverB = try LiveServer(binary: Tool.binary, fontconfig: LiveCLITests.fonts, db: url, media: media) } catch {
                server.stop()
                try? FileManager.default.removeItem(atPath: media)
                throw error
            }
        } else {
            mediaFolder = nil
            server = try LiveServer(binary: Tool.binary, fontconfig: LiveCLITests.fonts)
            serverB = server
        }
        do {
            conversation = try LiveCLITests.conversation(server, title: title)
            base = "http://127.0.0.1:\(server.port)"
            a = try WebDriver(width: 700, height: height)
            b = try WebDriver(width: 700, height: height)
            try a.open(base + "/c/\(conversation)")
            try b.open("http://127.0.0.1:\(serverB.port)/c/\(conversation)?as=ann")
            try LiveBrowserTests.ready(a, "window A live")
            try LiveBrowserTests.ready(b, "window B live")
        } catch {
            server.stop(); serverB.stop()
            if let mediaFolder { try? FileManager.default.removeItem(atPath: mediaFolder) }
            throw error
        }
    }

    /// The two PostgreSQL nodes' shared folder of pictures (removed with the servers).
    let mediaFolder: String?

    func stop() {
        a.quit(); b.quit()
        server.stop(); serverB.stop()
        if let mediaFolder { try? FileManager.default.removeItem(atPath: mediaFolder) }
    }
}
