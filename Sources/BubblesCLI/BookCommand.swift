import ArgumentParser
import BubbleCore
import BubbleRender
import BubbleStats
import BubbleText
import Foundation

/// `bubbles book INPUT|--conversation ID -o book.pdf`: a print-ready book of a conversation.
struct Book: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a print-ready PDF book of a conversation: cover, contents, chapters, trim and bleed.",
        discussion: """
            Pages are the trim size plus the bleed on every side (MediaBox = BleedBox), each with its \
            TrimBox; margins are mirrored, the gutter on the binding side (left of odd pages, right of \
            even ones). The book opens with a cover, a title page and the contents; each chapter (a \
            month or a year) starts on a right-hand page. Photos are printed at up to 300 dpi; those \
            below 150 dpi at their printed size are named on stderr.
            Examples:
              bubbles book "WhatsApp Chat with Ann.zip" -o ann.pdf --me Ben --trim a5 --bleed 3mm
              bubbles book --conversation 4 -o book.pdf --trim 8x8 --chapters year --cover-photo beach.jpg
            """
    )

    @OptionGroup var source: InputOptions
    @Option(name: .shortAndLong, help: "The PDF to write.") var output: String
    @Option(help: "Trim size: a5, a4, letter, 6x9 (inches) or 8x8 (inches, a square photo book).") var trim: String = "a5"
    @Option(help: "Bleed on every side, e.g. 3mm, 0.125in, 9pt (a number alone is mm); 0 for none.") var bleed: String = "0"
    @Option(help: "Extra inner margin for the binding (same units).") var gutter: String = "6mm"
    @Option(help: "Chapters: month, year or none.") var chapters: String = "month"
    @Flag(help: "Give each big photo a page of its own (instead of a block across the text).") var photoPages = false
    @Option(help: "A picture filling the cover (bleed included).") var coverPhoto: String?
    @Option(help: "The book's title (default: the conversation's).") var title: String?
    @Option(help: "A bundled theme (see `bubbles themes`) or a theme .json file.") var theme: String?
    @Option(help: "Locale of dates and month names (e.g. en_GB, de_DE).") var locale: String?
    @Option(help: "Print size of the conversation relative to the theme's screen size (0.4–1).") var textScale: Double = 0.62

    /// "3mm", "0.125in", "9pt", "3" (mm) → points.
    static func length(_ text: String, option: String) throws -> Double {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("mm", 72 / 25.4), ("cm", 72 / 2.54), ("in", 72), ("pt", 1)]
        for (suffix, factor) in units where t.hasSuffix(suffix) {
            if let v = Double(t.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), v >= 0, v <= 2000 { return v * factor }
        }
        if let v = Double(t), v >= 0, v <= 1000 { return v * 72 / 25.4 }
        throw ValidationError("\(option) '\(text)' is not a length; expected e.g. 3mm, 0.125in or 9pt")
    }

    func run() async throws {
        guard let trimSize = TrimSize(rawValue: trim.lowercased()) else {
            throw ValidationError("--trim '\(trim)' is not a trim size; expected \(TrimSize.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let chapterMode = ChapterMode(rawValue: chapters.lowercased()) else {
            throw ValidationError("--chapters '\(chapters)' is not a chapter mode; expected month, year or none")
        }
        guard textScale.isFinite, (0.4...1).contains(textScale) else { throw ValidationError("--text-scale \(textScale) must be between 0.4 and 1") }
        var options = BookOptions()
        options.trim = trimSize
        options.bleed = try Self.length(bleed, option: "--bleed")
        options.gutter = try Self.length(gutter, option: "--gutter")
        guard options.bleed <= 36 else { throw ValidationError("--bleed \(bleed) is more than half an inch; expected a few millimetres") }
        guard options.gutter < trimSize.size.width / 4 else { throw ValidationError("--gutter \(gutter) leaves too little page") }
        options.chapters = chapterMode
        options.photoPages = photoPages
        options.title = title
        options.scale = textScale
        guard PathText.fileExtension(output).lowercased() == "pdf" else {
            throw ValidationError("-o \(output): a book is a PDF; give a name ending in .pdf")
        }
        try source.refuseUnsafeOutput(output)
        if let coverPhoto {
            let full = URL(fileURLWithPath: coverPhoto).standardizedFileURL.path
            guard FileManager.default.fileExists(atPath: full) else { throw CLIError("--cover-photo \(coverPhoto): no such file") }
            guard PhotoLoader.size(ofFile: full) != nil else {
                throw CLIError("--cover-photo \(coverPhoto): cannot be read as a picture (JPEG, PNG, WebP, GIF…)")
            }
            options.coverPhoto = full
        }
        let locale = try BubblesCLI.locale(locale)

        let loaded = try await source.loadAny()
        defer { loaded.close() }
        loaded.reportWarnings()
        try loaded.refuseEmptyRange(source)
        guard !loaded.conversation.messages.isEmpty else { throw CLIError("\(source.input): has no messages to make a book of") }

        let (themeValue, themeFolder) = try reporting { try ThemeLibrary.load(theme ?? loaded.result.theme ?? "imessage") }
        let renderer = ConversationRenderer(theme: themeValue, themeFolder: themeFolder, photosFolder: loaded.folder)
        let report = try reporting {
            try renderer.renderBook(loaded.conversation, to: output, options: options, timeZone: loaded.timeZone, locale: locale)
        }
        var lines: [String] = []
        for p in report.lowResolution.prefix(20) {
            lines.append("note: \(output): page \(p.page): \(p.path) prints at \(Int(p.dpi.rounded())) dpi (below \(Int(options.lowDPI)); it may look soft)")
        }
        if report.lowResolution.count > 20 {
            lines.append("note: … and \(Plural.count(report.lowResolution.count - 20, "more photo")) below \(Int(options.lowDPI)) dpi")
        }
        for problem in report.media.problems.prefix(20) {
            lines.append("warning: \(source.input): \(problem.file): \(problem.reason); shown as a placeholder")
        }
        let bleedNote = options.bleed > 0 ? String(format: ", %.1f mm bleed", options.bleed / 72 * 25.4) : ""
        let chapterNote = options.chapters == .none ? "no chapters" : "\(Plural.count(report.chapters.count, "chapter"))"
        lines.append("\(output): \(report.pages) pages (\(trimSize.rawValue)\(bleedNote)), \(chapterNote)")
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
