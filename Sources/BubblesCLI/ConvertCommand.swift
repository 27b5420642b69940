import ArgumentParser
import BubbleCore
import BubbleImport
import Foundation

/// `bubbles convert INPUT -o OUT.json|OUT.csv`: any supported export to BubbleKit's native JSON
/// (lossless; what `bubbles render` reads) or to CSV (one row per message, for spreadsheets).
struct Convert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert a conversation or chat export to BubbleKit JSON or to CSV.",
        discussion: """
            JSON is the native format `bubbles render` reads: converting, then rendering, gives the same \
            picture as rendering the export. Instants are written in UTC; wall-clock times (WhatsApp, \
            Telegram without date_unixtime) as they were, without an offset. CSV has the columns \
            timestamp (ISO 8601 with the --tz offset), author, direction, message, attachments, kind.
            Examples:
              bubbles convert "WhatsApp Chat with Ann.zip" -o ann.json --me Ben --assets folder
              bubbles convert sms-20240301.xml -o ann.csv --chat "Ann" --tz Europe/Berlin
              bubbles convert chat.db -o - --format json --chat "+15551234567" | jq .messages[0]
            """
    )

    @OptionGroup var source: InputOptions
    @Option(name: .shortAndLong, help: "Output file (.json or .csv), or - for standard output.") var output: String
    @Option(help: "json or csv (default: from the output's extension; with --all, json).") var format: String?
    @Option(
        help: """
            Photos: reference (relative paths from the output to the originals), folder (copied into \
            OUT_files/) or embed (data: URLs inside the file). Photos taken out of an archive or a \
            backup have no lasting original: with reference they are copied (embedded on standard output).
            """)
    var assets: String = "reference"
    @Flag(help: "CSV: write spoilers' text. Without it each spoiler is masked with ░ (JSON keeps the text and its spans either way).")
    var revealSpoilers = false
    @OptionGroup var batch: BatchOptions

    enum Kind: String { case json, csv }
    enum Assets: String { case reference, folder, embed }

    func run() async throws {
        let formatName = format ?? (batch.all ? "json" : output == "-" ? nil : PathText.fileExtension(output).lowercased())
        guard let formatName, let kind = Kind(rawValue: formatName.lowercased()) else {
            throw ValidationError("cannot tell the output format from '\(output)'; use --format json|csv")
        }
        guard let mode = Assets(rawValue: assets.lowercased()) else {
            throw ValidationError("--assets '\(assets)' is not an asset mode; expected reference, folder or embed")
        }
        if batch.all {
            _ = try source.zone()
            let failed = try batch.run(source: source, output: output, ext: kind.rawValue, signature: "\(kind.rawValue) \(mode.rawValue)") {
                result, folder, zone, target, _ in
                try Self.write(result, kind: kind, mode: mode, inputFolder: folder, timeZone: zone, revealSpoilers: revealSpoilers, to: target)
                return ([target], nil)
            }
            if failed { throw ExitCode(BatchOptions.someFailedExitCode) }
            return
        }
        try batch.refuseWithoutAll(source: source)
        if output == "-" {
            if mode == .folder { throw ValidationError("--assets folder writes several files; give an output file name, not -") }
        } else {
            try source.refuseUnsafeOutput(output)
            let parent = URL(fileURLWithPath: output).standardizedFileURL.deletingLastPathComponent().path
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder), isFolder.boolValue else {
                throw CLIError("\(output): its folder \(parent) does not exist")
            }
        }
        _ = try source.zone()

        let outFolder =
            output == "-"
            ? FileManager.default.currentDirectoryPath
            : URL(fileURLWithPath: output).standardizedFileURL.deletingLastPathComponent().path
        let filesName = output == "-" ? "" : URL(fileURLWithPath: output).deletingPathExtension().lastPathComponent + "_files"
        let placer = PhotoPlacer(mode: mode, outputFolder: outFolder, filesFolderName: filesName, toStandardOutput: output == "-")

        // Streamed: each message is placed, encoded and put aside on disk as it is read; the
        // header (title, participants, `me`) and the authors' final names are known at the end,
        // then the messages follow (merged by date for the formats an import sorts). Memory holds
        // one message at a time, whatever the size of the input. Telegram streams too
        // (`provisional`): its sides and reply quotes are settled on the way out (`StreamedFixup`:
        // one more pass over the spill when a reply needs its original's quote).
        let spill = try MessageSpill()
        defer { spill.remove() }
        var line: [UInt8] = []
        var fixup = StreamedFixup()
        let loaded = try await source.loadAny(
            messages: { message in
                var m = message
                try placer.place(&m)
                fixup.note(m)
                line.removeAll(keepingCapacity: true)
                ConversationWriter.encode(m, into: &line)
                try spill.append(date: m.date, line)
            }, provisional: true,
            before: { folder, temporary in
                placer.inputFolder = folder; placer.temporary = temporary
            })
        defer { loaded.close() }
        try spill.finishWriting()
        loaded.reportWarnings(messageCount: spill.count)
        try loaded.refuseEmptyRange(source, kept: spill.count)
        let header = try placer.place(loaded.conversation)  // the participants' avatars
        placer.reportNotes()
        let byDate = Importer.sortsByDate(loaded.result.format)
        let zone = loaded.timeZone
        func decode(_ bytes: ArraySlice<UInt8>) throws -> Message {
            try reporting { try ConversationFile.decodeMessage(Data(bytes), timeZone: zone) }
        }
        if fixup.needsQuotes { try spill.forEach(sortedByDate: false) { fixup.remember(try decode($0)) } }
        let settles = fixup.changes(loaded.result)
        try OutputFile.write(output) { sink in
            switch kind {
            case .json:
                let writer = ConversationWriter(flush: sink)
                try writer.begin(
                    title: header.title, me: loaded.result.me, theme: loaded.result.theme,
                    participants: header.participants)
                var settled: [UInt8] = []
                try spill.forEach(sortedByDate: byDate) { bytes in
                    guard settles else { return try writer.write(encoded: bytes) }
                    var m = try decode(bytes)
                    fixup.settle(&m, result: loaded.result)
                    settled.removeAll(keepingCapacity: true)
                    ConversationWriter.encode(m, into: &settled)
                    try writer.write(encoded: settled)
                }
                try writer.finish(typing: header.typing)
            case .csv:
                let writer = ConversationCSVWriter(conversation: header, timeZone: zone, revealSpoilers: revealSpoilers, flush: sink)
                try writer.writeHeader()
                try spill.forEach(sortedByDate: byDate) { bytes in
                    var m = try decode(bytes)
                    fixup.settle(&m, result: loaded.result)
                    try writer.write(m)
                }
                try writer.finish()
            }
        }
    }
}

