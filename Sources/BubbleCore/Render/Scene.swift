import Foundation

/// What to draw, already placed: the one description every output (PNG, PDF, SVG) is painted
/// from. Built from a `ConversationLayout` and a `Theme` by `SceneBuilder`; backends translate
/// items one to one and decide nothing about geometry.
public struct ScenePage: Hashable, Sendable {
    /// Page size in points.
    public var size: Size
    /// What is drawn on it, in order, in page coordinates.
    public var items: [SceneItem]
    /// 1-based page number.
    public var number: Int

    package init(size: Size, items: [SceneItem], number: Int) {
        self.size = size
        self.items = items
        self.number = number
    }
}

/// One thing drawn on a page, placed in page coordinates (points).
public indirect enum SceneItem: Hashable, Sendable {
    /// A rectangle filled with a colour.
    case fill(Rect, Color)
    /// Top to bottom.
    case gradient(Rect, Color, Color)
    /// An image file tiled over the rect (theme backgrounds).
    case tiledImage(path: String, Rect)
    /// A vector outline, filled and/or stroked.
    case path([PathElement], fill: Color?, stroke: Color?, lineWidth: Double)
    /// Bubble art of the theme's `direction` side, stretched to the rect.
    case art(direction: Direction, Rect, mirrored: Bool, tint: Color?)
    /// A photo, clipped to a rounded rect; `path` nil or unreadable draws a placeholder.
    case photo(path: String?, Rect, cornerRadius: Double)
    /// A laid-out text.
    case text(SceneText)
    /// Items drawn clipped to a rect (a page's content band).
    case clipped(Rect, [SceneItem])
    /// Items in coordinates of their own, drawn moved to `origin` and scaled by `factor` (a
    /// book's conversation laid out at screen sizes, printed smaller).
    case scaled(origin: Point, factor: Double, [SceneItem])
    /// A link over text drawn by a `.text` item: underline the rects (one per line) in `color`;
    /// PDF and HTML make them clickable. `url` is http(s), mailto or tel only.
    case link(url: String, rects: [Rect], color: Color)
}

/// A laid-out text to draw: where its box is, the width it was wrapped in, and its lines.
public struct SceneText: Hashable, Sendable {
    /// The text drawn.
    public var string: String
    /// Its font, size and line height.
    public var style: TextStyle
    /// Its colour.
    public var color: Color
    /// Top-left of the text box.
    public var origin: Point
    /// The width the lines were broken in: draw with exactly this width to get the same lines.
    public var wrapWidth: Double
    /// Width of the box the text sits in (right-to-left lines align to its right edge).
    public var boxWidth: Double
    /// Its lines, relative to `origin`.
    public var layout: TextLayout
    /// The most lines drawn (an ellipsis ends the last), nil for no limit.
    public var maxLines: Int?
    /// Styled ranges of `string` (faces, decorations, spoilers).
    public var spans: [TextSpan] = []
    /// Where spoilers and code sit (page coordinates, a rect per line): for writers that place
    /// text without an engine (SVG), which leave a spoiler's text out and draw a box instead.
    /// Empty unless the builder `measuresSpanAreas`.
    public var areas: [SpanArea] = []

    package init(
        string: String, style: TextStyle, color: Color, origin: Point, wrapWidth: Double, boxWidth: Double,
        layout: TextLayout, maxLines: Int?, spans: [TextSpan] = [], areas: [SpanArea] = []
    ) {
        self.string = string
        self.style = style
        self.color = color
        self.origin = origin
        self.wrapWidth = wrapWidth
        self.boxWidth = boxWidth
        self.layout = layout
        self.maxLines = maxLines
        self.spans = spans
        self.areas = areas
    }
}

/// The rects a styled range covers, one per line.
public struct SpanArea: Hashable, Sendable {
    /// The span's style.
    public var style: TextSpan.Style
    /// The span's UTF-8 byte range of the text.
    public var range: Range<Int>
    /// The span's areas, one a line it spans, in page coordinates.
    public var rects: [Rect]
}

