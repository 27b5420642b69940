import BubbleTestSupport
import Foundation
import Testing

/// The live conversation (issue 22) against the real `bubbles serve`: the JSON API, the socket's
/// protocol, exactly-once under dropped sockets and resends, and a `kill -9` mid-stream.
@Suite("bubbles serve: live conversations", .serialized)
struct LiveCLITests {
    static var fonts: String { Tool.root.appendingPathComponent("Sources/BubbleText/Fonts/fonts.conf").path }

    static func server(_ arguments: [String] = []) throws -> LiveServer {
        try LiveServer(binary: Tool.binary, fontconfig: fonts, arguments: arguments)
    }

    /// Each client, on a thread of its own, connects and sends `each` messages one after the other
    /// (each until acknowledged); `sent` gets a line per acknowledgement, `failures` what went wrong.
    static func send(_ clients: [LiveClient], each: Int, until deadline: Date) -> (DispatchGroup, Failures, Failures) {
        let failures = Failures(), sent = Failures()
        let group = DispatchGroup()
        for (k, client) in clients.enumerated() {
            DispatchQueue.global().async(group: group) {
                do {
                    try client.reconnect(until: deadline)
                    for i in 0..<each {
                        try client.send("c\(k) m\(i)", until: deadline)
                        sent.add("")
                    }
                } catch { failures.add("client \(k): \(error)") }
            }
        }
        return (group, failures, sent)
    }

    /// A new conversation of Me (outgoing) and Ann; its id.
    static func conversation(_ s: LiveServer, title: String = "Live") throws -> Int {
        let r = try s.call("POST", "/api/v1/conversations", ["title": title, "participants": ["Me", "Ann"]])
        #expect(r.status == 201)
        return try #require((r.json as? [String: Any])?["id"] as? Int)
    }