extension Convert {
    /// One whole conversation (`--all`) to `target`, atomically; its photos placed as `mode` says
    /// (`NAME_files/` beside it for folder, and for photos taken out of the export with reference).
    static func write(
        _ result: ImportResult, kind: Kind, mode: Assets, inputFolder: String, timeZone: TimeZone,
        revealSpoilers: Bool, to target: String
    ) throws {
        let url = URL(fileURLWithPath: target)
        let placer = PhotoPlacer(
            mode: mode, outputFolder: url.deletingLastPathComponent().path,
            filesFolderName: url.deletingPathExtension().lastPathComponent + "_files", toStandardOutput: false)
        placer.inputFolder = inputFolder
        placer.temporary = [result.attachmentsFolder].compactMap { $0 }
        let header = try placer.place(result.conversation)
        try OutputFile.write(target) { sink in
            switch kind {
            case .json:
                let writer = ConversationWriter(flush: sink)
                try writer.begin(title: header.title, me: result.me, theme: result.theme, participants: header.participants)
                var line: [UInt8] = []
                for var m in result.conversation.messages {
                    try placer.place(&m)
                    line.removeAll(keepingCapacity: true)
                    ConversationWriter.encode(m, into: &line)
                    try writer.write(encoded: line)
                }
                try writer.finish(typing: header.typing)
            case .csv:
                let writer = ConversationCSVWriter(conversation: header, timeZone: timeZone, revealSpoilers: revealSpoilers, flush: sink)
                try writer.writeHeader()
                for var m in result.conversation.messages {
                    try placer.place(&m)
                    try writer.write(m)
                }
                try writer.finish()
            }
        }
    }
}

/// Encoded messages put aside on disk while an import runs: records of (date, bytes) in arrival
/// order, with where the dates go backwards, so that they can be read back in date order by
/// merging the ordered runs (an SMS backup has two: its SMS, then its MMS).
final class MessageSpill {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-spill-\(UUID().uuidString)").path
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var offset: Int64 = 0
    private var lastDate = -Double.infinity
    /// Byte offset where each run of non-decreasing dates starts.
    private var runStarts: [Int64] = [0]
    private(set) var count = 0
    /// More runs than this are sorted in memory instead (a file in no order at all).
    static let maxMergedRuns = 64

