import ArgumentParser
import BubbleCore
import BubbleRender
import Foundation

/// `bubbles render INPUT -o OUT`: a conversation file to PNG, PDF or SVG.
struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render a conversation (native JSON) to PNG, PDF or SVG.",
        discussion: """
        The output's extension picks the format (--format overrides). Use - for standard input or output.
        Examples:
          bubbles render chat.json -o chat.png --theme imessage --scale 2
          bubbles render chat.json -o chat.pdf --paper letter
          bubbles render chat.json -o chat.png --pages --page-height 812
          cat chat.json | bubbles render - -o - --format svg > chat.svg
        """
    )

    @Argument(help: "Conversation file (BubbleKit JSON), or - for standard input.") var input: String
    @Option(name: .shortAndLong, help: "Output file, or - for standard output.") var output: String
    @Option(help: "png, pdf or svg (default: from the output's extension).") var format: String?
    @Option(help: "A bundled theme (see `bubbles themes`) or a theme .json file.") var theme: String?
    @Flag(help: "Use the theme's dark colours.") var dark = false
    @Option(help: "Width in points (PNG, SVG).") var width: Double = 375
    @Option(help: "Pixels per point for PNG: 1, 2 or 3.") var scale: Double = 2
    @Flag(help: "PNG: numbered page images (OUT-001.png, …) instead of one tall image.") var pages = false
    @Option(help: "PNG page height in points, with --pages.") var pageHeight: Double = 812
    @Option(help: "PDF paper: a4 or letter.") var paper: String = "a4"
    @Option(help: "Whose messages are outgoing: a participant id or name (overrides the file's \"me\").") var me: String?
    @Option(help: "Time zone for days and times (IANA name, e.g. Europe/Berlin); default the system's.") var tz: String?

    func run() throws {
        let formatName = format ?? (output == "-" ? nil : (output as NSString).pathExtension.lowercased())
        guard let formatName, let outFormat = OutputFormat(rawValue: formatName.lowercased()) else {
            throw ValidationError("cannot tell the output format from '\(output)'; use --format png|pdf|svg")
        }
        guard [1.0, 2.0, 3.0].contains(scale) else { throw ValidationError("--scale \(scale) must be 1, 2 or 3") }
        guard width.isFinite, width >= 100, width <= 4000 else { throw ValidationError("--width \(width) must be between 100 and 4000 points") }
        guard pageHeight.isFinite, pageHeight >= 100 else { throw ValidationError("--page-height \(pageHeight) must be at least 100 points") }
        let paperSize: Size = switch paper.lowercased() {
        case "a4": PageSetup.a4
        case "letter": PageSetup.letter
        default: throw ValidationError("--paper '\(paper)' is not a paper size; expected a4 or letter")
        }
        let zone = try timeZone(tz)

        let (data, inputName, folder) = try readInput(input)
        let (conversation, hints) = try reporting { try ConversationFile.decode(data, path: inputName, me: me) }
        let (themeValue, themeFolder) = try reporting { try ThemeLibrary.load(theme ?? hints.theme ?? "imessage") }

        var options = RenderOptions(format: outFormat)
        options.width = width
        options.scale = scale
        options.pageHeight = pages ? pageHeight : nil
        options.paper = paperSize
        options.dark = dark
        options.timeZone = zone

        let renderer = ConversationRenderer(theme: themeValue, themeFolder: themeFolder, photosFolder: folder)
        let bar = ProgressBar()
        renderer.progress = { done, total in bar.update(done, total) }
        defer { bar.finish() }
        if output == "-" {
            guard !pages else { throw ValidationError("--pages writes several files; give an output file name, not -") }
            let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-\(UUID().uuidString).\(outFormat.rawValue)").path
            defer { try? FileManager.default.removeItem(atPath: tmp) }
            try reporting { try renderer.render(conversation, to: tmp, options: options) }
            FileHandle.standardOutput.write(try Data(contentsOf: URL(fileURLWithPath: tmp)))
        } else {
            if (try? URL(fileURLWithPath: output).resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                throw CLIError("\(output): is a folder; expected an output file name")
            }
            if input != "-", URL(fileURLWithPath: input).standardizedFileURL == URL(fileURLWithPath: output).standardizedFileURL {
                throw CLIError("\(output): is the input file; refusing to overwrite it")
            }
            let files = try reporting { try renderer.render(conversation, to: output, options: options) }
            if files.count > 1 { FileHandle.standardError.write(Data("wrote \(files.count) pages: \(files.first!) … \(files.last!)\n".utf8)) }
        }
    }
}

/// `bubbles themes`: the bundled themes.
struct Themes: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the bundled themes.")
    func run() throws {
        for name in ThemeLibrary.bundledNames {
            let (theme, _) = try reporting { try ThemeLibrary.load(name) }
            let dark = theme.dark == nil ? "" : " (light and dark)"
            print("\(name)\(dark): \(theme.description ?? "")")
        }
    }
}

/// Reads a file or standard input: its bytes, a name for messages, and the folder relative
/// paths (photos) are resolved against.
func readInput(_ input: String) throws -> (Data, String, String) {
    if input == "-" {
        return (FileHandle.standardInput.readDataToEndOfFile(), "<stdin>", FileManager.default.currentDirectoryPath)
    }
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: input, isDirectory: &isDir) else { throw CLIError("\(input): no such file") }
    guard !isDir.boolValue else { throw CLIError("\(input): is a folder; expected a conversation file") }
    guard let data = FileManager.default.contents(atPath: input) else { throw CLIError("\(input): cannot be read (permission denied?)") }
    return (data, input, URL(fileURLWithPath: input).deletingLastPathComponent().path)
}

func timeZone(_ name: String?) throws -> TimeZone {
    guard let name else { return .current }
    guard let zone = TimeZone(identifier: name) else {
        throw ValidationError("--tz '\(name)' is not a time zone; expected an IANA name such as UTC, Europe/Berlin, America/New_York or Asia/Tokyo")
    }
    return zone
}

/// A one-line progress bar on stderr, only when stderr is a terminal.
final class ProgressBar {
    let enabled = isatty(2) != 0
    private var shown = false
    func update(_ done: Int, _ total: Int) {
        guard enabled, total > 1 else { return }
        let width = 30
        let filled = total == 0 ? width : done * width / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        FileHandle.standardError.write(Data("\r\(bar) \(done)/\(total) pages".utf8))
        shown = true
    }
    func finish() {
        if shown { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
