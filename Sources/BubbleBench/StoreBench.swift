import BubbleCore
import BubbleImport
import BubbleStats
import BubbleStore
import BubbleTestSupport
import Foundation
import GRDB

// MARK: Store (issue 20)

/// Issue 20's goals.
let storeImportGoal = 150_000.0, storeBareRatioGoal = 0.5, windowGoalMs = 2.0, searchGoalMs = 20.0, likeRatioGoal = 50.0,
    bytesPerMessageGoal = 500.0

let storeSizes = [250_000, 1_000_000]
func storeCaseName(_ size: Int) -> String { "store-import-\(size == 1_000_000 ? "1m" : "\(size / 1000)k")" }
func storeXML(_ size: Int) -> String { (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-bench-store-\(size).xml") }
func storeDB(_ size: Int) -> String { (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-bench-store-\(size).sqlite") }

var storeCases: [BenchCase] {
    storeSizes.map { size in (storeCaseName(size), { _ in try await storeImportCase(size) }) }
        + [
            ("store-bare-1m", { _ in try storeBareCase(1_000_000) }), ("store-queries-1m", { _ in try await storeQueryCase(1_000_000) }),
            ("stats-1m", { _ in try await statsCase(1_000_000) })
        ]
}

/// Issue 44's goal: a million-message conversation's statistics in at most this many seconds.
let statsGoalSeconds = 3.0

/// `bubbles stats --conversation` and the Stats tab on the 1M-message store (made by
/// store-import-1m when missing): the conversation read from SQLite, then its statistics in a
/// zone with summer time; and the statistics alone of a 1M-message conversation in memory (a
/// file's path).
func statsCase(_ size: Int) async throws -> Figures {
    if !FileManager.default.fileExists(atPath: storeDB(size)) { _ = try await storeImportCase(size) }
    let store = try SQLiteStore(path: storeDB(size))
    guard let c = try await store.conversations().first else { throw BenchError("empty store") }
    let zone = TimeZone(identifier: "Europe/Berlin")!
    var t = now()
    let conversation = try await store.load(c.id)
    let load = now() - t
    t = now()
    let stats = ConversationStats(conversation, timeZone: zone)
    let compute = now() - t
    let synthetic = SyntheticConversation.make(count: size, seed: 44)
    t = now()
    let alone = ConversationStats(synthetic, timeZone: zone)
    let memory = now() - t
    let total = load + compute
    return Figures(
        name: "stats-1m", messages: stats.messages,
        microsPerMessage: [
            "store read": load * 1e6 / Double(size), "stats": compute * 1e6 / Double(size),
            "stats (synthetic, in memory)": memory * 1e6 / Double(size)
        ],
        peakMemoryMB: peakMemoryMB(),
        notes: [
            "seconds": String(format: "%.2f (read %.2f + stats %.2f)", total, load, compute),
            "goal": String(format: "≤ %.0f s: %.1f× ", statsGoalSeconds, statsGoalSeconds / total) + (total <= statsGoalSeconds ? "(met)" : "(not met)"),
            "people": String(stats.people.count), "synthetic messages": String(alone.messages)
        ])
}

/// Words of five languages; a message is in one of them (English half the time), Chinese written
/// without spaces. "zeppelin" is the rare word (10 in a million), "the" a common one.
struct MultilingualText {
    var t = TextMaker()
    static let languages: [(share: UInt64, words: [String], separator: String)] = [
        (50, TextMaker.words, " "),
        (15, ["café", "crème", "été", "über", "straße", "garçon", "déjà", "très", "bien", "schön", "grüße", "morgen", "demain", "à"], " "),
        (15, ["привет", "как", "дела", "увидимся", "завтра", "спасибо", "хорошо", "москва", "встреча", "вечером", "да", "нет"], " "),
        (10, ["مرحبا", "كيف", "حالك", "شكرا", "غدا", "نلتقي", "في", "المساء", "صديقي", "جيد"], " "),
        (10, ["我们", "明天", "见面", "谢谢", "你好", "没问题", "今天", "天气", "很好", "晚上", "吃饭", "好的"], "")
    ]
    mutating func sentence(_ i: Int) -> String {
        var pick = t.next() % 100
        var language = Self.languages[0]
        for l in Self.languages { if pick < l.share { language = l; break }; pick -= l.share }
        let n = 2 + Int(t.next() % 14)
        var words: [String] = []
        for _ in 0..<n { words.append(language.words[Int(t.next() % UInt64(language.words.count))]) }
        if i % 100_003 == 77 { words.insert("zeppelin", at: words.count / 2) }
        return words.joined(separator: language.separator)
    }
}

func generateStoreXMLIfMissing(_ size: Int) throws {
    let path = storeXML(size)
    guard !FileManager.default.fileExists(atPath: path) else { return }
    FileHandle.standardError.write(Data("generating \(path)…\n".utf8))
    let w = try BufferedWriter(path: path)
    var text = MultilingualText()
    try w.write("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"\(size)\">\n")
    for i in 0..<size {
        let ms = String((1_700_000_000 + i * 30) * 1000)
        let type = text.t.next() % 2 == 0 ? "1" : "2"
        try w.write(
            "  <sms protocol=\"0\" address=\"+15550102000\" date=\"\(ms)\" type=\"\(type)\" body=\"\(xmlEscape(text.sentence(i)))\" read=\"1\" status=\"-1\" date_sent=\"\(ms)\" contact_name=\"Ann Lee\" />\n"
        )
    }
    try w.write("</smses>\n")
    try w.finish()
}

/// `bubbles import` of the generated backup into a new database, end to end (parse, key, copy,
/// index, one transaction): what a user waits for.
func storeImportCase(_ size: Int) async throws -> Figures {
    let db = storeDB(size)
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
    let before = residentMB()
    let start = now(), cpuStart = cpuSeconds()
    let store = try SQLiteStore(path: db)
    var options = ImportOptions(timeZone: utc)
    options.attachmentsFolder = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: options.attachmentsFolder!) }
    let summary = try await store.importStream(sourceFormat: "sms", title: nil, mediaFolder: NSTemporaryDirectory(), sortByDate: true) { add in
        let result = try withoutActuallyEscaping(add) { add in
            try Importer.load(path: storeXML(size), format: .smsBackup, options: options, messages: add)
        }
        return (result.conversation, "+15550102000")
    }
    let seconds = now() - start, cpu = cpuSeconds() - cpuStart
    let bytes = (try FileManager.default.attributesOfItem(atPath: storeXML(size))[.size] as? Int) ?? 0
    return Figures(
        name: storeCaseName(size), messages: summary.messagesAdded,
        microsPerMessage: ["import": seconds * 1e6 / Double(summary.messagesAdded), "import cpu": cpu * 1e6 / Double(summary.messagesAdded)],
        peakMemoryMB: peakMemoryMB(),
        notes: [
            "file MB": String(format: "%.0f", Double(bytes) / 1e6), "rss before": String(format: "%.0f", before),
            "seconds": String(format: "%.2f", seconds)
        ])
}

/// The bare limit: GRDB inserting the same rows, already parsed and keyed, with prepared
/// statements in one transaction into the same schema (message and its index entry), no parsing.
func storeBareCase(_ size: Int) throws -> Figures {
    var options = ImportOptions(timeZone: utc)
    options.attachmentsFolder = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: options.attachmentsFolder!) }
    let messages = try Importer.load(path: storeXML(size), format: .smsBackup, options: options).conversation.messages
    struct Row { var key: Int64; var date: Double; var sender: String?; var outgoing: Bool; var text: String?; var body: String? }
    var rows: [Row] = []
    rows.reserveCapacity(messages.count)
    for (i, m) in messages.enumerated() {
        rows.append(
            Row(
                key: Int64(i) &* 0x9E37_79B9, date: m.date.timeIntervalSince1970, sender: m.sender, outgoing: m.direction == .outgoing,
                text: m.text, body: m.text.map { storeIndexForm($0) }))
    }
    let db = storeDB(size) + ".bare"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
    _ = try SQLiteStore(path: db)  // the same schema
    var config = Configuration()
    config.prepareDatabase { try $0.execute(sql: "PRAGMA synchronous = NORMAL") }
    let pool = try DatabasePool(path: db, configuration: config)
    let start = now(), cpuStart = cpuSeconds()
    try pool.write { db in
        try db.execute(sql: "INSERT INTO conversation (title, source_format, chat_key, added) VALUES ('Ann', 'sms', 'bare', 0)")
        let insert = try db.makeStatement(
            sql: """
                INSERT INTO message (conversation_id, seq, source_key, date, sender, outgoing, system, text) VALUES (1, ?, ?, ?, ?, ?, 0, ?)
                """)
        let index = try db.makeStatement(sql: "INSERT INTO message_fts (rowid, body) VALUES (?, ?)")
        for (i, r) in rows.enumerated() {
            insert.setUncheckedArguments([i + 1, r.key, r.date, r.sender, r.outgoing, r.text])
            try insert.execute()
            if let body = r.body {
                index.setUncheckedArguments([db.lastInsertedRowID, body])
                try index.execute()
            }
        }
    }
    let seconds = now() - start, cpu = cpuSeconds() - cpuStart
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
    return Figures(
        name: "store-bare-1m", messages: rows.count,
        microsPerMessage: ["import": seconds * 1e6 / Double(rows.count), "import cpu": cpu * 1e6 / Double(rows.count)],
        peakMemoryMB: peakMemoryMB(), notes: ["seconds": String(format: "%.2f", seconds)])
}

