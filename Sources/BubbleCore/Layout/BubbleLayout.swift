/// Where everything of one message goes, relative to the top-left of its row. Points.
public struct BubbleLayout: Hashable, Sendable {
    public var direction: Direction
    /// The bubble art's rectangle.
    public var bubble: Rect
    /// The text box inside the bubble (nil without text). Lines are relative to its origin.
    public var textFrame: Rect?
    public var text: TextLayout
    /// The width the text was wrapped in: a renderer that lays the text out again (Pango) must
    /// use exactly this width to get the same lines.
    public var textWrapWidth: Double
    /// The photo inside the bubble (nil without one).
    public var imageFrame: Rect?
    /// True when the photo's own size was unusable and a placeholder size was laid out.
    public var imageIsPlaceholder: Bool
    /// Whether the bubble draws its tail (only the last bubble of a group does).
    public var hasTail: Bool
    /// Labels outside the bubble (the time above a group).
    public var labels: [LabelLayout]
}

/// A short text placed by the layout (time, day separator, system line).
public struct LabelLayout: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable { case time, timeInside, daySeparator, system }
    public var kind: Kind
    public var string: String
    public var frame: Rect
    public var text: TextLayout
    public var wrapWidth: Double
}

/// Measures one message into a `BubbleLayout`: text inside padding, photo scaled to fit,
/// width limited by the row, placed on its side.
public struct BubbleMeasurer {
    public let style: LayoutStyle
    public let engine: any TextEngine

    public init(style: LayoutStyle, engine: any TextEngine) {
        self.style = style; self.engine = engine
    }

