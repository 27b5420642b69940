import BubbleCore
import Foundation

// MARK: A whole backup (issue 27): `bubbles render BACKUP --all`

/// 300 conversations, 1,000,000 messages in one SMS backup, rendered with `--all` to PDF and to
/// HTML by the release tool as a child process (its peak memory from `RUSAGE_CHILDREN`: each case
/// is a process of its own): on one core (`taskset -c 0`, `--jobs 1`) and on every core (the
/// default jobs). `--jobs 1` alone is not one core: a big conversation's PDF is still painted
/// in parts on every core.
let backupConversations = 300, backupMessages = 1_000_000
let backupCases: [(name: String, format: String, jobs: Int?)] = [
    ("backup-pdf-1core", "pdf", 1), ("backup-pdf-allcores", "pdf", nil),
    ("backup-html-1core", "html", 1), ("backup-html-allcores", "html", nil),
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
        try w.write("  <sms protocol=\"0\" address=\"+1555\(String(format: "%07d", lo))\" date=\"\(ms)\" type=\"\(type)\" body=\"\(xmlEscape(t.sentence()))\" read=\"1\" status=\"-1\" contact_name=\"Contact \(lo)\" />\n")
    }
    try w.write("</smses>\n")
    try w.finish()
}

func backupCase(_ name: String) throws -> Figures {
    guard let c = backupCases.first(where: { $0.name == name }) else { throw BenchError("no case \(name)") }
    try generateBackupIfMissing()
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let run = try runReleaseTool(["render", backupFile(), "--all", "-o", dir + "/out", "--format", c.format, "--tz", "UTC"]
                                 + (c.jobs.map { ["--jobs", String($0)] } ?? []), oneCore: c.jobs == 1)
    let files = (try? FileManager.default.contentsOfDirectory(atPath: dir + "/out").filter { $0.hasSuffix("." + c.format) }.count) ?? 0
    return Figures(name: name, messages: backupMessages, microsPerMessage: ["total": run.seconds * 1e6 / Double(backupMessages)],
                   peakMemoryMB: run.peakMB,
                   notes: ["files": String(files), "seconds": String(format: "%.1f", run.seconds),
                           "jobs": String(c.jobs ?? UsableCores.count)])
}

func printBackup(_ results: [String: Figures]) {
    guard backupCases.contains(where: { results[$0.name] != nil }) else { return }
    let cores = UsableCores.count
    print("")
    print("A whole backup: \(backupConversations) conversations, \(backupMessages) messages, `bubbles render --all` (release tool)")
    print(pad("output", 8) + lpad("1 core msg/s", 14) + lpad("peak MB", 9) + lpad("\(cores) cores msg/s", 16) + lpad("peak MB", 9)
          + lpad("speed-up", 10) + "  goal ≥ \(String(format: "%.1f", 0.8 * Double(cores)))× (0.8 × cores)")
    for format in ["pdf", "html"] {
        guard let one = results["backup-\(format)-1core"], let all = results["backup-\(format)-allcores"] else { continue }
        let a = 1e6 / one.microsPerMessage["total"]!, b = 1e6 / all.microsPerMessage["total"]!
        print(pad(format, 8) + lpad(String(format: "%.0f", a), 14) + lpad(String(format: "%.0f", one.peakMemoryMB), 9)
              + lpad(String(format: "%.0f", b), 16) + lpad(String(format: "%.0f", all.peakMemoryMB), 9)
              + lpad(String(format: "%.2f×", b / a), 10) + ((b / a) >= 0.8 * Double(cores) ? "  met" : "  not met")
              + "  (\(all.notes["files"] ?? "?") files)")
    }
}