/// The index form the store gives text (for the bare case, computed before timing).
func storeIndexForm(_ text: String) -> String {
    // Same rule as the store: CJK runs as bigrams (BubbleStore.SearchText is internal; the bench
    // only needs text of the same shape and size).
    var out = ""
    var run: [Character] = []
    func flush() {
        if run.count == 1 {
            out += " \(run[0]) "
        } else if run.count > 1 {
            out += " " + (0..<(run.count - 1)).map { String(run[$0]) + String(run[$0 + 1]) }.joined(separator: " ") + " "
        }
        run.removeAll()
    }
    for c in text {
        if let v = c.unicodeScalars.first?.value, (0x4E00...0x9FFF).contains(v) { run.append(c) } else { flush(); out.append(c) }
    }
    flush()
    return out
}

/// p50 and p99 of `samples` (ms).
/// Milliseconds each of `n` runs of `body` took.
func timings(_ n: Int, _ body: () throws -> Void) rethrows -> [Double] {
    var out: [Double] = []
    for _ in 0..<n { let t = now(); try body(); out.append((now() - t) * 1000) }
    return out
}

/// Milliseconds each of `n` runs of `body` took (the store's async calls).
func timedAsync(_ n: Int, _ body: () async throws -> Void) async rethrows -> [Double] {
    var out: [Double] = []
    for _ in 0..<n { let t = now(); try await body(); out.append((now() - t) * 1000) }
    return out
}