    init() throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forUpdatingAtPath: path) else {
            throw CLIError("\(path): cannot be created (the temporary folder holds the messages while they are read)")
        }
        handle = h
        buffer.reserveCapacity(1 << 20)
    }

    func append(date: Date, _ bytes: [UInt8]) throws {
        let t = date.timeIntervalSince1970
        if t < lastDate { runStarts.append(offset + Int64(buffer.count)) }
        lastDate = t
        withUnsafeBytes(of: t.bitPattern.littleEndian) { buffer.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: bytes)
        count += 1
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws {
        do { try handle.write(contentsOf: buffer) } catch {
            throw CLIError("\(path): cannot be written: \(error.localizedDescription)")
        }
        offset += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    func finishWriting() throws { try flush() }

    func remove() {
        try? handle.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Every record's bytes, in arrival order, or by date (stable: equal dates keep arrival order).
    func forEach(sortedByDate: Bool, _ body: (ArraySlice<UInt8>) throws -> Void) throws {
        let ends = Array(runStarts.dropFirst()) + [offset]
        if !sortedByDate || runStarts.count == 1 {
            let reader = try RunReader(path: path, from: 0, to: offset)
            while let record = try reader.next() { try body(record.bytes) }
        } else if runStarts.count <= Self.maxMergedRuns {
            let readers = try zip(runStarts, ends).map { try RunReader(path: path, from: $0, to: $1) }
            var heads = try readers.map { try $0.next() }
            while true {
                var best = -1
                for (i, head) in heads.enumerated() {
                    guard let head else { continue }
                    if best < 0 || head.date < heads[best]!.date { best = i }
                }
                guard best >= 0 else { break }
                try body(heads[best]!.bytes)
                heads[best] = try readers[best].next()
            }
        } else {
            let reader = try RunReader(path: path, from: 0, to: offset)
            var all: [(date: Double, bytes: ArraySlice<UInt8>)] = []
            while let record = try reader.next() { all.append(record) }
            let order = all.indices.sorted { all[$0].date != all[$1].date ? all[$0].date < all[$1].date : $0 < $1 }
            for i in order { try body(all[i].bytes) }
        }
    }

    /// Reads the records between two offsets, 256 KiB at a time.
    final class RunReader {
        private let handle: FileHandle
        private var remaining: Int64
        private var chunk: [UInt8] = []
        private var position = 0

        init(path: String, from start: Int64, to end: Int64) throws {
            guard let h = FileHandle(forReadingAtPath: path) else { throw CLIError("\(path): cannot be read back") }
            try h.seek(toOffset: UInt64(start))
            handle = h
            remaining = end - start
        }

        deinit { try? handle.close() }

        private func ensure(_ n: Int) throws -> Bool {
            while chunk.count - position < n {
                guard remaining > 0 else { return false }
                let want = Int(min(remaining, Int64(max(1 << 18, n))))
                guard let data = try handle.read(upToCount: want), !data.isEmpty else { return false }
                chunk.removeSubrange(0..<position)
                position = 0
                chunk.append(contentsOf: data)
                remaining -= Int64(data.count)
            }
            return true
        }

        func next() throws -> (date: Double, bytes: ArraySlice<UInt8>)? {
            guard try ensure(12) else { return nil }
            var bits: UInt64 = 0, length: UInt32 = 0
            for k in 0..<8 { bits |= UInt64(chunk[position + k]) << (8 * UInt64(k)) }
            for k in 0..<4 { length |= UInt32(chunk[position + 8 + k]) << (8 * UInt32(k)) }
            guard try ensure(12 + Int(length)) else { throw CLIError("the messages put aside were cut short") }
            let bytes = chunk[(position + 12)..<(position + 12 + Int(length))]
            position += 12 + Int(length)
            return (Double(bitPattern: bits), bytes)
        }
    }
}

/// Writes a file through a temporary file beside it, renamed over the target once complete; `-`
/// streams to standard output.
enum OutputFile {
    static func write(_ output: String, _ body: (@escaping ([UInt8]) throws -> Void) throws -> Void) throws {
        if output == "-" {
            let out = FileHandle.standardOutput
            try body { bytes in try out.write(contentsOf: bytes) }
            return
        }
        let url = URL(fileURLWithPath: output).standardizedFileURL
        let temp = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString.prefix(8)).tmp").path
        guard FileManager.default.createFile(atPath: temp, contents: nil),
            let handle = FileHandle(forWritingAtPath: temp)
        else {
            throw CLIError("\(output): cannot be written (no such folder, or permission denied?)")
        }
        var done = false
        defer {
            try? handle.close()
            if !done { try? FileManager.default.removeItem(atPath: temp) }
        }
        do {
            try body { bytes in try handle.write(contentsOf: bytes) }
            try handle.close()
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("\(output): cannot be written: \(error.localizedDescription)")
        }
        guard rename(temp, url.path) == 0 else {
            throw CLIError("\(output): cannot be written: \(String(cString: strerror(errno)))")
        }
        done = true
    }
}

/// Where the photos of a converted conversation go: referenced by a path relative to the output,
/// copied into `OUT_files/`, or embedded as `data:` URLs.
final class PhotoPlacer {
    let mode: Convert.Assets
    /// The folder relative photo paths of the input are resolved against.
    var inputFolder = FileManager.default.currentDirectoryPath
    /// Folders (and files) that disappear once the conversion ends: photos in them are copied.
    var temporary: [String] = []
    let outputFolder: String
    let filesFolderName: String
    let toStandardOutput: Bool
    private var placed: [String: String] = [:]
    private var usedNames = Set<String>()
    private var copiedTemporary = 0
    private var missing: [String] = []

    init(mode: Convert.Assets, outputFolder: String, filesFolderName: String, toStandardOutput: Bool) {
        self.mode = mode; self.outputFolder = outputFolder
        self.filesFolderName = filesFolderName; self.toStandardOutput = toStandardOutput
    }

    func place(_ conversation: Conversation) throws -> Conversation {
        var c = conversation
        for i in c.participants.indices {
            if let avatar = c.participants[i].avatar { c.participants[i].avatar = try place(avatar) }
        }
        for i in c.messages.indices { try place(&c.messages[i]) }
        return c
    }

    func place(_ m: inout Message) throws {
        for j in m.images.indices {
            if let path = m.images[j].path { m.images[j].path = try place(path) }
        }
        if let path = m.attachment?.path { m.attachment!.path = try place(path) }
        if let poster = m.attachment?.poster { m.attachment!.poster = try place(poster) }
    }

    func reportNotes() {
        var lines: [String] = []
        if copiedTemporary > 0 {
            lines.append(
                "note: \(Plural.count(copiedTemporary, "photo")) taken out of the export "
                    + (toStandardOutput
                        ? "embedded (no lasting file to reference)"
                        : "copied into \(filesFolderName)/ (no lasting file to reference)"))
        }
        for path in missing.prefix(10) { lines.append("warning: photo \(path): no such file; kept as a reference") }
        if missing.count > 10 { lines.append("warning: … and \(Plural.count(missing.count - 10, "more missing photo"))") }
        if !lines.isEmpty { FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8)) }
    }

    private func place(_ path: String) throws -> String {
        if let done = placed[path] { return done }
        let full = path.hasPrefix("/") ? path : URL(fileURLWithPath: inputFolder).appendingPathComponent(path).standardizedFileURL.path
        let temporary = self.temporary.contains { full.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }
        var how = mode
        if mode == .reference, temporary {
            how = toStandardOutput ? .embed : .folder
            copiedTemporary += 1
        }
        let result: String
        if how != .reference, !FileManager.default.isReadableFile(atPath: full) {
            missing.append(full)
            how = .reference
        }
        switch how {
        case .reference:
            result = Self.relativePath(of: full, from: outputFolder)
        case .folder:
            let folder = (outputFolder as NSString).appendingPathComponent(filesFolderName)
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw CLIError("\(folder): cannot be created: \(error.localizedDescription)")
            }
            let name = uniqueName((full as NSString).lastPathComponent)
            let target = (folder as NSString).appendingPathComponent(name)
            try? FileManager.default.removeItem(atPath: target)
            do {
                try FileManager.default.copyItem(atPath: full, toPath: target)
            } catch {
                throw CLIError("\(target): cannot copy the photo \(full) there: \(error.localizedDescription)")
            }
            result = filesFolderName + "/" + name
        case .embed:
            guard let data = FileManager.default.contents(atPath: full) else {
                throw CLIError("\(full): photo cannot be read")
            }
            result = "data:\(Self.mimeType(of: data, path: full));base64," + data.base64EncodedString()
        }
        placed[path] = result
        return result
    }

    private func uniqueName(_ name: String) -> String {
        var candidate = name
        let stem = (name as NSString).deletingPathExtension, ext = PathText.fileExtension(name)
        var n = 2
        while !usedNames.insert(candidate).inserted {
            candidate = "\(stem)-\(n)" + (ext.isEmpty ? "" : "." + ext)
            n += 1
        }
        return candidate
    }

    static func mimeType(of data: Data, path: String) -> String {
        let head = [UInt8](data.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if head.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if head.count >= 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        if head.starts(with: Array("BM".utf8)) { return "image/bmp" }
        switch PathText.fileExtension(path).lowercased() {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        default: return "application/octet-stream"
        }
    }

    /// `a/b/c.jpg` seen from `a/d` is `../b/c.jpg`.
    static func relativePath(of file: String, from folder: String) -> String {
        let target = URL(fileURLWithPath: file).standardizedFileURL.pathComponents
        let base = URL(fileURLWithPath: folder).standardizedFileURL.pathComponents
        var common = 0
        while common < target.count - 1, common < base.count, target[common] == base[common] { common += 1 }
        let ups = Array(repeating: "..", count: base.count - common)
        return (ups + target[common...]).joined(separator: "/")
    }
}
