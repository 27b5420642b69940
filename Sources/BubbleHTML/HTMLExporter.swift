import BubbleCore
import BubbleMedia
import BubbleText
import Foundation

/// Writes a conversation as HTML: one self-contained file per page (CSS inline, photos and the
/// theme's fonts embedded or in a `NAME_files/` folder), laid out by the browser with CSS that
/// reproduces the Cairo renderer's layout — same widths, paddings, spacing, line heights, the
/// same font files — and drawn with the same theme: vector bubbles with tails on the last
/// bubble of a group, art bubbles through `border-image`, light and dark colours.
///
/// Fast: no text is measured per message (CSS breaks the lines); pages are built in a byte
/// buffer and streamed to disk, so memory stays bounded by one page.
///
/// Safe: all text is escaped, the pages contain no script and forbid it with a
/// Content-Security-Policy, links get `rel="noopener noreferrer"`, and every file written is the
/// output path, its numbered pages, or inside `NAME_files/`. On failure nothing is left behind.
///
///     let (theme, folder) = try ThemeLibrary.load("imessage")
///     var options = HTMLOptions()
///     options.timeZone = .gmt
///     let exporter = HTMLExporter(theme: theme, themeFolder: folder, photosFolder: ".", options: options,
///                                 pictures: PhotoDecoder())   // BubbleRender's
///     let files = try exporter.export(conversation, to: "chat.html")
public struct HTMLExporter: Sendable {
    /// The theme the page is drawn in (colours, fonts, bubble art).
    public let theme: Theme
    /// The folder `theme` was loaded from: its bubble art is read from there.
    public let themeFolder: String
    /// Relative photo paths are resolved against this folder (the conversation file's).
    public let photosFolder: String
    /// How the page is written: assets, pagination, width, dates, direction.
    public var options: HTMLOptions
    /// Reads photo sizes, converts what browsers do not show and paints theme art
    /// (BubbleRender's `PhotoDecoder`).
    public let pictures: any PictureDecoder
    /// A page style made once for several exports of the same theme and options (`bubbles
    /// render --all`); nil: each export measures its own.
    package var pageStyle: HTMLPageStyle?

    /// An exporter of `theme` (loaded from `themeFolder`) that finds relative photo paths in
    /// `photosFolder` and reads pictures through `pictures` (BubbleRender's `PhotoDecoder`).
    public init(
        theme: Theme, themeFolder: String, photosFolder: String, options: HTMLOptions = HTMLOptions(),
        pictures: any PictureDecoder
    ) {
        self.theme = theme
        self.themeFolder = themeFolder
        self.photosFolder = photosFolder
        self.options = options
        self.pictures = pictures
    }

    /// Writes `conversation` to `path` (several pages: `NAME-001.html`, … and an index at
    /// `path`). Returns the HTML files written (the index first), then the assets folder when
    /// one was written. Throws `RenderError` (files: unreadable photo, unwritable output) or
    /// `LayoutError` (a width the theme cannot lay out, an unknown font); nothing is left behind.
    @discardableResult
    public func export(_ conversation: Conversation, to path: String) throws -> [String] {
        var report = MediaReport()
        return try export(conversation, to: path, media: &report)
    }

    /// `export`, telling in `report` which pictures and files could not be read (each shown as a
    /// labelled placeholder; with `options.strictMedia` the first is an error instead). With
    /// assets `reference` the photos are not read: their paths are written as they are.
    @discardableResult
    public func export(_ conversation: Conversation, to path: String, media report: inout MediaReport) throws -> [String] {
        var ready = conversation
        if options.assets != .reference {
            (ready, report) = MediaResolver(decoder: pictures, baseFolder: photosFolder, style: theme.layoutStyle).resolve(conversation)
            if options.strictMedia, let first = report.problems.first {
                throw RenderError.unreadableImage(path: first.file, reason: first.reason + " (--strict)")
            }
        }
        let session = try HTMLExportSession(exporter: self, conversation: ready, path: path)
        return try session.run()
    }

