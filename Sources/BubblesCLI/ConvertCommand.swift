import ArgumentParser
import BubbleCore
import BubbleImport
import Foundation

/// `bubbles convert INPUT -o OUT.json|OUT.csv`: any supported export to BubbleKit's native JSON
/// (lossless; what `bubbles render` reads) or to CSV (one row per message, for spreadsheets).
struct Convert: ParsableCommand {
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
    @Option(help: "json or csv (default: from the output's extension).") var format: String?
    @Option(help: """
        Photos: reference (relative paths from the output to the originals), folder (copied into \
        OUT_files/) or embed (data: URLs inside the file). Photos taken out of an archive or a \
        backup have no lasting original: with reference they are copied (embedded on standard output).
        """)
    var assets: String = "reference"

    enum Kind: String { case json, csv }
    enum Assets: String { case reference, folder, embed }

    func run() throws {
        let formatName = format ?? (output == "-" ? nil : (output as NSString).pathExtension.lowercased())
        guard let formatName, let kind = Kind(rawValue: formatName.lowercased()) else {
            throw ValidationError("cannot tell the output format from '\(output)'; use --format json|csv")
        }
        guard let mode = Assets(rawValue: assets.lowercased()) else {
            throw ValidationError("--assets '\(assets)' is not an asset mode; expected reference, folder or embed")
        }
        if output == "-" {
            if mode == .folder { throw ValidationError("--assets folder writes several files; give an output file name, not -") }
        } else {
            if (try? URL(fileURLWithPath: output).resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                throw CLIError("\(output): is a folder; expected an output file name")
            }
            if source.input != "-", URL(fileURLWithPath: source.input).standardizedFileURL.resolvingSymlinksInPath()
                == URL(fileURLWithPath: output).standardizedFileURL.resolvingSymlinksInPath() {
                throw CLIError("\(output): is the input file; refusing to overwrite it")
            }
        }
        _ = try source.zone()

        let loaded = try source.load()
        defer { loaded.close() }
        loaded.reportWarnings()

        let outFolder = output == "-" ? FileManager.default.currentDirectoryPath
            : URL(fileURLWithPath: output).standardizedFileURL.deletingLastPathComponent().path
        let filesName = output == "-" ? "" : URL(fileURLWithPath: output).deletingPathExtension().lastPathComponent + "_files"
        var placer = PhotoPlacer(mode: mode, loaded: loaded, outputFolder: outFolder, filesFolderName: filesName,
                                 toStandardOutput: output == "-")
        let conversation = try placer.place(loaded.conversation)
        placer.reportNotes()

        try OutputFile.write(output) { sink in
            switch kind {
            case .json:
                let writer = ConversationWriter(flush: sink)
                try writer.begin(title: conversation.title, me: loaded.result.me, theme: loaded.result.theme,
                                 participants: conversation.participants)
                for m in conversation.messages { try writer.write(m) }
                try writer.finish()
            case .csv:
                let writer = ConversationCSVWriter(conversation: conversation, timeZone: loaded.timeZone, flush: sink)
                try writer.writeHeader()
                for m in conversation.messages { try writer.write(m) }
                try writer.finish()
            }
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
              let handle = FileHandle(forWritingAtPath: temp) else {
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
struct PhotoPlacer {
    let mode: Convert.Assets
    let loaded: InputOptions.Loaded
    let outputFolder: String
    let filesFolderName: String
    let toStandardOutput: Bool
    private var placed: [String: String] = [:]
    private var usedNames = Set<String>()
    private var copiedTemporary = 0
    private var missing: [String] = []

    init(mode: Convert.Assets, loaded: InputOptions.Loaded, outputFolder: String, filesFolderName: String, toStandardOutput: Bool) {
        self.mode = mode; self.loaded = loaded; self.outputFolder = outputFolder
        self.filesFolderName = filesFolderName; self.toStandardOutput = toStandardOutput
    }

    mutating func place(_ conversation: Conversation) throws -> Conversation {
        var c = conversation
        for i in c.participants.indices {
            if let avatar = c.participants[i].avatar { c.participants[i].avatar = try place(avatar) }
        }
        for i in c.messages.indices where !c.messages[i].images.isEmpty {
            for j in c.messages[i].images.indices {
                if let path = c.messages[i].images[j].path { c.messages[i].images[j].path = try place(path) }
            }
        }
        return c
    }

    func reportNotes() {
        var lines: [String] = []
        if copiedTemporary > 0 {
            lines.append("note: \(copiedTemporary) photo\(copiedTemporary == 1 ? "" : "s") taken out of the export "
                         + (toStandardOutput ? "embedded (no lasting file to reference)"
                            : "copied into \(filesFolderName)/ (no lasting file to reference)"))
        }
        for path in missing.prefix(10) { lines.append("warning: photo \(path): no such file; kept as a reference") }
        if missing.count > 10 { lines.append("warning: … and \(missing.count - 10) more missing photos") }
        if !lines.isEmpty { FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8)) }
    }

    private mutating func place(_ path: String) throws -> String {
        if let done = placed[path] { return done }
        let full = path.hasPrefix("/") ? path : URL(fileURLWithPath: loaded.folder).appendingPathComponent(path).standardizedFileURL.path
        let temporary = loaded.temporary.contains { full.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }
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

    private mutating func uniqueName(_ name: String) -> String {
        var candidate = name
        let stem = (name as NSString).deletingPathExtension, ext = (name as NSString).pathExtension
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
        switch (path as NSString).pathExtension.lowercased() {
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
