import BubbleCore
import BubbleImport
import Foundation

// MARK: Convert: SMS Backup & Restore XML → native JSON

/// `bubbles convert backup.xml -o chat.json`, two ways, at two sizes (to see how time and memory
/// grow with the file; the files are generated once into $TMPDIR):
/// - the tool itself (the release `bubbles` beside this binary, run as a child; its peak memory
///   from `RUSAGE_CHILDREN`): messages stream from the importer through a spill file on disk to
///   the JSON, one at a time;
/// - in memory, for comparison: `Importer.load` builds the whole Conversation, then
///   `ConversationWriter` writes it.
let convertSizes = [250_000, 1_000_000]

func convertCaseName(_ size: Int, tool: Bool = true) -> String {
    "convert-sms-json-\(size >= 1_000_000 ? "\(size / 1_000_000)m" : "\(size / 1000)k")" + (tool ? "" : "-inmemory")
}

func convertBenchFile(_ size: Int) -> String {
    (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-convert-bench-sms-\(size).xml")
}

/// A one-conversation SMS backup of `count` messages: both directions, texts of varying length
/// with escaped characters and some multi-line ones, one per ~2 minutes. Streamed to disk.
func writeConvertBenchFile(_ size: Int) throws -> String {
    try writeBenchFile(convertBenchFile(size)) { put in
        let words = [
            "ok", "see", "you", "tomorrow", "at", "the", "station", "lunch", "sounds", "good", "&amp;", "&quot;fine&quot;",
            "running", "late", "sorry", "call", "me", "when", "free", "café", "naïve", "über", "😀", "weekend"
        ]
        var random = BenchRandom(state: 2026)
        func next() -> Int { random.next() }
        try put("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"\(size)\">\n")
        var date: Int64 = 1_600_000_000_000
        for i in 0..<size {
            date += Int64(5_000 + next() % 235_000)
            var body = ""
            for w in 0..<(2 + next() % 18) {
                body += (w == 0 ? "" : next() % 23 == 0 ? "&#10;" : " ") + words[next() % words.count]
            }
            try put(
                "  <sms protocol=\"0\" address=\"+15550102000\" date=\"\(date)\" type=\"\(i % 3 == 0 ? 2 : 1)\" subject=\"null\" body=\"\(body)\" toa=\"null\" sc_toa=\"null\" service_center=\"null\" read=\"1\" status=\"-1\" locked=\"0\" date_sent=\"0\" readable_date=\"\" contact_name=\"Ann Lee\" />\n"
            )
        }
        try put("</smses>\n")
    }
}

/// A deterministic generator for the benchmarks' inputs (a 64-bit LCG, its upper 31 bits), so
/// every run and machine measures the same data.
struct BenchRandom {
    var state: UInt64
    mutating func next() -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(state >> 33)
    }
}

/// Writes a generated input once (kept in $TMPDIR for the next run): `body` puts its text
/// through a 1 MiB buffer into `path.partial`, renamed to `path` when whole.
func writeBenchFile(_ path: String, _ body: (_ put: (String) throws -> Void) throws -> Void) throws -> String {
    if FileManager.default.fileExists(atPath: path) { return path }
    let partial = path + ".partial"
    guard FileManager.default.createFile(atPath: partial, contents: nil), let handle = FileHandle(forWritingAtPath: partial) else {
        throw BenchError("cannot write \(partial)")
    }
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 20)
    try body { s in
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 20 { try handle.write(contentsOf: buffer); buffer.removeAll(keepingCapacity: true) }
    }
    try handle.write(contentsOf: buffer)
    try handle.close()
    try FileManager.default.moveItem(atPath: partial, toPath: path)
    return path
}

