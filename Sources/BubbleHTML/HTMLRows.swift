import BubbleCore
import BubbleText
import Foundation

/// Where a run of rows sits in its conversation: what comes just before and after it decides
/// groups (a sender's bubbles run together, only the last keeps its tail) and day separators.
package struct HTMLRowContext: Sendable {
    /// The message just before the first row; nil at the conversation's start.
    package var previous: Message?
    /// The message just after the last row; when it continues the last row's group, that
    /// bubble has no tail. Nil: the rows end here (the end, or a page's end).
    package var next: Message?
    /// The rows start a page: a day separator on top, the first bubble starts a group.
    package var startsPage: Bool
    /// Index of the conversation's last outgoing message (its status shows under it).
    package var lastOutgoing: Int?
    /// With a number, each message's rows start with an empty `<b hidden data-n="N">`: the
    /// first message is N, the next N + 1… (a live viewer finds, adds and removes messages by it).
    package var numberFrom: Int64?
    /// The width the rows are shown at (a viewer's column); nil: the options' width. Photo
    /// grids get the layout engine's size for it.
    package var rowWidth: Double?

    package init(previous: Message? = nil, next: Message? = nil, startsPage: Bool = true, lastOutgoing: Int? = nil) {
        self.previous = previous; self.next = next; self.startsPage = startsPage; self.lastOutgoing = lastOutgoing
    }

    /// The context of `conversation.messages[range]` shown as a page of its own.
    package init(in conversation: Conversation, range: Range<Int>) {
        self.init(
            previous: range.lowerBound > 0 ? conversation.messages[range.lowerBound - 1] : nil, next: nil, startsPage: true,
            lastOutgoing: conversation.messages.lastIndex { $0.kind == .message && $0.direction == .outgoing })
    }
}

/// Rows of a conversation as an HTML fragment (the `<div>`s that go inside the page's
/// `<main class="c">`), styled by the `HTMLPageStyle` they were written for.
package struct HTMLFragment: Sendable {
    /// UTF-8 HTML; every text in it is escaped.
    package var bytes: [UInt8]
    /// Font faces the rows use (bit per face of the style's stack), regular and bold:
    /// `HTMLPageStyle.fontFaces(for:)` turns them into `@font-face` rules.
    package var regularFaces: UInt32
    package var boldFaces: UInt32
    /// Local day numbers (`DateTexts`) of the first and last row; nil without rows.
    package var firstDay: Int?
    package var lastDay: Int?

    package var html: String { String(decoding: bytes, as: UTF8.self) }

    package init(bytes: [UInt8], regularFaces: UInt32, boldFaces: UInt32, firstDay: Int? = nil, lastDay: Int? = nil) {
        self.bytes = bytes; self.regularFaces = regularFaces; self.boldFaces = boldFaces
        self.firstDay = firstDay; self.lastDay = lastDay
    }
}

