import BubbleCore
import BubbleImport
import Foundation
import GRDB

// MARK: Import

/// Issue 5's goal for every importer, messages per second.
let importGoal = 300_000.0

/// The import cases: format, size; the file is generated once into $TMPDIR and reused.
struct ImportCase {
    var name: String
    var format: ImportFormat
    /// SMS and Telegram: messages; WhatsApp: lines.
    var size: Int
    /// Messages per second the case should reach (issue 5's for the exports; issue 42's 200k for msgstore.db).
    var goal = importGoal
    var fileName: String {
        let ext =
            switch format {
            case .telegram, .discord: ".json"
            case .whatsapp: ".txt"
            case .whatsappDatabase: ".db"
            case .messenger, .instagram: ""  // a folder: the download unpacked
            default: ".xml"
            }
        return "bubblekit-bench-\(format.rawValue)-\(size)" + ext
    }
    var path: String { (NSTemporaryDirectory() as NSString).appendingPathComponent(fileName) }
}

let importCases = [
    ImportCase(name: "import-sms-250k", format: .smsBackup, size: 250_000),
    ImportCase(name: "import-sms-1m", format: .smsBackup, size: 1_000_000),
    ImportCase(name: "import-whatsapp-250k", format: .whatsapp, size: 250_000),
    ImportCase(name: "import-whatsapp-1m", format: .whatsapp, size: 1_000_000),
    ImportCase(name: "import-telegram-250k", format: .telegram, size: 250_000),
    ImportCase(name: "import-telegram-1m", format: .telegram, size: 1_000_000),
    ImportCase(name: "import-messenger-250k", format: .messenger, size: 250_000),
    ImportCase(name: "import-messenger-1m", format: .messenger, size: 1_000_000),
    ImportCase(name: "import-discord-250k", format: .discord, size: 250_000),
    ImportCase(name: "import-discord-1m", format: .discord, size: 1_000_000),
    ImportCase(name: "import-msgstore-1m", format: .whatsappDatabase, size: 1_000_000, goal: 200_000)
]

/// User + system CPU time of this process so far, seconds: on a shared machine, wall time also
/// counts the waits for a core.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Resident memory now (not the peak), MB.
func residentMB() -> Double {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = Double(statm.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

/// Bytes the model holds on the heap, counted: each message's stride plus the out-of-line storage
/// of its strings (Swift keeps strings of up to 15 UTF-8 bytes inline) — text, sender, id, photo
/// path and a reply's snippet, sender and id — plus the array itself.
func modelBytes(_ c: Conversation) -> Int {
    func heap(_ s: String?) -> Int { guard let s, s.utf8.count > 15 else { return 0 }; return 32 + s.utf8.count }
    var total = c.messages.capacity * MemoryLayout<Message>.stride
    for m in c.messages {
        total += heap(m.text) + heap(m.sender) + heap(m.id) + heap(m.image?.path)
        if let r = m.reply { total += heap(r.text) + heap(r.sender) + heap(r.id) }
    }
    return total
}

/// Imports the case's file (generated beforehand by the parent) and measures it.
func importCase(_ ic: ImportCase) throws -> Figures {
    var options = ImportOptions(timeZone: utc)
    options.attachmentsFolder = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: options.attachmentsFolder!) }
    let bytes = (try FileManager.default.attributesOfItem(atPath: ic.path)[.size] as? Int) ?? 0
    let before = residentMB()
    let start = now(), cpuStart = cpuSeconds()
    let result = try Importer.load(path: ic.path, format: ic.format, options: options)
    let seconds = now() - start, cpu = cpuSeconds() - cpuStart
    let after = residentMB()
    let count = result.conversation.messages.count
    let model = Double(modelBytes(result.conversation)) / 1_048_576
    return Figures(
        name: ic.name, messages: count,
        microsPerMessage: ["import": seconds * 1e6 / Double(count), "import cpu": cpu * 1e6 / Double(count)],
        peakMemoryMB: peakMemoryMB(),
        notes: [
            "file MB": String(format: "%.0f", Double(bytes) / 1e6), "rss before": String(format: "%.0f", before),
            "rss after": String(format: "%.0f", after), "model MB": String(format: "%.0f", model),
            "skipped": String(result.skipped), "warnings": String(result.warnings.count),
            "seconds": String(format: "%.2f", seconds)
        ])
}