    /// The CSS of the pages (without `@font-face` rules): for tests and for people who want to
    /// restyle the output.
    public func styleSheet() throws -> String {
        try HTMLPageStyle(theme: theme, themeFolder: themeFolder, options: options, pictures: pictures, backgroundImages: false).css
    }
}

/// One export in progress: what is known about the output, the pages written so far (as
/// temporary files), and the state carried from one message to the next.
final class HTMLExportSession {
    let conversation: Conversation
    let options: HTMLOptions
    let theme: Theme
    let style: LayoutStyle
    let path: String
    let folder: String
    let stem: String
    let ext: String
    let assetsName: String
    /// `HTMLOptions.sharedAssets`: the shared folder's name (photos and fonts go there directly).
    let shared: String?
    let photos: HTMLPhotoAssets
    /// The style sheet and fonts, and the writer of the rows.
    let pageStyle: HTMLPageStyle
    let rows: HTMLRowWriter
    var fonts: HTMLFontStack { pageStyle.fonts }
    /// The style sheet (without fonts), ready to copy into each page.
    var css: [UInt8] { pageStyle.cssBytes }
    /// Temporary files and where they go when everything succeeded.
    var temporaries: [(temporary: String, final: String)] = []
    var assetsTemporary: String?
    /// Each written page: file name, first and last day, message count.
    var pages: [(file: String, firstDay: Int?, lastDay: Int?, count: Int)] = []
    /// `@font-face` rules by face index and weight, built once ([] when nothing names the face).
    var fontRules: [Int: [UInt8]] = [:]
    /// Day texts for headers and the index (zone, locale).
    let dateTexts: DateTexts
    let title: String
    let participantNames: String
    /// Sender avatars show: the page's `<main>` leaves room for them.
    let showsAvatars: Bool
    /// Index of the last outgoing message: its status shows ("Failed" shows under each).
    let lastOutgoing: Int?

