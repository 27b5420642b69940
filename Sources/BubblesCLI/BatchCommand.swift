import ArgumentParser
import BubbleCore
import BubbleHTML
import BubbleImport
import Foundation

/// `--all`: every conversation of an export (a phone's SMS backup, a Telegram full export, an
/// iMessage chat.db) to one output each in a folder, with an index, on all cores.
struct BatchOptions: ParsableArguments {
    @Flag(help: "Every conversation of the export (or those --chat names): one output each in the folder -o names, and an index.html.")
    var all = false

    @Option(
        help: "With --all: conversations written at once; render of one conversation to PDF: threads its pages are painted on (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "With --all: write again only the conversations whose messages (or the options) changed since the last run.")
    var update = false

    @Flag(help: "With --all and HTML: photos and fonts in every page instead of one shared assets folder.")
    var embedAssets = false

    /// The exit status when some conversations could not be written (the others were).
    static let someFailedExitCode: Int32 = 3
    static let manifestName = ".bubbles-manifest.json"

    var jobCount: Int { max(1, jobs ?? UsableCores.count) }

    func validate() throws {
        if let jobs, jobs < 1 || jobs > 256 { throw ValidationError("--jobs \(jobs) must be between 1 and 256") }
    }

    /// Options that only mean something with --all.
    /// `jobsPaintPages`: `--jobs` also means something without `--all` (a PDF's painting threads).
    func refuseWithoutAll(source: InputOptions, jobsPaintPages: Bool = false) throws {
        if update || embedAssets { throw ValidationError("--update and --embed-assets go with --all") }
        if jobs != nil, !jobsPaintPages { throw ValidationError("--jobs goes with --all (or with a PDF of one conversation)") }
        if source.chat.count > 1 { throw ValidationError("--chat picks one conversation; give it several times only with --all") }
    }

    /// One conversation's line in the index and the manifest.
    struct Entry: Codable, Sendable {
        var key: String
        var title: String
        var file: String
        var participants: [String]
        var messages: Int
        var first: Date?
        var last: Date?
        var hash: String
        /// nil: written (or unchanged); else why it failed.
        var failure: String?
        var files: [String] = []
    }

    struct Manifest: Codable {
        var signature: String
        var conversations: [Entry]
    }

    /// Reads the export once, writes each conversation with `write` (at most `jobCount` at once),
    /// then the index and the manifest. Returns whether some conversations failed.
    func run(
        source: InputOptions, output: String, ext: String, signature: String,
        write:
            @escaping @Sendable (ImportResult, _ photosFolder: String, TimeZone, _ target: String, _ slot: Int) throws -> (
                files: [String], mediaSummary: String?
            )
    )
        throws -> Bool
    {
        let (dir, made) = try Self.outputFolder(output)
        let manifestPath = dir + "/" + Self.manifestName
        let previous: Manifest? = FileManager.default.contents(atPath: manifestPath).flatMap {
            let d = JSONDecoder(); d.dateDecodingStrategy = .secondsSince1970
            return try? d.decode(Manifest.self, from: $0)
        }
        let earlier = Dictionary((previous?.conversations ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })

        let state = BatchState(jobs: jobCount)
        let zone = try source.zone()
        let bar = BatchProgress()
        let said = ImportReport()
        // A folder this run made is removed again when reading fails before anything is in it.
        let loaded: InputOptions.Loaded
        do {
            loaded = try source.load(each: { result in
                let c = result.conversation
                said.add(result)
                // Nothing inside --since/--until: no file (an empty one would only mislead).
                if c.messages.isEmpty, result.excluded > 0 {
                    state.skipOutOfRange()
                    return
                }
                let title = c.title ?? c.participants.map(\.name).joined(separator: ", ")
                let key = result.chatKey ?? title
                let hash = Self.hash(c, signature: signature)
                let file = state.name(for: key, title: title, earlier: earlier[key]?.file, ext: ext)
                var entry = Entry(
                    key: key, title: title, file: file, participants: c.participants.map(\.name),
                    messages: c.messages.count, first: c.messages.map(\.date).min(), last: c.messages.map(\.date).max(),
                    hash: hash)
                if self.update, let old = earlier[key], old.hash == hash, old.failure == nil, previous?.signature == signature,
                    FileManager.default.fileExists(atPath: dir + "/" + old.file)
                {
                    entry.files = old.files
                    state.finish(entry, unchanged: true)
                    bar.update(state)
                    return
                }
                // --strict: a conversation with missing media fails; the others are still written.
                if source.strict, let error = result.strictMediaError {
                    entry.failure = error.description
                    state.finish(entry, unchanged: false)
                    bar.update(state)
                    return
                }
                let pending = entry
                state.start { slot in
                    var entry = pending
                    do {
                        let written = try write(
                            result, source.file.map { InputOptions.folder(of: $0) } ?? FileManager.default.currentDirectoryPath,
                            zone, dir + "/" + file, slot)
                        entry.files = written.files.map { ($0 as NSString).lastPathComponent }
                        if let summary = written.mediaSummary { state.note("\(title): \(summary)") }
                    } catch {
                        entry.failure = "\(error)"
                    }
                    state.finish(entry, unchanged: false)
                    bar.update(state)
                }
            })
        } catch {
            state.wait()
            if made { rmdir(dir) }
            throw error
        }
        defer { loaded.close() }
        state.wait()
        bar.finish()
        said.tell(messageCount: state.entries.reduce(0) { $0 + $1.messages })

        let entries = Self.keepingEarlier(state.entries, previous: previous, signature: signature, dir: dir)
        let replaced = update ? Self.removeReplaced(previous, keeping: entries, signature: signature, dir: dir) : 0
        try OutputFile.write(dir + "/index.html") { sink in try sink(Array(Self.index(entries, zone: zone, ext: ext).utf8)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        let manifest = try encoder.encode(Manifest(signature: signature, conversations: entries))
        try OutputFile.write(manifestPath) { sink in try sink([UInt8](manifest)) }

        let failed = state.entries.filter { $0.failure != nil }
        Self.report(state, failed: failed, listed: entries.count, replaced: replaced, unmatched: loaded.batch?.unmatched ?? [], output: output)
        // A range that leaves nothing to write is a failure too.
        return !failed.isEmpty || (state.entries.isEmpty && state.outOfRange > 0)
    }

    /// The folder `--all` writes into (`output`, made when missing), and whether this run made it.
    static func outputFolder(_ output: String) throws -> (dir: String, made: Bool) {
        guard output != "-" else { throw ValidationError("--all writes a folder; give -o a folder, not -") }
        let dir = URL(fileURLWithPath: output).standardizedFileURL.path
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) {
            guard isDir.boolValue else { throw CLIError("\(output): is a file; with --all, -o names a folder (made when missing)") }
            return (dir, false)
        }
        do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
            throw CLIError("\(output): cannot create the folder: \(error.localizedDescription)")
        }
        return (dir, true)
    }

    /// `entries`, and the conversations of an earlier run with the same options that this one
    /// did not touch (another --chat), while their files are there.
    static func keepingEarlier(_ entries: [Entry], previous: Manifest?, signature: String, dir: String) -> [Entry] {
        guard let previous, previous.signature == signature else { return entries }
        let seen = Set(entries.map(\.key))
        return entries
            + previous.conversations.filter {
                !seen.contains($0.key) && $0.failure == nil && FileManager.default.fileExists(atPath: dir + "/" + $0.file)
            }
    }

    /// --update with other options (another format, theme…): the earlier run's files that this
    /// one did not write again are its outputs of the old kind; they go. How many went.
    static func removeReplaced(_ previous: Manifest?, keeping entries: [Entry], signature: String, dir: String) -> Int {
        guard let previous, previous.signature != signature else { return 0 }
        var replaced = 0
        let current = Set(entries.flatMap { [$0.file] + $0.files })
        for name in Set(previous.conversations.flatMap { [$0.file] + $0.files })
        where !current.contains(name) && !name.contains("/") && name != "index.html" && name != Self.manifestName {
            if (try? FileManager.default.removeItem(atPath: dir + "/" + name)) != nil { replaced += 1 }
        }
        return replaced
    }

    /// What the run did, on standard error: warnings, failures, and a line of counts.
    static func report(_ state: BatchState, failed: [Entry], listed: Int, replaced: Int, unmatched: [String], output: String) {
        var lines = state.notes.map { "warning: \($0)" }
        for e in failed { lines.append("error: \(e.title): \(e.failure!)") }
        for name in unmatched { lines.append("warning: --chat \(name): matches no conversation") }
        let written = state.entries.count - failed.count - state.unchanged
        if replaced > 0 { lines.append("note: removed \(Plural.count(replaced, "file")) of the earlier run's other options (--update)") }
        if state.outOfRange > 0 {
            lines.append(
                "warning: \(Plural.count(state.outOfRange, "conversation")) \(state.outOfRange == 1 ? "has" : "have") no messages inside "
                    + "--since/--until; not written")
        }
        lines.append(
            "\(output): \(Plural.count(written, "conversation")) written"
                + (state.unchanged > 0 ? ", \(state.unchanged) unchanged" : "")
                + (failed.isEmpty ? "" : ", \(failed.count) failed") + "; index.html lists \(listed)")
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    /// What decides a conversation's output: its messages, people, title and the options.
    static func hash(_ c: Conversation, signature: String) -> String {
        var stable = StableHash()
        func mix(_ s: String?) { stable.add(part: s ?? "\u{0}") }
        mix(signature); mix(c.title)
        for p in c.participants { mix(p.id); mix(p.name); mix(p.avatar) }
        for m in c.messages {
            mix(String(m.date.timeIntervalSince1970)); mix(m.sender); mix(m.direction.rawValue); mix(m.kind.rawValue); mix(m.text)
            mix(m.status?.rawValue); mix(m.attachment.map { "\($0.kind.rawValue) \($0.fileName ?? "") \($0.byteSize ?? 0)" })
            for i in m.images { mix(i.name); mix(i.path.flatMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] }.map { "\($0)" }) }
            for r in m.reactions { mix(r.emoji); mix(String(r.count)) }
            mix(m.reply?.id)
        }
        return String(format: "%016llx", stable.value)
    }