func printImport(_ results: [String: Figures]) {
    let rows = importCases.compactMap { c in results[c.name].map { (c, $0) } }
    guard !rows.isEmpty else { return }
    print("")
    print(
        "Import (release build, \(ProcessInfo.processInfo.activeProcessorCount) cores; ratio = ours ÷ the case's goal: \(Int(importGoal)) msg/s, msgstore.db 200000)"
    )
    print(
        pad("case", 22) + lpad("file MB", 9) + lpad("messages", 10) + lpad("msg/s", 10) + lpad("ratio", 8)
            + lpad("msg/cpu-s", 11) + lpad("ratio", 8)
            + lpad("peak MB", 9) + lpad("model MB", 10) + lpad("peak−model", 12))
    for (c, f) in rows {
        let perSecond = 1e6 / f.microsPerMessage["import"]!
        let perCPU = 1e6 / (f.microsPerMessage["import cpu"] ?? .nan)
        let model = Double(f.notes["model MB"] ?? "") ?? 0
        print(
            pad(c.name, 22) + lpad(f.notes["file MB"] ?? "?", 9) + lpad(String(f.messages), 10)
                + lpad(String(format: "%.0f", perSecond), 10) + lpad(String(format: "%.2f×", perSecond / c.goal), 8)
                + lpad(String(format: "%.0f", perCPU), 11) + lpad(String(format: "%.2f×", perCPU / c.goal), 8)
                + lpad(String(format: "%.0f", f.peakMemoryMB), 9) + lpad(String(format: "%.0f", model), 10)
                + lpad(String(format: "%.0f", f.peakMemoryMB - model), 12))
    }
    print("msg/s: wall clock; msg/cpu-s: per second of this process's CPU time (the machine may be shared).")
    print("model MB: the imported Conversation's messages counted (stride + out-of-line strings); peak−model is what the")
    print("importer needs on top (process, buffers, allocator slack): it should stay flat from the small file to the big one.")
}

// MARK: Generated exports

/// Deterministic text: words from a small list, lengths varying like chat messages.
struct TextMaker {
    var random = BenchRandom(state: 0x9E37_79B9_7F4A_7C15)
    static let words = [
        "ok", "see", "you", "tomorrow", "at", "the", "station", "lunch", "sounds", "good", "did", "we",
        "need", "anything", "else", "for", "trip", "photos", "coming", "later", "thanks", "so", "much",
        "running", "late", "sorry", "call", "me", "when", "free", "café", "naïve", "über", "weekend"
    ]
    mutating func next() -> UInt64 { UInt64(random.next()) }
    mutating func sentence() -> String {
        let n = 2 + Int(next() % 14)
        var out = ""
        for i in 0..<n {
            if i > 0 { out += " " }
            out += Self.words[Int(next() % UInt64(Self.words.count))]
        }
        return out
    }
}

/// Writes a file in 1 MiB pieces, to `path.partial` first, renamed when complete.
final class BufferedWriter {
    let path: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    init(path: String) throws {
        self.path = path
        _ = FileManager.default.createFile(atPath: path + ".partial", contents: nil)
        guard let h = FileHandle(forWritingAtPath: path + ".partial") else { throw BenchError("cannot write \(path)") }
        handle = h
        buffer.reserveCapacity(1 << 20)
    }
    func write(_ s: String) throws {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 20 { try flush() }
    }
    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
    func finish() throws {
        try flush()
        try handle.close()
        _ = try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: path + ".partial", toPath: path)
    }
}

