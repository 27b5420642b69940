// `make bench`: BubbleKit's benchmarks. Each case runs in a child process of its own, so its
// peak memory (ru_maxrss) is its own; the parent prints the figures side by side with ratios.
//
//   bubbles-bench                 run every case, print the table
//   bubbles-bench --messages N    size of the synthetic conversation (default 100000)
//   bubbles-bench --case NAME     run one case, print one JSON line (used by the parent)
//   bubbles-bench --only PREFIX   run only the cases whose name starts with PREFIX (e.g. import-)
//   bubbles-bench --cases A,B     run only these cases, print their tables
import BubbleCore
import BubbleText
import BubbleRender
import BubbleTestSupport
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

/// User + system CPU seconds of this process (`RUSAGE_SELF`, all threads) or of its waited-for
/// children and their waited-for descendants (`RUSAGE_CHILDREN`).
func cpuSeconds(_ who: __rusage_who) -> Double {
    var usage = rusage()
    getrusage(who.rawValue, &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
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
/// The three timed phases on the synthetic conversation: a first layout of `messages`, a
/// re-layout at the second width as a resized view does it (from the previous layout, which
/// keeps each message's links and day, and with the fast engine its prepared texts: line filling
/// and geometry only), then `appends` more messages appended one by one.
struct LayoutPhases {
    var first = 0.0, relayout = 0.0, append = 0.0
    var layout: ConversationLayout
    var second: ConversationLayout
    var base: Conversation
    /// The same three phases with a `ScrollingLayout` (row frames for all, geometry on demand),
    /// the µs one visible window (800 pt) of rows costs, and what the scrolling layout keeps.
    var scrolling: [String: Double] = [:]
    var scrollingNotes: [String: String] = [:]
}

/// First layout, re-layout at the second width and appends with a `ScrollingLayout`: every
/// row's frame, full geometry only for the rows a window shows (`rows(in:of:)`, timed apart).
func scrollingPhases(layouter: ConversationLayouter, base: Conversation, extra: ArraySlice<Message>) throws -> ([String: Double], [String: String]) {
    let messages = base.messages.count
    var list = try layouter.scrollingLayout(Conversation(), width: firstWidth)
    let first = try timed(messages) { list = try layouter.scrollingLayout(base, width: firstWidth) }
    var second = list
    let cpuBefore = cpuSeconds()
    let relayout = try timed(messages) { second = try layouter.scrollingLayout(base, width: secondWidth, reusing: list) }
    let relayoutCPU = (cpuSeconds() - cpuBefore) * 1e6 / Double(messages)
    var rng = SplitMix64(seed: 5)
    let windows = 1_000
    var shown = 0
    let visible = try timed(windows) {
        for _ in 0..<windows {
            let y = Double(rng.next() % UInt64(max(1, second.height)))
            shown += try layouter.rows(in: Rect(x: 0, y: y, width: secondWidth, height: 800), of: second).count
        }
    }
    let measuredInFull = "\(second.rowsMeasuredInFull) of \(second.rowCount) rows measured in full, \(second.rowsByFormula) by the formula, the rest kept",
        bytes = second.bytesPerMessage
    // Appends, with room reserved first (untimed: it copies the messages the layout shares with
    // `base`), as a chat that keeps receiving messages does.
    list = try layouter.scrollingLayout(Conversation(), width: firstWidth)
    second.reserveCapacity(second.conversation.messages.count + extra.count)
    let append = try timed(extra.count) { for m in extra { try layouter.append(m, to: &second) } }
    return (
        [
            "scrolling first layout": first, "scrolling re-layout": relayout, "scrolling re-layout cpu": relayoutCPU,
            "scrolling append": append,
            "scrolling window (µs per 800-pt window)": visible, "scrolling bytes/message": bytes
        ],
        [
            "scrolling re-layout rows": measuredInFull,
            "scrolling rows per window": String(format: "%.1f", Double(shown) / Double(windows))
        ]
    )
}

/// The benchmark conversation: `messages` to lay out first, and the messages appended after.
func layoutConversation(messages: Int) -> (base: Conversation, extra: ArraySlice<Message>) {
    let conversation = SyntheticConversation.make(count: messages + appends, seed: 2026)
    return (
        Conversation(participants: conversation.participants, messages: Array(conversation.messages.prefix(messages))),
        conversation.messages.suffix(appends)
    )
}

/// The first layout of `base` at the first width: the layout, µs a message of wall clock and of
/// CPU time (all threads).
func timedFirstLayout(_ layouter: ConversationLayouter, _ base: Conversation) throws -> (ConversationLayout, wall: Double, cpu: Double) {
    let messages = base.messages.count
    var layout = try layouter.layout(Conversation(), width: firstWidth)
    let cpuBefore = cpuSeconds()
    let wall = try timed(messages) { layout = try layouter.layout(base, width: firstWidth) }
    return (layout, wall, (cpuSeconds() - cpuBefore) * 1e6 / Double(messages))
}

func layoutPhases(engine: any TextEngine, messages: Int) throws -> LayoutPhases {
    let (base, extra) = layoutConversation(messages: messages)
    let layouter = ConversationLayouter(style: LayoutStyle(), engine: engine, timeZone: utc)
    let timedFirst = try timedFirstLayout(layouter, base)
    var layout = timedFirst.0
    let first = timedFirst.wall, firstCPU = timedFirst.cpu
    var second = layout
    let relayout = try timed(messages) { second = try layouter.layout(base, width: secondWidth, reusing: layout) }
    let append = try timed(appends) { for m in extra { try layouter.append(m, to: &layout) } }
    var phases = LayoutPhases(first: first, relayout: relayout, append: append, layout: layout, second: second, base: base)
    if !(engine is CachingTextEngine) {
        (phases.scrolling, phases.scrollingNotes) = try scrollingPhases(layouter: layouter, base: base, extra: extra)
    }
    phases.scrolling["first layout cpu"] = firstCPU
    return phases
}

func layoutCase(name: String, messages: Int, cached: Bool) throws -> Figures {
    let pango = PangoTextEngine()
    let engine: any TextEngine = cached ? CachingTextEngine(pango, capacity: 262_144) : pango
    let run = try layoutPhases(engine: engine, messages: messages)
    let (first, relayout, append, layout, second, base) = (run.first, run.relayout, run.append, run.layout, run.second, run.base)
    var notes = [
        "rows": String(layout.rows.count), "height": String(format: "%.0f pt", layout.height),
        "rows@414": String(second.rows.count)
    ]
    var phases = ["first layout": first, "re-layout": relayout, "append": append].merging(run.scrolling) { a, _ in a }
    notes.merge(run.scrollingNotes) { a, _ in a }
    let peak = peakMemoryMB()
    if !cached {
        // Pango alone on the same texts (prepare + layout), as the fast case measures itself.
        let texts = base.messages.compactMap(\.text)
        let style = LayoutStyle().text
        phases["engine only"] = try timed(messages) { for t in texts { _ = try pango.layout(pango.prepare(t, style: style), maxWidth: 250, maxLines: nil) } }
    }
    if let cache = engine as? CachingTextEngine {
        notes["cache"] = "\(cache.hits) hits, \(cache.misses) misses"
    }
    return Figures(name: name, messages: messages, microsPerMessage: phases, peakMemoryMB: peak, notes: notes)
}

/// The same conversation layout with `FastTextEngine` (no extra cache around it: the engine keeps
/// its shaped segments and prepared texts itself). Also reports the layout index it keeps.
func fastLayoutCase(messages: Int) throws -> Figures {
    let engine = FastTextEngine()
    let run = try layoutPhases(engine: engine, messages: messages)
    let (first, relayout, append, layout, second, base) = (run.first, run.relayout, run.append, run.layout, run.second, run.base)
    let index = engine.preparedIndexStatistics
    let segments = engine.segmentCacheStatistics
    let peak = peakMemoryMB()  // the conversation layout's, before the engine-only runs below
    // The engine alone (prepare + layout of every message text, no conversation layout around
    // it), on a fresh engine: what the text engine costs apart from the layouter's own work.
    let texts = base.messages.compactMap(\.text)
    let bare = FastTextEngine()
    let style = LayoutStyle().text
    let engineOnly = try timed(messages) { for t in texts { _ = try bare.layout(bare.prepare(t, style: style), maxWidth: 250, maxLines: nil) } }
    let engineRelayout = try timed(messages) { for t in texts { _ = try bare.layout(bare.prepare(t, style: style), maxWidth: 280, maxLines: nil) } }
    // Every segment already shaped, no prepared text kept: segmenting and look-ups only (what a
    // first layout costs once the vocabulary of a long chat has been seen).
    bare.forgetPreparedTexts()
    let engineWarm = try timed(messages) { for t in texts { _ = try bare.layout(bare.prepare(t, style: style), maxWidth: 250, maxLines: nil) } }
    let textBytes = base.messages.reduce(0) { $0 + ($1.text?.utf8.count ?? 0) }
    return Figures(
        name: "layout-fast", messages: messages,
        microsPerMessage: [
            "first layout": first, "re-layout": relayout, "append": append,
            "index bytes/message": Double(index.bytes) / Double(messages),
            "engine only": engineOnly, "engine only re-layout": engineRelayout,
            "engine only, segments shaped": engineWarm
        ].merging(run.scrolling) { a, _ in a },
        peakMemoryMB: peak,
        notes: [
            "rows": String(layout.rows.count), "height": String(format: "%.0f pt", layout.height),
            "rows@414": String(second.rows.count), "prepared texts": String(index.texts),
            "segment cache": "\(segments.segments) segments, \(segments.bytes / 1024) KB, \(segments.hits) hits, \(segments.misses) misses",
            "text bytes/message": String(format: "%.0f", Double(textBytes) / Double(messages))
        ].merging(run.scrollingNotes) { a, _ in a })
}

// MARK: rendering

let renderMessages = 10_000

/// The synthetic conversation with its photos pointed at the demo photo (so they exist).
func renderConversation(_ count: Int) -> Conversation {
    var c = SyntheticConversation.make(count: count, seed: 2026)
    let photo = BundledSamples.folder.appendingPathComponent("demo-photo.png").path
    for i in c.messages.indices where c.messages[i].image != nil {
        c.messages[i].image = ImageAttachment(path: photo, width: 0, height: 0)
    }
    return c
}

func scratchFolder() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-bench-\(getpid())").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// `parts`: PDF only, `RenderOptions.pdfParts` (nil: one per core).
func renderCase(name: String, format: OutputFormat, parts: Int? = nil) throws -> Figures {
    let conversation = renderConversation(renderMessages)
    let (theme, folder) = try ThemeLibrary.load("imessage")
    let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/")
    var options = RenderOptions(format: format)
    options.timeZone = utc
    options.scale = 2
    options.pageHeight = format == .png ? 812 : nil
    options.pdfParts = parts
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var files: [String] = []
    // Phases, measured apart once: layout + pagination (the scene), then the whole render.
    let resolved = try renderer.resolvePhotos(conversation)
    var pageCount = 0
    let scenePerMessage = try timed(renderMessages) { pageCount = try renderer.scene(for: resolved, options: options).count }
    // CPU time of all threads (parts painted in parallel, PNG pages encoded in the background).
    let cpuBefore = cpuSeconds(RUSAGE_SELF)
    let perMessage = try timed(renderMessages) {
        files = try renderer.render(conversation, to: dir + "/chat.\(format.rawValue)", options: options)
    }
    let cpuPerMessage = (cpuSeconds(RUSAGE_SELF) - cpuBefore) * 1e6 / Double(renderMessages)
    let bytes = files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
    return Figures(
        name: name, messages: renderMessages,
        microsPerMessage: ["render": perMessage, "render cpu": cpuPerMessage, "scene": scenePerMessage],
        peakMemoryMB: peakMemoryMB(),
        notes: ["files": String(files.count), "bytes": String(bytes), "pages": String(pageCount)])
}

/// Headless Chromium printing an equivalent HTML page (same messages, CSS bubbles) to PDF.
/// Peak memory is the largest sum of the resident sizes of Chromium's process tree, sampled.
func chromiumCase() throws -> Figures {
    guard let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw BenchError("chromium is not installed (make bench installs it)")
    }
    let conversation = renderConversation(renderMessages)
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let html = dir + "/chat.html"
    try BaselineHTML.page(conversation).write(toFile: html, atomically: true, encoding: .utf8)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: chromium)
    p.arguments = [
        "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
        "--user-data-dir=\(dir)/profile", "--print-to-pdf=\(dir)/chat.pdf", "file://\(html)"
    ]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    // CPU time: RUSAGE_CHILDREN counts only what was waited for, and Chromium exits without
    // waiting for most of its helpers (it saw ~2 s of ~16 s), so the tree's CPU is also sampled
    // from /proc with the memory: each process's last utime + stime seen (a lower bound: the last
    // ≤ 50 ms of each process and processes shorter than that are missed). The larger counts.
    let cpuBefore = cpuSeconds(RUSAGE_CHILDREN)
    let start = now()
    try p.run()
    var peak = 0.0
    var cpuByProcess: [Int32: Double] = [:]
    while p.isRunning {
        let tree = processTree(root: p.processIdentifier)
        peak = max(peak, tree.residentMB)
        cpuByProcess.merge(tree.cpuSeconds) { max($0, $1) }
        usleep(50_000)
    }
    let seconds = now() - start
    p.waitUntilExit()
    let waitedCPU = cpuSeconds(RUSAGE_CHILDREN) - cpuBefore
    let sampledCPU = cpuByProcess.values.reduce(0, +)
    let cpu = max(waitedCPU, sampledCPU)
    guard p.terminationStatus == 0, FileManager.default.fileExists(atPath: dir + "/chat.pdf") else {
        throw BenchError("chromium exited with \(p.terminationStatus) and no PDF")
    }
    let bytes = (try? FileManager.default.attributesOfItem(atPath: dir + "/chat.pdf")[.size] as? Int) ?? 0
    return Figures(
        name: "chromium-pdf", messages: renderMessages,
        microsPerMessage: ["render": seconds * 1e6 / Double(renderMessages), "render cpu": cpu * 1e6 / Double(renderMessages)],
        peakMemoryMB: peak,
        notes: [
            "bytes": String(bytes), "chromium": chromium,
            "cpu": String(
                format: "%.1f s sampled from /proc over %d processes, %.1f s in RUSAGE_CHILDREN",
                sampledCPU, cpuByProcess.count, waitedCPU)
        ])
}

