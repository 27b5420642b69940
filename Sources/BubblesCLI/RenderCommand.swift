import ArgumentParser
import BubbleCore
import BubbleHTML
import BubbleMedia
import BubbleRender
import BubbleStats
import BubbleText
import Foundation

/// `bubbles render INPUT -o OUT`: a conversation or chat export to PNG, PDF, SVG or HTML.
struct Render: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render a conversation or chat export to PNG, PDF, SVG or HTML.",
        discussion: """
            The input's format is detected from its content (--input-format overrides); the output's \
            extension picks the output format (--format overrides). Use - for standard input or output.
            Examples:
              bubbles render chat.json -o chat.png --theme imessage --scale 2
              bubbles render sms-20240301.xml -o sms.pdf --chat "Ann" --since 2024-01-01
              bubbles render "WhatsApp Chat with Ann.zip" -o ann.html --me Ben --assets folder
              bubbles render result.json -o family.pdf --chat Family --paper letter
              bubbles render chat.db -o chat.png --pages --page-height 812 --chat +15551234567
              cat chat.json | bubbles render - -o - --format svg > chat.svg
            """
    )

    @OptionGroup var source: InputOptions
    @Option(name: .shortAndLong, help: "Output file, or - for standard output.") var output: String
    @Option(help: "png, pdf, svg or html (default: from the output's extension; with --all, pdf).") var format: String?
    @Option(help: "A bundled theme (see `bubbles themes`) or a theme .json file.") var theme: String?
    @Flag(help: "Use the theme's dark colours (HTML without it: light, and dark when the browser prefers it).") var dark = false
    @Option(help: "Width in points (PNG, SVG; HTML: the column's maximum width in CSS px).") var width: Double = 375
    @Option(help: "Pixels per point for PNG: 1, 2 or 3.") var scale: Double = 2
    @Flag(help: "Right-to-left interface: incoming on the right, outgoing on the left, bubble art mirrored (all formats).") var rtl = false
    @Flag(help: "PNG: numbered page images (OUT-001.png, …) instead of one tall image.") var pages = false
    @Option(help: "PNG page height in points, with --pages.") var pageHeight: Double = 812
    @Option(help: "PDF paper: a4 or letter.") var paper: String = "a4"
    @Option(help: "HTML photos and fonts: embed (one self-contained file) or folder (copied into OUT_files/).") var assets: String = "embed"
    @Option(help: "HTML pages: a number of messages per page, month (one page per month) or none (one page).") var split: String = "5000"
    @Flag(help: "HTML: load every photo at once (for printing) instead of lazily.") var noLazyImages = false
    @Flag(help: "HTML: give wrapped bubbles the width the Cairo layout gives them (measures every message; slower).") var shrinkWrap = false
    @Flag(
        help: "PNG, PDF, SVG: draw spoilers as text. Without it a hatched box hides each one and its text is left out of the file (HTML reveals them on click)."
    ) var revealSpoilers = false
    @Option(help: "Name today's and yesterday's day separators relative to this date (YYYY-MM-DD or a date-time, in --tz); default: dates only.") var now:
        String?
    @Option(help: "Locale of day and time texts (e.g. en_US, en_GB, de_DE, fr_FR, ja_JP); default: English days, 24-hour times.") var locale: String?
    @Option(help: "Text engine: fast (cached segments and glyph runs, the default) or pango (a Pango layout per text, the reference).")
    var textEngine: TextEngineKind = .standard
    @Option(help: "Where message times go, instead of the theme's choice: none, aboveGroup, inside, daySeparator or beside.")
    var timestamps: Theme.TimestampPlacement?
    @Flag(help: "A contact sheet of the conversation's photos, videos, voice notes and files instead of its bubbles (PDF, PNG pages, SVG or HTML).")
    var gallery = false
    @OptionGroup var batch: BatchOptions

    func run() async throws {
        let formatName = format ?? (batch.all ? "pdf" : output == "-" ? nil : PathText.fileExtension(output).lowercased())
        guard let formatName, let outFormat = OutputKind(rawValue: formatName.lowercased()) else {
            throw ValidationError("cannot tell the output format from '\(output)'; use --format png|pdf|svg|html")
        }
        guard [1.0, 2.0, 3.0].contains(scale) else { throw ValidationError("--scale \(scale) must be 1, 2 or 3") }
        guard width.isFinite, width >= 100, width <= 4000 else { throw ValidationError("--width \(width) must be between 100 and 4000 points") }
        guard pageHeight.isFinite, pageHeight >= 100 else { throw ValidationError("--page-height \(pageHeight) must be at least 100 points") }
        let paperSize: Size =
            switch paper.lowercased() {
            case "a4": PageSetup.a4
            case "letter": PageSetup.letter
            default: throw ValidationError("--paper '\(paper)' is not a paper size; expected a4 or letter")
            }
        guard let assetMode = HTMLOptions.Assets(rawValue: assets.lowercased()), assetMode != .reference else {
            throw ValidationError("--assets '\(assets)' is not an asset mode; expected embed or folder")
        }
        let pagination: HTMLOptions.Pagination
        switch split.lowercased() {
        case "month": pagination = .byMonth
        case "none": pagination = .single
        default:
            guard let n = Int(split), n > 0 else {
                throw ValidationError("--split '\(split)' is not a page size; expected a number of messages, month or none")
            }
            pagination = .messages(n)
        }
        if batch.all {
            // -o names a folder: checked by the batch.
        } else if output == "-" {
            if pages { throw ValidationError("--pages writes several files; give an output file name, not -") }
            if outFormat == .html, assetMode == .folder { throw ValidationError("--assets folder writes several files; give an output file name, not -") }
        } else {
            try source.refuseUnsafeOutput(output)
        }
        _ = try source.zone()
        if gallery {
            if batch.all { throw ValidationError("--gallery makes one conversation's contact sheet; it does not go with --all") }
            if output == "-" { throw ValidationError("--gallery writes a file; give an output file name, not -") }
            try batch.refuseWithoutAll(source: source)
            try await writeGallery(outFormat)
            return
        }
        if dark, let theme, let named = try? ThemeLibrary.load(theme).theme, named.dark == nil {
            let withDark = ThemeLibrary.bundledNames.filter { (try? ThemeLibrary.load($0).theme.dark) != nil }
            FileHandle.standardError.write(
                Data("warning: theme \"\(theme)\" has no dark variant; --dark changes nothing (themes with one: \(withDark.joined(separator: ", ")))\n".utf8))
        }
        var settings = RenderSettings(
            kind: outFormat, theme: theme, dark: dark, width: width, scale: scale, rtl: rtl,
            pageHeight: pages ? pageHeight : nil, paper: paperSize, assets: assetMode,
            pagination: pagination, lazyImages: !noLazyImages, shrinkWrap: shrinkWrap,
            now: try now.map { try parseDate($0, option: "--now", zone: try source.zone()) },
            locale: try BubblesCLI.locale(locale), textEngine: textEngine, timestamps: timestamps,
            strict: source.strict, revealSpoilers: revealSpoilers)
        if batch.all {
            // One output per conversation: the pages of one conversation are drawn on one core,
            // the conversations on all of them.
            settings.pdfParts = batch.jobCount > 1 ? 1 : nil
            if outFormat == .html, assetMode == .embed, !batch.embedAssets { settings.sharedAssets = "assets" }
            let fixed = settings
            let batchFailed = try batch.run(source: source, output: output, ext: outFormat.rawValue, signature: settings.signature) {
                c, folder, zone, target, slot in
                let settings = fixed
                let (files, report) = try settings.write(
                    c.conversation, themeOfFile: c.theme, photosFolder: folder, timeZone: zone, to: target,
                    shared: slot)
                let paged = settings.pagedOnItsOwn(files).map { "written as \($0) page images: one would be taller than a PNG can be" }
                return (files, [report.summary, paged].compactMap { $0 }.joined(separator: "; ").nilIfEmpty)
            }
            if batchFailed { throw ExitCode(BatchOptions.someFailedExitCode) }
            return
        }
        try batch.refuseWithoutAll(source: source, jobsPaintPages: outFormat == .cairo(.pdf))
        if let jobs = batch.jobs { settings.pdfParts = jobs }

        let loaded = try await source.loadAny()
        defer { loaded.close() }
        loaded.reportWarnings()
        try loaded.refuseEmptyRange(source)

        // Everything is written to a file first; standard output gets it once complete.
        let target =
            output == "-"
            ? FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-\(UUID().uuidString).\(outFormat.rawValue)").path
            : output
        defer { if output == "-" { try? FileManager.default.removeItem(atPath: target) } }

        if output == "-" { settings.pagination = .single }
        let bar = ProgressBar()
        defer { bar.finish() }
        let (files, report) = try settings.write(
            loaded.conversation, themeOfFile: loaded.result.theme, photosFolder: loaded.folder,
            timeZone: loaded.timeZone, to: target, progress: { done, total in bar.update(done, total) })
        reportMedia(report)
        if output == "-", files.count > 1 {
            for f in files { try? FileManager.default.removeItem(atPath: f) }
            throw CLIError("-: the conversation is taller than one PNG can be (32,767 px); write it to a file (-o chat.png: page images) or as PDF")
        }
        if let n = settings.pagedOnItsOwn(files) {
            FileHandle.standardError.write(
                Data("note: \(output): one image would be taller than a PNG can be (32,767 px); written as \(n) page images, as --pages makes them\n".utf8))
        }
        if output == "-" {
            FileHandle.standardOutput.write(try Data(contentsOf: URL(fileURLWithPath: target)))
        } else if files.count > 1 {
            FileHandle.standardError.write(Data("wrote \(files.count) files: \(files.first!) … \(files.last!)\n".utf8))
        }
    }
}

