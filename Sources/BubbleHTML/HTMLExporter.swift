import BubbleCore
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
    public let theme: Theme
    public let themeFolder: String
    /// Relative photo paths are resolved against this folder (the conversation file's).
    public let photosFolder: String
    public var options: HTMLOptions
    /// Reads photo sizes, converts what browsers do not show and paints theme art
    /// (BubbleRender's `PhotoDecoder`).
    public let pictures: any PictureDecoder

    public init(theme: Theme, themeFolder: String, photosFolder: String, options: HTMLOptions = HTMLOptions(),
                pictures: any PictureDecoder) {
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
        let style = theme.layoutStyle
        let engine = PangoTextEngine()
        var metrics = try HTMLMetrics.measure(style, engine: engine)
        let fonts = HTMLFontStack.resolve(family: style.text.family)
        try metrics.measureFaces(fonts, style: style.text, engine: engine)
        var art: [Direction: HTMLArt] = [:]
        for d in [Direction.incoming, .outgoing] { art[d] = try HTMLArt.load(d, theme: theme, themeFolder: themeFolder, mirrorLayout: options.mirrored, pictures: pictures) }
        var sheet = HTMLStyleSheet(theme: theme, style: style, metrics: metrics, fonts: fonts,
                                   width: options.width, dark: options.dark, art: art)
        sheet.shrinkWrap = options.shrinkWrap
        sheet.mirrored = options.mirrored
        return sheet.css(images: [:])
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
    let fonts: HTMLFontStack
    let photos: HTMLPhotoAssets
    /// The style sheet (without fonts), ready to copy into each page.
    var css: [UInt8] = []
    var clock: HTMLClock
    /// Temporary files and where they go when everything succeeded.
    var temporaries: [(temporary: String, final: String)] = []
    var assetsTemporary: String?
    /// Each written page: file name, first and last day, message count.
    var pages: [(file: String, firstDay: Int?, lastDay: Int?, count: Int)] = []
    /// `@font-face` rules by face index and weight, built once.
    var fontRules: [Int: [UInt8]] = [:]
    var fontFiles: [Int: String] = [:]
    /// Escaped `title="…"` attributes by sender id.
    var senderTitles: [String: [UInt8]] = [:]
    /// Each sender's avatar markup and the font faces it uses, made once.
    var avatarMarkup: [String: (bytes: [UInt8], faces: UInt32)] = [:]
    /// Day and time texts (zone, locale).
    let dateTexts: DateTexts
    let title: String
    let participantNames: String
    /// Fallback faces whose runs get a `<span class="fN">` (bit per face).
    var spanFaces: UInt32 = 0
    /// With `shrinkWrap`: measures bubbles as the Cairo renderer does.
    let measurer: BubbleMeasurer?
    /// Sender names and avatars show (group chats, or the theme says always).
    let showsNames: Bool
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
        assetsName = stem + "_files"
        clock = HTMLClock(zone: options.timeZone)
        dateTexts = DateTexts(timeZone: options.timeZone, locale: options.locale, now: options.now)
        photos = HTMLPhotoAssets(mode: options.assets, photosFolder: exporter.photosFolder, pictures: exporter.pictures)
        let names = conversation.participants.map(\.name).filter { !$0.isEmpty }
        participantNames = names.joined(separator: ", ")
        title = conversation.title.flatMap { $0.isEmpty ? nil : $0 } ?? (names.isEmpty ? "Conversation" : participantNames)

        // Refuse what cannot work before anything is measured or written.
        let width = options.width
        guard width.isFinite, width > 0 else { throw LayoutError.invalidWidth(width) }
        guard width >= style.minimumRowWidth - 1e-9 else {
            throw LayoutError.rowTooNarrow(width: width, minimum: style.minimumRowWidth)
        }
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

        showsNames = style.senderNames == .always || (style.senderNames == .groups && conversation.isGroup)
        showsAvatars = style.avatars == .always || (style.avatars == .groups && conversation.isGroup)
        lastOutgoing = conversation.messages.lastIndex { $0.kind == .message && $0.direction == .outgoing }
        fonts = HTMLFontStack.resolve(family: style.text.family)
        let pango = PangoTextEngine()
        var metrics = try HTMLMetrics.measure(style, engine: pango)
        try metrics.measureFaces(fonts, style: style.text, engine: pango)
        spanFaces = metrics.faceLineHeights.keys.reduce(0) { $0 | (1 << UInt32($1)) }
        measurer = options.shrinkWrap
            ? BubbleMeasurer(style: style, engine: CachingTextEngine(options.textEngine == .pango ? pango : options.textEngine.makeEngine()))
            : nil
        var art: [Direction: HTMLArt] = [:]
        for d in [Direction.incoming, .outgoing] { art[d] = try HTMLArt.load(d, theme: theme, themeFolder: exporter.themeFolder, mirrorLayout: options.mirrored, pictures: exporter.pictures) }
        var images: [String: String] = [:]
        for appearance in [theme.appearance(dark: false), theme.appearance(dark: true)] {
            if case .image(let p) = appearance.background, images[p] == nil {
                let full = p.hasPrefix("/") ? p : exporter.themeFolder + "/" + p
                guard let data = FileManager.default.contents(atPath: full), let mime = MediaProbe.browserImageType([UInt8](data.prefix(16))) else {
                    throw RenderError.unreadableImage(path: full, reason: "theme background: cannot be read as PNG, JPEG, GIF or WebP")
                }
                images[p] = "data:\(mime);base64,\(data.base64EncodedString())"
            }
        }
        var sheet = HTMLStyleSheet(theme: theme, style: style, metrics: metrics, fonts: fonts, width: width,
                                   dark: options.dark, art: art)
        sheet.shrinkWrap = options.shrinkWrap
        sheet.mirrored = options.mirrored
        css = Array(sheet.css(images: images).utf8)
    }

    // MARK: running

    func run() throws -> [String] {
        do {
            if options.assets == .folder {
                let tmp = folder + "/." + assetsName + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
                do { try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: false) } catch {
                    throw RenderError.unwritable(path: folder + "/" + assetsName, reason: "cannot create the assets folder: \(error.localizedDescription)")
                }
                assetsTemporary = tmp
            }
            try photos.prepare(conversation, copyInto: assetsTemporary)
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
        if options.assets == .folder { written.append(folder + "/" + assetsName) }
        return written
    }

    func cleanUp() {
        for (tmp, _) in temporaries { unlink(tmp) }
        temporaries = []
        if let tmp = assetsTemporary { try? FileManager.default.removeItem(atPath: tmp) }
        assetsTemporary = nil
    }

    // MARK: pages

    /// State of the message before the current one, for grouping (ConversationLayouter's rules).
    struct Previous {
        var sender: String?
        var direction: Direction
        var kind: Message.Kind
        var date: Date
        var day: Int
    }

    /// Whether `m` (on local day `day`) continues the group of `previous`.
    @inline(__always)
    func continues(_ m: Message, day: Int, after previous: Previous?) -> Bool {
        guard let p = previous, p.day == day, m.kind == .message, p.kind == .message,
              p.direction == m.direction, m.date >= p.date,
              m.date.timeIntervalSince(p.date) <= style.groupingInterval, p.sender == m.sender else { return false }
        return true
    }

    func writePage(number: Int, of total: Int, range: Range<Int>, multi: Bool) throws {
        let messages = conversation.messages
        var body = HTMLBuffer(capacity: min(range.count, 10_000) * 160 + 4096)
        var regular: UInt32 = 0, bold: UInt32 = 0
        let coverage = fonts.coverage
        let showsTimeAbove = style.showsTimeAboveGroup
        let timeInside = style.timeInsideBubble
        let timeInSeparator = style.timeInDaySeparator
        let links = options.links

        // The message before the page decides only whether the first one starts a new day.
        var previous: Previous?
        if range.lowerBound > 0 {
            let p = messages[range.lowerBound - 1]
            previous = Previous(sender: p.sender, direction: p.direction, kind: p.kind, date: p.date, day: clock.local(p.date).day)
        }
        var local = range.isEmpty ? HTMLClock.Local(day: 0, second: 0) : clock.local(messages[range.lowerBound].date)
        var firstDay: Int?, lastDay: Int?
        var i = range.lowerBound
        while i < range.upperBound {
            let m = messages[i]
            let day = local.day
            if firstDay == nil { firstDay = day }
            lastDay = day
            let pageStart = i == range.lowerBound
            var startsGroup = !continues(m, day: day, after: previous) || pageStart
            // Day separator: a new day, and at the top of every page. With times in separators
            // only (ConversationLayouter's rule): the day and the time, and a separator with the
            // time alone after a pause.
            let newDay = previous == nil || previous!.day != day || pageStart
            let pause = timeInSeparator && previous.map { m.date.timeIntervalSince($0.date) > style.timeSeparatorGap } == true
            if newDay || pause {
                body.append("<div class=\"d\">")
                if timeInSeparator {
                    var label = HTMLBuffer(capacity: 8)
                    appendTime(local, to: &label)
                    let time = String(decoding: label.bytes, as: UTF8.self)
                    body.appendText(newDay ? dayLabel(day) + ", " + time : time, links: false, coverage: coverage, faces: &bold)
                } else {
                    body.appendText(dayLabel(day), links: false, coverage: coverage, faces: &bold)
                }
                body.append("</div>\n")
                startsGroup = true
            }
            // Look ahead: the bubble keeps its tail unless the next message continues its group
            // on this page.
            let current = Previous(sender: m.sender, direction: m.direction, kind: m.kind, date: m.date, day: day)
            var nextLocal = local
            var nextContinues = false
            if i + 1 < messages.count {
                nextLocal = clock.local(messages[i + 1].date)
                nextContinues = i + 1 < range.upperBound && continues(messages[i + 1], day: nextLocal.day, after: current)
            }
            if m.kind == .system {
                body.append("<div class=\"s\">")
                body.appendText(m.text ?? "", links: links, coverage: coverage, faces: &regular, spanFaces: spanFaces)
                body.append("</div>\n")
            } else {
                if showsTimeAbove && startsGroup {
                    body.append("<div class=\"h\">")
                    appendTime(local, to: &body)
                    body.append("</div>\n")
                    regular |= coverage.asciiFaces
                }
                try writeBubble(m, index: i, local: local, startsGroup: startsGroup, tail: !nextContinues,
                                timeInside: timeInside, links: links, body: &body, regular: &regular)
            }
            previous = current
            local = nextLocal
            i += 1
        }
        if range.upperBound == messages.count {
            for sender in conversation.typing {
                if showsNames, let name = conversation.participant(sender)?.name {
                    body.append("<div class=\"n\"><bdi>"); body.appendText(name, links: false, coverage: coverage, faces: &regular); body.append("</bdi></div>\n")
                }
                body.append("<div class=\"b i t ty\" aria-label=\"typing\">")
                try appendAvatar(sender, to: &body, faces: &bold)
                body.append("<i></i><i></i><i></i></div>\n")
            }
        }

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
        try writeFile(file, parts: [head.bytes] + chunks + [css, header.bytes, body.bytes, tail.bytes])
        pages.append((file, firstDay, lastDay, range.count))
    }

    static let contentSecurityPolicy: StaticString = "default-src 'none'; img-src data: 'self'; style-src 'unsafe-inline'; font-src data: 'self'; base-uri 'none'; form-action 'none'"

    func writeBubble(_ m: Message, index i: Int, local: HTMLClock.Local, startsGroup: Bool, tail: Bool, timeInside: Bool,
                     links: Bool, body: inout HTMLBuffer, regular: inout UInt32) throws {
        let shown = m.shownText
        let hasText = shown.map { !$0.isEmpty } ?? false
        let emojiOnly = m.images.isEmpty && m.reply == nil && m.attachment == nil && m.text.map { EmojiText.isEmojiOnly($0, maximum: style.emojiOnlyMaximum) } == true
        let side: StaticString = m.direction == .incoming ? "i" : "o"
        if showsNames, startsGroup, m.direction == .incoming, let sender = m.sender {
            body.append("<div class=\"n\"><bdi>")
            body.appendText(conversation.participant(sender)?.name ?? sender, links: false, coverage: fonts.coverage, faces: &regular)
            body.append("</bdi></div>\n")
        }
        if let reply = m.reply {
            let author = reply.sender.flatMap { conversation.participant($0)?.name }
            let snippet = BubbleMeasurer.replyString(reply, author: author)
            body.append("<blockquote class=\"r "); body.append(side)
            if ParagraphDirection.lastParagraphIsRightToLeft(snippet) { body.append(" y") }
            body.append("\"><bdi>")
            body.appendText(snippet, links: false, coverage: fonts.coverage, faces: &regular)
            body.append("</bdi></blockquote>\n")
        }
        body.append(m.direction == .incoming ? "<div class=\"b i" : "<div class=\"b o")
        if !m.reactions.isEmpty { body.append(" k") }
        // A sticker, like an emoji-only message, has no bubble.
        let sticker = m.isSticker
        if sticker { body.append(" e st") } else if emojiOnly { body.append(" e") } else if tail { body.append(" t") }
        if !startsGroup { body.append(" g") } else if style.showsTimeAboveGroup { body.append(" a") }
        if m.image != nil && !sticker { body.append(hasText ? " p" : " p q") }
        if m.images.count > 1 { body.append(" m") }
        if m.direction == .outgoing, m.status == .failed { body.append(" f") }
        body.append("\"")
        if let measurer, hasText {
            // The Cairo layout's width, plus half a point so a line the browser measures a
            // hair wider still fits (the next word never did, or Cairo would have taken it).
            var measured = m
            if let image = m.image, let path = image.path, !(image.width > 0 && image.height > 0),
               let p = photos.photos[photos.fullPath(path)] {
                measured.image = ImageAttachment(path: path, width: Double(p.width), height: Double(p.height))
            }
            var time = HTMLBuffer(capacity: 5)
            appendTime(local, to: &time)
            let layout = try measurer.layout(measured, rowWidth: options.width, hasTail: tail,
                                             time: String(decoding: time.bytes, as: UTF8.self), startsGroup: startsGroup)
            if layout.text.lines.count > 1 {
                body.append(" style=\"width:"); body.append(raw: HTMLStyleSheet.px(layout.bubble.width + 0.5)); body.append("\"")
            }
        }
        if startsGroup, let sender = m.sender {
            if let cached = senderTitles[sender] {
                body.append(bytes: cached)
            } else {
                var t = HTMLBuffer()
                if let name = conversation.participants.first(where: { $0.id == sender })?.name, !name.isEmpty {
                    t.append(" title=\""); t.appendAttribute(name); t.append("\"")
                }
                senderTitles[sender] = t.bytes
                body.append(bytes: t.bytes)
            }
        }
        body.append(">")
        if m.images.count > 1 {
            // The Cairo layout's rows (BubbleMeasurer.gridRows) on a 6-column grid: a wide cell
            // spans 6, a pair's cells 3, a row of three's cells 2.
            body.append("<div class=\"gr\">")
            var k = 0
            for n in BubbleMeasurer.gridRows(m.images.count) {
                for _ in 0..<n where k < m.images.count {
                    try appendPhoto(m.images[k], index: i, to: &body, gridCell: n == 1 ? "w" : n == 3 ? "t" : nil)
                    k += 1
                }
            }
            body.append("</div>")
        } else if let image = m.image { try appendPhoto(image, index: i, to: &body) }
        if hasText, let text = shown {
            if m.image != nil { body.append("<div class=\"x\">") }
            appendLinkedText(text, links: links && m.attachment == nil, body: &body, regular: &regular)
            if timeInside && !emojiOnly {
                body.append(ParagraphDirection.lastParagraphIsRightToLeft(text) ? "<span class=\"z y\"></span>" : "<span class=\"z\"></span>")
            }
            if m.image != nil { body.append("</div>") }
        }
        if timeInside {
            body.append("<time>")
            appendTime(local, to: &body)
            body.append("</time>")
            regular |= fonts.coverage.asciiFaces
        }
        if style.timeBeside {
            body.append("<time class=\"bs\">"); appendTime(local, to: &body); body.append("</time>")
        }
        if !m.reactions.isEmpty {
            body.append("<span class=\"rx\">")
            body.appendText(BubbleMeasurer.reactionString(m.reactions), links: false, coverage: fonts.coverage, faces: &regular)
            body.append("</span>")
        }
        if m.direction == .outgoing, m.status == .failed { body.append("<span class=\"fb\" title=\"Failed\">!</span>") }
        if m.direction == .incoming, showsAvatars, tail { try appendAvatar(m.sender, to: &body, faces: &regular) }
        body.append("</div>\n")
        if m.direction == .outgoing, let status = m.status, status == .failed || i == lastOutgoing {
            body.append(status == .failed ? "<div class=\"st f\">" : "<div class=\"st\">")
            switch status {
            case .read:
                body.append("Read")
                if let d = m.statusDate { body.append(" "); appendTime(clock.local(d), to: &body) }
            case .sending: body.append("Sending…")
            case .sent: body.append("Sent")
            case .delivered: body.append("Delivered")
            case .failed: body.append("Failed")
            }
            body.append("</div>\n")
            regular |= fonts.coverage.asciiFaces
        }
    }

    /// Text with links: http(s) by the buffer's scanner, and also phone numbers and e-mail
    /// addresses (`LinkDetector`) as `tel:` / `mailto:` links; never any other scheme.
    func appendLinkedText(_ text: String, links: Bool, body: inout HTMLBuffer, regular: inout UInt32) {
        let found = links && style.detectsLinks ? LinkDetector.links(in: text).filter { !$0.url.hasPrefix("http") } : []
        guard !found.isEmpty else {
            body.appendText(text, links: links, coverage: fonts.coverage, faces: &regular, spanFaces: spanFaces)
            return
        }
        let bytes = Array(text.utf8)
        var at = 0
        for link in found {
            body.appendText(String(decoding: bytes[at..<link.range.lowerBound], as: UTF8.self), links: links, coverage: fonts.coverage, faces: &regular, spanFaces: spanFaces)
            body.append("<a href=\""); body.appendAttribute(link.url); body.append("\" rel=\"noopener noreferrer\">")
            body.appendText(String(decoding: bytes[link.range], as: UTF8.self), links: false, coverage: fonts.coverage, faces: &regular, spanFaces: spanFaces)
            body.append("</a>")
            at = link.range.upperBound
        }
        body.appendText(String(decoding: bytes[at...], as: UTF8.self), links: links, coverage: fonts.coverage, faces: &regular, spanFaces: spanFaces)
    }

    /// The avatar beside the last incoming bubble of a group: the participant's picture, or
    /// their initials on their colour.
    func appendAvatar(_ sender: String?, to body: inout HTMLBuffer, faces: inout UInt32) throws {
        let key = sender ?? ""
        if let made = avatarMarkup[key] {
            body.append(bytes: made.bytes)
            faces |= made.faces
            return
        }
        var markup = HTMLBuffer()
        var used: UInt32 = 0
        try makeAvatar(sender, to: &markup, faces: &used)
        avatarMarkup[key] = (markup.bytes, used)
        body.append(bytes: markup.bytes)
        faces |= used
    }

    private func makeAvatar(_ sender: String?, to body: inout HTMLBuffer, faces: inout UInt32) throws {
        let participant = conversation.participant(sender)
        if let path = participant?.avatar {
            var image = ImageAttachment(path: path, width: style.avatarSize, height: style.avatarSize)
            image.width = style.avatarSize
            var b = HTMLBuffer()
            try appendPhoto(image, index: -1, to: &b)
            // appendPhoto writes `<img src=… alt="Photo" …>`; mark it as the avatar.
            var s = String(decoding: b.bytes, as: UTF8.self)
            s = s.replacingOccurrences(of: "<img ", with: "<img class=\"av\" ").replacingOccurrences(of: "alt=\"Photo\"", with: "alt=\"\"")
            body.append(raw: s)
        } else {
            body.append("<span class=\"av\" aria-hidden=\"true\" style=\"background:")
            body.append(raw: SceneBuilder.avatarColor(sender ?? "").hex)
            body.append("\">")
            body.appendText(SceneBuilder.initials(participant?.name ?? sender ?? "?"), links: false, coverage: fonts.coverage, faces: &faces)
            body.append("</span>")
        }
    }

    func appendTime(_ local: HTMLClock.Local, to b: inout HTMLBuffer) {
        guard dateTexts.isDefault else {
            b.appendEscaped(dateTexts.time(hour: local.hour, minute: local.minute))
            return
        }
        b.append(int: local.hour, width: 2)
        b.append(byte: 0x3A)
        b.append(int: local.minute, width: 2)
    }

    /// A photo as `<img>` (or the placeholder of a photo without a usable file or size), sized
    /// as BubbleMeasurer sizes it: never enlarged, at most `maxImageHeight` tall (CSS also caps
    /// it at the bubble's width).
    func appendPhoto(_ image: ImageAttachment, index: Int, to b: inout HTMLBuffer, gridCell: StaticString? = nil) throws {
        if image.videoFrame {
            // A video's frame: its poster or a dark box of its size, and a play symbol.
            let factor = min(1, style.maxImageHeight / max(1, image.height))
            b.append("<div class=\"vf\" style=\"width:"); b.append(raw: HTMLStyleSheet.px(image.width * factor))
            b.append(";aspect-ratio:"); b.append(raw: HTMLStyleSheet.num(image.width)); b.append("/")
            b.append(raw: HTMLStyleSheet.num(image.height)); b.append("\">")
            if image.path != nil {
                var poster = image
                poster.videoFrame = false
                try appendPhoto(poster, index: index, to: &b)
            }
            b.append("<span class=\"pl\"></span></div>")
            return
        }
        guard let path = image.path else {
            b.append("<div class=\"ph\"></div>")
            return
        }
        var width = image.width, height = image.height
        b.append("<img src=\"")
        switch options.assets {
        case .reference:
            b.appendURLPath(HTMLPhotoAssets.referencePath(path) ?? "")
        case .folder, .embed:
            let full = photos.fullPath(path)
            guard let p = photos.photos[full] else {
                throw RenderError.unreadableImage(path: full, reason: "was not checked (messages[\(index)].image.path)")
            }
            if !(width > 0 && height > 0 && width.isFinite && height.isFinite) {
                width = Double(p.width); height = Double(p.height)
            }
            if options.assets == .folder {
                b.appendURLPath(assetsName + "/" + (p.copyName ?? ""))
            } else {
                let (mime, bytes) = try photos.embedded(p)
                b.append(raw: "data:\(mime);base64,")
                b.appendBase64(bytes)
            }
        }
        b.append(image.sticker ? "\" alt=\"Sticker\"" : "\" alt=\"Photo\"")
        if let gridCell { b.append(" class=\""); b.append(gridCell); b.append("\"") }
        if width > 0 && height > 0 && width.isFinite && height.isFinite {
            // A sticker fills the sticker box (as the Cairo layout's `stickerSize`).
            let factor = image.sticker ? min(style.stickerSize / width, style.stickerSize / height) : min(1, style.maxImageHeight / height)
            b.append(" width=\""); b.append(raw: HTMLStyleSheet.num(width * factor))
            b.append("\" height=\""); b.append(raw: HTMLStyleSheet.num(height * factor)); b.append("\"")
        }
        b.append(options.lazyImages ? " loading=\"lazy\" decoding=\"async\">" : " decoding=\"async\">")
    }

    func dayLabel(_ day: Int) -> String { dateTexts.day(number: day) }

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

    /// The `@font-face` rule of a face, built once: the font file embedded (data URI) or, with
    /// `.folder` assets, copied to `NAME_files/fonts/`; a face too large to embed (or with
    /// `embedFonts` off) by `local()` name only.
    func fontRule(face index: Int, bold: Bool) throws -> [UInt8]? {
        let key = index * 2 + (bold ? 1 : 0)
        if let hit = fontRules[key] { return hit }
        guard let face = bold ? fonts.bold[index] : fonts.regular[index] else { return nil }
        var r = HTMLBuffer()
        r.append("@font-face{font-family:\"bk"); r.append(int: index); r.append("\";font-weight:")
        r.append(bold ? "700" : "400"); r.append(";font-style:normal;src:")
        if options.embedFonts, let format = face.webFormat, face.size <= options.maxEmbeddedFontSize,
           let data = FileManager.default.contents(atPath: face.file) {
            if options.assets == .folder, let tmp = assetsTemporary {
                let name = try copyFont(face, data: data, into: tmp)
                r.append("url("); r.appendURLPath(assetsName + "/fonts/" + name); r.append(")")
            } else {
                r.append("url(data:"); r.append(raw: format.mime); r.append(";base64,")
                data.withUnsafeBytes { r.appendBase64($0) }
                r.append(")")
            }
            r.append(" format(\""); r.append(raw: format.format); r.append("\")")
        } else {
            let names = [face.fullName, face.postscriptName].compactMap { $0.flatMap(HTMLFontStack.cssSafeName) }
            guard !names.isEmpty else { fontRules[key] = []; return nil }
            r.append(raw: names.map { "local(\"\($0)\")" }.joined(separator: ","))
        }
        if index == fonts.emojiFace { r.append(";unicode-range:"); r.append(raw: HTMLFontStack.emojiUnicodeRange) }
        r.append("}\n")
        fontRules[key] = r.bytes
        return r.bytes
    }

    func copyFont(_ face: FontFace, data: Data, into tmp: String) throws -> String {
        let dir = tmp + "/fonts"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let base = (face.file as NSString).lastPathComponent
        let safe = String(base.unicodeScalars.map { s -> Character in
            let v = s.value
            let ok = (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A) || v == 0x2D || v == 0x5F || v == 0x2E
            return ok ? Character(s) : "_"
        }).trimmingCharacters(in: CharacterSet(charactersIn: "."))
        let name = safe.isEmpty ? "font-\(face.weight)" : safe
        let target = dir + "/" + name
        if !FileManager.default.fileExists(atPath: target) {
            guard FileManager.default.createFile(atPath: target, contents: data) else {
                throw RenderError.unwritable(path: target, reason: "cannot create the file")
            }
        }
        return name
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