/// Process `pid`'s parent and CPU time so far (utime + stime, seconds), from `/proc/PID/stat`;
/// nil when it is gone.
func processStat(_ pid: Int32) -> (parent: Int32?, cpuSeconds: Double?)? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
    // Fields after the ")" closing the command name: state ppid … (utime and stime are the
    // 12th and 13th of these).
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let parent = fields.count > 1 ? Int32(fields[1]) : nil
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return (parent, nil) }
    return (parent, (user + system) / Double(sysconf(Int32(_SC_CLK_TCK))))
}

/// A process's resident memory now and at its peak (VmRSS, VmHWM), in MB; nil when unread.
func processMemoryMB(_ pid: Int32) -> (rss: Double?, peak: Double?) {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    func field(_ key: String) -> Double? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return nil }
        return Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "").map { $0 / 1024 }
    }
    return (field("VmRSS"), field("VmHWM"))
}

/// `root` and all its descendants, from /proc: the sum of their resident sizes (VmRSS), and
/// each one's CPU time so far (utime + stime).
func processTree(root: Int32) -> (residentMB: Double, cpuSeconds: [Int32: Double]) {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return (0, [:]) }
    var parent: [Int32: Int32] = [:]
    var cpu: [Int32: Double] = [:]
    for e in entries {
        guard let pid = Int32(e), let stat = processStat(pid) else { continue }
        if let ppid = stat.parent { parent[pid] = ppid }
        if let seconds = stat.cpuSeconds { cpu[pid] = seconds }
    }
    func descends(_ pid: Int32) -> Bool {
        var p = pid
        for _ in 0..<64 {
            if p == root { return true }
            guard let up = parent[p], up != p else { return false }
            p = up
        }
        return false
    }
    var resident = 0.0
    var tree: [Int32: Double] = [:]
    for pid in parent.keys where descends(pid) {
        tree[pid] = cpu[pid] ?? 0
        resident += processMemoryMB(pid).rss ?? 0
    }
    return (resident, tree)
}