extension Render {
    /// Each picture or file that could not be read, named as in the export ("chat.zip:
    /// IMG-….jpg: …"), then the count: one line each on stderr (the output was still written).
    func reportMedia(_ report: MediaReport, maxShown: Int = 20) {
        guard let summary = report.summary else { return }
        var lines = report.problems.prefix(maxShown).map { "warning: \(source.input): \($0.file): \($0.reason); shown as a placeholder" }
        if report.problems.count > maxShown { lines.append("warning: … and \(report.problems.count - maxShown) more") }
        lines.append(summary + " (--strict makes this an error)")
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

/// Everything `bubbles render` was asked for but the input: writes any conversation to a file
/// (used once, or once per conversation with `--all`, on several threads).
struct RenderSettings: Sendable {
    var kind: OutputKind
    var theme: String?
    var dark: Bool
    var width: Double
    var scale: Double
    var rtl: Bool
    var pageHeight: Double?
    var paper: Size
    var assets: HTMLOptions.Assets
    var pagination: HTMLOptions.Pagination
    var lazyImages: Bool
    var shrinkWrap: Bool
    var now: Date?
    var locale: Locale?
    var textEngine: TextEngineKind
    var timestamps: Theme.TimestampPlacement?
    var strict: Bool
    /// PNG, PDF, SVG: spoilers drawn as text.
    var revealSpoilers = false
    /// PDF: parts painted in parallel (nil: the renderer's choice).
    var pdfParts: Int?
    /// HTML with `--all`: photos and fonts in this folder beside the pages, shared by all of them.
    var sharedAssets: String?

    /// What decides the output besides the conversation (for `--update`'s manifest).
    var signature: String {
        "\(kind.rawValue) \(theme ?? "-") \(dark) \(width) \(scale) \(rtl) \(pageHeight ?? 0) \(paper.width)x\(paper.height) "
            + "\(assets.rawValue) \(pagination) \(lazyImages) \(shrinkWrap) \(now?.timeIntervalSince1970 ?? 0) \(locale?.identifier ?? "-") "
            + "\(textEngine.rawValue) \(timestamps.map { "\($0)" } ?? "-") \(strict) \(sharedAssets ?? "-") \(revealSpoilers)"
    }

    /// Writes `conversation` to `target` (atomically); the files written and what could not be read.
    ///
    /// `shared`: a render among several at once (`--all`, its worker's number): the fast engine is
    /// shared by all of them (one segment cache for the whole backup), each worker drawing with
    /// its own copy of the engine's fonts.
    func write(
        _ conversation: Conversation, themeOfFile: String?, photosFolder: String, timeZone: TimeZone, to target: String,
        shared: Int? = nil, progress: ((Int, Int) -> Void)? = nil
    ) throws -> (files: [String], report: MediaReport) {
        var (themeValue, themeFolder) = try reporting { try ThemeLibrary.load(theme ?? themeOfFile ?? "imessage") }
        if let timestamps { themeValue.timestamps = timestamps }
        switch kind {
        case .html:
            var options = HTMLOptions()
            options.timeZone = timeZone
            options.locale = locale
            options.now = now
            options.dark = dark ? true : nil
            options.width = width
            options.assets = assets
            options.pageSize = pagination
            options.lazyImages = lazyImages
            options.shrinkWrap = shrinkWrap
            options.mirrored = rtl
            options.textEngine = textEngine
            options.strictMedia = strict
            options.sharedAssets = sharedAssets
            var exporter = HTMLExporter(
                theme: themeValue, themeFolder: themeFolder, photosFolder: photosFolder, options: options,
                pictures: PhotoDecoder())
            if shared != nil {
                // One style sheet (fonts measured once) for every page of the backup.
                exporter.pageStyle = try SharedPageStyles.style(key: "\(themeFolder)/\(theme ?? themeOfFile ?? "imessage")") {
                    try HTMLPageStyle(theme: themeValue, themeFolder: themeFolder, options: options, pictures: PhotoDecoder())
                }
            }
            var report = MediaReport()
            let files = try naming(target) { try reporting { try exporter.export(conversation, to: target, media: &report) } }
            return (files, report)
        case .cairo(let cairoFormat):
            var options = RenderOptions(format: cairoFormat)
            options.width = width
            options.scale = scale
            options.pageHeight = pageHeight
            options.paper = paper
            options.dark = dark
            options.mirrored = rtl
            options.timeZone = timeZone
            options.locale = locale
            options.now = now
            options.strictMedia = strict
            options.revealSpoilers = revealSpoilers
            options.pdfParts = pdfParts
            let renderer =
                shared != nil && textEngine == .fast
                ? ConversationRenderer(theme: themeValue, themeFolder: themeFolder, photosFolder: photosFolder, engine: SharedTextEngine.fast)
                : ConversationRenderer(theme: themeValue, themeFolder: themeFolder, photosFolder: photosFolder, textEngine: textEngine)
            renderer.fontCopy = shared ?? 0
            renderer.progress = progress
            let files = try naming(target) { try reporting { try renderer.render(conversation, to: target, options: options) } }
            return (files, renderer.mediaReport)
        }
    }
}

extension RenderSettings {
    /// How many page images a PNG render without `--pages` wrote, when it cut the conversation
    /// on its own (nil otherwise).
    func pagedOnItsOwn(_ files: [String]) -> Int? {
        guard case .cairo(.png) = kind, pageHeight == nil, files.count > 1 else { return nil }
        return files.count
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// The fast text engine every conversation of `--all` is measured and drawn with (it prepares
/// and draws on several threads at once).
enum SharedTextEngine {
    static let fast = FastTextEngine()
}

/// The HTML page styles of `--all`, one per theme (the options are the same for every page).
enum SharedPageStyles {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var styles: [String: HTMLPageStyle] = [:]

    static func style(key: String, make: () throws -> HTMLPageStyle) throws -> HTMLPageStyle {
        lock.lock(); defer { lock.unlock() }
        if let known = styles[key] { return known }
        let made = try make()
        styles[key] = made
        return made
    }
}

/// What `--format` names: one of the Cairo outputs, or HTML.
enum OutputKind: Equatable, Sendable {
    case cairo(OutputFormat)
    case html

    init?(rawValue: String) {
        if rawValue == "html" || rawValue == "htm" { self = .html; return }
        guard let f = OutputFormat(rawValue: rawValue) else { return nil }
        self = .cairo(f)
    }
    var rawValue: String {
        switch self {
        case .html: "html";
        case .cairo(let f): f.rawValue
        }
    }
}

/// `bubbles themes`: the bundled themes.
extension TextEngineKind: ExpressibleByArgument {}
extension Theme.TimestampPlacement: ExpressibleByArgument {}

struct Themes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the bundled themes.")
    func run() async throws {
        for name in ThemeLibrary.bundledNames {
            let (theme, _) = try reporting { try ThemeLibrary.load(name) }
            let dark = theme.dark == nil ? "" : " (light and dark)"
            print("\(name)\(dark): \(theme.description ?? "")")
        }
    }
}

func timeZone(_ name: String?) throws -> TimeZone {
    guard let name else { return .current }
    guard let zone = TimeZone(identifier: name) else {
        throw ValidationError("--tz '\(name)' is not a time zone; expected an IANA name such as UTC, Europe/Berlin, America/New_York or Asia/Tokyo")
    }
    return zone
}

/// The locale `--locale` names (`de_DE`, `de-DE`, `fr`), or nil when none was given.
func locale(_ name: String?) throws -> Locale? {
    guard let name else { return nil }
    let wanted = name.replacingOccurrences(of: "-", with: "_")
    if let id = Locale.availableIdentifiers.first(where: { $0.caseInsensitiveCompare(wanted) == .orderedSame }) {
        return Locale(identifier: id)
    }
    throw ValidationError("--locale '\(name)' is not a locale; expected an identifier such as en_US, en_GB, de_DE, fr_FR, es_ES or ja_JP")
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

extension Render {
    /// `--gallery`: the contact sheet (`ContactSheet`) as PDF, PNG pages or SVG; as HTML, a
    /// self-contained page of thumbnails (JPEG, made by gdk-pixbuf) with their days and senders.
    func writeGallery(_ kind: OutputKind) async throws {
        let loaded = try await source.loadAny()
        defer { loaded.close() }
        loaded.reportWarnings()
        try loaded.refuseEmptyRange(source)
        let locale = try BubblesCLI.locale(locale) ?? Locale(identifier: "en_US")
        let (themeValue, themeFolder) = try reporting { try ThemeLibrary.load(theme ?? loaded.result.theme ?? "imessage") }
        let renderer = ConversationRenderer(theme: themeValue, themeFolder: themeFolder, photosFolder: loaded.folder)
        let count: Int
        switch kind {
        case .cairo(let format):
            let (files, items) = try reporting {
                try renderer.renderGallery(loaded.conversation, to: output, format: format, dark: dark, timeZone: loaded.timeZone, locale: locale, scale: scale)
            }
            count = items
            if files.count > 1 { FileHandle.standardError.write(Data("\(output): \(files.count) pages (\(files.first!) … \(files.last!))\n".utf8)) }
        case .html:
            let (resolved, report) = MediaResolver(decoder: PhotoDecoder(), baseFolder: loaded.folder, style: themeValue.layoutStyle).resolve(
                loaded.conversation)
            reportMedia(report)
            let entries = ContactSheet.entries(of: resolved)
            count = entries.count
            let html = GalleryHTML.page(title: loaded.conversation.title ?? "Gallery", entries: entries, timeZone: loaded.timeZone, locale: locale, dark: dark)
            try reporting {
                try AtomicFile.write(to: output) { (tmp: String) throws(RenderError) in
                    guard FileManager.default.createFile(atPath: tmp, contents: Data(html.utf8)) else {
                        throw .unwritable(path: output, reason: "cannot create the file")
                    }
                }
            }
        }
        if case .cairo = kind { reportMedia(renderer.mediaReport) }
        FileHandle.standardError.write(Data("\(output): \(Plural.count(count, "photo, video or file", "photos, videos and files"))\n".utf8))
    }
}

/// `render --gallery -o sheet.html`: the contact sheet as one self-contained page.
enum GalleryHTML {
    static func page(title: String, entries: [ContactSheet.Entry], timeZone: TimeZone, locale: Locale, dark: Bool) -> String {
        func e(_ t: String) -> String { HTMLEscape.text(t) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let month = Date.FormatStyle(date: .omitted, time: .omitted, locale: locale, calendar: calendar, timeZone: timeZone).month(.wide).year()
        let day = Date.FormatStyle(date: .abbreviated, time: .shortened, locale: locale, calendar: calendar, timeZone: timeZone)
        let decoder = PhotoDecoder()
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
            <title>\(e(title)) · gallery</title><style>
            body{margin:0;padding:16px;font:14px system-ui,sans-serif;background:\(dark ? "#000" : "#fff");color:\(dark ? "#f2f2f7" : "#1c1c1e")}
            h2{font-size:16px;margin:18px 0 8px}.grid{display:flex;flex-wrap:wrap;gap:8px}
            figure{margin:0;width:128px}figure img,figure .card{width:128px;height:128px;object-fit:cover;border-radius:6px;display:block;background:\(dark ? "#2c2c2e" : "#e5e5ea")}
            .card{display:flex!important;flex-direction:column;align-items:center;justify-content:center;font-size:30px;text-align:center}
            .card small{font-size:11px;padding:4px;word-break:break-word}figcaption{font-size:11px;color:#8e8e93;margin-top:2px}
            </style></head><body><h1>\(e(title))</h1><p>\(Plural.count(entries.count, "photo, video or file", "photos, videos and files"))</p>

            """
        var current: DateComponents?
        for entry in entries {
            let m = calendar.dateComponents([.year, .month], from: entry.date)
            if m != current {
                if current != nil { out += "</div>\n" }
                out += "<h2>\(e(entry.date.formatted(month)))</h2><div class=\"grid\">\n"
                current = m
            }
            let label = "\(entry.item.kind.rawValue)\(entry.sender.map { " from " + $0 } ?? ""), \(entry.date.formatted(day))"
            var cell: String
            if let picture = entry.item.picture, let thumb = try? decoder.thumbnail(ofFile: picture, maxSide: 256) {
                cell = "<img alt=\"\(e(label))\" src=\"data:\(thumb.mime);base64,\(Data(thumb.bytes).base64EncodedString())\">"
            } else {
                let icon = entry.item.kind.symbol
                cell =
                    "<div class=\"card\" role=\"img\" aria-label=\"\(e(label))\">\(icon)" + (entry.item.name.map { "<small>\(e($0))</small>" } ?? "") + "</div>"
            }
            var caption = entry.date.formatted(
                Date.FormatStyle(date: .omitted, time: .omitted, locale: locale, calendar: calendar, timeZone: timeZone).day().month(.abbreviated))
            if let sender = entry.sender { caption += " · " + sender }
            if let d = entry.item.duration, d > 0 { caption += " · " + MediaItem.duration(d) }
            if let p = entry.item.pages { caption += " · " + Plural.count(p, "page") }
            out += "<figure>\(cell)<figcaption>\(e(caption))</figcaption></figure>\n"
        }
        if current != nil { out += "</div>\n" }
        return out + "</body></html>\n"
    }
}
