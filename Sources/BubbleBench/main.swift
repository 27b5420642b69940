// `make bench`: BubbleKit's benchmarks. Each case runs in a child process of its own, so its
// peak memory (ru_maxrss) is its own; the parent prints the figures side by side with ratios.
//
//   bubbles-bench                 run every case, print the table
//   bubbles-bench --messages N    size of the synthetic conversation (default 100000)
//   bubbles-bench --case NAME     run one case, print one JSON line (used by the parent)
import BubbleCore
import BubbleRender
import Foundation

struct Figures: Codable {
    var name: String
    var messages: Int
    /// µs per message for each measured phase, by phase name.
    var microsPerMessage: [String: Double]
    var peakMemoryMB: Double
    var notes: [String: String] = [:]
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func peakMemoryMB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// Times `body` once and returns µs per `count` items.
func timed(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return (now() - start) * 1e6 / Double(count)
}

// MARK: cases

let utc = TimeZone(identifier: "UTC")!
let firstWidth = 375.0, secondWidth = 414.0
let appends = 1_000

/// Layout of the whole synthetic conversation: first layout, re-layout at a new width, and
/// appends to the full conversation. `cached` wraps Pango in the layout cache; the naive
/// baseline lays out every message with a fresh Pango layout and keeps nothing.
func layoutCase(name: String, messages: Int, cached: Bool) throws -> Figures {
    let conversation = SyntheticConversation.make(count: messages + appends, seed: 2026)
    let base = Conversation(participants: conversation.participants, messages: Array(conversation.messages.prefix(messages)))
    let extra = conversation.messages.suffix(appends)
    let pango = PangoTextEngine()
    let engine: any TextEngine = cached ? CachingTextEngine(pango, capacity: 262_144) : pango
    let layouter = ConversationLayouter(style: LayoutStyle(), engine: engine, timeZone: utc)
    var layout = try layouter.layout(Conversation(), width: firstWidth)
    let first = try timed(messages) { layout = try layouter.layout(base, width: firstWidth) }
    var second = layout
    let relayout = try timed(messages) { second = try layouter.layout(base, width: secondWidth) }
    let append = try timed(appends) { for m in extra { try layouter.append(m, to: &layout) } }
    var notes = ["rows": String(layout.rows.count), "height": String(format: "%.0f pt", layout.height),
                 "rows@414": String(second.rows.count)]
    if let cache = engine as? CachingTextEngine {
        notes["cache"] = "\(cache.hits) hits, \(cache.misses) misses"
    }
    return Figures(name: name, messages: messages,
                   microsPerMessage: ["first layout": first, "re-layout": relayout, "append": append],
                   peakMemoryMB: peakMemoryMB(), notes: notes)
}

let cases: [(name: String, run: (Int) throws -> Figures)] = [
    ("layout-pango-naive", { try layoutCase(name: "layout-pango-naive", messages: $0, cached: false) }),
    ("layout-pango-cached", { try layoutCase(name: "layout-pango-cached", messages: $0, cached: true) }),
]

// MARK: driver

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}
let messageCount = option("--messages").flatMap(Int.init) ?? 100_000

if let caseName = option("--case") {
    guard let entry = cases.first(where: { $0.name == caseName }) else {
        FileHandle.standardError.write(Data("bubbles-bench: unknown case '\(caseName)'; expected one of \(cases.map(\.name).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    do {
        let figures = try entry.run(messageCount)
        let data = try JSONEncoder().encode(figures)
        print(String(decoding: data, as: UTF8.self))
    } catch {
        FileHandle.standardError.write(Data("bubbles-bench: \(caseName): \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

func runChild(_ name: String) throws -> Figures {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    process.arguments = ["--case", name, "--messages", String(messageCount)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw NSError(domain: "bench", code: Int(process.terminationStatus)) }
    return try JSONDecoder().decode(Figures.self, from: data)
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }

print("BubbleKit benchmarks — \(messageCount) synthetic messages (seed 2026), widths \(Int(firstWidth)) → \(Int(secondWidth)) pt, \(appends) appends")
print("fonts: \(ProcessInfo.processInfo.environment["FONTCONFIG_FILE"] ?? "system (FONTCONFIG_FILE not set)")")
var results: [String: Figures] = [:]
for (name, _) in cases {
    FileHandle.standardError.write(Data("running \(name)…\n".utf8))
    results[name] = try runChild(name)
}

// Layout: naive Pango vs cached, side by side.
if let naive = results["layout-pango-naive"], let ours = results["layout-pango-cached"] {
    print("")
    print("Conversation layout (µs per message; ratio = naive ÷ ours, > 1 means ours is faster)")
    print(pad("phase", 14) + lpad("naive Pango", 14) + lpad("BubbleKit", 14) + lpad("ratio", 9))
    for phase in ["first layout", "re-layout", "append"] {
        let a = naive.microsPerMessage[phase]!, b = ours.microsPerMessage[phase]!
        print(pad(phase, 14) + lpad(String(format: "%.1f", a), 14) + lpad(String(format: "%.1f", b), 14)
              + lpad(String(format: "%.2f×", a / b), 9))
    }
    print(pad("peak memory", 14) + lpad(String(format: "%.0f MB", naive.peakMemoryMB), 14)
          + lpad(String(format: "%.0f MB", ours.peakMemoryMB), 14)
          + lpad(String(format: "%.2f×", naive.peakMemoryMB / ours.peakMemoryMB), 9))
    print("notes: naive \(naive.notes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))")
    print("       ours  \(ours.notes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))")
}