    init(exporter: HTMLExporter, conversation: Conversation, path: String) throws {
        self.conversation = conversation
        self.options = exporter.options
        self.theme = exporter.theme
        self.style = exporter.theme.layoutStyle
        self.path = path
        let url = URL(fileURLWithPath: path)
        folder = url.deletingLastPathComponent().path
        let file = url.lastPathComponent
        let dot = file.lastIndex(of: ".").flatMap { $0 == file.startIndex ? nil : $0 }
        stem = dot.map { String(file[..<$0]) } ?? file
        ext = dot.map { String(file[file.index(after: $0)...]) } ?? "html"
        shared = exporter.options.assets != .reference ? exporter.options.sharedAssets : nil
        assetsName = shared ?? stem + "_files"
        dateTexts = DateTexts(timeZone: options.timeZone, locale: options.locale, now: options.now)
        photos = HTMLPhotoAssets(mode: options.assets, photosFolder: exporter.photosFolder, pictures: exporter.pictures)
        let names = conversation.participants.map(\.name).filter { !$0.isEmpty }
        participantNames = names.joined(separator: ", ")
        title = conversation.title.flatMap { $0.isEmpty ? nil : $0 } ?? (names.isEmpty ? "Conversation" : participantNames)

        // Refuse what cannot work before anything is measured or written.
        try HTMLPageStyle.check(width: options.width, style: style)
        if case .messages(let n) = options.pageSize, n < 1 {
            throw LayoutError.invalidStyle("HTML page size \(n) must be at least 1 message")
        }
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            throw RenderError.unwritable(path: path, reason: "is a folder; expected an output file name")
        }
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw RenderError.unwritable(path: path, reason: "folder \(folder) does not exist")
        }
        guard !file.isEmpty, !stem.isEmpty else { throw RenderError.unwritable(path: path, reason: "expected a file name") }

        let style = self.style
        showsAvatars = style.avatars == .always || (style.avatars == .groups && conversation.isGroup)
        lastOutgoing = conversation.messages.lastIndex { $0.kind == .message && $0.direction == .outgoing }
        pageStyle =
            try exporter.pageStyle
            ?? HTMLPageStyle(
                theme: theme, themeFolder: exporter.themeFolder, options: options,
                pictures: exporter.pictures)
        rows = try HTMLRowWriter(conversation: conversation, style: pageStyle, photos: photos, assetsName: assetsName)
    }

    // MARK: running

    func run() throws -> [String] {
        do {
            if let shared {
                let dir = folder + "/" + shared
                do { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) } catch {
                    throw RenderError.unwritable(path: dir, reason: "cannot create the shared assets folder: \(error.localizedDescription)")
                }
                photos.contentNames = true
                try photos.prepare(conversation, copyInto: dir)
            } else if options.assets == .folder {
                let tmp = folder + "/." + assetsName + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
                do { try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: false) } catch {
                    throw RenderError.unwritable(path: folder + "/" + assetsName, reason: "cannot create the assets folder: \(error.localizedDescription)")
                }
                assetsTemporary = tmp
            }
            if shared == nil { try photos.prepare(conversation, copyInto: assetsTemporary) }
            let starts = pageStarts()
            let multi = starts.count > 1
            for (k, start) in starts.enumerated() {
                let end = k + 1 < starts.count ? starts[k + 1] : conversation.messages.count
                try writePage(number: k + 1, of: starts.count, range: start..<end, multi: multi)
            }
            if multi { try writeIndex() }
            return try commit()
        } catch {
            cleanUp()
            throw error
        }
    }

    /// First message index of each page.
    func pageStarts() -> [Int] {
        let count = conversation.messages.count
        switch options.pageSize {
        case .single:
            return [0]
        case .messages(let n):
            return count == 0 ? [0] : Array(stride(from: 0, to: count, by: n))
        case .byMonth:
            var starts = [0]
            var clock = HTMLClock(zone: options.timeZone)
            var month: Int?
            for (i, m) in conversation.messages.enumerated() {
                let key = HTMLClock.monthKey(clock.local(m.date).day)
                if let month, key != month { starts.append(i) }
                month = key
            }
            return starts
        }
    }

    func pageFile(_ number: Int, multi: Bool) -> String {
        multi ? "\(stem)-\(String(format: "%03d", number)).\(ext)" : "\(stem).\(ext)"
    }
    var indexFile: String { "\(stem).\(ext)" }

    /// Renames the temporary files into place: the assets folder first, then the pages.
    func commit() throws -> [String] {
        var written: [String] = []
        if let tmp = assetsTemporary {
            let final = folder + "/" + assetsName
            var backup: String?
            if FileManager.default.fileExists(atPath: final) {
                let b = folder + "/." + assetsName + ".old-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
                guard rename(final, b) == 0 else {
                    throw RenderError.unwritable(path: final, reason: "cannot replace it: \(String(cString: strerror(errno)))")
                }
                backup = b
            }
            guard rename(tmp, final) == 0 else {
                let reason = String(cString: strerror(errno))
                if let backup { _ = rename(backup, final) }
                throw RenderError.unwritable(path: final, reason: reason)
            }
            assetsTemporary = nil
            if let backup { try? FileManager.default.removeItem(atPath: backup) }
        }
        // The index (the given path) goes last so a reader never follows it to a missing page.
        for (tmp, final) in temporaries.sorted(by: { a, b in a.final != path && b.final == path }) {
            guard rename(tmp, final) == 0 else {
                throw RenderError.unwritable(path: final, reason: String(cString: strerror(errno)))
            }
            written.append(final)
        }
        temporaries = []
        if let i = written.firstIndex(of: path) { written.insert(written.remove(at: i), at: 0) }
        if options.assets == .folder, shared == nil { written.append(folder + "/" + assetsName) }
        return written
    }

    func cleanUp() {
        for (tmp, _) in temporaries { unlink(tmp) }
        temporaries = []
        if let tmp = assetsTemporary { try? FileManager.default.removeItem(atPath: tmp) }
        assetsTemporary = nil
    }

    // MARK: pages

    func writePage(number: Int, of total: Int, range: Range<Int>, multi: Bool) throws {
        let messages = conversation.messages
        var context = HTMLRowContext(in: conversation, range: range)
        context.lastOutgoing = lastOutgoing
        let page = try rows.rows(messages[range], context: context)
        var regular = page.regularFaces, bold = page.boldFaces
        let firstDay = page.firstDay, lastDay = page.lastDay
        var body = page.bytes
        if range.upperBound == messages.count, !conversation.typing.isEmpty {
            let typing = try rows.typing(conversation.typing)
            body += typing.bytes
            regular |= typing.regularFaces
            bold |= typing.boldFaces
        }
        let coverage = fonts.coverage

        // Assemble: head with the fonts this page uses, the style sheet, header, body.
        var head = HTMLBuffer(capacity: css.count + 4096)
        head.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
        head.append("<meta http-equiv=\"Content-Security-Policy\" content=\""); head.append(Self.contentSecurityPolicy); head.append("\">\n")
        head.append("<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n")
        head.append("<meta name=\"generator\" content=\"BubbleKit\">\n<title>")
        head.appendEscaped(title)
        if multi { head.append(" ("); head.append(int: number); head.append("/"); head.append(int: total); head.append(")") }
        head.append("</title>\n<style>")
        var chunks: [[UInt8]] = []
        var header = HTMLBuffer(capacity: 2048)
        header.append("</style>\n</head>\n<body>\n")
        if options.header {
            header.append("<header><h1>")
            header.appendText(title, links: false, coverage: coverage, faces: &bold)
            header.append("</h1>")
            if conversation.title != nil, !participantNames.isEmpty {
                header.append("<p>")
                for (k, p) in conversation.participants.enumerated() where !p.name.isEmpty {
                    if k > 0 { header.append(", ") }
                    header.append("<bdi>")
                    header.appendText(p.name, links: false, coverage: coverage, faces: &regular)
                    header.append("</bdi>")
                }
                header.append("</p>")
            }
            if let firstDay, let lastDay {
                header.append("<p>")
                header.appendText(dateRange(firstDay, lastDay), links: false, coverage: coverage, faces: &regular)
                if multi { header.append(" · page "); header.append(int: number); header.append(" of "); header.append(int: total) }
                header.append("</p>")
            }
            header.append("</header>\n")
            regular |= coverage.asciiFaces
        }
        if multi { appendNav(number: number, total: total, to: &header); regular |= coverage.asciiFaces }
        header.append(showsAvatars ? "<main class=\"c w\">\n" : "<main class=\"c\">\n")
        var tail = HTMLBuffer(capacity: 1024)
        tail.append("</main>\n")
        if multi { appendNav(number: number, total: total, to: &tail) }
        tail.append("</body>\n</html>\n")

        for face in fonts.regular.indices where regular & (1 << UInt32(face)) != 0 {
            if let rule = try fontRule(face: face, bold: false) { chunks.append(rule) }
        }
        for face in fonts.regular.indices where bold & (1 << UInt32(face)) != 0 {
            if let rule = try fontRule(face: face, bold: true) { chunks.append(rule) }
        }
        let file = pageFile(number, multi: multi)
        try writeFile(file, parts: [head.bytes] + chunks + [css, header.bytes, body, tail.bytes])
        pages.append((file, firstDay, lastDay, range.count))
    }

    static let contentSecurityPolicy: StaticString =
        "default-src 'none'; img-src data: 'self'; style-src 'unsafe-inline'; font-src data: 'self'; base-uri 'none'; form-action 'none'"

    func dateRange(_ a: Int, _ b: Int) -> String {
        a == b ? dateTexts.shortDay(number: a) : "\(dateTexts.shortDay(number: a)) – \(dateTexts.shortDay(number: b))"
    }

    func appendNav(number: Int, total: Int, to b: inout HTMLBuffer) {
        b.append("<nav>")
        func link(_ file: String, _ rel: StaticString, _ label: StaticString) {
            b.append("<a href=\""); b.appendURLPath(file); b.append("\" rel=\""); b.append(rel)
            b.append("noopener noreferrer\">"); b.append(label); b.append("</a>")
        }
        if number > 1 { link(pageFile(number - 1, multi: true), "prev ", "← Previous") }
        link(indexFile, "", "Index")
        b.append("<span>Page "); b.append(int: number); b.append(" of "); b.append(int: total); b.append("</span>")
        if number < total { link(pageFile(number + 1, multi: true), "next ", "Next →") }
        b.append("</nav>\n")
    }

    /// The `@font-face` rule of a face (`HTMLPageStyle.fontRule`), built once; with `.folder`
    /// assets its font file is copied to `NAME_files/fonts/`.
    func fontRule(face index: Int, bold: Bool) throws -> [UInt8]? {
        let key = index * 2 + (bold ? 1 : 0)
        if let hit = fontRules[key] { return hit.isEmpty ? nil : hit }
        let assets =
            shared.map { (temporary: folder + "/" + $0, name: $0) }
            ?? (options.assets == .folder ? assetsTemporary.map { (temporary: $0, name: assetsName) } : nil)
        let rule = try pageStyle.fontRule(face: index, bold: bold, copyInto: assets)
        fontRules[key] = rule ?? []
        return rule
    }

    /// Writes `parts` to a new temporary file beside the final one; it is renamed into place by
    /// `commit`.
    func writeFile(_ name: String, parts: [[UInt8]]) throws {
        let final = folder + "/" + name
        let tmp = folder + "/." + name + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw RenderError.unwritable(path: final, reason: String(cString: strerror(errno)))
        }
        temporaries.append((tmp, final))
        var failure: String?
        outer: for part in parts {
            failure = part.withUnsafeBytes { raw -> String? in
                var offset = 0
                while offset < raw.count {
                    let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return String(cString: strerror(errno))
                    }
                    offset += n
                }
                return nil
            }
            if failure != nil { break outer }
        }
        if close(fd) != 0, failure == nil { failure = String(cString: strerror(errno)) }
        if let failure { throw RenderError.unwritable(path: final, reason: failure) }
    }

    // MARK: index

    func writeIndex() throws {
        var b = HTMLBuffer(capacity: 4096 + pages.count * 200)
        var faces: UInt32 = 0
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
        b.append("<meta http-equiv=\"Content-Security-Policy\" content=\""); b.append(Self.contentSecurityPolicy); b.append("\">\n")
        b.append("<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n")
        b.append("<meta name=\"generator\" content=\"BubbleKit\">\n<title>")
        b.appendEscaped(title)
        b.append("</title>\n<style>")
        b.append(bytes: css)
        b.append("</style>\n</head>\n<body>\n<header><h1>")
        b.appendText(title, links: false, coverage: fonts.coverage, faces: &faces)
        b.append("</h1>")
        if !participantNames.isEmpty {
            b.append("<p>")
            for (k, p) in conversation.participants.enumerated() where !p.name.isEmpty {
                if k > 0 { b.append(", ") }
                b.append("<bdi>"); b.appendText(p.name, links: false, coverage: fonts.coverage, faces: &faces); b.append("</bdi>")
            }
            b.append("</p>")
        }
        b.append("<p>"); b.append(int: conversation.messages.count); b.append(" messages on "); b.append(int: pages.count)
        b.append(" pages</p></header>\n<ol class=\"pages\">\n")
        for page in pages {
            b.append("<li><a href=\""); b.appendURLPath(page.file); b.append("\" rel=\"noopener noreferrer\">")
            if let a = page.firstDay, let z = page.lastDay {
                b.appendEscaped(options.pageSize == .byMonth ? dateTexts.month(number: a) : dateRange(a, z))
            } else {
                b.append("(empty)")
            }
            b.append("</a> <small>"); b.append(int: page.count); b.append(page.count == 1 ? " message" : " messages"); b.append("</small></li>\n")
        }
        b.append("</ol>\n</body>\n</html>\n")
        try writeFile(indexFile, parts: [b.bytes])
    }
}