/// Writes conversation rows — day separators, system lines, names, bubbles with their photos,
/// replies, reactions, times and status, typing indicators — as HTML fragments: the pieces a
/// whole-file export (`HTMLExporter`) or a live viewer puts in its pages. One writer per
/// conversation and style; it caches avatars and names, so it is not shared between threads.
package final class HTMLRowWriter {
    package let style: HTMLPageStyle
    let options: HTMLOptions
    let layout: LayoutStyle
    let participants: [Participant]
    let photos: HTMLPhotoAssets
    /// Photos of `.folder` assets are linked under this folder name.
    let assetsName: String
    /// Sender names and avatars show (group chats, or the theme says always).
    let showsNames: Bool
    /// Incoming bubbles have an avatar column: the rows go in `<main class="c w">`.
    package let showsAvatars: Bool
    /// With `shrinkWrap`: measures bubbles as the Cairo renderer does.
    let measurer: BubbleMeasurer?
    var clock: HTMLClock
    /// Day and time texts (zone, locale).
    let dateTexts: DateTexts
    /// The width the rows being written are shown at (`HTMLRowContext.rowWidth`).
    var rowWidth: Double = 0
    /// Escaped `title="…"` attributes by sender id.
    var senderTitles: [String: [UInt8]] = [:]
    /// Each sender's avatar markup and the font faces it uses, made once.
    var avatarMarkup: [String: (bytes: [UInt8], faces: UInt32)] = [:]

    var fonts: HTMLFontStack { style.fonts }
    var spanFaces: UInt32 { style.spanFaces }

    /// A writer for `conversation`'s rows (its participants and whether it is a group; the
    /// messages are given to `rows`). Relative photo paths are resolved against `photosFolder`;
    /// with `.embed` assets photos are read and embedded as rows are written.
    package convenience init(
        conversation: Conversation, style: HTMLPageStyle, photosFolder: String,
        pictures: any PictureDecoder
    ) throws {
        try self.init(
            conversation: conversation, style: style,
            photos: HTMLPhotoAssets(mode: style.options.assets, photosFolder: photosFolder, pictures: pictures),
            assetsName: "")
    }

    init(conversation: Conversation, style: HTMLPageStyle, photos: HTMLPhotoAssets, assetsName: String) throws {
        self.style = style
        options = style.options
        layout = style.style
        participants = conversation.participants
        self.photos = photos
        self.assetsName = assetsName
        clock = HTMLClock(zone: options.timeZone)
        dateTexts = DateTexts(timeZone: options.timeZone, locale: options.locale, now: options.now)
        showsNames = layout.senderNames == .always || (layout.senderNames == .groups && conversation.isGroup)
        showsAvatars = layout.avatars == .always || (layout.avatars == .groups && conversation.isGroup)
        measurer =
            options.shrinkWrap
            ? BubbleMeasurer(style: layout, engine: CachingTextEngine(options.textEngine == .pango ? style.pango : options.textEngine.makeEngine()))
            : nil
    }

    func participant(_ id: String?) -> Participant? {
        guard let id else { return nil }
        return participants.first { $0.id == id }
    }

    /// The rows of `messages` (a slice: its indices are the messages' indices in the
    /// conversation, which errors name) in `context`. Throws `RenderError` for a photo that
    /// cannot be read or `LayoutError` when a shrink-wrapped bubble cannot be measured.
    package func rows(_ messages: ArraySlice<Message>, context: HTMLRowContext = HTMLRowContext()) throws -> HTMLFragment {
        rowWidth = context.rowWidth ?? options.width
        var body = HTMLBuffer(capacity: min(messages.count, 10_000) * 160 + 1024)
        var regular: UInt32 = 0, bold: UInt32 = 0
        let coverage = fonts.coverage
        let showsTimeAbove = layout.showsTimeAboveGroup
        let timeInside = layout.timeInsideBubble
        let timeInSeparator = layout.timeInDaySeparator
        let links = options.links
        let range = messages.indices

        // Grouping and separators: `LayoutStyle.joining`, the rule the Cairo layout follows.
        var previous = context.previous.map { GroupingKey($0, day: clock.local($0.date).day) }
        var local = range.isEmpty ? HTMLClock.Local(day: 0, second: 0) : clock.local(messages[range.lowerBound].date)
        var firstDay: Int?, lastDay: Int?
        var i = range.lowerBound
        while i < range.upperBound {
            let m = messages[i]
            let day = local.day
            if let first = context.numberFrom {
                body.append("<b hidden data-n=\""); body.append(raw: String(first + Int64(i - range.lowerBound))); body.append("\"></b>")
            }
            if firstDay == nil { firstDay = day }
            lastDay = day
            let pageStart = i == range.lowerBound && context.startsPage
            let current = GroupingKey(m, day: day)
            let joined = layout.joining(current, after: previous)
            var startsGroup = !joined.continues || pageStart
            // Day separator: a new day, and at the top of every page. With times in separators
            // only: the day and the time, and a separator with the time alone after a pause.
            let newDay = joined.newDay || pageStart
            if joined.separator || pageStart {
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
            // (on this page: the rows, or the context's next message).
            var nextLocal = local
            var nextContinues = false
            if let next = i + 1 < range.upperBound ? messages[i + 1] : context.next {
                nextLocal = clock.local(next.date)
                nextContinues = layout.joining(GroupingKey(next, day: nextLocal.day), after: current).continues
            }
            if m.kind == .system {
                body.append("<div class=\"s\">")
                body.appendText(m.text ?? "", links: links, coverage: coverage, faces: &regular, spanFaces: spanFaces)
                body.append("<time class=\"tt\""); appendDatetime(m.date, to: &body); body.append(">")
                appendTime(local, to: &body)
                body.append("</time></div>\n")
            } else {
                if showsTimeAbove && startsGroup {
                    body.append("<div class=\"h\">")
                    appendTime(local, to: &body)
                    body.append("</div>\n")
                    regular |= coverage.asciiFaces
                }
                try writeBubble(
                    m, index: i, local: local, startsGroup: startsGroup, tail: !nextContinues,
                    timeInside: timeInside, links: links, lastOutgoing: context.lastOutgoing, body: &body, regular: &regular, bold: &bold)
            }
            previous = current
            local = nextLocal
            i += 1
        }
        return HTMLFragment(bytes: body.bytes, regularFaces: regular, boldFaces: bold, firstDay: firstDay, lastDay: lastDay)
    }

    /// The "typing…" indicators of `senders` (after the last row), with their names in groups.
    package func typing(_ senders: [String]) throws -> HTMLFragment {
        var body = HTMLBuffer(capacity: 256)
        var regular: UInt32 = 0, bold: UInt32 = 0
        for sender in senders {
            if showsNames, let name = participant(sender)?.name {
                body.append("<div class=\"n\"><bdi>"); body.appendText(name, links: false, coverage: fonts.coverage, faces: &regular);
                body.append("</bdi></div>\n")
            }
            body.append("<div class=\"b i t ty\" aria-label=\"typing\">")
            try appendAvatar(sender, to: &body, faces: &bold)
            body.append("<i></i><i></i><i></i></div>\n")
        }
        return HTMLFragment(bytes: body.bytes, regularFaces: regular, boldFaces: bold)
    }

    func dayLabel(_ day: Int) -> String { dateTexts.day(number: day) }

    func writeBubble(
        _ m: Message, index i: Int, local: HTMLClock.Local, startsGroup: Bool, tail: Bool, timeInside: Bool,
        links: Bool, lastOutgoing: Int?, body: inout HTMLBuffer, regular: inout UInt32, bold: inout UInt32
    ) throws {
        let shown = m.shownText
        let hasText = shown.map { !$0.isEmpty } ?? false
        let emojiOnly =
            m.images.isEmpty && m.reply == nil && m.attachment == nil && m.text.map { EmojiText.isEmojiOnly($0, maximum: layout.emojiOnlyMaximum) } == true
        let side: StaticString = m.direction == .incoming ? "i" : "o"
        if showsNames, startsGroup, m.direction == .incoming, let sender = m.sender {
            body.append("<div class=\"n\"><bdi>")
            body.appendText(participant(sender)?.name ?? sender, links: false, coverage: fonts.coverage, faces: &regular)
            body.append("</bdi></div>\n")
        }
        if let reply = m.reply {
            let author = reply.sender.flatMap { participant($0)?.name }
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
        if !startsGroup { body.append(" g") } else if layout.showsTimeAboveGroup { body.append(" a") }
        if m.image != nil && !sticker { body.append(hasText ? " p" : " p q") }
        if m.images.count > 1 { body.append(" m") }
        if m.direction == .outgoing, m.status == .failed { body.append(" f") }
        body.append("\"")
        if let measurer, hasText {
            // The Cairo layout's width, plus half a point so a line the browser measures a
            // hair wider still fits (the next word never did, or Cairo would have taken it).
            var measured = m
            if let image = m.image, let path = image.path, !(image.width > 0 && image.height > 0),
                let p = photos.photos[photos.fullPath(path)]
            {
                measured.image = ImageAttachment(path: path, width: Double(p.width), height: Double(p.height))
            }
            var time = HTMLBuffer(capacity: 5)
            appendTime(local, to: &time)
            let bubble = try measurer.layout(
                measured, rowWidth: options.width, hasTail: tail,
                time: String(decoding: time.bytes, as: UTF8.self), startsGroup: startsGroup)
            if bubble.text.lines.count > 1 {
                body.append(" style=\"width:"); body.append(raw: HTMLStyleSheet.px(bubble.bubble.width + 0.5)); body.append("\"")
            }
        }
        if startsGroup, let sender = m.sender {
            if let cached = senderTitles[sender] {
                body.append(bytes: cached)
            } else {
                var t = HTMLBuffer()
                if let name = participant(sender)?.name, !name.isEmpty {
                    t.append(" title=\""); t.appendAttribute(name); t.append("\"")
                }
                senderTitles[sender] = t.bytes
                body.append(bytes: t.bytes)
            }
        }
        body.append(">")
        try appendPhotos(of: m, index: i, to: &body)
        if hasText, let text = shown {
            if m.image != nil { body.append("<div class=\"x\">") }
            let spans = emojiOnly ? [] : m.shownSpans
            if spans.isEmpty {
                appendLinkedText(text, links: links && m.attachment == nil, body: &body, regular: &regular)
            } else {
                appendStyledText(text, spans: spans, links: links && m.attachment == nil, body: &body, regular: &regular, bold: &bold)
            }
            if timeInside && !emojiOnly {
                let rtl = ParagraphDirection.lastParagraphIsRightToLeft(text)
                body.append(
                    m.edited == nil
                        ? (rtl ? "<span class=\"z y\"></span>" : "<span class=\"z\"></span>")
                        : (rtl ? "<span class=\"z y e\"></span>" : "<span class=\"z e\"></span>"))
            }
            if m.image != nil { body.append("</div>") }
        }
        appendTimes(of: m, local: local, inside: timeInside, to: &body, regular: &regular)
        if !m.reactions.isEmpty {
            body.append("<span class=\"rx\">")
            body.appendText(BubbleMeasurer.reactionString(m.reactions), links: false, coverage: fonts.coverage, faces: &regular)
            body.append("</span>")
        }
        if m.direction == .outgoing, m.status == .failed { body.append("<span class=\"fb\" title=\"Failed\">!</span>") }
        if m.direction == .incoming, showsAvatars, tail { try appendAvatar(m.sender, to: &body, faces: &regular) }
        body.append("</div>\n")
        appendLinesBelow(m, index: i, lastOutgoing: lastOutgoing, timeInside: timeInside, to: &body, regular: &regular)
    }

    /// A message's photo, or its photos on the Cairo layout's grid (`BubbleMeasurer.gridRows`)
    /// of 6 columns: a wide cell spans 6, a pair's cells 3, a row of three's cells 2; sized as
    /// the engine sizes it at this width (the CSS keeps it within the bubble).
    func appendPhotos(of m: Message, index i: Int, to body: inout HTMLBuffer) throws {
        if m.images.count > 1 {
            let indent = showsAvatars && m.direction == .incoming ? layout.avatarSize + layout.besideGap : 0
            let grid = layout.photoGrid(count: m.images.count, rowWidth: rowWidth, indent: indent)
            let cell = grid.cells.first { $0.width < grid.size.width - 0.5 }?.height ?? grid.size.height
            body.append("<div class=\"gr\" style=\"width:"); body.append(raw: HTMLStyleSheet.px(grid.size.width))
            body.append(";--wa:"); body.append(raw: HTMLStyleSheet.num(grid.size.width)); body.append("/")
            body.append(raw: HTMLStyleSheet.num(cell)); body.append("\">")
            var k = 0
            for n in BubbleMeasurer.gridRows(m.images.count) {
                for _ in 0..<n where k < m.images.count {
                    try appendPhoto(m.images[k], index: i, to: &body, gridCell: n == 1 ? "w" : n == 3 ? "t" : nil)
                    k += 1
                }
            }
            body.append("</div>")
        } else if let image = m.image {
            try appendPhoto(image, index: i, to: &body)
        }
    }

    /// A message's time: inside the bubble, beside it, or (where the theme shows none) one shown
    /// on hover and focus (theme.css, `.tt`); "edited" before it when the message was edited.
    func appendTimes(of m: Message, local: HTMLClock.Local, inside timeInside: Bool, to body: inout HTMLBuffer, regular: inout UInt32) {
        if timeInside {
            body.append("<time")
            appendDatetime(m.date, to: &body)
            appendEditedTitle(m, to: &body)
            body.append(">")
            if m.edited != nil { body.append("edited ") }
            appendTime(local, to: &body)
            body.append("</time>")
            regular |= fonts.coverage.asciiFaces
        }
        if layout.timeBeside {
            body.append("<time class=\"bs\""); appendDatetime(m.date, to: &body); appendEditedTitle(m, to: &body); body.append(">");
            if m.edited != nil { body.append("edited ") }; appendTime(local, to: &body); body.append("</time>")
        }
        if !timeInside && !layout.timeBeside {
            // Every message carries its time; where the theme shows none on the bubble, it
            // shows beside it on hover and focus (theme.css, `.tt`).
            body.append("<time class=\"tt\""); appendDatetime(m.date, to: &body); body.append(">")
            appendTime(local, to: &body)
            body.append("</time>")
            regular |= fonts.coverage.asciiFaces
        }
    }

    /// Under a bubble: "Edited" where no time on the bubble says it, and an outgoing message's
    /// status (the last one's, or a failure).
    func appendLinesBelow(_ m: Message, index i: Int, lastOutgoing: Int?, timeInside: Bool, to body: inout HTMLBuffer, regular: inout UInt32) {
        if m.edited != nil {
            // Where the time is on the bubble it says "edited 12:30"; elsewhere "Edited" under it.
            if !(timeInside || layout.timeBeside) {
                body.append(m.direction == .incoming ? "<div class=\"st ei\"" : "<div class=\"st\"")
                appendEditedTitle(m, to: &body)
                body.append(">Edited</div>\n")
                regular |= fonts.coverage.asciiFaces
            }
        }
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
    /// ` title="Edited 2026-11-20 10:05"` when the edit's time is known (not the message's own).
    func appendEditedTitle(_ m: Message, to body: inout HTMLBuffer) {
        guard let edited = m.edited, edited != m.date else { return }
        body.append(" title=\"Edited ")
        body.appendAttribute(dateTexts.day(edited) + " " + dateTexts.time(edited))
        body.append("\"")
    }

    /// A text with styled ranges: cut at every span's edges, each piece inside the elements of
    /// the spans that cover it (`<strong>`, `<em>`, `<u>`, `<s>`, `<code>`, a spoiler revealed by
    /// a click or focus, a quote, a link to its target, a mention), escaped as every text.
    func appendStyledText(
        _ text: String, spans: [TextSpan], links: Bool, body: inout HTMLBuffer, regular: inout UInt32,
        bold: inout UInt32
    ) {
        let bytes = Array(text.utf8)
        var cuts = Set([0, bytes.count])
        for s in spans where s.range.upperBound <= bytes.count { cuts.insert(s.range.lowerBound); cuts.insert(s.range.upperBound) }
        let points = cuts.sorted()
        for (a, z) in zip(points, points.dropFirst()) where z > a {
            let covering = spans.filter { $0.range.lowerBound <= a && $0.range.upperBound >= z }
                .sorted { Self.nesting($0.style) < Self.nesting($1.style) }
            var closers: [StaticString] = []
            var linked = false
            for s in covering {
                switch s.style {
                case .bold: body.append("<strong>"); closers.append("</strong>")
                case .italic: body.append("<em>"); closers.append("</em>")
                case .underline: body.append("<u>"); closers.append("</u>")
                case .strike: body.append("<s>"); closers.append("</s>")
                case .code: body.append("<code>"); closers.append("</code>")
                case .pre: body.append("<code class=\"pre\">"); closers.append("</code>")
                case .spoiler: body.append("<span class=\"sp\" tabindex=\"0\" title=\"Spoiler\">"); closers.append("</span>")
                case .quote: body.append("<span class=\"qt\">"); closers.append("</span>")
                case .mention: body.append("<span class=\"mn\">"); closers.append("</span>")
                case .link:
                    let url = s.url ?? String(decoding: bytes[s.range], as: UTF8.self)
                    guard !linked, let safe = Self.safeLink(url) else { continue }
                    linked = true
                    body.append("<a href=\""); body.appendAttribute(safe); body.append("\" rel=\"noopener noreferrer\">")
                    closers.append("</a>")
                }
            }
            let piece = String(decoding: bytes[a..<z], as: UTF8.self)
            // Bold pieces need the bold faces in the page (it synthesises none).
            let isBold = covering.contains { $0.style == .bold }
            if linked, isBold {
                body.appendText(piece, links: false, coverage: fonts.coverage, faces: &bold, spanFaces: spanFaces)
            } else if linked {
                body.appendText(piece, links: false, coverage: fonts.coverage, faces: &regular, spanFaces: spanFaces)
            } else if isBold {
                appendLinkedText(piece, links: links, body: &body, regular: &bold)
            } else {
                appendLinkedText(piece, links: links, body: &body, regular: &regular)
            }
            for closer in closers.reversed() { body.append(closer) }
        }
    }

    /// Outer elements first: a link around everything, formatting inside it.
    private static func nesting(_ style: TextSpan.Style) -> Int {
        switch style {
        case .quote: 0
        case .link: 1
        case .spoiler: 2
        case .mention: 3
        case .pre, .code: 4
        case .bold: 5
        case .italic: 6
        case .underline: 7
        case .strike: 8
        }
    }

    /// A link target the page may open: http, https, mailto and tel only.
    static func safeLink(_ url: String) -> String? {
        let lower = url.lowercased()
        return ["http://", "https://", "mailto:", "tel:"].contains(where: { lower.hasPrefix($0) }) ? url : nil
    }

    func appendLinkedText(_ text: String, links: Bool, body: inout HTMLBuffer, regular: inout UInt32) {
        let found = links && layout.detectsLinks ? LinkDetector.links(in: text).filter { !$0.url.hasPrefix("http") } : []
        guard !found.isEmpty else {
            body.appendText(text, links: links, coverage: fonts.coverage, faces: &regular, spanFaces: spanFaces)
            return
        }
        let bytes = Array(text.utf8)
        var at = 0
        for link in found {
            body.appendText(
                String(decoding: bytes[at..<link.range.lowerBound], as: UTF8.self), links: links, coverage: fonts.coverage, faces: &regular,
                spanFaces: spanFaces)
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
        let participant = participant(sender)
        if let path = participant?.avatar {
            var image = ImageAttachment(path: path, width: layout.avatarSize, height: layout.avatarSize)
            image.width = layout.avatarSize
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

    /// ` datetime="2024-03-01T10:22:11Z"`: the moment in UTC, to the second.
    func appendDatetime(_ date: Date, to b: inout HTMLBuffer) {
        let t = date.timeIntervalSince1970
        guard t.isFinite, abs(t) < 1e13 else { return }
        let seconds = Int(t.rounded(.down)), day = Int((Double(seconds) / 86_400).rounded(.down)), second = seconds - day * 86_400
        let c = WallTime.civil(day)
        b.append(" datetime=\""); b.append(int: c.year, width: 4); b.append("-"); b.append(int: c.month, width: 2); b.append("-")
        b.append(int: c.day, width: 2); b.append("T"); b.append(int: second / 3600, width: 2); b.append(":")
        b.append(int: second / 60 % 60, width: 2); b.append(":"); b.append(int: second % 60, width: 2); b.append("Z\"")
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
            let factor = min(1, layout.maxImageHeight / max(1, image.height))
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
            // Checked by the export beforehand; a fragment's photos (embedded) are checked here.
            guard let p = try photos.photos[full] ?? (options.assets == .embed ? photos.check(full, message: index) : nil) else {
                throw RenderError.unreadableImage(path: full, reason: "was not checked (messages[\(index)].image.path)")
            }
            if !(width > 0 && height > 0 && width.isFinite && height.isFinite) {
                width = Double(p.width); height = Double(p.height)
            }
            if options.assets == .folder || p.copyName != nil {
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
            let factor = image.sticker ? min(layout.stickerSize / width, layout.stickerSize / height) : min(1, layout.maxImageHeight / height)
            b.append(" width=\""); b.append(raw: HTMLStyleSheet.num(width * factor))
            b.append("\" height=\""); b.append(raw: HTMLStyleSheet.num(height * factor)); b.append("\"")
        }
        b.append(options.lazyImages ? " loading=\"lazy\" decoding=\"async\">" : " decoding=\"async\">")
    }
}