/// Page geometry for an output.
public struct PageSetup: Hashable, Sendable {
    /// Page width in points; the conversation is laid out at `width − margins.horizontal`.
    public var width: Double
    /// Page height; nil for one page as tall as the conversation.
    public var height: Double?
    /// Space left empty around the content on each side.
    public var margins: EdgeInsets
    /// A header on the first page (title, participants, date range).
    public var header: Bool
    /// A page number at the foot of each page.
    public var pageNumbers: Bool

    /// A page `width` points wide (`height` nil: one page as tall as the conversation).
    public init(
        width: Double, height: Double? = nil, margins: EdgeInsets = EdgeInsets(top: 10, left: 0, bottom: 10, right: 0),
        header: Bool = false, pageNumbers: Bool = false
    ) {
        self.width = width; self.height = height; self.margins = margins
        self.header = header; self.pageNumbers = pageNumbers
    }

    /// The width the conversation is laid out in: the page's less its side margins.
    public var contentWidth: Double { width - margins.horizontal }

    /// ISO A4 in points (210 × 297 mm).
    public static let a4 = Size(width: 595.28, height: 841.89)
    /// US Letter in points (8.5 × 11 in).
    public static let letter = Size(width: 612, height: 792)

    /// A printable page: header on page 1, numbers on every page, 36 pt margins.
    public static func printed(_ size: Size) -> PageSetup {
        PageSetup(
            width: size.width, height: size.height, margins: EdgeInsets(top: 36, left: 36, bottom: 36, right: 36),
            header: true, pageNumbers: true)
    }
}

/// A conversation's pages decided (`SceneBuilder.plan`): each page's rows and the header.
package struct ScenePlan: Sendable {
    package let conversation: Conversation
    package let layout: ConversationLayout
    package let setup: PageSetup
    let slices: [PageSlice]
    let headerItems: [SceneItem]
    let headerHeight: Double
    package var pageCount: Int { slices.count }
}