/// PNG encoding of real chat pixels: Cairo's writer vs BubbleKit's libpng encoder, on a
/// 600×200 image and an 800×8000 one (best of several runs, wall time).
func pngEncodeCase() throws -> Figures {
    let (theme, folder) = try ThemeLibrary.load("imessage")
    let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/")
    var options = RenderOptions(format: .png)
    options.timeZone = utc
    options.width = 400
    options.pageHeight = 4000
    let pages = try renderer.scene(for: renderConversation(400), options: options)
    let painter = ScenePainter(theme: theme, themeFolder: folder, engine: renderer.engine, photos: renderer.photos)
    let tall = try renderer.rasterize(pages[0], painter: painter, scale: 2)  // 800 × 8000 px
    let small = try tall.copy(PixelRect(x: 100, y: 400, width: 600, height: 200))
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var figures: [String: Double] = [:]
    var notes: [String: String] = [:]
    for (label, surface, runs) in [("600x200", small, 40), ("800x8000", tall, 6)] {
        for (writer, write) in [
            ("cairo", { (path: String) throws in try surface.writePNGWithCairo(to: path) }),
            ("bubblekit", { (path: String) throws in try PNGEncoder.fast.write(surface, to: path) })
        ] {
            var best = Double.infinity
            let path = dir + "/\(label)-\(writer).png"
            for _ in 0..<runs {
                let start = now()
                try write(path)
                best = min(best, now() - start)
            }
            figures["\(label) \(writer)"] = best * 1e6
            notes["\(label) \(writer) bytes"] = String((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
    }
    return Figures(name: "png-encode", messages: 0, microsPerMessage: figures, peakMemoryMB: peakMemoryMB(), notes: notes)
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// One benchmark case: its name and what it runs for a message count.
typealias BenchCase = (name: String, run: (Int) async throws -> Figures)

let layoutAndRenderCases: [BenchCase] = [
    ("layout-pango-naive", { try layoutCase(name: "layout-pango-naive", messages: $0, cached: false) }),
    ("layout-pango-cached", { try layoutCase(name: "layout-pango-cached", messages: $0, cached: true) }),
    ("layout-fast", { try fastLayoutCase(messages: $0) }),
    ("layout-styled", { try styledCase(messages: $0) }),
    ("render-pdf", { _ in try renderCase(name: "render-pdf", format: .pdf) }),
    ("render-pdf-1part", { _ in try renderCase(name: "render-pdf-1part", format: .pdf, parts: 1) }),
    ("book-50k", { _ in try bookCase() }),
    ("render-png", { _ in try renderCase(name: "render-png", format: .png) }),
    ("chromium-pdf", { _ in try chromiumCase() }),
    ("png-encode", { _ in try pngEncodeCase() })
]
let convertAndServeCases: [BenchCase] = [
    (convertCaseName(convertSizes[0]), { _ in try convertToolCase(size: convertSizes[0]) }),
    (convertCaseName(convertSizes[1]), { _ in try convertToolCase(size: convertSizes[1]) }),
    (convertCaseName(convertSizes[0], tool: false), { _ in try convertCase(size: convertSizes[0]) }),
    (convertCaseName(convertSizes[1], tool: false), { _ in try convertCase(size: convertSizes[1]) }),
    (telegramConvertCaseName(telegramConvertSizes[0]), { _ in try telegramConvertCase(size: telegramConvertSizes[0]) }),
    (telegramConvertCaseName(telegramConvertSizes[1]), { _ in try telegramConvertCase(size: telegramConvertSizes[1]) }),
    ("html-export", { _ in try htmlCase() }),
    ("serve-1m", { _ in try await serveCase() }),
    ("live-ws", { _ in try liveCase() }),
    ("postgres", { _ in try await postgresCase() })
]
let importBenchCases: [BenchCase] = importCases.map { ic in (ic.name, { _ in try importCase(ic) }) }
let backupBenchCases: [BenchCase] =
    backupCases.map { c in (c.name, { _ in try backupCase(c.name) }) }
    + backupImportCases.map { name in (name, { _ in try backupImportCase(name) }) }
let cases: [BenchCase] = layoutAndRenderCases + convertAndServeCases + importBenchCases + storeCases + backupBenchCases + peopleCases

nonisolated(unsafe) var keptToTheEnd: [Any] = []

/// One more first layout of the layout cases' conversation on a fresh `engine` (in a fresh
/// process): the driver alternates Pango and fast rounds, so that the machine's slow periods
/// fall on both engines.
func firstLayoutRound(name: String, engine: any TextEngine, messages: Int) throws -> Figures {
    let (base, _) = layoutConversation(messages: messages)
    let (layout, first, cpu) = try timedFirstLayout(ConversationLayouter(style: LayoutStyle(), engine: engine, timeZone: utc), base)
    keptToTheEnd = [layout, engine]  // no teardown inside the process's time either
    return Figures(
        name: name, messages: messages, microsPerMessage: ["first layout": first, "first layout cpu": cpu],
        peakMemoryMB: peakMemoryMB(), notes: ["rows": String(layout.rows.count)])
}

/// Cases for profiling one phase (`perf record … --case NAME`); not part of the table.
let profileCases: [BenchCase] = [
    ("profile-first-layout", { try firstLayoutOnly(messages: $0) }),
    ("profile-styled", { try styledFirstLayoutOnly(messages: $0) })
]

/// Further first layouts, which the driver runs after the two layout cases (not in the table
/// on their own).
let roundCases: [BenchCase] = [
    ("first-layout-pango", { try firstLayoutRound(name: "first-layout-pango", engine: PangoTextEngine(), messages: $0) }),
    ("first-layout-fast", { try firstLayoutRound(name: "first-layout-fast", engine: FastTextEngine(), messages: $0) })
]

/// The fast engine's first layout of the conversation alone, on a fresh engine. The layout and
/// the engine are kept to the end of the process, so a profile holds no teardown. Prints the
/// user and system time, page faults and look-ups in the shared segment cache per message.
func firstLayoutOnly(messages: Int) throws -> Figures {
    let conversation = SyntheticConversation.make(count: messages, seed: 2026)
    let engine = FastTextEngine()
    let layouter = ConversationLayouter(style: LayoutStyle(), engine: engine, timeZone: utc)
    var layout: ConversationLayout?
    var before = rusage(), after = rusage()
    getrusage(RUSAGE_SELF.rawValue, &before)
    let first = try timed(messages) { layout = try layouter.layout(conversation, width: firstWidth) }
    getrusage(RUSAGE_SELF.rawValue, &after)
    func micros(_ a: timeval, _ b: timeval) -> Double {
        (Double(b.tv_sec - a.tv_sec) * 1e6 + Double(b.tv_usec - a.tv_usec)) / Double(messages)
    }
    let rows = layout?.rows.count ?? 0
    keptToTheEnd = [layout as Any, engine]
    let segments = engine.segmentCacheStatistics
    return Figures(
        name: "profile-first-layout", messages: messages,
        microsPerMessage: [
            "first layout": first, "user": micros(before.ru_utime, after.ru_utime),
            "system": micros(before.ru_stime, after.ru_stime)
        ],
        peakMemoryMB: peakMemoryMB(),
        notes: [
            "rows": String(rows), "cores": String(UsableCores.count),
            "page faults/message": String(format: "%.3f", Double(after.ru_minflt - before.ru_minflt) / Double(messages)),
            "shared segment look-ups/message": String(format: "%.2f", Double(segments.hits + segments.misses) / Double(messages))
        ])
}

// MARK: driver

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}
PinnedFonts.use()
let messageCount = option("--messages").flatMap(Int.init) ?? 100_000

if let bytes = option("--baseline-server").flatMap(Int.init) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        try? await runBaselineServer(bytes: bytes); done.signal()
    }
    done.wait()
    exit(0)
}

if let db = option("--same-work-server") {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { try await runSameWorkServer(db: db) } catch { FileHandle.standardError.write(Data("same-work server: \(error)\n".utf8)) }
        done.signal()
    }
    done.wait()
    exit(0)
}