    @Test(
        "a compact layout (--compact-from 1: no messages kept, windows read from the store) answers the viewer as one holding its messages: frames and rows at widths in turn, after sends, an edit and a delete"
    )
    func compactViewer() throws {
        let full = try Self.server(), compact = try Self.server(["--compact-from", "1"])
        defer { full.stop(); compact.stop() }
        let words = ["see", "you", "tomorrow", "at", "the", "station", "Andnormallyaddlinebreaksonlyinbetween", "🎉", "ok", "שלום", "好的"]
        var texts: [(String, String, Int?)] = []
        for k in 0..<40 {
            let text = (0...(k * 7 % 23)).map { words[($0 * 5 + k) % words.count] }.joined(separator: " ")
            texts.append((text, k % 3 == 0 ? "ann" : "me", k % 9 == 4 ? k - 2 : nil))
        }
        var c = 0
        for s in [full, compact] {
            c = try Self.conversation(s)
            for (text, sender, reply) in texts {
                var body: [String: Any] = ["clientId": UUID().uuidString, "text": text, "sender": sender]
                if let reply { body["replyTo"] = reply }
                #expect(try s.call("POST", "/api/v1/conversations/\(c)/messages", body).status == 201)
            }
        }
        func view(_ s: LiveServer, _ query: String) throws -> [String: Any] {
            try #require(try s.call("GET", "/c/\(c)/view?wait=1&" + query).json as? [String: Any])
        }
        func differences(_ label: String) throws -> [String] {
            var out: [String] = []
            // Widths in turn: each reader's layout stays (no re-layout per request).
            for width in [400, 700, 400, 320, 700] {
                for q in ["at=1", "at=20", "y=900&h=600", ""] {
                    let a = try view(full, "width=\(width)&" + q), b = try view(compact, "width=\(width)&" + q)
                    let ta = a["tops"] as? [Double] ?? [], tb = b["tops"] as? [Double] ?? []
                    if abs((a["height"] as? Double ?? 0) - (b["height"] as? Double ?? -1)) > 1e-6 {
                        out.append("\(label) \(width) \(q): height \(a["height"] ?? "-") vs \(b["height"] ?? "-")")
                    }
                    if ta.count != tb.count || zip(ta, tb).contains(where: { abs($0 - $1) > 1e-6 }) { out.append("\(label) \(width) \(q): tops") }
                    // Each server stamps the messages sent to it with its own clock: the moments
                    // (`datetime`, to the second) may differ; everything else must not.
                    let ha = (a["html"] as? String ?? "").replacing(#/ datetime="[^"]*"/#, with: ""),
                        hb = (b["html"] as? String ?? "").replacing(#/ datetime="[^"]*"/#, with: "")
                    if ha != hb || ha.isEmpty { out.append("\(label) \(width) \(q): rows") }
                    if a["first"] as? Int != b["first"] as? Int || a["count"] as? Int != b["count"] as? Int { out.append("\(label) \(width) \(q): window") }
                }
            }
            return out
        }
        /// The compact server lays a changed conversation out again in the background: asked until it agrees.
        func agree(_ label: String) throws {
            var left = try differences(label)
            let deadline = Date().addingTimeInterval(20)
            while !left.isEmpty, Date() < deadline { usleep(200_000); left = try differences(label) }
            #expect(left.isEmpty, "\(left.prefix(4))")
        }
        try agree("sent")
        for s in [full, compact] {
            for k in 0..<5 {
                _ = try s.call(
                    "POST", "/api/v1/conversations/\(c)/messages",
                    ["clientId": UUID().uuidString, "text": "more \(k) " + words.joined(separator: " "), "sender": k % 2 == 0 ? "me" : "ann"])
            }
        }
        try agree("appended")
        for s in [full, compact] {
            #expect(
                try s.call("PATCH", "/api/v1/conversations/\(c)/messages/2", ["text": String(repeating: "longer now ", count: 30), "sender": "me"]).status
                    == 200)
        }
        try agree("edited")
        for s in [full, compact] { #expect(try s.call("DELETE", "/api/v1/conversations/\(c)/messages/5?sender=me").status == 200) }
        try agree("deleted")
    }

    @Test("typed markup: *bold* is stored as bold text (markers gone), shown bold on the page, given back as markup to edit; literal stars stay")
    func typedMarkup() throws {
        let s = try Self.server()
        defer { s.stop() }
        let c = try Self.conversation(s)
        let sent = try s.call("POST", "/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "text": "*hi* there `x_y`", "sender": "me"])
        #expect(sent.status == 201)
        let m = try #require(sent.json as? [String: Any])
        #expect(m["text"] as? String == "hi there x_y")
        let spans = (m["spans"] as? [[String: Any]])?.map { "\($0["style"]!) \($0["start"]!)-\($0["end"]!)" }
        #expect(spans == ["bold 0-2", "code 9-12"])
        #expect(m["markup"] as? String == "*hi* there `x_y`")
        let literal = try s.call("POST", "/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "text": "2*3*4 = 24", "sender": "ann"])
        #expect((literal.json as? [String: Any])?["text"] as? String == "2*3*4 = 24" && (literal.json as? [String: Any])?["spans"] == nil)
        // An edit reads markup too; without markers the text is plain again.
        let edited = try s.call("PATCH", "/api/v1/conversations/\(c)/messages/1", ["text": "_now_ italic", "sender": "me"])
        #expect((edited.json as? [String: Any])?["text"] as? String == "now italic")
        #expect(((edited.json as? [String: Any])?["spans"] as? [[String: Any]])?.first?["style"] as? String == "italic")
        let page = try HTTP.request(port: s.port, method: "GET", path: "/c/\(c)")
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("<em>now</em> italic"), "the page shows the styled text")
        #expect(html.contains("2*3*4 = 24"))
    }

    @Test(
        "API: create, send once per clientId (201 then 200 with the same message), refusals store nothing, edit/delete by the author, reactions, replies, catch-up"
    )
    func api() throws {
        let s = try Self.server()
        defer { s.stop() }
        let c = try Self.conversation(s)
        let created = try s.call("GET", "/api/v1/conversations/\(c)")
        let participants = (created.json as? [String: Any])?["participants"] as? [[String: Any]]
        #expect(participants?.map { $0["id"] as? String } == ["me", "ann"])

        let id = UUID().uuidString
        let first = try s.call("POST", "/api/v1/conversations/\(c)/messages", ["clientId": id, "text": "hello", "sender": "me"])
        #expect(first.status == 201)
        let m1 = try #require(first.json as? [String: Any])
        #expect(m1["seq"] as? Int == 1 && m1["side"] as? String == "outgoing" && m1["text"] as? String == "hello" && m1["rev"] as? Int == 1)
        let again = try s.call("POST", "/api/v1/conversations/\(c)/messages", ["clientId": id, "text": "hello", "sender": "me"])
        #expect(again.status == 200)
        #expect((again.json as? [String: Any])?["seq"] as? Int == 1 && (again.json as? [String: Any])?["rev"] as? Int == 1)
        let reply = try s.call(
            "POST", "/api/v1/conversations/\(c)/messages",
            ["clientId": UUID().uuidString, "text": "hi <b>you</b>", "sender": "ann", "replyTo": 1])
        #expect(reply.status == 201)
        let m2 = try #require(reply.json as? [String: Any])
        #expect(m2["seq"] as? Int == 2 && m2["side"] as? String == "incoming")
        #expect((m2["reply"] as? [String: Any])?["text"] as? String == "hello")

        // Refusals: each a JSON 4xx naming the field, and nothing stored.
        let refusals: [(Any, Int, String, String)] = [
            (["clientId": UUID().uuidString, "text": "   \n ", "sender": "me"], 400, "text", "/api/v1/conversations/\(c)/messages"),
            (
                ["clientId": UUID().uuidString, "text": String(repeating: "x", count: 65_537), "sender": "me"], 413, "65537 bytes",
                "/api/v1/conversations/\(c)/messages"
            ),
            (["clientId": UUID().uuidString, "text": "x", "sender": "me"], 404, "no conversation", "/api/v1/conversations/999/messages"),
            (["clientId": "not-a-uuid", "text": "x", "sender": "me"], 400, "clientId", "/api/v1/conversations/\(c)/messages"),
            (["clientId": UUID().uuidString, "text": "x", "sender": "bob"], 400, "sender \"bob\"", "/api/v1/conversations/\(c)/messages"),
            (["clientId": UUID().uuidString, "text": "x", "sender": "me", "replyTo": 99], 400, "replyTo 99", "/api/v1/conversations/\(c)/messages"),
            (["clientId": UUID().uuidString, "text": "x", "sender": "me", "photo": "../../etc/passwd"], 400, "photo", "/api/v1/conversations/\(c)/messages")
        ]
        for (body, status, words, path) in refusals {
            let r = try s.call("POST", path, body)
            let error = (r.json as? [String: Any])?["error"] as? String ?? ""
            #expect(r.status == status && error.contains(words), "\(path) \(words): \(r.status) \(error)")
        }
        let notJSON = try HTTP.request(port: s.port, method: "POST", path: "/api/v1/conversations/\(c)/messages", body: Data("nope".utf8))
        #expect(notJSON.status == 400)
        #expect(try s.stored(c).map(\.seq) == [1, 2])

        // Edits and deletions by the author only (403 for anyone else); reactions by anyone in it, from the set.
        #expect(try s.call("PATCH", "/api/v1/conversations/\(c)/messages/2", ["text": "mine now", "sender": "me"]).status == 403)
        let edited = try s.call("PATCH", "/api/v1/conversations/\(c)/messages/1", ["text": "hello, edited", "sender": "me"])
        #expect(edited.status == 200 && (edited.json as? [String: Any])?["edited"] != nil && (edited.json as? [String: Any])?["rev"] as? Int == 3)
        #expect(try s.call("POST", "/api/v1/conversations/\(c)/messages/1/reactions", ["emoji": "💩", "sender": "ann"]).status == 400)
        let reacted = try s.call("POST", "/api/v1/conversations/\(c)/messages/1/reactions", ["emoji": "❤️", "sender": "ann"])
        let reactions = (reacted.json as? [String: Any])?["reactions"] as? [[String: Any]]
        #expect(reacted.status == 200 && reactions?.first?["emoji"] as? String == "❤️" && reactions?.first?["senders"] as? [String] == ["ann"])
        let twice = try s.call("POST", "/api/v1/conversations/\(c)/messages/1/reactions", ["emoji": "❤️", "sender": "ann"])
        #expect(((twice.json as? [String: Any])?["reactions"] as? [[String: Any]])?.first?["count"] as? Int == 1, "the same reaction again counts once")
        #expect(try s.call("DELETE", "/api/v1/conversations/\(c)/messages/1/reactions?emoji=%E2%9D%A4%EF%B8%8F&sender=ann").status == 200)
        #expect(try s.call("DELETE", "/api/v1/conversations/\(c)/messages/2?sender=me").status == 403)
        let deleted = try s.call("DELETE", "/api/v1/conversations/\(c)/messages/2?sender=ann")
        #expect(deleted.status == 200 && (deleted.json as? [String: Any])?["deleted"] as? Bool == true)
        #expect((deleted.json as? [String: Any])?["text"] is NSNull)
        #expect(try s.call("PATCH", "/api/v1/conversations/\(c)/messages/2", ["text": "back", "sender": "ann"]).status == 409)
        #expect(try s.call("PATCH", "/api/v1/conversations/\(c)/messages/7", ["text": "x", "sender": "me"]).status == 404)

        // Catch-up: everything after a revision, each message once at its newest revision.
        let changes = try #require(try s.call("GET", "/api/v1/conversations/\(c)/changes?since=2").json as? [String: Any])
        let list = try #require(changes["changes"] as? [[String: Any]])
        #expect(changes["rev"] as? Int == 6)
        #expect(list.map { $0["rev"] as? Int } == [5, 6] && list.map { $0["kind"] as? String } == ["react", "delete"])
        #expect(try s.call("GET", "/api/v1/conversations/\(c)/changes?since=-1").status == 400)
        // Search sees edits and forgets deletions.
        let hits = try s.call("GET", "/api/v1/search?q=edited&conversation=\(c)").json as? [String: Any]
        #expect((hits?["hits"] as? [[String: Any]])?.map { $0["seq"] as? Int } == [1])
        let gone = try s.call("GET", "/api/v1/search?q=you&conversation=\(c)").json as? [String: Any]
        #expect((gone?["hits"] as? [[String: Any]])?.isEmpty == true)
        #expect(try s.call("GET", "/healthz").status == 200)
    }

    @Test("Photos: uploaded once by content, shown in their message with the attachment's URL; a non-picture is refused")
    func photos() throws {
        let s = try Self.server()
        defer { s.stop() }
        let c = try Self.conversation(s)
        let png = try Data(contentsOf: Tool.root.appendingPathComponent("Sources/BubbleCore/Samples/demo-photo.png"))
        let up = try HTTP.request(port: s.port, method: "POST", path: "/api/v1/conversations/\(c)/photos", body: png, contentType: "image/png")
        #expect(up.status == 201)
        let photo = try #require((try up.json() as? [String: Any])?["photo"] as? String)
        #expect(photo.hasSuffix(".png") && photo.count == 68)
        let bad = try HTTP.request(port: s.port, method: "POST", path: "/api/v1/conversations/\(c)/photos", body: Data("text".utf8), contentType: "image/png")
        #expect(bad.status == 415)
        let sent = try s.call("POST", "/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "sender": "ann", "photo": photo])
        #expect(sent.status == 201)
        let attachment = ((sent.json as? [String: Any])?["attachments"] as? [[String: Any]])?.first
        #expect(attachment?["kind"] as? String == "photo" && (attachment?["width"] as? Double ?? 0) > 0)
        let file = try HTTP.request(port: s.port, method: "GET", path: try #require(attachment?["url"] as? String))
        #expect(file.status == 200 && file.body == png)
    }

    @Test(
        "Socket: Origin and token checked, catch-up after a revision then ready, acks after commit, changes to every watcher in order, typing to the others, size and rate limits"
    )
    func socket() throws {
        let s = try Self.server(["--rate", "5", "--burst", "3", "--max-message", "1"])
        defer { s.stop() }
        let c = try Self.conversation(s)
        for text in ["one", "two"] {
            _ = try s.call("POST", "/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "text": text, "sender": "ann"])
        }
        let path = "/api/v1/conversations/\(c)/live"
        #expect(throws: (any Error).self) { try WebSocketClient(port: s.port, path: path, headers: ["Origin": "http://evil.example"]) }
        #expect(throws: (any Error).self) { try WebSocketClient(port: s.port, path: "/api/v1/conversations/99/live") }
        #expect(throws: (any Error).self) { try WebSocketClient(port: s.port, path: path + "?since=-3") }
        // Asked without the upgrade, the same URLs say why (the handshake's refusal is a bare 400).
        #expect(try HTTP.request(port: s.port, method: "GET", path: path, headers: ["Origin": "http://evil.example"]).status == 403)
        #expect(try HTTP.request(port: s.port, method: "GET", path: "/api/v1/conversations/99/live").status == 404)
        // Its own page's origin is welcome; catch-up after revision 1 gives message 2, then ready.
        let a = try WebSocketClient(port: s.port, path: path + "?since=1", headers: ["Origin": "http://127.0.0.1:\(s.port)"])
        let caught = try #require(try a.receiveJSON())
        #expect(caught["type"] as? String == "change" && caught["rev"] as? Int == 2 && (caught["message"] as? [String: Any])?["text"] as? String == "two")
        #expect(try a.receiveJSON()?["type"] as? String == "ready")
        let b = try WebSocketClient(port: s.port, path: path + "?since=2")
        #expect(try b.receiveJSON()?["type"] as? String == "ready")

        try a.send(json: ["type": "typing", "sender": "me"])
        let typing = try #require(try b.receiveJSON())
        #expect(typing["type"] as? String == "typing" && typing["sender"] as? String == "me" && typing["name"] as? String == "Me")

        let id = UUID().uuidString.lowercased()
        try a.send(json: ["type": "send", "clientId": id, "text": "three", "sender": "me"])
        var ack: [String: Any]?, seenByA: [String: Any]?
        while ack == nil || seenByA == nil {
            let f = try #require(try a.receiveJSON())
            if f["type"] as? String == "ack" { ack = f } else if f["type"] as? String == "change" { seenByA = f }
        }
        #expect(ack?["ref"] as? String == id && ack?["seq"] as? Int == 3 && ack?["duplicate"] as? Bool == false)
        let seenByB = try #require(try b.receiveJSON())
        #expect(seenByB["rev"] as? Int == 3 && (seenByB["message"] as? [String: Any])?["clientId"] as? String == id)

        // Refusals on the socket: an error naming the reason, the socket still open, nothing stored.
        try a.send(json: ["type": "send", "clientId": UUID().uuidString, "text": String(repeating: "é", count: 600), "sender": "me", "ref": "big"])
        let big = try #require(try a.receiveJSON())
        #expect(big["type"] as? String == "error" && big["status"] as? Int == 413 && big["ref"] as? String == "big")
        try a.send("not json")
        #expect(try a.receiveJSON()?["status"] as? Int == 400)
        try a.send(json: ["type": "edit", "seq": 1, "text": "mine", "sender": "me", "ref": "e"])
        #expect(try a.receiveJSON()?["status"] as? Int == 403, "someone else's message")
        // Three writes at once are allowed, then 429 until the bucket fills again.
        var statuses: [Int] = []
        for i in 0..<4 {
            try a.send(json: ["type": "react", "seq": 1, "emoji": "👍", "sender": "me", "on": i % 2 == 0, "ref": "r\(i)"])
        }
        while statuses.count < 4, let f = try a.receiveJSON() {
            if f["type"] as? String == "ack" { statuses.append(200) } else if let st = f["status"] as? Int { statuses.append(st) }
        }
        #expect(statuses.filter { $0 == 429 }.count >= 1)
        #expect(try s.stored(c).map(\.text) == ["one", "two", "three"])
        a.close()
        #expect(try s.call("GET", "/healthz").status == 200)
        // Ctrl-C with a socket still open: the socket is closed and the server stops at once.
        let started = Date()
        #expect(s.interrupt() == 0)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(try b.receiveJSON() == nil && !b.isOpen)
    }

    @Test("Token: a socket without it is refused (401), with it upgraded")
    func token() throws {
        let token = "0123456789abcdef0123"
        let s = try Self.server(["--token", token])
        defer { s.stop() }
        let created = try HTTP.request(
            port: s.port, method: "POST", path: "/api/v1/conversations?token=\(token)",
            body: try JSONSerialization.data(withJSONObject: ["participants": ["Me", "Ann"]]))
        #expect(created.status == 201)
        // The handshake is refused (the framework answers a refused upgrade with a bare 400); the
        // same URL without the upgrade says why.
        #expect(throws: (any Error).self) { try WebSocketClient(port: s.port, path: "/api/v1/conversations/1/live") }
        let why = try HTTP.request(port: s.port, method: "GET", path: "/api/v1/conversations/1/live")
        #expect(why.status == 401 && why.text.contains("token"))
        let withToken = try HTTP.request(port: s.port, method: "GET", path: "/api/v1/conversations/1/live?token=\(token)")
        #expect(withToken.status == 426)
        let ok = try WebSocketClient(port: s.port, path: "/api/v1/conversations/1/live?token=\(token)")
        #expect(try ok.receiveJSON()?["type"] as? String == "ready")
        ok.close()
    }

    /// 50 clients × 200 messages to one conversation, sockets dropped and reopened at random,
    /// some messages sent twice with the same UUID (at once, or again after a drop).
    @Test("Load and faults: 50 clients × 200 messages with drops and resends → exactly 10,000, no gaps, every view = the store")
    func loadAndFaults() throws {
        let s = try Self.server(["--rate", "400", "--burst", "400"])
        defer { s.stop() }
        let c = try Self.conversation(s)
        let clients = (0..<50).map { LiveClient(port: s.port, conversation: c, sender: $0 % 2 == 0 ? "me" : "ann") }
        let failures = Failures()
        let deadline = Date().addingTimeInterval(240)
        // A thread each (concurrentPerform would run only as many at once as there are cores).
        Threads.run(clients.count) { k in
            let client = clients[k]
            var random = SystemRandomNumberGenerator()
            do {
                try client.reconnect(until: deadline)
                for i in 0..<200 {
                    let id = UUID().uuidString.lowercased()
                    let roll = Int.random(in: 0..<100, using: &random)
                    if roll < 3 { client.drop() }  // the network goes away before a send
                    try client.send("c\(k) m\(i)", clientID: id, duplicate: roll >= 3 && roll < 8, until: deadline)
                    if roll >= 8 && roll < 11 {
                        // Acknowledged, then the ack is "lost": the client drops and sends it again.
                        client.drop()
                        try client.send("c\(k) m\(i)", clientID: id, until: deadline)
                    }
                }
            } catch { failures.add("client \(k): \(error)") }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        let stored = try s.stored(c)
        #expect(stored.count == 10_000)
        #expect(stored.map(\.seq) == Array(1...10_000))
        #expect(Set(stored.map(\.clientID)).count == 10_000)
        // Every client, after catching up, has exactly the store's conversation, in order.
        var reconnects = 0
        for (k, client) in clients.enumerated() {
            try client.reconnect(until: Date().addingTimeInterval(30))
            reconnects += client.reconnects
            let view = client.view.keys.sorted()
            #expect(view == Array(1...10_000), "client \(k) has \(view.count)")
            #expect(stored.allSatisfy { client.view[$0.seq]?.clientID == $0.clientID }, "client \(k)'s view differs from the store")
            #expect(client.disorder == 0, "client \(k): \(client.disorder) changes out of order")
            #expect(client.acknowledged.count == 200)
            for (id, seq) in client.acknowledged { #expect(client.view[seq]?.clientID == id) }
            client.drop()
        }
        #expect(reconnects > 100, "the faults dropped sockets \(reconnects) times")
    }

    @Test("Crash: kill -9 while clients send; after a restart every acknowledged message is stored once, and clients catch up by themselves")
    func crash() throws {
        let s = try Self.server(["--rate", "0"])
        defer { s.stop() }
        let c = try Self.conversation(s)
        let clients = (0..<8).map { LiveClient(port: s.port, conversation: c, sender: $0 % 2 == 0 ? "me" : "ann") }
        let deadline = Date().addingTimeInterval(120)
        let (group, failures, sent) = Self.send(clients, each: 300, until: deadline)
        // Let them get going, kill the server mid-stream, start it again on the same store.
        while sent.all.count < 600 && Date() < deadline { usleep(10_000) }
        s.kill9()
        let acknowledgedAtKill = sent.all.count
        usleep(500_000)
        try s.start()
        #expect(group.wait(timeout: .now() + 150) == .success)
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        let stored = try s.stored(c)
        let ids = stored.map(\.clientID)
        #expect(stored.count == 2_400 && Set(ids).count == 2_400 && stored.map(\.seq) == Array(1...2_400))
        for client in clients {
            #expect(client.acknowledged.count == 300)
            for (id, seq) in client.acknowledged { #expect(stored[seq - 1].clientID == id) }
            try client.reconnect(until: Date().addingTimeInterval(30))
            #expect(client.view.count == 2_400 && client.disorder == 0)
            client.drop()
        }
        #expect(acknowledgedAtKill >= 600 && acknowledgedAtKill < 2_400)
    }

    @Test(
        "Stop: SIGTERM with 20 sockets open and writes in flight ends the server within 5 s, exit 0; every acknowledged message is stored, and clients finish after a restart"
    )
    func gracefulStop() throws {
        let s = try Self.server(["--rate", "0"])
        defer { s.stop() }
        let c = try Self.conversation(s)
        let clients = (0..<20).map { LiveClient(port: s.port, conversation: c, sender: $0 % 2 == 0 ? "me" : "ann") }
        let deadline = Date().addingTimeInterval(120)
        let (group, failures, sent) = Self.send(clients, each: 100, until: deadline)
        while sent.all.count < 400 && Date() < deadline { usleep(10_000) }
        let stopped = Date()
        let status = s.interrupt(within: 10, signal: SIGTERM)
        let took = Date().timeIntervalSince(stopped)
        let acknowledgedAtStop = sent.all.count
        #expect(status == 0, "exit status \(status.map(String.init) ?? "none: still running after 10 s")")
        #expect(took <= 5, "the stop took \(took) s")
        // What was acknowledged before the stop is in the store (read with the server down).
        let before = clients.flatMap { $0.acknowledged }
        let stored = try storedInDatabase(s.db, conversation: c)
        for (id, seq) in before { #expect(stored[id] == seq, "acknowledged \(id) as \(seq) before the stop") }
        #expect(acknowledgedAtStop < 2_000, "the stop came while clients were sending")
        // Started again, the clients send the rest: every message once.
        try s.start()
        #expect(group.wait(timeout: .now() + 100) == .success)
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        let all = try s.stored(c)
        #expect(all.count == 2_000 && Set(all.map(\.clientID)).count == 2_000 && all.map(\.seq) == Array(1...2_000))
    }

    /// Client id → sequence number of the live messages of `conversation`, read from the store
    /// with no server running (`bubbles convert --conversation` to JSON: messages in order, a
    /// live message's id its client id).
    func storedInDatabase(_ db: String, conversation: Int) throws -> [String: Int] {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("bk-stop-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try Tool.run(["convert", "--conversation", String(conversation), "--db", db, "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        let messages = file?["messages"] as? [[String: Any]] ?? []
        var found: [String: Int] = [:]
        for (k, m) in messages.enumerated() { if let id = m["id"] as? String { found[id] = k + 1 } }
        return found
    }

    @Test("/metrics: Prometheus text with each route's request count and latency histogram, store calls, sockets and committed messages")
    func metrics() throws {
        let s = try Self.server()
        defer { s.stop() }
        let c = try Self.conversation(s)
        for i in 0..<3 {
            #expect(try s.call("POST", "/api/v1/conversations/\(c)/messages", ["clientId": UUID().uuidString, "text": "m\(i)", "sender": "me"]).status == 201)
        }
        for _ in 0..<5 { #expect(try s.call("GET", "/api/v1/conversations/\(c)/messages").status == 200) }
        #expect(try s.call("GET", "/api/v1/conversations/\(c + 100)").status == 404)
        let text = try HTTP.request(port: s.port, method: "GET", path: "/metrics").text
        func value(_ line: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(line + " ") }.flatMap { Double($0.split(separator: " ").last!) }
        }
        let route = "http_route=\"/api/v1/conversations/{id}/messages\""
        // Five GETs of the window route and three POSTs, each in the route's histogram.
        let getCount = text.split(separator: "\n").first { $0.hasPrefix("http_server_request_duration_count{") && $0.contains(route) && $0.contains("GET") }
        #expect(getCount.flatMap { Double($0.split(separator: " ").last!) } == 5, "\(text.prefix(3_000))")
        let buckets = text.split(separator: "\n").filter { $0.hasPrefix("http_server_request_duration_bucket{") && $0.contains(route) && $0.contains("GET") }
        #expect(buckets.count >= 10 && buckets.contains { $0.contains("le=\"+Inf\"") })
        #expect(text.contains("# TYPE http_server_request_duration histogram"))
        #expect(
            text.split(separator: "\n").contains {
                $0.hasPrefix("hb_requests{") && $0.contains("http_route=\"/api/v1/conversations/{id}\"") && $0.contains("http_response_status_code=\"404\"")
            })
        // Store calls timed by call; live messages committed.
        #expect(text.split(separator: "\n").contains { $0.hasPrefix("bubbles_store_call_duration_count{call=\"messages\"}") })
        #expect(value("bubbles_changes_committed{kind=\"message\"}") == 3)
        #expect(text.contains("bubbles_live_sockets"))
    }

    @Test(
        "Two nodes, one PostgreSQL: 20 clients × 200 messages over both while node 1 is kill -9'd and restarted and PostgreSQL restarts → exactly 4,000, no gaps, every view = the store"
    )
    func twoNodesFaults() throws {
        let pg = try TestPostgres.privateServer()
        defer { pg.stop() }
        let url = try pg.createDatabase("faults")
        let media = FileManager.default.temporaryDirectory.appendingPathComponent("bk-faults-media-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: media) }
        let one = try LiveServer(binary: Tool.binary, fontconfig: Self.fonts, arguments: ["--rate", "0"], db: url, media: media)
        defer { one.stop() }
        let two = try LiveServer(binary: Tool.binary, fontconfig: Self.fonts, arguments: ["--rate", "0"], db: url, media: media)
        defer { two.stop() }
        let c = try Self.conversation(one)
        let clients = (0..<20).map { LiveClient(port: ($0 % 2 == 0 ? one : two).port, conversation: c, sender: $0 % 4 < 2 ? "me" : "ann") }
        let deadline = Date().addingTimeInterval(240)
        let (group, failures, sent) = Self.send(clients, each: 200, until: deadline)
        // (a) node 1 killed mid-stream and started again; (b) then the database restarts.
        while sent.all.count < 800 && Date() < deadline { usleep(10_000) }
        one.kill9()
        let atKill = sent.all.count
        usleep(500_000)
        try one.start()
        while sent.all.count < 2_000 && Date() < deadline { usleep(10_000) }
        try pg.restart()
        let atRestart = sent.all.count
        #expect(group.wait(timeout: .now() + 240) == .success)
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        #expect(atKill < 4_000 && atRestart < 4_000, "the faults came while clients were sending (\(atKill), \(atRestart))")
        // Both nodes give the same conversation: 4,000 messages, numbered without gaps, each once.
        let stored = try two.stored(c)
        #expect(stored.count == 4_000)
        #expect(stored.map(\.seq) == Array(1...4_000))
        #expect(Set(stored.map(\.clientID)).count == 4_000)
        #expect(try one.stored(c).map(\.clientID) == stored.map(\.clientID))
        // Every client, after catching up, has exactly the store's conversation, in order.
        for (k, client) in clients.enumerated() {
            try client.reconnect(until: Date().addingTimeInterval(60))
            let view = client.view.keys.sorted()
            #expect(view == Array(1...4_000), "client \(k) has \(view.count)")
            #expect(stored.allSatisfy { client.view[$0.seq]?.clientID == $0.clientID }, "client \(k)'s view differs from the store")
            #expect(client.disorder == 0, "client \(k): \(client.disorder) changes out of order")
            #expect(client.acknowledged.count == 200)
            for (id, seq) in client.acknowledged { #expect(stored[seq - 1].clientID == id) }
            client.drop()
        }
    }
}

/// `count` threads at once, each given its number; returns when all have ended.
enum Threads {
    static func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchSemaphore(value: 0)
        for k in 0..<count {
            let t = Thread {
                body(k); done.signal()
            }
            t.stackSize = 1 << 20
            t.start()
        }
        for _ in 0..<count { done.wait() }
    }
}

/// Failures collected from several threads.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return list }

}

extension LiveCLITests {
    /// Bodies over a route's limit: 413 with a JSON error that names the limit (never 500, never
    /// an internal type name), at once — also to a client that writes all of a 5 or 30 MB body
    /// before it reads (it got "connection reset" before the lingering close) — and the server
    /// keeps serving.
    @Test("a body over its route's limit is 413 naming the limit, at once, and read by a client writing 5 or 30 MB before reading; the server keeps serving")
    func bodyLimits() throws {
        let s = try Self.server()
        defer { s.stop() }
        let c = try Self.conversation(s)
        let path = "/api/v1/conversations/\(c)/messages"
        // Over the limit by a little, declared in Content-Length: refused before it is read.
        let small = try HTTP.request(port: s.port, method: "POST", path: path, body: Data(repeating: 0x61, count: 300_000), timeout: 20)
        #expect(small.status == 413, "\(small.status) \(small.text)")
        let error = try #require((try small.json() as? [String: Any])?["error"] as? String)
        #expect(error.contains("at most 196608 bytes") && !error.contains("NIO"), "\(error)")
        #expect(small.headers["connection"]?.lowercased() == "close")
        // 5 and 30 MB written whole before reading (as Python's urllib does): the server reads on
        // and drops what comes after its answer ("lingering close"), so the client reads the
        // 413 — not a reset — at once.
        for size in [5_000_000, 30_000_000] {
            let started = Date()
            let text = String(repeating: "a", count: size)
            let big = try HTTP.request(
                port: s.port, method: "POST", path: path,
                body: try JSONSerialization.data(withJSONObject: ["clientId": UUID().uuidString, "text": text, "sender": "me"]),
                timeout: 20)
            #expect(Date().timeIntervalSince(started) < 5, "the client waited \(Date().timeIntervalSince(started)) s")
            #expect(big.status == 413 && big.text.contains("at most 196608 bytes"), "\(size): \(big.status) \(big.text.prefix(200))")
        }
        // A photo over --max-upload: 413 naming it.
        let limited = try Self.server(["--max-upload", "1"])
        defer { limited.stop() }
        let lc = try Self.conversation(limited)
        let photo = try HTTP.request(
            port: limited.port, method: "POST", path: "/api/v1/conversations/\(lc)/photos",
            body: Data(repeating: 0xFF, count: 2 << 20), contentType: "image/jpeg", timeout: 20)
        #expect(photo.status == 413 && photo.text.contains("at most"), "\(photo.status) \(photo.text)")
        // Nothing stored, and both still serve.
        #expect(try s.stored(c).isEmpty)
        #expect(try s.call("GET", "/healthz").status == 200 && limited.call("GET", "/healthz").status == 200)
        #expect(try s.call("POST", path, ["clientId": UUID().uuidString, "text": "fine", "sender": "me"]).status == 201)
    }

    @Test(
        "what a new user trips on: a second DELETE is 409; /healthz answers without the token, nothing else does; a port in use and a missing store are one clear line each"
    )
    func clearAnswers() throws {
        let token = "0123456789abcdef0123"
        let s = try Self.server(["--token", token])
        defer { s.stop() }
        let auth = ["Authorization": "Bearer \(token)"]
        let created = try HTTP.request(
            port: s.port, method: "POST", path: "/api/v1/conversations", headers: auth,
            body: try JSONSerialization.data(withJSONObject: ["title": "T", "participants": ["Me", "Ann"]]))
        let c = try #require((try created.json() as? [String: Any])?["id"] as? Int)
        let sent = try HTTP.request(
            port: s.port, method: "POST", path: "/api/v1/conversations/\(c)/messages", headers: auth,
            body: try JSONSerialization.data(withJSONObject: ["clientId": UUID().uuidString, "text": "x", "sender": "me"]))
        #expect(sent.status == 201)
        let path = "/api/v1/conversations/\(c)/messages/1?sender=me"
        #expect(try HTTP.request(port: s.port, method: "DELETE", path: path, headers: auth).status == 200)
        let again = try HTTP.request(port: s.port, method: "DELETE", path: path, headers: auth)
        #expect(again.status == 409 && again.text.contains("deleted already"), "\(again.status) \(again.text)")
        // /healthz says nothing but "ok": open; /metrics and the API need the token.
        #expect(try HTTP.request(port: s.port, method: "GET", path: "/healthz").status == 200)
        #expect(try HTTP.request(port: s.port, method: "GET", path: "/metrics").status == 401)
        #expect(try HTTP.request(port: s.port, method: "GET", path: "/api/v1/conversations").status == 401)
        // A second server on the same port: one line naming the port and what to do.
        let busy = try Tool.run(["serve", "--db", s.db + "-other.sqlite", "--port", String(s.port)])
        #expect(busy.status != 0 && busy.stderr.contains("port \(s.port) on 127.0.0.1 is in use") && !busy.stderr.contains("errno"), "\(busy.stderr)")
        // Reading a store that is not there: an error, and no new database.
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("bk-missing-\(UUID().uuidString)/chats.sqlite").path
        for command in [["list"], ["search", "hello"]] {
            let r = try Tool.run(command + ["--db", missing])
            #expect(r.status != 0 && r.stderr.contains("no such store"), "\(command): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test(
        "header floods are 431 at once (over 64 KiB, over 256 lines); headers sent a line at a time get a 408 after --header-timeout; the server keeps serving")
    func headerLimits() throws {
        let s = try Self.server(["--header-timeout", "2"])
        defer { s.stop() }
        let huge = try HTTP.request(port: s.port, method: "GET", path: "/healthz", headers: ["X-Big": String(repeating: "a", count: 100_000)], timeout: 10)
        #expect(huge.status == 431 && huge.text.contains("65536 bytes") && huge.headers["connection"] == "close", "\(huge.status) \(huge.text)")
        var many: [String: String] = [:]
        for i in 0..<300 { many["X-H\(i)"] = "y" }
        let lines = try HTTP.request(port: s.port, method: "GET", path: "/healthz", headers: many, timeout: 10)
        #expect(lines.status == 431, "\(lines.status) \(lines.text)")
        // Within the limits: answered as usual.
        #expect(try HTTP.request(port: s.port, method: "GET", path: "/healthz", headers: ["X-Big": String(repeating: "a", count: 30_000)]).status == 200)
        let slow = try #require(try HTTP.slowHeaders(port: s.port, limit: 20), "still waiting after 20 s")
        #expect(slow.seconds >= 1.9 && slow.seconds < 5 && slow.reply.hasPrefix("HTTP/1.1 408"), "\(slow)")
        #expect(try s.call("GET", "/healthz").status == 200)
    }
}