    /// Lays out `message` in a row `rowWidth` wide. `time` is the message's time as shown: above
    /// the bubble when the style shows times above groups and `startsGroup`, inside the bubble
    /// when the style puts it there.
    public func layout(_ message: Message, rowWidth: Double, hasTail: Bool = true,
                       time: String? = nil, startsGroup: Bool = true) throws(LayoutError) -> BubbleLayout {
        try Self.validate(rowWidth: rowWidth, style: style)
        let padding = style.padding(for: message.direction)
        let maxBubble = style.maxBubbleWidth(rowWidth: rowWidth)
        let maxText = max(1, maxBubble - padding.horizontal)

        var text = TextLayout.empty
        var wrapWidth = maxText
        if let string = message.text, !string.isEmpty {
            (text, wrapWidth) = try measure(string, style: style.text, maxWidth: maxText, balanced: style.widthMode == .balanced)
        }

        // Photo: fit the widest the bubble allows and the maximum height, never enlarged.
        var imageSize: Size?
        var placeholder = false
        if let image = message.image {
            var natural = Size(width: image.width, height: image.height)
            if !(natural.width.isFinite && natural.height.isFinite && natural.width > 0 && natural.height > 0) {
                natural = style.placeholderImageSize
                placeholder = true
            }
            let maxImageWidth = max(1, maxBubble - style.imageInset.horizontal)
            let factor = min(1, maxImageWidth / natural.width, style.maxImageHeight / natural.height)
            imageSize = Size(width: natural.width * factor, height: natural.height * factor)
        }

        // Bubble size: the wider of photo and text, plus insets; never below the art's minimum.
        var contentWidth = 0.0, height = 0.0
        if let imageSize {
            contentWidth = imageSize.width + style.imageInset.horizontal
            height = style.imageInset.top + imageSize.height + style.imageInset.bottom
        }
        let hasText = !text.lines.isEmpty
        /// Width of the text box: the widest line, or wider to hold a time inside.
        var textBoxWidth = text.width
        // A time inside the bubble: after the last line when it fits there, else below it.
        var inside: (text: TextLayout, wrap: Double, ownLine: Bool)?
        if style.timeInsideBubble, let time {
            let (t, w) = try measure(time, style: style.timeLabelText, maxWidth: max(1, maxText))
            var ownLine = true
            if hasText, let last = text.lines.last, !last.isRightToLeft,
               last.width + style.timeInsideGap + t.width <= maxText {
                ownLine = false
                textBoxWidth = max(text.width, last.width + style.timeInsideGap + t.width)
            } else if hasText {
                textBoxWidth = max(text.width, t.width)
            }
            inside = (t, w, ownLine && hasText)
        }
        if hasText {
            contentWidth = max(contentWidth, textBoxWidth + padding.horizontal)
            height += imageSize == nil ? padding.vertical + text.height
                : style.imageTextSpacing - style.imageInset.bottom + text.height + padding.bottom
            if let inside, inside.ownLine { height += inside.text.height }
        } else if imageSize == nil {
            height = padding.vertical
            contentWidth = padding.horizontal
        }
        let bubbleSize = Size(width: min(max(contentWidth, style.minimumBubbleSize.width), max(maxBubble, style.minimumBubbleSize.width)),
                              height: max(height, style.minimumBubbleSize.height))

        // Labels above the bubble.
        var labels: [LabelLayout] = []
        var top = 0.0
        if style.showsTimeAboveGroup, startsGroup, let time {
            let (t, w) = try measure(time, style: style.timeLabelText, maxWidth: rowWidth - 2 * style.sideMargin)
            labels.append(LabelLayout(kind: .time, string: time,
                                      frame: Rect(x: (rowWidth - t.width) / 2, y: 0, width: t.width, height: t.height),
                                      text: t, wrapWidth: w))
            top = t.height + style.timeLabelSpacing
        }

        let x = message.direction == .incoming ? style.sideMargin : rowWidth - style.sideMargin - bubbleSize.width
        let bubble = Rect(origin: Point(x: x, y: top), size: bubbleSize)
        var imageFrame: Rect?
        if let imageSize {
            imageFrame = Rect(x: bubble.minX + style.imageInset.left + (bubbleSize.width - style.imageInset.horizontal - imageSize.width) / 2,
                              y: bubble.minY + style.imageInset.top, width: imageSize.width, height: imageSize.height)
        }
        var textFrame: Rect?
        if hasText {
            let textTop = imageFrame.map { $0.maxY + style.imageTextSpacing } ?? bubble.minY + padding.top
            textFrame = Rect(x: bubble.minX + padding.left, y: textTop,
                             width: max(0, bubbleSize.width - padding.horizontal), height: text.height)
            if let inside, inside.ownLine { textFrame!.size.height += inside.text.height }
        }
        if let inside, let time {
            let t = inside.text
            let frame: Rect
            if let textFrame, let last = text.lines.last {
                let bottom = inside.ownLine ? textFrame.minY + text.height + t.height : textFrame.minY + last.top + last.height
                frame = Rect(x: textFrame.minX + textBoxWidth - t.width, y: bottom - t.height, width: t.width, height: t.height)
            } else {
                // Photo only: over the photo's bottom-right corner.
                let box = imageFrame ?? bubble
                frame = Rect(x: box.maxX - t.width - 6, y: box.maxY - t.height - 4, width: t.width, height: t.height)
            }
            labels.append(LabelLayout(kind: .timeInside, string: time, frame: frame, text: t, wrapWidth: inside.wrap))
        }
        return BubbleLayout(direction: message.direction, bubble: bubble, textFrame: textFrame, text: text,
                            textWrapWidth: wrapWidth, imageFrame: imageFrame, imageIsPlaceholder: placeholder, hasTail: hasTail, labels: labels)
    }

    /// Text laid out in `maxWidth`, and the width it was wrapped in; balanced: the narrowest
    /// width with the same line count.
    public func measure(_ string: String, style textStyle: TextStyle, maxWidth: Double,
                        balanced: Bool = false, maxLines: Int? = nil) throws(LayoutError) -> (TextLayout, Double) {
        do {
            let prepared = try engine.prepare(string, style: textStyle)
            let full = try engine.layout(prepared, maxWidth: maxWidth, maxLines: maxLines)
            guard balanced, full.lines.count > 1 else { return (full, maxWidth) }
            // Line count only grows as the width shrinks: binary search the narrowest width
            // that keeps it, to a quarter point.
            var lo = full.width / Double(full.lines.count), hi = full.width
            var best = (full, maxWidth)
            while hi - lo > 0.25 {
                let mid = (lo + hi) / 2
                let candidate = try engine.layout(prepared, maxWidth: mid, maxLines: maxLines)
                if candidate.lines.count == full.lines.count {
                    hi = min(mid, candidate.width); best = (candidate, mid)
                } else {
                    lo = mid
                }
            }
            return best
        } catch {
            throw .text(error)
        }
    }

    static func validate(rowWidth: Double, style: LayoutStyle) throws(LayoutError) {
        guard rowWidth.isFinite, rowWidth > 0 else { throw .invalidWidth(rowWidth) }
        guard rowWidth >= style.minimumRowWidth - 1e-9 else {
            throw .rowTooNarrow(width: rowWidth, minimum: style.minimumRowWidth)
        }
    }
}
