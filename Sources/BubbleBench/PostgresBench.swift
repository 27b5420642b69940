import BubbleCore
import BubbleImport
import BubbleStore
import BubbleTestSupport
import Foundation

// MARK: PostgreSQL (issue 23)

/// Issue 23's goal for imports by COPY.
let postgresImportGoal = 100_000.0
/// Live rounds: clients × messages each, on SQLite (one node), PostgreSQL one node, two nodes.
let postgresLiveRound = (clients: 10, each: 300)

/// One run, everything side by side: the generated 1M-message SMS backup imported into SQLite
/// and into PostgreSQL (COPY), the viewer's queries on both, and live messages with 10 clients
/// on SQLite (one node), PostgreSQL (one node) and PostgreSQL (two nodes, clients split between
/// them, every client reading everything: half the deliveries cross between the servers).
/// PostgreSQL 15 is the project's own (initdb into a temporary folder), with its defaults but
/// `synchronous_commit = off` — the durability of the SQLite store's WAL + `synchronous = NORMAL`
/// (a crash of the machine may lose the last commits, never corrupt).
func postgresCase() async throws -> Figures {
    let size = 1_000_000
    try generateStoreXMLIfMissing(size)
    var figures: [String: Double] = [:]
    var notes: [String: String] = [:]
    let pg = try TestPostgres.privateServer(durable: true)
    defer { pg.stop() }
    let media = NSTemporaryDirectory() + "bubblekit-bench-pg-media-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: media) }

    // Import: SQLite (as store-import-1m) and PostgreSQL, the same file, the same reader.
    let sqlite = try await storeImportCase(size)
    figures["sqlite import msg/s"] = 1e6 / sqlite.microsPerMessage["import"]!
    let url = try pg.createDatabase("bench")
    let store = try PostgresStore(url: url, mediaFolder: media)
    store.start()
    defer { store.stop() }
    var options = ImportOptions(timeZone: utc)
    options.attachmentsFolder = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: options.attachmentsFolder!) }
    let start = now(), cpuStart = cpuSeconds()
    let summary = try await store.importStream(sourceFormat: "sms", title: nil, mediaFolder: NSTemporaryDirectory(), sortByDate: true) { add in
        let result = try withoutActuallyEscaping(add) { add in
            try Importer.load(path: storeXML(size), format: .smsBackup, options: options, messages: add)
        }
        return (result.conversation, "+15550102000")
    }
    let seconds = now() - start
    figures["postgres import msg/s"] = Double(summary.messagesAdded) / seconds
    figures["postgres import client cpu µs"] = (cpuSeconds() - cpuStart) * 1e6 / Double(summary.messagesAdded)
    notes["postgres import s"] = String(format: "%.1f", seconds)
    // Where the server spent it: statements over a second (log_min_duration_statement).
    for line in pg.log.split(separator: "\n") where line.contains("duration:") {
        let text = String(line[line.range(of: "duration:")!.lowerBound...])
        let ms = text.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
        // "duration: 54039.564 ms  execute <unnamed>: INSERT INTO message …" (or "statement: …").
        let sql = text.range(of: ">: ").map { text[$0.upperBound...] } ?? text.range(of: "statement: ").map { text[$0.upperBound...] } ?? Substring(text)
        let statement = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ").prefix(40)
        notes["server \(statement)"] = String(format: "%.1f s", ms / 1000)
    }
    notes["postgres size MB"] = (try? pg.psql(String(url.split(separator: "/").last!), "SELECT pg_database_size(current_database()) / 1000000")) ?? "?"

    // Queries: the same as store-queries-1m, on both.
    let sqliteStore = try SQLiteStore(path: storeDB(size))
    for (name, s) in [("sqlite", sqliteStore as any ConversationStore), ("postgres", store as any ConversationStore)] {
        guard let c = try await s.conversations().first, let bounds = try await s.bounds(of: c.id) else { throw BenchError("\(name): empty store") }
        var rng = TextMaker()
        _ = try await s.messages(in: c.id, after: 0, limit: 100)
        let window = percentiles(
            try await timedAsync(2_000) { _ = try await s.messages(in: c.id, after: Int64(rng.next() % UInt64(bounds.last)) + 1, limit: 100) })
        figures["\(name) window p50"] = window.p50; figures["\(name) window p99"] = window.p99
        for (label, word) in [("rare", "zeppelin"), ("common", "the"), ("cjk", "明天")] {
            var hits = 0
            let search = percentiles(try await timedAsync(100) { hits = try await s.search(StoreSearch(word, conversation: c.id, limit: 50)).count })
            figures["\(name) search \(label) p50"] = search.p50; figures["\(name) search \(label) p99"] = search.p99
            notes["\(name) \(label) hits"] = String(hits)
        }
    }

    // Live: 10 clients, every one reading everything.
    let folder = NSTemporaryDirectory() + "bubblekit-bench-pg-live-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let liveURL = try pg.createDatabase("live")
    let sqliteNode = try BenchServer.start(["serve", "--db", folder + "/live.sqlite", "--port", "0", "--rate", "0"])
    defer { sqliteNode.stop() }
    let node1 = try BenchServer.start(["serve", "--db", liveURL, "--store-media", media, "--port", "0", "--rate", "0"])
    defer { node1.stop() }
    let node2 = try BenchServer.start(["serve", "--db", liveURL, "--store-media", media, "--port", "0", "--rate", "0"])
    defer { node2.stop() }
    for (name, ports) in [("sqlite 1 node", [sqliteNode.port]), ("postgres 1 node", [node1.port]), ("postgres 2 nodes", [node1.port, node2.port])] {
        let created = try HTTP.request(
            port: ports[0], method: "POST", path: "/api/v1/conversations",
            body: try JSONSerialization.data(withJSONObject: ["participants": ["Me", "Ann"]]))
        guard created.status == 201, let id = (try created.json() as? [String: Any])?["id"] as? Int else {
            throw BenchError("\(name): no conversation: \(created.status) \(created.text)")
        }
        let r = try liveRound(ports: ports, conversation: id, clients: postgresLiveRound.clients, each: postgresLiveRound.each)
        figures["\(name) msg/s"] = r.rate; figures["\(name) p50 ms"] = r.p50; figures["\(name) p99 ms"] = r.p99
    }
    return Figures(name: "postgres", messages: summary.messagesAdded, microsPerMessage: figures, peakMemoryMB: peakMemoryMB(), notes: notes)
}