/// Makes the case's file unless it is already there.
func generateIfMissing(_ ic: ImportCase) throws {
    guard !FileManager.default.fileExists(atPath: ic.path) else { return }
    FileHandle.standardError.write(Data("generating \(ic.path)…\n".utf8))
    if ic.format == .messenger { return try generateMessenger(ic) }
    if ic.format == .whatsappDatabase { return try generateMsgstore(ic) }
    let w = try BufferedWriter(path: ic.path)
    var t = TextMaker()
    let start = 1_700_000_000  // 2023-11-14
    switch ic.format {
    case .smsBackup:
        // One conversation (Ann Lee), as a backup of one thread; 1 in 50 is an MMS with a text part;
        // some bodies carry escapes, newlines and emoji as surrogate-pair references.
        try w.write("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<!--File Created By SMS Backup & Restore v10.20.002-->\n")
        try w.write("<smses count=\"\(ic.size)\" backup_set=\"5b6a7c1e-0000-4000-8000-000000000000\" backup_date=\"1700000000000\" type=\"full\">\n")
        for i in 0..<ic.size {
            let ms = String((start + i * 30) * 1000)
            var body = xmlEscape(t.sentence())
            switch i % 10 {
            case 3: body += " &#55357;&#56832;"
            case 6: body += " &quot;R&amp;R&quot;&#10;" + xmlEscape(t.sentence())
            default: break
            }
            let type = t.next() % 2 == 0 ? "1" : "2"
            if i % 50 == 49 {
                try w.write(
                    "  <mms date=\"\(ms)\" rr=\"129\" sub=\"null\" ct_t=\"application/vnd.wap.multipart.related\" read_status=\"null\" seen=\"1\" msg_box=\"\(type)\" address=\"+15550102000\" sub_cs=\"null\" resp_st=\"null\" retr_st=\"null\" d_tm=\"null\" text_only=\"1\" exp=\"604800\" locked=\"0\" m_id=\"mid\(i)\" st=\"null\" retr_txt_cs=\"null\" retr_txt=\"null\" creator=\"com.google.android.apps.messaging\" date_sent=\"0\" read=\"1\" m_size=\"140\" rpt_a=\"null\" ct_cls=\"null\" pri=\"129\" sub_id=\"1\" tr_id=\"T\(i)\" resp_txt=\"null\" ct_l=\"null\" m_cls=\"personal\" d_rpt=\"129\" v=\"18\" _id=\"\(i)\" m_type=\"132\" readable_date=\"Nov 14, 2023 10:13:20 PM\" contact_name=\"Ann Lee\">\n"
                )
                try w.write(
                    "    <parts>\n      <part seq=\"0\" ct=\"text/plain\" name=\"null\" chset=\"106\" cd=\"null\" fn=\"null\" cid=\"&lt;text_0&gt;\" cl=\"text_0.txt\" ctt_s=\"null\" ctt_t=\"null\" text=\"\(body)\" />\n    </parts>\n"
                )
                try w.write(
                    "    <addrs>\n      <addr address=\"+15550102000\" type=\"\(type == "1" ? "137" : "151")\" charset=\"106\" />\n      <addr address=\"insert-address-token\" type=\"\(type == "1" ? "151" : "137")\" charset=\"106\" />\n    </addrs>\n  </mms>\n"
                )
            } else {
                try w.write(
                    "  <sms protocol=\"0\" address=\"+15550102000\" date=\"\(ms)\" type=\"\(type)\" subject=\"null\" body=\"\(body)\" toa=\"null\" sc_toa=\"null\" service_center=\"null\" read=\"1\" status=\"-1\" locked=\"0\" date_sent=\"\(ms)\" sub_id=\"1\" readable_date=\"Nov 14, 2023 10:13:20 PM\" contact_name=\"Ann Lee\" />\n"
                )
            }
        }
        try w.write("</smses>\n")
    case .whatsapp:
        // Android, US English; 1 message in 20 has a second line, so `size` lines hold a few
        // fewer messages.
        var lines = 0, i = 0
        while lines < ic.size {
            let date = Date(timeIntervalSince1970: TimeInterval(start + i * 60))
            let c = Calendar(identifier: .gregorian).dateComponents(in: utc, from: date)
            let author = t.next() % 2 == 0 ? "Ann Lee" : "Ben Ode"
            try w.write("\(c.month!)/\(c.day!)/\(c.year! % 100), \(c.hour!):\(c.minute! < 10 ? "0" : "")\(c.minute!) - \(author): \(t.sentence())\n")
            lines += 1
            if i % 20 == 7, lines < ic.size {
                try w.write(t.sentence() + "\n")
                lines += 1
            }
            i += 1
        }
    case .telegram:
        // A single-chat export as Telegram Desktop writes it (one-space indent, text_entities).
        try w.write("{\n \"name\": \"Ann Lee\",\n \"type\": \"personal_chat\",\n \"id\": 5012345678,\n \"messages\": [\n")
        for i in 0..<ic.size {
            let unix = start + i * 30
            let incoming = t.next() % 2 == 0
            let text = jsonEscape(t.sentence() + (i % 10 == 3 ? " 😀" : ""))
            let textField: String
            if i % 10 == 5 {
                textField =
                    "  \"text\": [\n   \"\(text) \",\n   {\n    \"type\": \"link\",\n    \"text\": \"https://example.com/\(i)\"\n   }\n  ],\n"
                    + "  \"text_entities\": [\n   {\n    \"type\": \"plain\",\n    \"text\": \"\(text) \"\n   },\n   {\n    \"type\": \"link\",\n    \"text\": \"https://example.com/\(i)\"\n   }\n  ]\n"
            } else {
                textField = "  \"text\": \"\(text)\",\n  \"text_entities\": [\n   {\n    \"type\": \"plain\",\n    \"text\": \"\(text)\"\n   }\n  ]\n"
            }
            try w.write(
                "  {\n   \"id\": \(i + 1),\n   \"type\": \"message\",\n   \"date\": \"2023-11-14T22:13:20\",\n   \"date_unixtime\": \"\(unix)\",\n"
                    + "   \"from\": \"\(incoming ? "Ann Lee" : "Leo Park")\",\n   \"from_id\": \"user\(incoming ? 5_012_345_678 : 4_098_765_432)\",\n"
                    + (i % 17 == 4 ? "   \"reply_to_message_id\": \(i),\n" : "") + textField + (i + 1 < ic.size ? "  },\n" : "  }\n"))
        }
        try w.write(" ]\n}\n")
    case .discord:
        // One server channel as DiscordChatExporter writes it (two-space indent, relaxed
        // escaping); 1 in 10 with markdown, 1 in 17 a reply, 1 in 25 with a reaction.
        try w.write(
            "{\n  \"guild\": {\n    \"id\": \"2000\",\n    \"name\": \"Hikers\",\n    \"iconUrl\": \"https://cdn.discordapp.com/icons/2000/a.png\"\n  },\n"
                + "  \"channel\": {\n    \"id\": \"2001\",\n    \"type\": \"GuildTextChat\",\n    \"categoryId\": \"2100\",\n    \"category\": \"Outdoors\",\n"
                + "    \"name\": \"general\",\n    \"topic\": null\n  },\n  \"dateRange\": {\n    \"after\": null,\n    \"before\": null\n  },\n"
                + "  \"exportedAt\": \"2024-03-01T12:00:00.000+01:00\",\n  \"messages\": [\n")
        let base = Int64(130_000_000_000_000_000)
        for i in 0..<ic.size {
            let date = Date(timeIntervalSince1970: TimeInterval(start + i * 30))
            let c = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(secondsFromGMT: 3600)!, from: date)
            func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
            let stamp = "\(c.year!)-\(two(c.month!))-\(two(c.day!))T\(two(c.hour!)):\(two(c.minute!)):\(two(c.second!)).\(100 + i % 900)+01:00"
            let ann = t.next() % 2 == 0
            var text = jsonEscape(t.sentence())
            if i % 10 == 3 { text = "**" + text + "** 😀" }
            let author =
                ann
                ? "{\n        \"id\": \"501\",\n        \"name\": \"ann\",\n        \"discriminator\": \"0000\",\n        \"nickname\": \"Ann\",\n        \"color\": null,\n        \"isBot\": false,\n        \"roles\": [],\n        \"avatarUrl\": \"https://cdn.discordapp.com/embed/avatars/1.png\"\n      }"
                : "{\n        \"id\": \"503\",\n        \"name\": \"kai\",\n        \"discriminator\": \"0000\",\n        \"nickname\": \"Kai\",\n        \"color\": \"#1F8B4C\",\n        \"isBot\": false,\n        \"roles\": [],\n        \"avatarUrl\": \"https://cdn.discordapp.com/embed/avatars/3.png\"\n      }"
            let reply = i % 17 == 4
            let reactions =
                i % 25 == 7
                ? "[\n        {\n          \"emoji\": {\n            \"id\": \"\",\n            \"name\": \"👍\",\n            \"code\": \"thumbsup\",\n            \"isAnimated\": false,\n            \"imageUrl\": \"https://cdn.jsdelivr.net/gh/twitter/twemoji@latest/assets/svg/1f44d.svg\"\n          },\n          \"count\": 1\n        }\n      ]"
                : "[]"
            try w.write(
                "    {\n      \"id\": \"\(base + Int64(i))\",\n      \"type\": \"\(reply ? "Reply" : "Default")\",\n      \"timestamp\": \"\(stamp)\",\n"
                    + "      \"timestampEdited\": null,\n      \"callEndedTimestamp\": null,\n      \"isPinned\": false,\n      \"content\": \"\(text)\",\n"
                    + "      \"author\": \(author),\n      \"attachments\": [],\n      \"embeds\": [],\n      \"stickers\": [],\n      \"reactions\": \(reactions),\n      \"mentions\": []"
                    + (reply
                        ? ",\n      \"reference\": {\n        \"messageId\": \"\(base + Int64(i - 1))\",\n        \"channelId\": \"2001\",\n        \"guildId\": \"2000\"\n      }"
                        : "")
                    + (i + 1 < ic.size ? "\n    },\n" : "\n    }\n"))
        }
        try w.write("  ],\n  \"messageCount\": \(ic.size)\n}\n")
    default:
        throw BenchError("no generator for \(ic.format)")
    }
    try w.finish()
}