if arguments.contains("--baseline-ws-server") {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        try? await runBaselineWebSocketServer(); done.signal()
    }
    done.wait()
    exit(0)
}

if let caseName = option("--case") {
    guard let entry = (cases + profileCases + roundCases).first(where: { $0.name == caseName }) else {
        FileHandle.standardError.write(Data("bubbles-bench: unknown case '\(caseName)'; expected one of \(cases.map(\.name).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    do {
        let figures = try await entry.run(messageCount)
        let data = try JSONEncoder().encode(figures)
        print(String(decoding: data, as: UTF8.self))
    } catch {
        FileHandle.standardError.write(Data("bubbles-bench: \(caseName): \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

func runChild(_ name: String) throws -> Figures? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    process.arguments = ["--case", name, "--messages", String(messageCount)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return try JSONDecoder().decode(Figures.self, from: data)
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }

print("BubbleKit benchmarks — \(messageCount) synthetic messages (seed 2026), widths \(Int(firstWidth)) → \(Int(secondWidth)) pt, \(appends) appends")
print("fonts: \(ProcessInfo.processInfo.environment["FONTCONFIG_FILE"] ?? "system (FONTCONFIG_FILE not set)")")
var results: [String: Figures] = [:]
let only = option("--only")
let selected = option("--cases").map { Set($0.split(separator: ",").map(String.init)) }
for (name, _) in cases where (only.map({ name.hasPrefix($0) }) ?? true) && (selected?.contains(name) ?? true) {
    if let ic = importCases.first(where: { $0.name == name }) { try generateIfMissing(ic) }
    if name.hasPrefix("store-") { for size in storeSizes { try generateStoreXMLIfMissing(size) } }
    if name.hasPrefix("backup-") { try generateBackupIfMissing() }
    FileHandle.standardError.write(Data("running \(name)…\n".utf8))
    results[name] = try runChild(name)
    if results[name] == nil { print("\(name): failed (see the message above)") }
}

// First layouts again, Pango and fast in turn (`--first-layout-rounds`, default 4): the table
// gives each engine's best run, and lists every run with the ratio of each round's pair.
var firstLayoutRuns: [String: [(wall: Double, cpu: Double)]] = [:]
if results["layout-pango-naive"] != nil, results["layout-fast"] != nil {
    for (engine, name) in [("pango", "layout-pango-naive"), ("fast", "layout-fast")] {
        let f = results[name]!.microsPerMessage
        firstLayoutRuns[engine] = [(f["first layout"]!, f["first layout cpu"] ?? .nan)]
    }
    let rounds = option("--first-layout-rounds").flatMap(Int.init) ?? 4
    for round in 0..<max(0, rounds) {
        for engine in ["pango", "fast"] {
            FileHandle.standardError.write(Data("running first-layout-\(engine) (round \(round + 1) of \(rounds))…\n".utf8))
            guard let f = try runChild("first-layout-\(engine)") else { print("first-layout-\(engine): failed"); continue }
            firstLayoutRuns[engine]!.append((f.microsPerMessage["first layout"]!, f.microsPerMessage["first layout cpu"]!))
        }
    }
    // The best run of each engine stands for its first layout (and its CPU time).
    for (engine, name) in [("pango", "layout-pango-naive"), ("fast", "layout-fast")] {
        let best = firstLayoutRuns[engine]!.min { $0.wall < $1.wall }!
        results[name]!.microsPerMessage["first layout"] = best.wall
        results[name]!.microsPerMessage["first layout cpu"] = best.cpu
    }
}

// Layout: naive Pango vs cached, side by side.
if let naive = results["layout-pango-naive"], let ours = results["layout-pango-cached"] {
    print("")
    print("Conversation layout (µs per message; ratio = naive ÷ ours, > 1 means ours is faster)")
    print(pad("phase", 14) + lpad("naive Pango", 14) + lpad("BubbleKit", 14) + lpad("ratio", 9))
    for phase in ["first layout", "re-layout", "append"] {
        let a = naive.microsPerMessage[phase]!, b = ours.microsPerMessage[phase]!
        print(
            pad(phase, 14) + lpad(String(format: "%.1f", a), 14) + lpad(String(format: "%.1f", b), 14)
                + lpad(String(format: "%.2f×", a / b), 9))
    }
    print(
        pad("peak memory", 14) + lpad(String(format: "%.0f MB", naive.peakMemoryMB), 14)
            + lpad(String(format: "%.0f MB", ours.peakMemoryMB), 14)
            + lpad(String(format: "%.2f×", naive.peakMemoryMB / ours.peakMemoryMB), 9))
    print("notes: naive \(naive.notes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))")
    print("       ours  \(ours.notes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))")
}

// Text engines: Pango vs the fast engine, side by side, with the issue's goals.
if let pango = results["layout-pango-naive"], let fast = results["layout-fast"] {
    print("")
    print("Text engines on the conversation layout (µs per message; ratio = Pango ÷ fast)")
    print(pad("phase", 14) + lpad("Pango", 12) + lpad("fast", 12) + lpad("ratio", 10) + "  goal")
    let runs = firstLayoutRuns["pango"]?.count ?? 1
    let goals = [
        "first layout": "≥ 20× faster, ≤ 10 µs" + (runs > 1 ? "; best of \(runs) runs each, taken in turn" : ""), "re-layout": "≤ 0.5 µs (every row in full)",
        "append": "",
        "first layout cpu": "CPU time of all threads (the fast engine measures messages on every core)",
        "scrolling re-layout": "≤ 0.5 µs (row frames; full rows on demand)",
        "scrolling re-layout cpu": "CPU time of all threads",
        "scrolling first layout": "(prepared texts already made by the first layout above)",
        "scrolling append": "(texts already prepared by the append above)"
    ]
    let names = [
        "scrolling re-layout": "scroll re-lay.", "scrolling re-layout cpu": "  … CPU", "first layout cpu": "  … CPU",
        "scrolling first layout": "scroll first", "scrolling append": "scroll append"
    ]
    for phase in [
        "first layout", "first layout cpu", "re-layout", "append", "scrolling re-layout", "scrolling re-layout cpu",
        "scrolling first layout", "scrolling append"
    ] {
        guard let a = pango.microsPerMessage[phase], let b = fast.microsPerMessage[phase] else { continue }
        let met: String
        switch phase {
        case "first layout": met = a / b >= 20 && b <= 10 ? "met" : "not met"
        case "re-layout", "scrolling re-layout": met = b <= 0.5 ? "met" : "not met"
        default: met = ""
        }
        print(
            pad(names[phase] ?? phase, 14) + lpad(String(format: "%.2f", a), 12) + lpad(String(format: "%.2f", b), 12)
                + lpad(String(format: "%.1f×", a / b), 10) + "  " + (goals[phase] ?? "") + (met.isEmpty ? "" : " (\(met))"))
    }
    if let a = pango.microsPerMessage["scrolling window (µs per 800-pt window)"], let b = fast.microsPerMessage["scrolling window (µs per 800-pt window)"] {
        print(
            pad("scroll window", 14) + lpad(String(format: "%.0f", a), 12) + lpad(String(format: "%.0f", b), 12)
                + lpad(String(format: "%.1f×", a / b), 10) + "  µs for the full rows of an 800-pt window (about 10 rows)")
    }
    if let a = pango.microsPerMessage["scrolling bytes/message"], let b = fast.microsPerMessage["scrolling bytes/message"] {
        print(
            pad("scroll memory", 14) + lpad(String(format: "%.0f B", a), 12) + lpad(String(format: "%.0f B", b), 12)
                + lpad("", 10) + "  per message: row frames, plan, height memos (prepared texts not counted)")
    }
    print(
        pad("peak memory", 14) + lpad(String(format: "%.0f MB", pango.peakMemoryMB), 12)
            + lpad(String(format: "%.0f MB", fast.peakMemoryMB), 12) + lpad(String(format: "%.2f×", pango.peakMemoryMB / fast.peakMemoryMB), 10))
    if let a = pango.microsPerMessage["engine only"], let b = fast.microsPerMessage["engine only"] {
        print(
            pad("engine only", 14) + lpad(String(format: "%.2f", a), 12) + lpad(String(format: "%.2f", b), 12)
                + lpad(String(format: "%.1f×", a / b), 10) + "  prepare + layout of each text, no conversation layout")
    }
    if let b = fast.microsPerMessage["engine only, segments shaped"] {
        print(
            pad("engine warm", 14) + lpad("", 12) + lpad(String(format: "%.2f", b), 12) + lpad("", 10)
                + "  first layout once every segment is shaped (prepared texts dropped)")
    }
    if let b = fast.microsPerMessage["engine only re-layout"] {
        print(
            pad("engine re-lay.", 14) + lpad("", 12) + lpad(String(format: "%.2f", b), 12) + lpad("", 10)
                + "  the same texts again at a new width (prepared texts cached)")
    }
    let index = fast.microsPerMessage["index bytes/message"] ?? 0
    print(
        pad("layout index", 14) + lpad("—", 12) + lpad(String(format: "%.0f B/msg", index), 12) + lpad("", 10)
            + "  ≤ 150 B/msg on top of the text (\(index <= 150 ? "met" : "not met"))")
    if let p = firstLayoutRuns["pango"], let q = firstLayoutRuns["fast"], p.count > 1 {
        let pairs = zip(p, q).map { $0.wall / $1.wall }
        print(
            "first layout runs (µs/msg, in the order run): Pango " + p.map { String(format: "%.1f", $0.wall) }.joined(separator: ", ")
                + "; fast " + q.map { String(format: "%.2f", $0.wall) }.joined(separator: ", ")
                + "; ratio of each round's pair " + pairs.map { String(format: "%.1f×", $0) }.joined(separator: ", ")
                + String(format: " (median %.1f×)", pairs.sorted()[pairs.count / 2]))
    }
    print("notes: fast  \(fast.notes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))")
}

printStyled(results)

// Rendering: BubbleKit (Cairo) vs headless Chromium printing the same messages.
if let pdf = results["render-pdf"] {
    print("")
    print("Rendering \(renderMessages) messages (imessage theme; ms per message, wall clock and CPU of all threads/processes;")
    print("ratios = Chromium ÷ ours, > 1 means ours is faster / smaller)")
    let chrome = results["chromium-pdf"]
    print(
        pad("output", 24) + lpad("ms/msg", 9) + lpad("cpu ms/msg", 12) + lpad("peak MB", 9) + lpad("wall ×", 8) + lpad("cpu ×", 8)
            + lpad("memory ×", 10) + "  notes")
    func row(_ label: String, _ f: Figures) {
        let ms = f.microsPerMessage["render"]! / 1000
        let cpu = f.microsPerMessage["render cpu"].map { String(format: "%.3f", $0 / 1000) } ?? "—"
        var speed = "", cpuRatio = "", memory = ""
        if let c = chrome, f.name != c.name {
            speed = String(format: "%.1f×", c.microsPerMessage["render"]! / f.microsPerMessage["render"]!)
            if let a = c.microsPerMessage["render cpu"], let b = f.microsPerMessage["render cpu"] { cpuRatio = String(format: "%.1f×", a / b) }
            memory = String(format: "%.1f×", c.peakMemoryMB / f.peakMemoryMB)
        }
        print(
            pad(label, 24) + lpad(String(format: "%.3f", ms), 9) + lpad(cpu, 12) + lpad(String(format: "%.0f", f.peakMemoryMB), 9)
                + lpad(speed, 8) + lpad(cpuRatio, 8) + lpad(memory, 10) + "  "
                + f.notes.filter { $0.key != "chromium" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
    }
    row("BubbleKit PDF", pdf)
    if let one = results["render-pdf-1part"] { row("BubbleKit PDF, 1 thread", one) }
    if let png = results["render-png"] { row("BubbleKit PNG 2× pages", png) }
    if let chrome { row("Chromium print-to-PDF", chrome) } else { print("Chromium print-to-PDF: not measured") }
}

printConvert(results)
printTelegramConvert(results)

if let png = results["png-encode"] {
    print("")
    print("PNG encoding of rendered chat pixels (ms, best run; ratio = Cairo ÷ BubbleKit)")
    print(pad("image", 12) + lpad("Cairo", 10) + lpad("BubbleKit", 12) + lpad("ratio", 9) + lpad("Cairo bytes", 14) + lpad("ours bytes", 12))
    for label in ["600x200", "800x8000"] {
        let c = png.microsPerMessage["\(label) cairo"]!, b = png.microsPerMessage["\(label) bubblekit"]!
        print(
            pad(label, 12) + lpad(String(format: "%.1f", c / 1000), 10) + lpad(String(format: "%.1f", b / 1000), 12)
                + lpad(String(format: "%.1f×", c / b), 9) + lpad(png.notes["\(label) cairo bytes"] ?? "", 14)
                + lpad(png.notes["\(label) bubblekit bytes"] ?? "", 12))
    }
}

if let html = results["html-export"] { printHTML(html) }
printStore(results)
printPeople(results)
printServe(results)
printLive(results)
printPostgres(results)
printBackup(results)
printImport(results)
printBook(results)
printStats(results)
printGoals(results)