func printPostgres(_ results: [String: Figures]) {
    guard let r = results["postgres"] else { return }
    let f = r.microsPerMessage
    func v(_ k: String, _ format: String = "%.0f") -> String { String(format: format, f[k] ?? .nan) }
    print("")
    print("PostgreSQL (the project's own PostgreSQL 15, synchronous_commit = off; the same 1M-message backup; ratio = PostgreSQL ÷ SQLite)")
    print(pad("import", 26) + lpad("SQLite", 10) + lpad("PostgreSQL", 12) + lpad("ratio", 8) + "  goal")
    let pgImport = f["postgres import msg/s"] ?? .nan
    print(
        pad("messages a second", 26) + lpad(v("sqlite import msg/s"), 10) + lpad(v("postgres import msg/s"), 12)
            + lpad(String(format: "%.2f", pgImport / (f["sqlite import msg/s"] ?? .nan)), 8)
            + "  ≥ \(Int(postgresImportGoal)) by COPY: "
            + String(format: "%.2f× (%@)", pgImport / postgresImportGoal, pgImport >= postgresImportGoal ? "met" : "not met")
            + " — \(r.notes["postgres import s"] ?? "?") s, database \(r.notes["postgres size MB"] ?? "?") MB")
    for (k, v) in r.notes.sorted(by: { $0.key < $1.key }) where k.hasPrefix("server ") { print("  \(v) in: \(k.dropFirst(7))…") }
    print(pad("query (ms)", 26) + lpad("SQLite p50/p99", 18) + lpad("PostgreSQL p50/p99", 22) + lpad("p99 ratio", 11))
    for (label, key) in [
        ("window of 100", "window"), ("search rare word", "search rare"), ("search common word", "search common"), ("search CJK (明天)", "search cjk")
    ] {
        print(
            pad(label, 26) + lpad(v("sqlite \(key) p50", "%.2f") + " / " + v("sqlite \(key) p99", "%.2f"), 18)
                + lpad(v("postgres \(key) p50", "%.2f") + " / " + v("postgres \(key) p99", "%.2f"), 22)
                + lpad(String(format: "%.1f", (f["postgres \(key) p99"] ?? .nan) / (f["sqlite \(key) p99"] ?? .nan)), 11))
    }
    print(
        "hits: "
            + ["rare", "common", "cjk"].map { "\($0) \(r.notes["sqlite \($0) hits"] ?? "?")/\(r.notes["postgres \($0) hits"] ?? "?")" }.joined(separator: ", ")
            + " (SQLite/PostgreSQL, top 50)")
    print(
        pad("live, \(postgresLiveRound.clients) clients × \(postgresLiveRound.each)", 26) + lpad("msg/s", 9) + lpad("p50 ms", 9) + lpad("p99 ms", 9)
            + lpad("msg/s ÷ SQLite", 16))
    for name in ["sqlite 1 node", "postgres 1 node", "postgres 2 nodes"] {
        print(
            pad(name, 26) + lpad(v("\(name) msg/s"), 9) + lpad(v("\(name) p50 ms", "%.1f"), 9) + lpad(v("\(name) p99 ms", "%.1f"), 9)
                + lpad(String(format: "%.2f", (f["\(name) msg/s"] ?? .nan) / (f["sqlite 1 node msg/s"] ?? .nan)), 16))
    }
}