/// A Messenger download unpacked: one thread of `size` messages over files of 10,000, each
/// newest first, every non-ASCII byte escaped as Meta does (mojibake); 1 in 20 with a reaction,
/// 1 in 50 a shared link.
func generateMessenger(_ ic: ImportCase) throws {
    let partial = ic.path + ".partial"
    try? FileManager.default.removeItem(atPath: partial)
    let thread = partial + "/your_activity_across_facebook/messages/inbox/annlee_10158"
    try FileManager.default.createDirectory(atPath: thread, withIntermediateDirectories: true)
    func meta(_ s: String) -> String {
        var out = ""
        for b in jsonEscape(s).utf8 {
            if b < 0x80 { out.unicodeScalars.append(Unicode.Scalar(b)) } else { out += String(format: "\\u00%02x", b) }
        }
        return out
    }
    var t = TextMaker()
    let start = 1_700_000_000_000
    let perFile = 10_000
    let files = (ic.size + perFile - 1) / perFile
    for f in 0..<files {
        let w = try BufferedWriter(path: thread + "/message_\(f + 1).json")
        try w.write(
            "{\n  \"participants\": [\n    {\n      \"name\": \"Ann Lee\"\n    },\n    {\n      \"name\": \"\(meta("Zoë Martin"))\"\n    }\n  ],\n  \"messages\": [\n"
        )
        // File 1 holds the newest messages, each file newest first.
        let newest = ic.size - 1 - f * perFile
        let oldest = max(0, newest - perFile + 1)
        for i in stride(from: newest, through: oldest, by: -1) {
            let ann = t.next() % 2 == 0
            var body =
                "      \"sender_name\": \"\(ann ? "Ann Lee" : meta("Zoë Martin"))\",\n      \"timestamp_ms\": \(start + i * 30_000),\n"
                + "      \"content\": \"\(meta(t.sentence() + (i % 10 == 3 ? " 😀" : "")))\""
            if i % 20 == 5 {
                body +=
                    ",\n      \"reactions\": [\n        {\n          \"reaction\": \"\(meta("❤️"))\",\n          \"actor\": \"\(ann ? meta("Zoë Martin") : "Ann Lee")\"\n        }\n      ]"
            }
            if i % 50 == 11 { body += ",\n      \"share\": {\n        \"link\": \"https://example.org/\(i)\"\n      }" }
            try w.write("    {\n" + body + ",\n      \"is_geoblocked_for_viewer\": false\n    }" + (i > oldest ? ",\n" : "\n"))
        }
        try w.write(
            "  ],\n  \"title\": \"Ann Lee\",\n  \"is_still_participant\": true,\n  \"thread_path\": \"inbox/annlee_10158\",\n  \"magic_words\": [],\n"
                + "  \"joinable_mode\": {\n    \"mode\": 1,\n    \"link\": \"\"\n  }\n}\n")
        try w.finish()
    }
    try FileManager.default.moveItem(atPath: partial, toPath: ic.path)
}

