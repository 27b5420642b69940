import BubbleCore
import Foundation
import BubbleTestSupport

// MARK: A whole backup (issue 27): `bubbles render BACKUP --all`

/// 300 conversations, 1,000,000 messages in one SMS backup, rendered with `--all` to PDF and to
/// HTML by the release tool as a child process (its peak memory from `RUSAGE_CHILDREN`: each case
/// is a process of its own): on one core (`taskset -c 0`, `--jobs 1`) and on every core (the
/// default jobs). `--jobs 1` alone is not one core: a big conversation's PDF is still painted
/// in parts on every core.
let backupConversations = 300, backupMessages = 1_000_000
let backupCases: [(name: String, format: String, jobs: Int?)] = [
    ("backup-pdf-1core", "pdf", 1), ("backup-pdf-allcores", "pdf", nil),
    ("backup-html-1core", "html", 1), ("backup-html-allcores", "html", nil)
]

func backupFile() -> String {
    (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-bench-backup-\(backupConversations)x\(backupMessages).xml")
}

/// Conversations of very different sizes (a few busy ones, many small, as on a phone), their
/// messages interleaved by date as the app writes them.
func generateBackupIfMissing() throws {
    let path = backupFile()
    guard !FileManager.default.fileExists(atPath: path) else { return }
    FileHandle.standardError.write(Data("generating \(path)…\n".utf8))
    let w = try BufferedWriter(path: path)
    var t = TextMaker()
    // Weights ~ 1/(k+1): conversation k gets a share of the messages by a Zipf-like law.
    let weights = (0..<backupConversations).map { 1.0 / Double($0 + 1) }
    let total = weights.reduce(0, +)
    var cumulative: [Double] = []
    var sum = 0.0
    for x in weights { sum += x / total; cumulative.append(sum) }
    try w.write("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"\(backupMessages)\">\n")
    for i in 0..<backupMessages {
        let u = Double(t.next() % 1_000_000) / 1_000_000
        var lo = 0, hi = cumulative.count - 1
        while lo < hi { let mid = (lo + hi) / 2; if cumulative[mid] < u { lo = mid + 1 } else { hi = mid } }
        let ms = String((1_600_000_000 + i * 60) * 1000)
        let type = t.next() % 2 == 0 ? "1" : "2"
        try w.write(
            "  <sms protocol=\"0\" address=\"+1555\(String(format: "%07d", lo))\" date=\"\(ms)\" type=\"\(type)\" body=\"\(xmlEscape(t.sentence()))\" read=\"1\" status=\"-1\" contact_name=\"Contact \(lo)\" />\n"
        )
    }
    try w.write("</smses>\n")
    try w.finish()
}

func backupCase(_ name: String) throws -> Figures {
    guard let c = backupCases.first(where: { $0.name == name }) else { throw BenchError("no case \(name)") }
    try generateBackupIfMissing()
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let run = try runReleaseTool(
        ["render", backupFile(), "--all", "-o", dir + "/out", "--format", c.format, "--tz", "UTC"]
            + (c.jobs.map { ["--jobs", String($0)] } ?? []), oneCore: c.jobs == 1)
    let files = (try? FileManager.default.contentsOfDirectory(atPath: dir + "/out").filter { $0.hasSuffix("." + c.format) }.count) ?? 0
    return Figures(
        name: name, messages: backupMessages, microsPerMessage: ["total": run.seconds * 1e6 / Double(backupMessages)],
        peakMemoryMB: run.peakMB,
        notes: [
            "files": String(files), "seconds": String(format: "%.1f", run.seconds),
            "jobs": String(c.jobs ?? UsableCores.count)
        ])
}

/// The same backup into the store with one `bubbles import` (issue 47): every conversation, each
/// in its own transaction, into SQLite and into PostgreSQL 15 (the project's own, `initdb` into
/// a temporary folder), by the release tool as a child process (its peak memory its own).
let backupImportCases = ["backup-import-sqlite", "backup-import-postgres"]

func backupImportCase(_ name: String) throws -> Figures {
    try generateBackupIfMissing()
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var pg: TestPostgres?
    defer { pg?.stop() }
    let db: [String]
    if name.hasSuffix("postgres") {
        let server = try TestPostgres.privateServer(durable: true)
        pg = server
        db = ["--db", try server.createDatabase("backup"), "--store-media", dir + "/media"]
    } else {
        db = ["--db", dir + "/backup.sqlite"]
    }
    let run = try runReleaseTool(["import", backupFile(), "--tz", "UTC"] + db)
    return Figures(
        name: name, messages: backupMessages, microsPerMessage: ["total": run.seconds * 1e6 / Double(backupMessages)],
        peakMemoryMB: run.peakMB, notes: ["seconds": String(format: "%.1f", run.seconds)])
}

func printBackup(_ results: [String: Figures]) {
    guard backupCases.contains(where: { results[$0.name] != nil }) || backupImportCases.contains(where: { results[$0] != nil }) else { return }
    let cores = UsableCores.count
    print("")
    print("A whole backup: \(backupConversations) conversations, \(backupMessages) messages, `bubbles render --all` (release tool)")
    print(
        pad("output", 8) + lpad("1 core msg/s", 14) + lpad("peak MB", 9) + lpad("\(cores) cores msg/s", 16) + lpad("peak MB", 9)
            + lpad("speed-up", 10) + "  goal ≥ \(String(format: "%.1f", 0.8 * Double(cores)))× (0.8 × cores)")
    for format in ["pdf", "html"] {
        guard let one = results["backup-\(format)-1core"], let all = results["backup-\(format)-allcores"] else {
            // One of the two only: its figures, no ratio.
            for (cores, f) in [("1 core", results["backup-\(format)-1core"]), ("\(cores) cores", results["backup-\(format)-allcores"])] {
                guard let f else { continue }
                print(
                    pad("render --all \(format), \(cores)", 24) + lpad(String(format: "%.0f msg/s", 1e6 / f.microsPerMessage["total"]!), 16)
                        + lpad(String(format: "%.0f MB peak", f.peakMemoryMB), 14) + "  (\(f.notes["seconds"] ?? "?") s, \(f.notes["files"] ?? "?") files)")
            }
            continue
        }
        let a = 1e6 / one.microsPerMessage["total"]!, b = 1e6 / all.microsPerMessage["total"]!
        print(
            pad(format, 8) + lpad(String(format: "%.0f", a), 14) + lpad(String(format: "%.0f", one.peakMemoryMB), 9)
                + lpad(String(format: "%.0f", b), 16) + lpad(String(format: "%.0f", all.peakMemoryMB), 9)
                + lpad(String(format: "%.2f×", b / a), 10) + ((b / a) >= 0.8 * Double(cores) ? "  met" : "  not met")
                + "  (\(all.notes["files"] ?? "?") files)")
    }
    for name in backupImportCases {
        guard let f = results[name] else { continue }
        print(
            pad(name.hasSuffix("postgres") ? "import into PostgreSQL" : "import into SQLite", 24)
                + lpad(String(format: "%.0f msg/s", 1e6 / f.microsPerMessage["total"]!), 16) + lpad(String(format: "%.0f MB peak", f.peakMemoryMB), 14)
                + "  (\(f.notes["seconds"] ?? "?") s, one `bubbles import` of the whole backup)")
    }
}