    /// The index: every conversation with its people, size, dates and link; failures marked.
    static func index(_ entries: [Entry], zone: TimeZone, ext: String) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyy-MM-dd"
        f.timeZone = zone
        f.locale = Locale(identifier: "en_US_POSIX")
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
            <meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width,initial-scale=1">
            <meta name="generator" content="BubbleKit"><title>\(entries.count) conversations</title>
            <style>body{font:15px/1.4 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
            table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4em .6em;border-bottom:1px solid #ddd;vertical-align:top}
            td.n{text-align:right;white-space:nowrap}small{color:#777}.failed{color:#b00020}</style>
            </head><body>
            <h1>\(Plural.count(entries.count, "conversation"))</h1>
            <table><thead><tr><th>conversation</th><th>people</th><th>messages</th><th>dates</th></tr></thead><tbody>

            """
        for e in entries {
            let dates = [e.first, e.last].compactMap { $0.map(f.string(from:)) }
            let range = dates.count == 2 && dates[0] != dates[1] ? "\(dates[0]) – \(dates[1])" : dates.first ?? ""
            out += "<tr><td>"
            if let failure = e.failure {
                out += "\(escape(e.title)) <span class=\"failed\">failed: \(escape(failure))</span>"
            } else {
                out += "<a href=\"\(escape(percentEncoded(e.files.first ?? e.file)))\" rel=\"noopener noreferrer\">\(escape(e.title))</a>"
                if e.files.count > 1 { out += " <small>(\(e.files.count) files)</small>" }
            }
            out += "</td><td>\(escape(e.participants.joined(separator: ", ")))</td><td class=\"n\">\(e.messages)</td><td>\(range)</td></tr>\n"
        }
        out += "</tbody></table>\n</body></html>\n"
        return out
    }

    static func escape(_ s: String) -> String { HTMLEscape.text(s) }

    static func percentEncoded(_ name: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }
}

/// The writes in flight and what they gave, shared by the reading thread and the workers.
final class BatchState: @unchecked Sendable {
    private let lock = NSLock()
    private let slots: DispatchSemaphore
    private let group = DispatchGroup()
    private let queue = DispatchQueue(label: "bubbles.batch", attributes: .concurrent)
    private var done: [String: BatchOptions.Entry] = [:]
    private var order: [String] = []
    private var usedNames: Set<String> = []
    private(set) var notes: [String] = []
    private(set) var unchanged = 0
    private(set) var messagesDone = 0
    /// Conversations with no message inside --since/--until (not written).
    private(set) var outOfRange = 0

    func skipOutOfRange() {
        lock.lock(); defer { lock.unlock() }
        outOfRange += 1
    }

    init(jobs: Int) { slots = DispatchSemaphore(value: jobs) }

    /// A file name for the conversation `key`: the one it had before when there was one, else
    /// its name made safe (no path characters), unique in this run.
    func name(for key: String, title: String, earlier: String?, ext: String) -> String {
        lock.lock(); defer { lock.unlock() }
        order.append(key)
        if let earlier, earlier.hasSuffix("." + ext), !usedNames.contains(earlier.lowercased()) {
            usedNames.insert(earlier.lowercased())
            return earlier
        }
        var stem = String(
            title.unicodeScalars.map { s -> Character in
                let v = s.value
                if v < 0x20 || v == 0x7F || "/\\:*?\"<>|".unicodeScalars.contains(s) { return "_" }
                return Character(s)
            }
        ).trimmingCharacters(in: CharacterSet(charactersIn: " ."))
        if stem.utf8.count > 120 { stem = String(stem.prefix(60)) }
        if stem.isEmpty { stem = "conversation" }
        var name = stem + "." + ext
        var n = 2
        while usedNames.contains(name.lowercased()) || name == "index.html" || name.hasPrefix(".") {
            name = "\(stem) \(n).\(ext)"
            n += 1
        }
        usedNames.insert(name.lowercased())
        return name
    }

    /// Runs `work` on a worker once one of the `jobs` slots is free (the reader waits meanwhile:
    /// at most `jobs` conversations, plus the one being read, are in memory), with the slot's
    /// number (1…jobs: which copy of the shared engine's fonts it draws with).
    func start(_ work: @escaping @Sendable (Int) -> Void) {
        slots.wait()
        lock.lock()
        let slot = (1...).first { !busy.contains($0) }!
        busy.insert(slot)
        lock.unlock()
        queue.async(group: group) { [slots] in
            work(slot)
            self.lock.lock(); self.busy.remove(slot); self.lock.unlock()
            slots.signal()
        }
    }
    private var busy = Set<Int>()

    func finish(_ entry: BatchOptions.Entry, unchanged: Bool) {
        lock.lock(); defer { lock.unlock() }
        done[entry.key] = entry
        messagesDone += entry.messages
        if unchanged { self.unchanged += 1 }
    }

    func note(_ text: String) { lock.lock(); notes.append(text); lock.unlock() }

    func wait() { group.wait() }

    /// Finished so far.
    var count: Int { lock.lock(); defer { lock.unlock() }; return done.count }

    /// In the order the export lists them.
    var entries: [BatchOptions.Entry] {
        lock.lock(); defer { lock.unlock() }
        return order.compactMap { done[$0] }
    }
}

/// "12 conversations, 48,210 messages" on stderr, redrawn, only on a terminal.
final class BatchProgress: @unchecked Sendable {
    let enabled = isatty(2) != 0
    private let lock = NSLock()
    private var shown = false
    func update(_ state: BatchState) {
        guard enabled else { return }
        lock.lock(); defer { lock.unlock() }
        FileHandle.standardError.write(Data("\r\(state.count) conversations, \(state.messagesDone) messages…".utf8))
        shown = true
    }
    func finish() {
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