/// Turns a laid-out conversation into pages of scene items.
package struct SceneBuilder {
    package let theme: Theme
    package let measurer: BubbleMeasurer
    package let timeZone: TimeZone
    /// The header's dates (same zone and locale as the layout's).
    package let dateTexts: DateTexts
    /// Spoilers drawn as text (`--reveal-spoilers`); by default a hatched box hides them and
    /// their text is left out of the output.
    package var revealSpoilers = false
    /// Give styled texts their `SceneText.areas` (spoilers and code): for a writer that places
    /// text without an engine (SVG). Cairo painters draw them from the layout themselves.
    package var measuresSpanAreas = false

    package init(
        theme: Theme, engine: any TextEngine, timeZone: TimeZone, locale: Locale? = nil, revealSpoilers: Bool = false,
        measuresSpanAreas: Bool = false
    ) {
        self.theme = theme
        self.revealSpoilers = revealSpoilers
        self.measuresSpanAreas = measuresSpanAreas
        self.measurer = BubbleMeasurer(style: theme.layoutStyle, engine: engine)
        self.timeZone = timeZone
        self.dateTexts = DateTexts(timeZone: timeZone, locale: locale)
    }

    static let footerHeight = 24.0

    package func pages(
        for conversation: Conversation, layout: ConversationLayout,
        setup: PageSetup
    ) throws(LayoutError) -> [ScenePage] {
        try pages(of: plan(for: conversation, layout: layout, setup: setup))
    }

    /// Every page of `plan`, filled.
    package func pages(of plan: ScenePlan) throws(LayoutError) -> [ScenePage] {
        var pages: [ScenePage] = []
        pages.reserveCapacity(plan.pageCount)
        for index in 0..<plan.pageCount { pages.append(try page(index, of: plan)) }
        return pages
    }

    /// The pages decided — which rows go on which page, the header — but not filled.
    package func plan(
        for conversation: Conversation, layout: ConversationLayout,
        setup: PageSetup
    ) throws(LayoutError) -> ScenePlan {
        let m = setup.margins
        let footer = setup.pageNumbers ? Self.footerHeight : 0
        var headerItems: [SceneItem] = []
        var headerHeight = 0.0
        if setup.header {
            (headerItems, headerHeight) = try header(for: conversation, setup: setup)
        }
        let slices: [PageSlice]
        if let height = setup.height {
            let content = height - m.vertical - footer
            slices = Paginator.paginate(layout, pageHeight: content, firstPageHeight: content - headerHeight)
        } else {
            slices = [PageSlice(top: 0, height: layout.height, rows: 0..<layout.rows.count)]
        }
        return ScenePlan(
            conversation: conversation, layout: layout, setup: setup, slices: slices,
            headerItems: headerItems, headerHeight: headerHeight)
    }

    /// Page `index` of `plan` with its items. It only reads (the builder, the plan), so pages
    /// can be made on several threads at once when the text engine may be called so.
    package func page(_ index: Int, of plan: ScenePlan) throws(LayoutError) -> ScenePage {
        let setup = plan.setup, m = setup.margins, slice = plan.slices[index]
        let top = m.top + (index == 0 ? plan.headerHeight : 0)
        let pageHeight = setup.height ?? (top + slice.height + m.bottom)
        let size = Size(width: setup.width, height: pageHeight)
        var items = background(Rect(origin: .zero, size: size))
        if index == 0 { items += plan.headerItems }
        var content: [SceneItem] = []
        for r in slice.rows {
            let row = plan.layout.rows[r]
            let origin = Point(x: m.left, y: top + row.frame.minY - slice.top)
            content += self.items(for: row, at: origin, conversation: plan.conversation)
        }
        // Clip to the band so a row split across pages shows only its share on each.
        let band = Rect(x: 0, y: top, width: setup.width, height: slice.height)
        items.append(.clipped(band, content))
        if setup.pageNumbers {
            let label = "\(index + 1) / \(plan.slices.count)"
            let (t, w) = try measurer.measure(label, style: theme.layoutStyle.systemText, maxWidth: setup.contentWidth)
            items.append(
                .text(
                    SceneText(
                        string: label, style: theme.layoutStyle.systemText, color: theme.labels.system,
                        origin: Point(x: (setup.width - t.width) / 2, y: pageHeight - m.bottom - t.height),
                        wrapWidth: w, boxWidth: t.width, layout: t, maxLines: nil)))
        }
        return ScenePage(size: size, items: items, number: index + 1)
    }

    func background(_ rect: Rect) -> [SceneItem] {
        switch theme.background {
        case .color(let c): return [.fill(rect, c)]
        case .gradient(let a, let b): return [.gradient(rect, a, b)]
        case .image(let path): return [.tiledImage(path: path, rect)]
        }
    }

    /// Title, participants and date range, left-aligned above the conversation.
    func header(for conversation: Conversation, setup: PageSetup) throws(LayoutError) -> ([SceneItem], Double) {
        let names = conversation.participants.map(\.name).joined(separator: ", ")
        let title = conversation.title ?? (names.isEmpty ? "Conversation" : names)
        var lines = [(title, TextStyle(family: theme.font.family, size: theme.font.size * 1.25, weight: .bold), theme.labels.separator)]
        if conversation.title != nil, !names.isEmpty { lines.append((names, theme.layoutStyle.systemText, theme.labels.system)) }
        if let first = conversation.messages.first?.date, let last = conversation.messages.last?.date {
            let a = dateTexts.shortDay(first), b = dateTexts.shortDay(last)
            lines.append((a == b ? a : "\(a) – \(b)", theme.layoutStyle.systemText, theme.labels.system))
        }
        var items: [SceneItem] = []
        var y = setup.margins.top
        for (string, style, color) in lines {
            let (t, w) = try measurer.measure(string, style: style, maxWidth: setup.contentWidth)
            items.append(
                .text(
                    SceneText(
                        string: string, style: style, color: color,
                        origin: Point(x: setup.margins.left + theme.layout.sideMargin, y: y),
                        wrapWidth: w, boxWidth: t.width, layout: t, maxLines: nil)))
            y += t.height + 2
        }
        return (items, y - setup.margins.top + 12)
    }

    package func items(for row: LayoutRow, at origin: Point, conversation: Conversation) -> [SceneItem] {
        func moved(_ r: Rect) -> Rect { r.offsetBy(dx: origin.x, dy: origin.y) }
        func text(_ label: LabelLayout, style: TextStyle, color: Color) -> SceneItem {
            .text(
                SceneText(
                    string: label.string, style: style, color: color, origin: moved(label.frame).origin,
                    wrapWidth: label.wrapWidth, boxWidth: label.frame.width, layout: label.text, maxLines: label.maxLines))
        }
        let text: (LabelLayout, TextStyle, Color) -> SceneItem = { text($0, style: $1, color: $2) }
        let style = theme.layoutStyle
        switch row.content {
        case .daySeparator(let label):
            return [text(label, style.separatorText, theme.labels.separator)]
        case .system(_, let label):
            return [text(label, style.systemText, theme.labels.system)]
        case .message(let index, let bubble):
            return messageItems(conversation.messages[index], bubble, conversation: conversation, moved: moved, text: text)
        case let .typing(sender, bubble):
            var items = shape(bubble, rect: moved(bubble.bubble))
            for dot in bubble.typingDots {
                items.append(.path(BubbleShape.roundedRect(moved(dot), radius: dot.width / 2), fill: theme.typingDotsColor, stroke: nil, lineWidth: 1))
            }
            items += surroundings(bubble, sender: sender, conversation: conversation, moved: moved, text: text)
            return items
        }
    }

    /// The bubble's shape: a vector path (tail on `tailSide`) or the art, mirrored in a mirrored layout.
    func shape(_ bubble: BubbleLayout, rect: Rect) -> [SceneItem] {
        let look = theme.bubble(bubble.direction)
        switch look.shape {
        case let .vector(radius, tail, outline, width):
            let path = BubbleShape.path(
                in: rect, radius: radius, tailSide: tail ? bubble.tailSide : nil,
                drawsTail: tail && bubble.hasTail)
            return [.path(path, fill: outline ? nil : look.fill, stroke: outline ? look.fill : nil, lineWidth: width)]
        case .art(let spec):
            return [
                .art(
                    direction: bubble.direction, rect, mirrored: (spec.mirror ?? false) != bubble.mirrored,
                    tint: spec.tint == true ? look.fill : nil)
            ]
        }
    }

    func messageItems(
        _ message: Message, _ bubble: BubbleLayout, conversation: Conversation,
        moved: (Rect) -> Rect, text: (LabelLayout, TextStyle, Color) -> SceneItem
    ) -> [SceneItem] {
        let style = theme.layoutStyle
        let look = theme.bubble(bubble.direction)
        var items: [SceneItem] = []
        if let reply = bubble.reply {
            // A quoted snippet: a rounded box with a bar on its leading edge — the left, on either
            // side of the conversation; the right only for right-to-left text.
            let frame = moved(reply.frame)
            items.append(.path(BubbleShape.roundedRect(frame, radius: min(10, frame.height / 2)), fill: theme.replyFill, stroke: nil, lineWidth: 1))
            let rightToLeft = reply.label.text.lines.first?.isRightToLeft ?? false
            let barX = rightToLeft ? frame.maxX - 8 : frame.minX + 5
            items.append(.fill(Rect(x: barX, y: frame.minY + 4, width: 3, height: max(1, frame.height - 8)), theme.replyBar))
            items.append(text(reply.label, style.replyText, theme.replyTextColor))
        }
        if !bubble.emojiOnly { items += shape(bubble, rect: moved(bubble.bubble)) }
        let radius = theme.layout.imageCornerRadius ?? 5
        for (k, frame) in bubble.imageFrames.enumerated() where k < message.images.count {
            let image = message.images[k]
            let usable = image.width > 0 && image.height > 0 && image.width.isFinite && image.height.isFinite
            let corner = image.sticker ? 0 : bubble.imageFrames.count > 1 ? min(radius, 4) : radius
            if image.videoFrame && image.path == nil {
                // A video without a poster: a dark frame.
                items.append(.path(BubbleShape.roundedRect(moved(frame), radius: corner), fill: Self.videoFrameFill, stroke: nil, lineWidth: 1))
            } else {
                items.append(
                    .photo(
                        path: usable && !(k == 0 && bubble.imageIsPlaceholder) ? image.path : nil, moved(frame),
                        cornerRadius: corner))
            }
            if image.videoFrame { items += Self.playSymbol(in: moved(frame)) }
        }
        if let frame = bubble.textFrame, let string = message.shownText {
            var spans = bubble.emojiOnly ? [] : message.shownSpans
            // Revealed spoilers are plain text (their faces stay).
            if revealSpoilers { spans.removeAll { $0.style == .spoiler } }
            let textStyle = bubble.emojiOnly ? style.emojiText : style.text
            items.append(
                .text(
                    SceneText(
                        string: string, style: textStyle, color: look.textColor,
                        origin: moved(frame).origin, wrapWidth: bubble.textWrapWidth,
                        boxWidth: bubble.text.width, layout: bubble.text, maxLines: nil, spans: spans,
                        areas: measuresSpanAreas
                            ? spanAreas(
                                string, spans: spans, style: textStyle, bubble: bubble,
                                origin: moved(frame).origin) : [])))
        }
        for link in bubble.links {
            items.append(.link(url: link.url, rects: link.rects.map(moved), color: look.textColor))
        }
        if let reactions = bubble.reactions {
            let frame = moved(reactions.frame)
            items.append(
                .path(
                    BubbleShape.roundedRect(frame, radius: frame.height / 2), fill: theme.reactionFill,
                    stroke: theme.reactionBorder, lineWidth: 1.5))
            items.append(text(reactions.label, style.reactionText, theme.incoming.textColor))
        }
        for label in bubble.labels {
            switch label.kind {
            case .timeInside:
                items.append(text(label, style.timeLabelText, look.timeColor ?? look.textColor.withAlpha(0.6)))
            default:
                break
            }
        }
        items += surroundings(bubble, sender: message.sender, conversation: conversation, moved: moved, text: text)
        return items
    }

    /// The rects of a text's spoilers and code (what the SVG writer draws without an engine):
    /// measured again by the engine, so only when `measuresSpanAreas`.
    func spanAreas(_ string: String, spans: [TextSpan], style textStyle: TextStyle, bubble: BubbleLayout, origin: Point) -> [SpanArea] {
        let wanted = spans.filter { $0.style == .spoiler || $0.style == .code || $0.style == .pre }
        guard !wanted.isEmpty, let frame = bubble.textFrame else { return [] }
        let prepared = try? measurer.engine.prepare(string, style: textStyle, spans: spans)
        var widths: [(range: Range<Int>, width: Double)] = []
        return wanted.compactMap { span in
            let areas = try? measurer.linkAreas(
                string, found: [DetectedLink(range: span.range, url: "")], prepared: prepared,
                text: bubble.text, boxWidth: frame.width, origin: origin, rangeWidths: &widths)
            return areas?.first.map { SpanArea(style: span.style, range: span.range, rects: $0.rects) }
        }
    }

    /// Labels outside the bubble, the avatar and the failed badge.
    func surroundings(
        _ bubble: BubbleLayout, sender: String?, conversation: Conversation,
        moved: (Rect) -> Rect, text: (LabelLayout, TextStyle, Color) -> SceneItem
    ) -> [SceneItem] {
        let style = theme.layoutStyle
        var items: [SceneItem] = []
        for label in bubble.labels {
            switch label.kind {
            case .timeInside, .badge: break
            case .sender: items.append(text(label, style.senderNameText, theme.senderColor))
            case .status: items.append(text(label, style.statusText, theme.statusColor))
            case .failedStatus: items.append(text(label, style.statusText, theme.failedColor))
            default: items.append(text(label, style.timeLabelText, theme.labels.time))
            }
        }
        if let frame = bubble.avatarFrame.map(moved) {
            let participant = conversation.participant(sender)
            if let path = participant?.avatar {
                items.append(.photo(path: path, frame, cornerRadius: frame.width / 2))
            } else {
                items.append(
                    .path(
                        BubbleShape.roundedRect(frame, radius: frame.width / 2),
                        fill: Self.avatarColor(sender ?? ""), stroke: nil, lineWidth: 1))
                let initials = Self.initials(participant?.name ?? sender ?? "?")
                let labelStyle = TextStyle(family: theme.font.family, size: (frame.width * 0.4).rounded(), weight: .bold)
                if let (t, w) = try? measurer.measure(initials, style: labelStyle, maxWidth: frame.width * 2) {
                    items.append(
                        .text(
                            SceneText(
                                string: initials, style: labelStyle, color: Color(r8: 255, g8: 255, b8: 255),
                                origin: Point(x: frame.midX - t.width / 2, y: frame.midY - t.height / 2),
                                wrapWidth: w, boxWidth: t.width, layout: t, maxLines: nil)))
                }
            }
        }
        if let frame = bubble.failedBadge.map(moved) {
            items.append(.path(BubbleShape.roundedRect(frame, radius: frame.width / 2), fill: theme.failedColor, stroke: nil, lineWidth: 1))
            // The "!": a bar and a dot, drawn (no font needed).
            let w = frame.width
            items.append(.fill(Rect(x: frame.midX - w * 0.06, y: frame.minY + w * 0.2, width: w * 0.12, height: w * 0.38), Color(r8: 255, g8: 255, b8: 255)))
            items.append(.fill(Rect(x: frame.midX - w * 0.06, y: frame.minY + w * 0.66, width: w * 0.12, height: w * 0.12), Color(r8: 255, g8: 255, b8: 255)))
        }
        return items
    }

    static let videoFrameFill = Color(r8: 0x1c, g8: 0x1c, b8: 0x1e)

    /// A play symbol centred on a video's frame: a translucent dark disc and a white triangle.
    package static func playSymbol(in frame: Rect) -> [SceneItem] {
        let d = min(44, max(16, min(frame.width, frame.height) * 0.4))
        let disc = Rect(x: frame.midX - d / 2, y: frame.midY - d / 2, width: d, height: d)
        let t = d * 0.38
        // The triangle's centroid on the disc's centre, pointing right.
        let left = frame.midX - t * 0.4, right = frame.midX + t * 0.6
        let triangle: [PathElement] = [
            .move(Point(x: left, y: frame.midY - t / 2)), .line(Point(x: right, y: frame.midY)),
            .line(Point(x: left, y: frame.midY + t / 2)), .close
        ]
        return [
            .path(BubbleShape.roundedRect(disc, radius: d / 2), fill: Color(r8: 0, g8: 0, b8: 0).withAlpha(0.55), stroke: nil, lineWidth: 1),
            .path(triangle, fill: Color(r8: 255, g8: 255, b8: 255), stroke: nil, lineWidth: 1)
        ]
    }

    /// Up to two initials: "Ada Lovelace" → "AL", "bob" → "B".
    package static func initials(_ name: String) -> String {
        let words = name.split(whereSeparator: { $0.isWhitespace }).filter { $0.first?.isLetter == true || $0.first?.isNumber == true }
        let letters = (words.count > 1 ? [words.first!, words.last!] : Array(words.prefix(1))).compactMap(\.first)
        return letters.isEmpty ? "?" : String(letters).uppercased()
    }

    /// A stable colour per participant id (iOS-like palette).
    package static func avatarColor(_ id: String) -> Color {
        let palette: [(Int, Int, Int)] = [
            (0x5a, 0xc8, 0xfa), (0xff, 0x95, 0x00), (0x34, 0xc7, 0x59), (0xaf, 0x52, 0xde),
            (0xff, 0x2d, 0x55), (0x58, 0x56, 0xd6), (0xa2, 0x84, 0x5e), (0x00, 0xc7, 0xbe)
        ]
        var h: UInt32 = 2166136261
        for b in id.utf8 { h = (h ^ UInt32(b)) &* 16777619 }
        let c = palette[Int(h % UInt32(palette.count))]
        return Color(r8: c.0, g8: c.1, b8: c.2)
    }
}

extension Color {
    package func withAlpha(_ alpha: Double) -> Color { Color(red: red, green: green, blue: blue, alpha: alpha) }
}

extension BubbleMeasurer {
    /// `string` laid out in `width` (at most `maxLines` lines), its box's top-left at `x`, `y`,
    /// aligned in `width` (0 left, 0.5 centre, 1 right): the scene item and its height. Pages
    /// that are not conversations (a book's, charts, contact sheets) place their texts with it.
    package func placedText(
        _ string: String, _ style: TextStyle, _ color: Color, x: Double, y: Double, width: Double,
        align: Double = 0, maxLines: Int? = nil
    ) throws(LayoutError) -> (SceneItem, Double) {
        let (t, w) = try measure(string, style: style, maxWidth: max(1, width), maxLines: maxLines)
        return (
            .text(
                SceneText(
                    string: string, style: style, color: color, origin: Point(x: x + (width - t.width) * align, y: y),
                    wrapWidth: w, boxWidth: t.width, layout: t, maxLines: maxLines)), t.height
        )
    }
}