func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double) {
    let s = samples.sorted()
    return (s[s.count / 2], s[min(s.count - 1, Int(Double(s.count) * 0.99))])
}

/// The viewer's queries on the database the 1M import made: windows, date jumps, search
/// (rare and common word, top 50 with snippets) against LIKE scans, bytes per message.
func storeQueryCase(_ size: Int) async throws -> Figures {
    if !FileManager.default.fileExists(atPath: storeDB(size)) { _ = try await storeImportCase(size) }
    let store = try SQLiteStore(path: storeDB(size))
    guard let c = try await store.conversations().first, let bounds = try await store.bounds(of: c.id) else { throw BenchError("empty store") }
    var rng = TextMaker()
    var figures: [String: Double] = [:]
    var notes: [String: String] = [:]
    _ = try await store.messages(in: c.id, after: 0, limit: 100)  // warm the page cache once
    let window = percentiles(
        try await timedAsync(2_000) {
            let seq = Int64(rng.next() % UInt64(bounds.last)) + 1
            _ = try await store.messages(in: c.id, after: seq, limit: 100)
        })
    figures["window p50"] = window.p50; figures["window p99"] = window.p99
    let span = (c.last ?? Date()).timeIntervalSince(c.first ?? Date())
    let jump = percentiles(
        try await timedAsync(2_000) {
            let date = (c.first ?? Date()).addingTimeInterval(Double(rng.next() % 1_000_000) / 1_000_000 * span)
            if let seq = try await store.seq(in: c.id, atOrAfter: date) { _ = try await store.messages(in: c.id, after: seq - 1, limit: 100) }
        })
    figures["date jump p50"] = jump.p50; figures["date jump p99"] = jump.p99
    for (label, word) in [("rare", "zeppelin"), ("common", "the")] {
        var hits = 0
        let search = percentiles(try await timedAsync(100) { hits = try await store.search(StoreSearch(word, conversation: c.id, limit: 50)).count })
        figures["search \(label) p50"] = search.p50; figures["search \(label) p99"] = search.p99
        notes["\(label) hits"] = String(hits)
        // LIKE: every row's text read and compared (the whole table for a rare word).
        let queue = try DatabaseQueue(path: storeDB(size))
        let like = percentiles(
            try timings(5) {
                _ = try queue.read { db in
                    try Row.fetchAll(
                        db, sql: "SELECT seq, text FROM message WHERE conversation_id = ? AND text LIKE ? LIMIT 50",
                        arguments: [c.id, "%\(word)%"])
                }
            })
        figures["like \(label) p50"] = like.p50
    }
    // Bytes per message: tables, indexes and the FTS index (dbstat).
    let queue = try DatabaseQueue(path: storeDB(size))
    let sizes = try await queue.read { db -> (tables: Int, indexes: Int, fts: Int) in
        var tables = 0, indexes = 0, fts = 0
        for row in try Row.fetchAll(db, sql: "SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name") {
            let name: String = row["name"], bytes: Int = row["bytes"]
            if name.hasPrefix("message_fts") {
                fts += bytes
            } else if name.hasPrefix("message_") || name.hasPrefix("sqlite_autoindex") {
                indexes += bytes
            } else {
                tables += bytes
            }
        }
        return (tables, indexes, fts)
    }
    let n = Double(c.messageCount)
    figures["bytes tables"] = Double(sizes.tables) / n
    figures["bytes indexes"] = Double(sizes.indexes) / n
    figures["bytes fts"] = Double(sizes.fts) / n
    return Figures(name: "store-queries-1m", messages: c.messageCount, microsPerMessage: figures, peakMemoryMB: peakMemoryMB(), notes: notes)
}

