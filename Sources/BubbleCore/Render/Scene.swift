import Foundation

/// What to draw, already placed: the one description every output (PNG, PDF, SVG) is painted
/// from. Built from a `ConversationLayout` and a `Theme` by `SceneBuilder`; backends translate
/// items one to one and decide nothing about geometry.
public struct ScenePage: Hashable, Sendable {
    /// Page size in points.
    public var size: Size
    public var items: [SceneItem]
    /// 1-based page number.
    public var number: Int
}

public indirect enum SceneItem: Hashable, Sendable {
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
    case text(SceneText)
    /// Items drawn clipped to a rect (a page's content band).
    case clipped(Rect, [SceneItem])
}

/// A laid-out text to draw: where its box is, the width it was wrapped in, and its lines.
public struct SceneText: Hashable, Sendable {
    public var string: String
    public var style: TextStyle
    public var color: Color
    /// Top-left of the text box.
    public var origin: Point
    /// The width the lines were broken in: draw with exactly this width to get the same lines.
    public var wrapWidth: Double
    /// Width of the box the text sits in (right-to-left lines align to its right edge).
    public var boxWidth: Double
    public var layout: TextLayout
    public var maxLines: Int?
}

/// Page geometry for an output.
public struct PageSetup: Hashable, Sendable {
    /// Page width in points; the conversation is laid out at `width − margins.horizontal`.
    public var width: Double
    /// Page height; nil for one page as tall as the conversation.
    public var height: Double?
    public var margins: EdgeInsets
    /// A header on the first page (title, participants, date range).
    public var header: Bool
    public var pageNumbers: Bool

    public init(width: Double, height: Double? = nil, margins: EdgeInsets = EdgeInsets(top: 10, left: 0, bottom: 10, right: 0),
                header: Bool = false, pageNumbers: Bool = false) {
        self.width = width; self.height = height; self.margins = margins
        self.header = header; self.pageNumbers = pageNumbers
    }

    public var contentWidth: Double { width - margins.horizontal }

    public static let a4 = Size(width: 595.28, height: 841.89)
    public static let letter = Size(width: 612, height: 792)

    /// A printable page: header on page 1, numbers on every page, 36 pt margins.
    public static func printed(_ size: Size) -> PageSetup {
        PageSetup(width: size.width, height: size.height, margins: EdgeInsets(top: 36, left: 36, bottom: 36, right: 36),
                  header: true, pageNumbers: true)
    }
}

/// Turns a laid-out conversation into pages of scene items.
public struct SceneBuilder {
    public let theme: Theme
    public let measurer: BubbleMeasurer
    public let timeZone: TimeZone
    /// The header's dates (same zone and locale as the layout's).
    public let dateTexts: DateTexts

    public init(theme: Theme, engine: any TextEngine, timeZone: TimeZone, locale: Locale? = nil) {
        self.theme = theme
        self.measurer = BubbleMeasurer(style: theme.layoutStyle, engine: engine)
        self.timeZone = timeZone
        self.dateTexts = DateTexts(timeZone: timeZone, locale: locale)
    }

    static let footerHeight = 24.0

    public func pages(for conversation: Conversation, layout: ConversationLayout,
                      setup: PageSetup) throws(LayoutError) -> [ScenePage] {
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
        var pages: [ScenePage] = []
        for (index, slice) in slices.enumerated() {
            let top = m.top + (index == 0 ? headerHeight : 0)
            let pageHeight = setup.height ?? (top + slice.height + m.bottom)
            let size = Size(width: setup.width, height: pageHeight)
            var items = background(Rect(origin: .zero, size: size))
            if index == 0 { items += headerItems }
            var content: [SceneItem] = []
            for r in slice.rows {
                let row = layout.rows[r]
                let origin = Point(x: m.left, y: top + row.frame.minY - slice.top)
                content += self.items(for: row, at: origin, conversation: conversation)
            }
            // Clip to the band so a row split across pages shows only its share on each.
            let band = Rect(x: 0, y: top, width: setup.width, height: slice.height)
            items.append(.clipped(band, content))
            if setup.pageNumbers {
                let label = "\(index + 1) / \(slices.count)"
                let (t, w) = try measurer.measure(label, style: theme.layoutStyle.systemText, maxWidth: setup.contentWidth)
                items.append(.text(SceneText(string: label, style: theme.layoutStyle.systemText, color: theme.labels.system,
                                             origin: Point(x: (setup.width - t.width) / 2, y: pageHeight - m.bottom - t.height),
                                             wrapWidth: w, boxWidth: t.width, layout: t, maxLines: nil)))
            }
            pages.append(ScenePage(size: size, items: items, number: index + 1))
        }
        return pages
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
            items.append(.text(SceneText(string: string, style: style, color: color,
                                         origin: Point(x: setup.margins.left + theme.layout.sideMargin, y: y),
                                         wrapWidth: w, boxWidth: t.width, layout: t, maxLines: nil)))
            y += t.height + 2
        }
        return (items, y - setup.margins.top + 12)
    }

    func items(for row: LayoutRow, at origin: Point, conversation: Conversation) -> [SceneItem] {
        func moved(_ r: Rect) -> Rect { r.offsetBy(dx: origin.x, dy: origin.y) }
        func text(_ label: LabelLayout, style: TextStyle, color: Color) -> SceneItem {
            .text(SceneText(string: label.string, style: style, color: color, origin: moved(label.frame).origin,
                            wrapWidth: label.wrapWidth, boxWidth: label.frame.width, layout: label.text, maxLines: nil))
        }
        let style = theme.layoutStyle
        switch row.content {
        case .daySeparator(let label):
            return [text(label, style: style.separatorText, color: theme.labels.separator)]
        case .system(_, let label):
            return [text(label, style: style.systemText, color: theme.labels.system)]
        case .message(let index, let bubble):
            let message = conversation.messages[index]
            let look = theme.bubble(bubble.direction)
            var items: [SceneItem] = []
            let rect = moved(bubble.bubble)
            switch look.shape {
            case let .vector(radius, tail, outline, width):
                let path = BubbleShape.path(in: rect, radius: radius, tailSide: tail ? bubble.direction : nil,
                                            drawsTail: tail && bubble.hasTail)
                items.append(.path(path, fill: outline ? nil : look.fill, stroke: outline ? look.fill : nil, lineWidth: width))
            case .art(let spec):
                items.append(.art(direction: bubble.direction, rect, mirrored: spec.mirror ?? false,
                                  tint: spec.tint == true ? look.fill : nil))
            }
            if let image = bubble.imageFrame {
                items.append(.photo(path: bubble.imageIsPlaceholder ? nil : message.image?.path, moved(image),
                                    cornerRadius: theme.layout.imageCornerRadius ?? 5))
            }
            if let frame = bubble.textFrame, let string = message.text {
                items.append(.text(SceneText(string: string, style: style.text, color: look.textColor,
                                             origin: moved(frame).origin, wrapWidth: bubble.textWrapWidth,
                                             boxWidth: bubble.text.width, layout: bubble.text, maxLines: nil)))
            }
            for label in bubble.labels {
                switch label.kind {
                case .timeInside:
                    items.append(text(label, style: style.timeLabelText,
                                      color: look.timeColor ?? look.textColor.withAlpha(0.6)))
                default:
                    items.append(text(label, style: style.timeLabelText, color: theme.labels.time))
                }
            }
            return items
        }
    }
}

extension Color {
    public func withAlpha(_ alpha: Double) -> Color { Color(red: red, green: green, blue: blue, alpha: alpha) }
}