func xmlEscape(_ s: String) -> String {
    s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: "\"", with: "&quot;")
}

func jsonEscape(_ s: String) -> String {
    s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
}

/// A WhatsApp msgstore.db in the normalised schema with WhatsApp's own indexes: one chat of
/// `size` messages (a tenth outgoing and read, 1 in 20 a reply, 1 in 50 with a reaction, 1 in 100
/// a photo whose file is not there) and a small group beside it.
func generateMsgstore(_ ic: ImportCase) throws {
    let tmp = ic.path + ".part"
    try? FileManager.default.removeItem(atPath: tmp)
    let queue = try DatabaseQueue(path: tmp)
    try queue.write { db in
        try db.execute(
            sql: """
                CREATE TABLE jid (_id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, server TEXT NOT NULL, agent INTEGER, device INTEGER, type INTEGER, raw_string TEXT);
                CREATE TABLE chat (_id INTEGER PRIMARY KEY AUTOINCREMENT, jid_row_id INTEGER UNIQUE, hidden INTEGER, subject TEXT, created_timestamp INTEGER);
                CREATE TABLE message (_id INTEGER PRIMARY KEY AUTOINCREMENT, chat_row_id INTEGER NOT NULL, from_me INTEGER NOT NULL, key_id TEXT NOT NULL, sender_jid_row_id INTEGER, status INTEGER, broadcast INTEGER, recipient_count INTEGER, participant_hash TEXT, origination_flags INTEGER, origin INTEGER, timestamp INTEGER, received_timestamp INTEGER, receipt_server_timestamp INTEGER, message_type INTEGER, text_data TEXT, starred INTEGER, lookup_tables INTEGER, sort_id INTEGER NOT NULL DEFAULT 0, message_add_on_flags INTEGER);
                CREATE UNIQUE INDEX message_key_index ON message (chat_row_id, from_me, key_id, sender_jid_row_id);
                CREATE INDEX message_sort_id_index ON message (chat_row_id, sort_id);
                CREATE TABLE message_media (message_row_id INTEGER PRIMARY KEY, chat_row_id INTEGER, file_path TEXT, file_size INTEGER, mime_type TEXT, media_name TEXT, media_duration INTEGER, page_count INTEGER, width INTEGER, height INTEGER, media_caption TEXT);
                CREATE TABLE message_quoted (message_row_id INTEGER PRIMARY KEY AUTOINCREMENT, chat_row_id INTEGER NOT NULL, parent_message_chat_row_id INTEGER NOT NULL, from_me INTEGER NOT NULL, sender_jid_row_id INTEGER, key_id TEXT NOT NULL, timestamp INTEGER, message_type INTEGER, origin INTEGER, text_data TEXT, payment_transaction_id TEXT, lookup_tables INTEGER);
                CREATE TABLE message_add_on (_id INTEGER PRIMARY KEY AUTOINCREMENT, chat_row_id INTEGER NOT NULL, from_me INTEGER NOT NULL, key_id TEXT NOT NULL, sender_jid_row_id INTEGER, parent_message_row_id INTEGER NOT NULL, timestamp INTEGER, status INTEGER, message_add_on_type INTEGER);
                CREATE INDEX message_add_on_index ON message_add_on (chat_row_id, parent_message_row_id);
                CREATE TABLE message_add_on_reaction (message_add_on_row_id INTEGER PRIMARY KEY, reaction TEXT, sender_timestamp INTEGER);
                CREATE TABLE message_system (message_row_id INTEGER PRIMARY KEY, action_type INTEGER NOT NULL);
                CREATE TABLE message_edit_info (message_row_id INTEGER PRIMARY KEY, original_key_id TEXT NOT NULL, edited_timestamp INTEGER NOT NULL, sender_timestamp INTEGER NOT NULL);
                CREATE TABLE message_location (message_row_id INTEGER PRIMARY KEY, chat_row_id INTEGER, latitude REAL, longitude REAL, place_name TEXT, place_address TEXT, url TEXT);
                CREATE TABLE call_log (_id INTEGER PRIMARY KEY AUTOINCREMENT, jid_row_id INTEGER, from_me INTEGER, call_id TEXT, timestamp INTEGER, video_call INTEGER, duration INTEGER, call_result INTEGER, group_jid_row_id INTEGER NOT NULL DEFAULT 0);
                INSERT INTO jid VALUES (1, '15550102000', 's.whatsapp.net', 0, 0, 0, '15550102000@s.whatsapp.net');
                INSERT INTO jid VALUES (2, '120363025246125486', 'g.us', 0, 0, 0, '120363025246125486@g.us');
                INSERT INTO chat VALUES (1, 1, 0, NULL, 1700000000000);
                INSERT INTO chat VALUES (2, 2, 0, 'Group', 1700000000000);
                """)
        var t = TextMaker()
        let message = try db.makeStatement(
            sql:
                "INSERT INTO message (_id, chat_row_id, from_me, key_id, sender_jid_row_id, status, timestamp, message_type, text_data, sort_id) VALUES (?,1,?,?,0,?,?,?,?,?)"
        )
        let quoted = try db.makeStatement(sql: "INSERT INTO message_quoted VALUES (?,1,1,?,0,?,?,0,0,?,NULL,0)")
        let media = try db.makeStatement(
            sql: "INSERT INTO message_media (message_row_id, chat_row_id, file_path, mime_type, width, height) VALUES (?,1,?,'image/jpeg',1280,960)")
        let addOn = try db.makeStatement(sql: "INSERT INTO message_add_on VALUES (?,1,0,?,0,?,?,0,56)")
        let reaction = try db.makeStatement(sql: "INSERT INTO message_add_on_reaction VALUES (?,'❤️',?)")
        var texts: [Int: String] = [:]
        for i in 1...ic.size {
            let fromMe = i % 10 == 0 ? 1 : i % 3 == 0 ? 1 : 0
            let time = Int64(1_700_000_000_000) + Int64(i) * 60_000
            let photo = i % 100 == 0
            let text = photo ? nil : t.sentence()
            if let text, i % 20 == 1 { texts[i] = text }
            try message.execute(arguments: [i, fromMe, "K\(i)", fromMe == 1 ? 13 : 0, time, photo ? 1 : 0, text, i])
            if photo { try media.execute(arguments: [i, "Media/WhatsApp Images/IMG-\(i).jpg"]) }
            if i % 20 == 2, let original = texts.removeValue(forKey: i - 1) {
                try quoted.execute(arguments: [i, (i - 1) % 3 == 0 ? 1 : 0, "K\(i - 1)", time - 60_000, original])
            }
            if i % 50 == 0 {
                try addOn.execute(arguments: [i / 50, "R\(i)", i, time + 1000])
                try reaction.execute(arguments: [i / 50, time + 1000])
            }
        }
    }
    try queue.close()
    try FileManager.default.moveItem(atPath: tmp, toPath: ic.path)
}