/// Resident memory now, MB (/proc/self/statm).
func convertResidentMB() -> Double {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = Double(statm.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

func convertCase(size: Int) throws -> Figures {
    let input = try writeConvertBenchFile(size)
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let output = dir + "/chat.json"
    let fileBytes = (try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? 0
    let base = convertResidentMB()

    let start = now()
    let result = try Importer.load(path: input, format: .smsBackup, options: ImportOptions(timeZone: utc))
    let imported = now()
    let afterImport = convertResidentMB()
    let peakAfterImport = peakMemoryMB()

    guard FileManager.default.createFile(atPath: output, contents: nil), let handle = FileHandle(forWritingAtPath: output) else {
        throw BenchError("cannot write \(output)")
    }
    let c = result.conversation
    let writer = ConversationWriter(flush: { try handle.write(contentsOf: $0) })
    try writer.begin(title: c.title, me: result.me, theme: result.theme, participants: c.participants)
    for m in c.messages { try writer.write(m) }
    try writer.finish()
    try handle.close()
    let done = now()
    let count = c.messages.count
    let outBytes = (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
    return Figures(
        name: convertCaseName(size, tool: false), messages: count,
        microsPerMessage: [
            "import": (imported - start) * 1e6 / Double(count),
            "write": (done - imported) * 1e6 / Double(count),
            "total": (done - start) * 1e6 / Double(count)
        ],
        peakMemoryMB: peakMemoryMB(),
        notes: [
            "input MB": String(format: "%.0f", Double(fileBytes) / 1e6),
            "output MB": String(format: "%.0f", Double(outBytes) / 1e6),
            "rss base": String(format: "%.0f", base),
            "rss after import": String(format: "%.0f", afterImport),
            "peak after import": String(format: "%.0f", peakAfterImport)
        ])
}

/// The release `bubbles` beside this binary, run as a child with `arguments` (on CPU 0 only
/// with `oneCore`): its wall time in seconds and peak memory in MB (`RUSAGE_CHILDREN`: each
/// bench case is a process of its own).
func runReleaseTool(_ arguments: [String], oneCore: Bool = false) throws -> (seconds: Double, peakMB: Double) {
    let tool = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.deletingLastPathComponent().appendingPathComponent("bubbles").path
    guard FileManager.default.isExecutableFile(atPath: tool) else {
        throw BenchError("\(tool) is missing; build it with swift build -c release --product bubbles (make bench does)")
    }
    let p = Process()
    if oneCore {
        p.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        p.arguments = ["-c", "0", tool] + arguments
    } else {
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
    }
    // The driver reads this process's standard output (its figures): the tool's goes nowhere.
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    let start = now()
    try p.run()
    p.waitUntilExit()
    let seconds = now() - start
    guard p.terminationStatus == 0 else { throw BenchError("bubbles \(arguments.first ?? "") exited with \(p.terminationStatus)") }
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return (seconds, Double(usage.ru_maxrss) / 1024)
}

func convertToolCase(size: Int) throws -> Figures {
    try toolConvertCase(name: convertCaseName(size), input: try writeConvertBenchFile(size), messages: size)
}

/// The release `bubbles convert INPUT -o chat.json` as a child: µs per message, its peak memory,
/// the sizes of the input and the output.
func toolConvertCase(name: String, input: String, messages count: Int) throws -> Figures {
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let output = dir + "/chat.json"
    let run = try runReleaseTool(["convert", input, "-o", output, "--tz", "UTC"])
    let outBytes = (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
    let inBytes = (try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? 0
    return Figures(
        name: name, messages: count, microsPerMessage: ["total": run.seconds * 1e6 / Double(count)],
        peakMemoryMB: run.peakMB,
        notes: [
            "input MB": String(format: "%.0f", Double(inBytes) / 1e6),
            "output MB": String(format: "%.0f", Double(outBytes) / 1e6)
        ])
}

func printConvert(_ results: [String: Figures]) {
    let tools = convertSizes.compactMap { results[convertCaseName($0)] }
    if !tools.isEmpty {
        print("")
        print("bubbles convert SMS Backup & Restore XML → JSON (release tool; messages streamed through a spill file)")
        print(pad("case", 26) + lpad("in MB", 7) + lpad("out MB", 8) + lpad("messages", 10) + lpad("msg/s", 10) + lpad("peak MB", 9))
        for f in tools {
            print(
                pad(f.name, 26) + lpad(f.notes["input MB"] ?? "?", 7) + lpad(f.notes["output MB"] ?? "?", 8)
                    + lpad(String(f.messages), 10) + lpad(String(format: "%.0f", 1e6 / f.microsPerMessage["total"]!), 10)
                    + lpad(String(format: "%.0f", f.peakMemoryMB), 9))
        }
    }
    printConvertInMemory(results)
}

func printConvertInMemory(_ results: [String: Figures]) {
    let rows = convertSizes.compactMap { results[convertCaseName($0, tool: false)] }
    guard !rows.isEmpty else { return }
    print("")
    print("For comparison, in memory: Importer.load builds the whole Conversation, then ConversationWriter writes it")
    print(
        pad("case", 22) + lpad("in MB", 7) + lpad("out MB", 8) + lpad("messages", 10) + lpad("msg/s", 10)
            + lpad("write msg/s", 13) + lpad("peak MB", 9) + lpad("import peak", 13) + lpad("writer +MB", 12))
    for f in rows {
        let importPeak = Double(f.notes["peak after import"] ?? "") ?? 0
        print(
            pad(f.name, 22) + lpad(f.notes["input MB"] ?? "?", 7) + lpad(f.notes["output MB"] ?? "?", 8)
                + lpad(String(f.messages), 10) + lpad(String(format: "%.0f", 1e6 / f.microsPerMessage["total"]!), 10)
                + lpad(String(format: "%.0f", 1e6 / f.microsPerMessage["write"]!), 13)
                + lpad(String(format: "%.0f", f.peakMemoryMB), 9) + lpad(String(format: "%.0f", importPeak), 13)
                + lpad(String(format: "%.0f", f.peakMemoryMB - importPeak), 12))
    }
    print("writer +MB: what writing the JSON adds to the peak the import reached (the writer streams; it adds nothing).")
    print("Here the whole Conversation is held, so the peak grows with the file; the tool's streamed path above does not.")
}

// MARK: Convert: Telegram result.json → native JSON (issue 37: streamed like SMS)

/// `bubbles convert result.json -o chat.json` of a single-chat Telegram export at 100k and 1M
/// messages: the owner is inferred at the end and one message in ten replies to an earlier one,
/// so the tool streams through its spill, quotes the replies in a second pass and settles the
/// sides on the way out. Peak memory should not grow with the file (the SMS case's does not).
let telegramConvertSizes = [100_000, 1_000_000]

func telegramConvertCaseName(_ size: Int) -> String {
    "convert-telegram-json-" + (size >= 1_000_000 ? "\(size / 1_000_000)m" : "\(size / 1000)k")
}

func writeTelegramBenchFile(_ size: Int) throws -> String {
    try writeBenchFile((NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-convert-bench-telegram-\(size).json")) { put in
        let words = [
            "ok", "see", "you", "tomorrow", "at", "the", "station", "lunch", "sounds", "good", "\\\"fine\\\"",
            "running", "late", "sorry", "call", "me", "when", "free", "café", "naïve", "über", "😀", "weekend"
        ]
        var random = BenchRandom(state: 37)
        func next() -> Int { random.next() }
        try put("{\n \"name\": \"Ann Lee\",\n \"type\": \"personal_chat\",\n \"id\": 501,\n \"messages\": [\n")
        var date = 1_600_000_000
        for i in 1...size {
            date += 5 + next() % 235
            var body = ""
            for w in 0..<(2 + next() % 18) { body += (w == 0 ? "" : next() % 23 == 0 ? "\\n" : " ") + words[next() % words.count] }
            let ann = i % 3 != 0
            let reply = i > 10 && next() % 10 == 0 ? ", \"reply_to_message_id\": \(i - 1 - next() % min(i - 1, 500))" : ""
            try put(
                "  {\"id\": \(i), \"type\": \"message\", \"date\": \"2020-09-13T12:26:40\", \"date_unixtime\": \"\(date)\", "
                    + "\"from\": \"\(ann ? "Ann Lee" : "Ben Ode")\", \"from_id\": \"user\(ann ? 501 : 502)\"\(reply), \"text\": \"\(body)\"}"
                    + (i < size ? ",\n" : "\n"))
        }
        try put(" ]\n}\n")
    }
}

func telegramConvertCase(size: Int) throws -> Figures {
    try toolConvertCase(name: telegramConvertCaseName(size), input: try writeTelegramBenchFile(size), messages: size)
}

func printTelegramConvert(_ results: [String: Figures]) {
    let rows = telegramConvertSizes.compactMap { results[telegramConvertCaseName($0)] }
    guard !rows.isEmpty else { return }
    print("")
    print("bubbles convert Telegram result.json → JSON (release tool; streamed, owner inferred at the end, 1 in 10 messages a reply)")
    print(pad("case", 28) + lpad("in MB", 7) + lpad("out MB", 8) + lpad("messages", 10) + lpad("msg/s", 10) + lpad("peak MB", 9))
    for f in rows {
        print(
            pad(f.name, 28) + lpad(f.notes["input MB"] ?? "?", 7) + lpad(f.notes["output MB"] ?? "?", 8)
                + lpad(String(f.messages), 10) + lpad(String(format: "%.0f", 1e6 / f.microsPerMessage["total"]!), 10)
                + lpad(String(format: "%.0f", f.peakMemoryMB), 9))
    }
    if rows.count == 2 {
        print(
            "peak at 1M ÷ peak at 100k: " + String(format: "%.2f", rows[1].peakMemoryMB / rows[0].peakMemoryMB)
                + "× (goal: flat, as SMS; the quotes kept for replies are the part that grows)")
    }
}