func printStore(_ results: [String: Figures]) {
    let imports = storeSizes.compactMap { results[storeCaseName($0)] }
    guard !imports.isEmpty || results["store-queries-1m"] != nil else { return }
    print("")
    print("Store (SQLite through GRDB; a generated SMS backup in five languages, one conversation)")
    if !imports.isEmpty {
        print(
            pad("import", 22) + lpad("messages", 10) + lpad("msg/s", 10) + lpad("goal ×", 8) + lpad("÷ bare", 8)
                + lpad("msg/cpu-s", 11) + lpad("peak MB", 9) + lpad("file MB", 9))
        let bare = results["store-bare-1m"].map { 1e6 / $0.microsPerMessage["import"]! }
        for f in imports {
            let perSecond = 1e6 / f.microsPerMessage["import"]!
            print(
                pad(f.name, 22) + lpad(String(f.messages), 10) + lpad(String(format: "%.0f", perSecond), 10)
                    + lpad(String(format: "%.2f×", perSecond / storeImportGoal), 8)
                    + lpad(bare.map { String(format: "%.2f", perSecond / $0) } ?? "—", 8)
                    + lpad(String(format: "%.0f", 1e6 / f.microsPerMessage["import cpu"]!), 11)
                    + lpad(String(format: "%.0f", f.peakMemoryMB), 9) + lpad(f.notes["file MB"] ?? "", 9))
        }
        if let bare {
            print(
                pad("bare GRDB inserts", 22) + lpad("", 10) + lpad(String(format: "%.0f", bare), 10)
                    + "   (parsed rows, prepared statements, one transaction, same schema)")
        }
        print("goals: ≥ \(Int(storeImportGoal)) msg/s end to end, ≥ \(storeBareRatioGoal) of the bare inserts, peak memory flat in file size")
    }
    if let q = results["store-queries-1m"] {
        let f = q.microsPerMessage
        func ms(_ k: String) -> String { String(format: "%.3f", f[k] ?? .nan) }
        print(pad("query (ms)", 22) + lpad("p50", 9) + lpad("p99", 9) + "  goal")
        print(
            pad("window of 100", 22) + lpad(ms("window p50"), 9) + lpad(ms("window p99"), 9) + "  p99 ≤ \(windowGoalMs) ms"
                + ((f["window p99"] ?? 99) <= windowGoalMs ? " (met)" : " (not met)"))
        print(
            pad("date jump + window", 22) + lpad(ms("date jump p50"), 9) + lpad(ms("date jump p99"), 9) + "  p99 ≤ \(windowGoalMs) ms"
                + ((f["date jump p99"] ?? 99) <= windowGoalMs ? " (met)" : " (not met)"))
        for label in ["rare", "common"] {
            let ratio = (f["like \(label) p50"] ?? .nan) / (f["search \(label) p50"] ?? .nan)
            print(
                pad("search \(label) (top 50)", 22) + lpad(ms("search \(label) p50"), 9) + lpad(ms("search \(label) p99"), 9)
                    + "  p99 ≤ \(searchGoalMs) ms" + ((f["search \(label) p99"] ?? 99) <= searchGoalMs ? " (met)" : " (not met)")
                    + (label == "rare"
                        ? String(format: "; LIKE '%%word%%' %.1f ms = %.0f× slower", f["like \(label) p50"] ?? .nan, ratio)
                        : String(format: "; LIKE %.1f ms (stops at its first 50 rows, unranked)", f["like \(label) p50"] ?? .nan))
                    + " (\(q.notes["\(label) hits"] ?? "?") hits)")
        }
        let t = f["bytes tables"] ?? 0, i = f["bytes indexes"] ?? 0, s = f["bytes fts"] ?? 0
        print(
            String(
                format: "bytes per message: tables %.0f + indexes %.0f + FTS %.0f = %.0f (goal ≤ %.0f: %@)", t, i, s, t + i + s,
                bytesPerMessageGoal, t + i + s <= bytesPerMessageGoal ? "met" : "not met"))
    }
}

func printStats(_ results: [String: Figures]) {
    guard let f = results["stats-1m"] else { return }
    print("")
    print("Statistics of a 1,000,000-message conversation (release build; goal ≤ \(Int(statsGoalSeconds)) s, issue 44; ratio = goal ÷ ours)")
    print(pad("phase", 30) + lpad("µs/msg", 10))
    for (phase, value) in f.microsPerMessage.sorted(by: { $0.key < $1.key }) { print(pad(phase, 30) + lpad(String(format: "%.2f", value), 10)) }
    print(
        "store read + stats: \(f.notes["seconds"] ?? "?") s; goal \(f.notes["goal"] ?? "?"); peak \(String(format: "%.0f", f.peakMemoryMB)) MB; "
            + "\(f.messages) messages, \(f.notes["people"] ?? "?") people")
}
