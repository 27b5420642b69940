/// Where everything of one message goes, relative to the top-left of its row. Points.
public struct BubbleLayout: Hashable, Sendable {
    /// The side the bubble sits on: incoming on the left, outgoing on the right (mirrored in a
    /// right-to-left layout).
    public var direction: Direction
    /// The bubble art's rectangle (an emoji-only message: the emoji's box, drawn without art).
    public var bubble: Rect
    /// The text box inside the bubble (nil without text). Lines are relative to its origin.
    public var textFrame: Rect?
    /// The text's lines, relative to `textFrame`'s origin (empty without text).
    public var text: TextLayout
    /// The width the text was wrapped in: a renderer that lays the text out again (Pango) must
    /// use exactly this width to get the same lines.
    public var textWrapWidth: Double
    /// The photos inside the bubble, in message order (several: a grid of square cells).
    public var imageFrames: [Rect]
    /// True when the first photo's own size was unusable and a placeholder size was laid out.
    public var imageIsPlaceholder: Bool
    /// Whether the bubble draws its tail (only the last bubble of a group does).
    public var hasTail: Bool
    /// Labels outside the bubble (time, sender name, status) and the time inside it.
    public var labels: [LabelLayout]
    /// No bubble is drawn: 1–3 emoji and nothing else (drawn large, `LayoutStyle.emojiText`), or
    /// a sticker alone (`Message.isSticker`).
    public var emojiOnly: Bool = false
    /// The sender's avatar (only beside the last bubble of an incoming group).
    public var avatarFrame: Rect?
    /// A failed message's red badge, beside the bubble.
    public var failedBadge: Rect?
    /// Reaction badge on the bubble's top corner (the outer one: right for incoming).
    public var reactions: BadgeLayout? {
        get { reactionBadges.first }
        set { reactionBadges = newValue.map { [$0] } ?? [] }
    }
    /// The quoted snippet of the message this one replies to, above the bubble.
    public var reply: BadgeLayout? {
        get { replyBadges.first }
        set { replyBadges = newValue.map { [$0] } ?? [] }
    }
    // Kept out of line (none or one each: 8 bytes instead of ~150 inline) to keep rows small.
    private var reactionBadges: [BadgeLayout] = []
    private var replyBadges: [BadgeLayout] = []
    /// Links in the text, with the areas they cover (one per line they span).
    public var links: [LinkLayout] = []
    /// Typing indicator: its dots (the bubble has no text).
    public var typingDots: [Rect] = []
    /// Laid out for a right-to-left interface: tails and art on the other side.
    public var mirrored: Bool = false

    init(
        direction: Direction, bubble: Rect, textFrame: Rect?, text: TextLayout, textWrapWidth: Double,
        imageFrames: [Rect], imageIsPlaceholder: Bool, hasTail: Bool, labels: [LabelLayout], emojiOnly: Bool = false,
        avatarFrame: Rect? = nil, failedBadge: Rect? = nil, reactions: BadgeLayout? = nil, reply: BadgeLayout? = nil,
        links: [LinkLayout] = [], typingDots: [Rect] = [], mirrored: Bool = false
    ) {
        self.direction = direction; self.bubble = bubble; self.textFrame = textFrame; self.text = text
        self.textWrapWidth = textWrapWidth; self.imageFrames = imageFrames; self.imageIsPlaceholder = imageIsPlaceholder
        self.hasTail = hasTail; self.labels = labels; self.emojiOnly = emojiOnly; self.avatarFrame = avatarFrame
        self.failedBadge = failedBadge; self.links = links; self.typingDots = typingDots; self.mirrored = mirrored
        self.reactions = reactions; self.reply = reply
    }

    /// The first photo.
    public var imageFrame: Rect? { imageFrames.first }

    /// Bottom of everything in the row.
    public var maxY: Double {
        var y = bubble.maxY
        for l in labels { y = max(y, l.frame.maxY) }
        if let r = avatarFrame { y = max(y, r.maxY) }
        if let r = failedBadge { y = max(y, r.maxY) }
        if let r = reactions?.frame { y = max(y, r.maxY) }
        if let r = reply?.frame { y = max(y, r.maxY) }
        return y
    }

    /// The tail side: the direction's, swapped in a mirrored layout.
    public var tailSide: Direction { mirrored ? (direction == .incoming ? .outgoing : .incoming) : direction }
}

/// A short text placed by the layout (time, day separator, system line, sender, status).
public struct LabelLayout: Hashable, Sendable {
    /// What a label is, which decides its style and place.
    public enum Kind: String, Hashable, Sendable {
        /// The time above a group of bubbles.
        case time
        /// The time inside the bubble after the last line (WhatsApp).
        case timeInside
        /// The time beside the bubble (Telegram's, Messenger's).
        case timeBeside
        /// A day's line between messages of different days.
        case daySeparator
        /// A system line: "Ann joined", "Messages are end-to-end encrypted".
        case system
        /// The sender's name above an incoming group's first bubble.
        case sender
        /// "Delivered", "Read 09:41" under the last outgoing bubble.
        case status
        /// "Not Delivered" under a failed bubble.
        case failedStatus
        /// The text of a reaction pill or a reply snippet.
        case badge
        /// "Edited" under a bubble whose time is not beside or inside it.
        case edited
    }
    /// What the label is.
    public var kind: Kind
    /// The text shown.
    public var string: String
    /// Where the text box goes, relative to the row.
    public var frame: Rect
    /// The text's lines, relative to `frame`'s origin.
    public var text: TextLayout
    /// The width the text was wrapped in (a renderer laying it out again uses exactly this).
    public var wrapWidth: Double
    /// The most lines shown (an ellipsis ends the last), nil for no limit.
    public var maxLines: Int?

    /// No text, nowhere: what a row's content holds once moved out.
    static let empty = LabelLayout(kind: .system, string: "", frame: .zero, text: .empty, wrapWidth: 0, maxLines: nil)
}

/// A rounded box with a label: reaction pills and reply snippets.
public struct BadgeLayout: Hashable, Sendable {
    /// The pill's or the snippet's rectangle, relative to the row.
    public var frame: Rect
    /// Its text, placed inside `frame`.
    public var label: LabelLayout
}

/// A link's target and the areas of its text, in row coordinates.
public struct LinkLayout: Hashable, Sendable {
    /// The link's target (a URL, `tel:` or `mailto:`).
    public var url: String
    /// The areas of the link's text, one a line it spans.
    public var rects: [Rect]
}

/// What a bubble's surroundings need from the conversation: who wrote it, whether avatars
/// take a column and this bubble shows one, the delivery status label, the reply's author.
public struct BubbleContext: Hashable, Sendable {
    /// Shown above the bubble (first incoming bubble of a group in a group chat).
    public var senderName: String?
    /// Incoming bubbles leave room for avatars.
    public var avatarColumn: Bool
    /// This bubble has the avatar beside it.
    public var showsAvatar: Bool
    /// "Delivered", "Read 09:41", "Failed" under the bubble.
    public var status: String?
    /// The message failed to send: a red badge beside the bubble and a "Not Delivered" status.
    public var failed: Bool
    /// Name of the replied-to message's author, shown in the snippet.
    public var replyAuthor: String?
    /// "Edited" under the bubble (styles whose time is not in or beside the bubble: there it
    /// reads "edited 12:30").
    public var edited = false
    /// A context; every parameter is the property of the same name.
    public init(
        senderName: String? = nil, avatarColumn: Bool = false, showsAvatar: Bool = false,
        status: String? = nil, failed: Bool = false, replyAuthor: String? = nil
    ) {
        self.senderName = senderName; self.avatarColumn = avatarColumn; self.showsAvatar = showsAvatar
        self.status = status; self.failed = failed; self.replyAuthor = replyAuthor
    }
}

/// What of a message's bubble does not depend on the row width (`BubbleMeasurer.memo(for:)`):
/// kept by a `ConversationLayout` for each message, so a re-layout at another width does only
/// line filling and geometry. `storage` is the engine's prepared text (immutable once made).
struct BubbleMemo: @unchecked Sendable {
    var emojiOnly: Bool
    /// The message text's `PreparedText.storage` (`hasPrepared`: the text was prepared).
    var storage: AnyObject?
    var hasPrepared = false
    /// Links found in the text (only when the style detects them).
    var links: [DetectedLink] = []
    /// Advances of the byte ranges link areas measured (they do not depend on the width; a
    /// line that starts at the same place at another width needs the same ones).
    var rangeWidths: [(range: Range<Int>, width: Double)] = []
    /// Prepared texts of the labels around the bubble, by `Label` slot (empty: none measured).
    var labels: [PreparedHandle?] = []
    enum Label: Int, CaseIterable { case sender, reply, reactions, status }
    init(emojiOnly: Bool) { self.emojiOnly = emojiOnly }
}

/// A text's `PreparedText.storage` kept to measure the same string in the same style again.
struct PreparedHandle: @unchecked Sendable {
    var storage: AnyObject?
}

/// Measures one message into a `BubbleLayout`: text inside padding, photo scaled to fit,
/// width limited by the row, placed on its side.
public struct BubbleMeasurer {
    /// The numbers the bubble is measured with.
    public let style: LayoutStyle
    /// The engine that measures and breaks the text.
    public let engine: any TextEngine
    /// `engine`'s fast paths, when it is one of the toolkit's own.
    package let fastPath: (any FastPathTextEngine)?

    /// A measurer of `style`'s bubbles whose text `engine` measures.
    public init(style: LayoutStyle, engine: any TextEngine) {
        self.style = style; self.engine = engine; self.fastPath = engine as? any FastPathTextEngine
    }

    /// Text of a reaction badge: "❤️ 2 👍".
    public static func reactionString(_ reactions: [Reaction]) -> String {
        reactions.map { $0.count > 1 ? "\($0.emoji) \($0.count)" : $0.emoji }.joined(separator: " ")
    }

    /// Text of a reply snippet: "Author: text" (or "Photo" without text).
    public static func replyString(_ reply: ReplyReference, author: String?) -> String {
        let text = reply.text.flatMap { $0.isEmpty ? nil : $0 } ?? "Message"
        let oneLine = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return author.map { "\($0): \(oneLine)" } ?? oneLine
    }

    /// Lays out `message` in a row `rowWidth` wide. `time` is the message's time as shown: above
    /// the bubble when the style shows times above groups and `startsGroup`, inside the bubble
    /// when the style puts it there, beside it with `timeBeside`.
    public func layout(
        _ message: Message, rowWidth: Double, hasTail: Bool = true,
        time: String? = nil, startsGroup: Bool = true,
        context: BubbleContext = BubbleContext()
    ) throws(LayoutError) -> BubbleLayout {
        var memo: BubbleMemo?
        return try layout(
            message, rowWidth: rowWidth, hasTail: hasTail, time: time, startsGroup: startsGroup,
            context: context, memo: &memo)
    }

    /// What of `message`'s bubble does not depend on the row width: whether it is emoji-only,
    /// its text prepared by the engine, the links in it. Not `keeping` (a compact layout's
    /// formula, which keeps neither): no links, the text prepared once (`prepareOnce`).
    func memo(for message: Message, keeping: Bool = true) throws(LayoutError) -> BubbleMemo {
        let emojiOnly =
            message.images.isEmpty && message.reply == nil
            && message.attachment == nil
            && message.text.map { EmojiText.isEmojiOnly($0, maximum: style.emojiOnlyMaximum) } == true
        var memo = BubbleMemo(emojiOnly: emojiOnly)
        if let string = message.shownText, !string.isEmpty {
            // Kept only when the engine's prepared texts are small (a Pango layout is not).
            if let fastPath, fastPath.preparedTextsAreCompact {
                let textStyle = emojiOnly ? style.emojiText : style.text, spans = emojiOnly ? [] : message.shownSpans
                do {
                    let prepared =
                        keeping
                        ? try engine.prepare(string, style: textStyle, spans: spans)
                        : try fastPath.prepareOnce(string, style: textStyle, spans: spans)
                    memo.storage = prepared.storage
                } catch { throw .text(error) }
                memo.hasPrepared = true
            }
            // A placeholder names files ("VID-20211014-WA0003.mp4"): nothing in it is a link.
            if keeping, style.detectsLinks, !emojiOnly, message.attachment == nil { memo.links = LinkDetector.links(in: string) }
            if keeping, style.detectsLinks, !emojiOnly, message.spans.contains(where: { $0.style == .link }) {
                memo.links = Self.links(message.shownSpans, in: string, detected: memo.links)
            }
        }
        return memo
    }

    /// The link spans of a text (their targets, or the text itself), then the links found in it
    /// that no span covers, by start.
    static func links(_ spans: [TextSpan], in string: String, detected: [DetectedLink]) -> [DetectedLink] {
        let bytes = Array(string.utf8)
        var out: [DetectedLink] = []
        for s in spans where s.style == .link && !s.range.isEmpty && s.range.upperBound <= bytes.count {
            let url = s.url ?? String(decoding: bytes[s.range], as: UTF8.self)
            out.append(DetectedLink(range: s.range, url: url))
        }
        for d in detected where !out.contains(where: { $0.range.overlaps(d.range) }) { out.append(d) }
        return out.sorted { $0.range.lowerBound < $1.range.lowerBound }
    }

    /// `layout(_:rowWidth:…)` with what does not depend on the width taken from `memo` (made
    /// when nil): a re-layout at another width prepares nothing and detects no links again.
    func layout(
        _ message: Message, rowWidth: Double, hasTail: Bool = true,
        time: String? = nil, startsGroup: Bool = true,
        context: BubbleContext = BubbleContext(), memo: inout BubbleMemo?
    ) throws(LayoutError) -> BubbleLayout {
        try Self.validate(rowWidth: rowWidth, style: style)
        if memo == nil { memo = try self.memo(for: message) }
        let facts = memo!
        let incoming = message.direction == .incoming
        let indent = incoming && context.avatarColumn ? style.avatarSize + style.besideGap : 0
        let maxBubble = maxBubbleWidth(rowWidth: rowWidth, indent: indent)
        // No bubble is drawn around an emoji-only message or a sticker ("bare").
        let sticker = message.isSticker
        let emojiOnly = facts.emojiOnly
        let bare = emojiOnly || sticker
        let padding = bare ? .zero : style.padding(for: message.direction)
        let maxText = max(1, maxBubble - padding.horizontal)

        var text = TextLayout.empty
        var wrapWidth = maxText
        var preparedText: PreparedText?
        if let string = message.shownText, !string.isEmpty {
            let textStyle = emojiOnly ? style.emojiText : style.text
            let prepared: PreparedText
            let spans = emojiOnly ? [] : message.shownSpans
            if facts.hasPrepared {
                prepared = PreparedText(text: string, style: textStyle, spans: spans, storage: facts.storage)
            } else {
                do { prepared = try engine.prepare(string, style: textStyle, spans: spans) } catch { throw .text(error) }
            }
            preparedText = prepared
            (text, wrapWidth) = try measure(prepared, maxWidth: maxText, balanced: style.widthMode == .balanced && !emojiOnly)
        }

        // Photos: one fits the widest the bubble allows and the maximum height, never enlarged;
        // several make a grid of square cells.
        let (imageSize, cells, placeholder) = photos(of: message, sticker: sticker, maxBubble: maxBubble)

        // Bubble size: the wider of photo and text, plus insets; never below the art's minimum.
        var contentWidth = 0.0
        if let imageSize { contentWidth = imageSize.width + style.imageInset.horizontal }
        let hasText = !text.lines.isEmpty
        /// Width of the text box: the widest line, or wider to hold a time inside.
        var textBoxWidth = text.width
        // A time inside the bubble: after the last line when it fits there, else below it.
        var inside: (text: TextLayout, wrap: Double, ownLine: Bool)?
        if style.timeInsideBubble, let time, !bare {
            let (t, w) = try measure(time, style: style.timeLabelText, maxWidth: max(1, maxText))
            var ownLine = true
            if hasText, let last = text.lines.last,
                timeFitsAfter(lastLine: last.width, rightToLeft: last.isRightToLeft, time: t.width, room: maxText)
            {
                ownLine = false
                textBoxWidth = max(text.width, last.width + style.timeInsideGap + t.width)
            } else if hasText {
                textBoxWidth = max(text.width, t.width)
            }
            inside = (t, w, ownLine && hasText)
        }
        if hasText {
            contentWidth = max(contentWidth, textBoxWidth + padding.horizontal)
        } else if imageSize == nil {
            contentWidth = padding.horizontal
        }
        let height = contentHeight(
            photo: imageSize?.height, text: hasText ? text.height : nil,
            ownLineTime: inside.flatMap { $0.ownLine ? $0.text.height : nil }, padding: padding)
        let bubbleSize =
            sticker
            ? imageSize!
            : emojiOnly
                ? Size(width: text.width, height: text.height)
                : Size(
                    width: min(max(contentWidth, style.minimumBubbleSize.width), max(maxBubble, style.minimumBubbleSize.width)),
                    height: max(height, style.minimumBubbleSize.height))
        let x = incoming ? style.sideMargin + indent : rowWidth - style.sideMargin - bubbleSize.width

        // Above the bubble, top to bottom: time, sender name, reply snippet, reaction rise.
        var (labels, top, reply, reactions) = try labelsAbove(
            message, time: startsGroup ? time : nil, bubbleX: x, bubbleWidth: bubbleSize.width, maxBubble: maxBubble, padding: padding,
            bare: bare, rowWidth: rowWidth, senderName: startsGroup ? context.senderName : nil, replyAuthor: context.replyAuthor,
            memo: &memo!)

        let bubble = Rect(origin: Point(x: x, y: top), size: bubbleSize)
        let (imageFrames, textFrame) = contentFrames(
            bubble, imageSize: imageSize, cells: cells, sticker: sticker, textHeight: hasText ? text.height : nil, padding: padding,
            ownLineTime: inside.flatMap { $0.ownLine ? $0.text.height : nil })
        if let inside, let time {
            labels.append(
                timeInside(
                    time, inside.text, wrap: inside.wrap, ownLine: inside.ownLine, text: text, textFrame: textFrame,
                    textBoxWidth: textBoxWidth, bubble: bubble, photo: imageFrames.first.map { _ in imageSize! }, photoX: imageFrames.first?.minX))
        }

        // Below the bubble: an emoji-only message's time (no bubble to hold it), the status.
        labels += try labelsBelow(
            bubble, time: bare && style.timeInsideBubble ? time : nil, incoming: incoming, rowWidth: rowWidth,
            context: context, memo: &memo!)

        // Beside the bubble, on its open side: the failed badge, then the time; the avatar.
        let (failedBadge, besideTime, avatarFrame) = try besides(bubble, time: time, incoming: incoming, rowWidth: rowWidth, context: context)
        if let besideTime { labels.append(besideTime) }

        var links: [LinkLayout] = []
        if style.detectsLinks, !emojiOnly, let string = message.shownText, let textFrame, hasText, !facts.links.isEmpty {
            links = try linkAreas(
                string, found: facts.links, prepared: preparedText, text: text, boxWidth: textFrame.width, origin: textFrame.origin,
                rangeWidths: &memo!.rangeWidths)
        }

        var layout = BubbleLayout(
            direction: message.direction, bubble: bubble, textFrame: textFrame, text: text,
            textWrapWidth: wrapWidth, imageFrames: imageFrames, imageIsPlaceholder: placeholder,
            hasTail: hasTail && !bare, labels: labels, emojiOnly: bare, avatarFrame: avatarFrame,
            failedBadge: failedBadge, reactions: reactions, reply: reply, links: links)
        if style.mirrored { layout = layout.mirroredLayout(rowWidth: rowWidth) }
        return layout
    }

    /// The labels over a bubble, top to bottom — the group's time (`time`), the sender's name,
    /// the reply snippet — the reactions' badge rising into the bubble's top, and where the
    /// bubble's top is.
    private func labelsAbove(
        _ message: Message, time: String?, bubbleX: Double, bubbleWidth: Double, maxBubble: Double, padding: EdgeInsets, bare: Bool,
        rowWidth: Double, senderName: String?, replyAuthor: String?, memo: inout BubbleMemo
    ) throws(LayoutError) -> ([LabelLayout], Double, BadgeLayout?, BadgeLayout?) {
        let incoming = message.direction == .incoming
        var labels: [LabelLayout] = []
        var top = 0.0
        if style.showsTimeAboveGroup, let time {
            let (t, w) = try measure(time, style: style.timeLabelText, maxWidth: rowWidth - 2 * style.sideMargin)
            labels.append(
                LabelLayout(
                    kind: .time, string: time,
                    frame: Rect(x: (rowWidth - t.width) / 2, y: 0, width: t.width, height: t.height),
                    text: t, wrapWidth: w))
            top = t.height + style.timeLabelSpacing
        }
        if let name = senderName, incoming {
            let (t, w) = try measureLabel(name, .sender, style: style.senderNameText, maxWidth: max(1, maxBubble), maxLines: 1, memo: &memo)
            let nx = bubbleX + (bare ? 0 : min(style.senderNameInset, padding.left))
            labels.append(
                LabelLayout(
                    kind: .sender, string: name, frame: Rect(x: nx, y: top, width: t.width, height: t.height),
                    text: t, wrapWidth: w, maxLines: 1))
            top += t.height + style.senderNameSpacing
        }
        var reply: BadgeLayout?
        if let ref = message.reply {
            let string = Self.replyString(ref, author: replyAuthor)
            let p = style.replyPadding
            let (t, w) = try measureLabel(
                string, .reply, style: style.replyText, maxWidth: max(1, maxBubble - p.horizontal),
                maxLines: style.replyMaxLines, memo: &memo)
            let size = Size(width: t.width + p.horizontal, height: t.height + p.vertical)
            let rx = incoming ? bubbleX : bubbleX + bubbleWidth - size.width
            let frame = Rect(x: max(0, rx), y: top, width: size.width, height: size.height)
            reply = BadgeLayout(
                frame: frame,
                label: LabelLayout(
                    kind: .badge, string: string,
                    frame: Rect(x: frame.minX + p.left, y: frame.minY + p.top, width: t.width, height: t.height),
                    text: t, wrapWidth: w, maxLines: style.replyMaxLines))
            top += size.height + style.replySpacing
        }
        var reactions: BadgeLayout?
        if !message.reactions.isEmpty {
            let string = Self.reactionString(message.reactions)
            let p = style.reactionPadding
            let (t, w) = try measureLabel(string, .reactions, style: style.reactionText, maxWidth: max(1, rowWidth / 2), maxLines: 1, memo: &memo)
            let size = Size(width: t.width + p.horizontal, height: t.height + p.vertical)
            top += (size.height * style.reactionRise).rounded(.up)
            // The outer top corner: right of an incoming bubble, left of an outgoing one.
            var rx = incoming ? bubbleX + bubbleWidth - size.width * 0.7 : bubbleX - size.width * 0.3
            rx = min(max(rx, 1), rowWidth - size.width - 1)
            let frame = Rect(x: rx, y: top - (size.height * style.reactionRise).rounded(.up), width: size.width, height: size.height)
            reactions = BadgeLayout(
                frame: frame,
                label: LabelLayout(
                    kind: .badge, string: string,
                    frame: Rect(x: frame.minX + p.left, y: frame.minY + p.top, width: t.width, height: t.height),
                    text: t, wrapWidth: w, maxLines: 1))
        }
        return (labels, top, reply, reactions)
    }

    /// Where the photos and the text box sit in `bubble` (the text box taller by a time on a
    /// line of its own).
    private func contentFrames(
        _ bubble: Rect, imageSize: Size?, cells: [Rect], sticker: Bool, textHeight: Double?, padding: EdgeInsets,
        ownLineTime: Double?
    ) -> ([Rect], Rect?) {
        var imageFrames: [Rect] = []
        if sticker {
            imageFrames = cells.map { $0.offsetBy(dx: bubble.minX, dy: bubble.minY) }
        } else if let imageSize {
            let origin = Point(
                x: bubble.minX + style.imageInset.left + (bubble.width - style.imageInset.horizontal - imageSize.width) / 2,
                y: bubble.minY + style.imageInset.top)
            imageFrames = cells.map { $0.offsetBy(dx: origin.x, dy: origin.y) }
        }
        let imageBottom = imageSize.map { bubble.minY + style.imageInset.top + $0.height }
        var textFrame: Rect?
        if let textHeight {
            let textTop = imageBottom.map { $0 + style.imageTextSpacing } ?? bubble.minY + padding.top
            textFrame = Rect(
                x: bubble.minX + padding.left, y: textTop,
                width: max(0, bubble.width - padding.horizontal), height: textHeight)
            if let ownLineTime { textFrame!.size.height += ownLineTime }
        }
        return (imageFrames, textFrame)
    }

    /// A time inside the bubble: after the last line, on a line of its own under it, or over
    /// the photo's bottom-right corner when there is no text.
    private func timeInside(
        _ time: String, _ timeText: TextLayout, wrap: Double, ownLine: Bool, text: TextLayout, textFrame: Rect?,
        textBoxWidth: Double, bubble: Rect, photo: Size?, photoX: Double?
    ) -> LabelLayout {
        let t = timeText
        let frame: Rect
        if let textFrame, let last = text.lines.last {
            let bottom = ownLine ? textFrame.minY + text.height + t.height : textFrame.minY + last.top + last.height
            frame = Rect(x: textFrame.minX + textBoxWidth - t.width, y: bottom - t.height, width: t.width, height: t.height)
        } else {
            // Photo only: over the photo's bottom-right corner.
            var box = bubble
            if let photo, let photoX { box = Rect(x: photoX, y: bubble.minY + style.imageInset.top, width: photo.width, height: photo.height) }
            frame = Rect(x: box.maxX - t.width - 6, y: box.maxY - t.height - 4, width: t.width, height: t.height)
        }
        return LabelLayout(kind: .timeInside, string: time, frame: frame, text: t, wrapWidth: wrap)
    }

    /// A message's photos: one fits the widest the bubble allows and the maximum height, never
    /// enlarged; several make a grid of square cells; a sticker keeps its own size.
    private func photos(of message: Message, sticker: Bool, maxBubble: Double) -> (Size?, [Rect], Bool) {
        let maxImageWidth = max(1, maxBubble - style.imageInset.horizontal)
        if sticker, let image = message.image {
            let (size, placeholder) = stickerSize(image, maxWidth: maxBubble)
            return (size, [Rect(origin: .zero, size: size)], placeholder)
        } else if message.images.count == 1, let image = message.image {
            let (size, placeholder) = photoSize(image, maxWidth: maxImageWidth)
            return (size, [Rect(origin: .zero, size: size)], placeholder)
        } else if message.images.count > 1 {
            let (size, cells) = gridLayout(count: message.images.count, maxWidth: maxImageWidth)
            return (size, cells, !(message.images[0].width > 0 && message.images[0].height > 0))
        }
        return (nil, [], false)
    }

    /// The labels under a bubble, top to bottom: a bare message's time (`time`), "Edited", the status.
    private func labelsBelow(
        _ bubble: Rect, time: String?, incoming: Bool, rowWidth: Double, context: BubbleContext,
        memo: inout BubbleMemo
    ) throws(LayoutError) -> [LabelLayout] {
        var labels: [LabelLayout] = []
        var bottom = bubble.maxY
        if let time {
            let (t, w) = try measure(time, style: style.timeLabelText, maxWidth: rowWidth)
            let tx = incoming ? bubble.minX : bubble.maxX - t.width
            labels.append(
                LabelLayout(
                    kind: .time, string: time, frame: Rect(x: tx, y: bottom + style.statusSpacing, width: t.width, height: t.height),
                    text: t, wrapWidth: w))
            bottom += style.statusSpacing + t.height
        }
        if context.edited {
            let label = "Edited"
            let (t, w) = try measure(label, style: style.statusText, maxWidth: rowWidth - 2 * style.sideMargin)
            let ex = incoming ? bubble.minX : bubble.maxX - t.width
            labels.append(
                LabelLayout(
                    kind: .edited, string: label, frame: Rect(x: ex, y: bottom + style.statusSpacing, width: t.width, height: t.height),
                    text: t, wrapWidth: w, maxLines: 1))
            bottom += style.statusSpacing + t.height
        }
        if let status = context.status {
            let (t, w) = try measureLabel(
                status, .status, style: style.statusText, maxWidth: rowWidth - 2 * style.sideMargin, maxLines: 1,
                memo: &memo)
            let sx = incoming ? bubble.minX : bubble.maxX - t.width
            labels.append(
                LabelLayout(
                    kind: context.failed ? .failedStatus : .status, string: status,
                    frame: Rect(x: sx, y: bottom + style.statusSpacing, width: t.width, height: t.height),
                    text: t, wrapWidth: w, maxLines: 1))
        }
        return labels
    }

    /// Beside a bubble, on its open side: the failed badge, then the time; the avatar of an
    /// incoming message in a column of its own.
    private func besides(_ bubble: Rect, time: String?, incoming: Bool, rowWidth: Double, context: BubbleContext)
        throws(LayoutError) -> (failed: Rect?, time: LabelLayout?, avatar: Rect?)
    {
        var label: LabelLayout?
        var besideEdge = incoming ? bubble.maxX : bubble.minX
        var failedBadge: Rect?
        if context.failed {
            let s = style.failedBadgeSize
            let bx = incoming ? besideEdge + style.besideGap : besideEdge - style.besideGap - s
            failedBadge = Rect(x: bx, y: bubble.midY - s / 2, width: s, height: s)
            besideEdge = incoming ? bx + s : bx
        }
        if style.timeBeside, let time {
            let (t, w) = try measure(time, style: style.timeLabelText, maxWidth: rowWidth)
            let tx = incoming ? besideEdge + style.besideGap : besideEdge - style.besideGap - t.width
            label = LabelLayout(
                kind: .timeBeside, string: time, frame: Rect(x: tx, y: bubble.maxY - t.height, width: t.width, height: t.height),
                text: t, wrapWidth: w)
        }
        var avatarFrame: Rect?
        if incoming, context.avatarColumn, context.showsAvatar {
            let s = style.avatarSize
            avatarFrame = Rect(x: style.sideMargin, y: max(0, bubble.maxY - s), width: s, height: s)
        }
        return (failedBadge, label, avatarFrame)
    }

    /// A bubble's height from what it holds, before the style's minimum: a photo (its height),
    /// text (its height) with a time inside on a line of its own (that line's height), padding.
    func contentHeight(photo: Double?, text: Double?, ownLineTime: Double?, padding: EdgeInsets) -> Double {
        var height = 0.0
        if let photo { height = style.imageInset.top + photo + style.imageInset.bottom }
        if let text {
            height +=
                photo == nil
                ? padding.vertical + text
                : style.imageTextSpacing - style.imageInset.bottom + text + padding.bottom
            if let ownLineTime { height += ownLineTime }
        } else if photo == nil {
            height = padding.vertical
        }
        return height
    }

    /// A time inside the bubble goes after the last line (`lastLine` wide) when it fits in `room`
    /// there; never after a right-to-left line.
    func timeFitsAfter(lastLine: Double, rightToLeft: Bool, time: Double, room: Double) -> Bool {
        !rightToLeft && lastLine + style.timeInsideGap + time <= room
    }

    /// The widest a bubble may be in a row `rowWidth` wide whose bubbles start `indent` in (an
    /// avatar column): the style's share and cap, within the margins.
    func maxBubbleWidth(rowWidth: Double, indent: Double) -> Double {
        style.maxBubbleWidth(rowWidth: rowWidth, indent: indent)
    }

    /// A single photo's size: its own, scaled down to fit `maxWidth` and the style's maximum
    /// height (never enlarged); a placeholder's when its own size is unusable.
    func photoSize(_ image: ImageAttachment, maxWidth: Double) -> (size: Size, placeholder: Bool) {
        var natural = Size(width: image.width, height: image.height)
        var placeholder = false
        if !(natural.width.isFinite && natural.height.isFinite && natural.width > 0 && natural.height > 0) {
            natural = style.placeholderImageSize
            placeholder = true
        }
        let factor = min(1, maxWidth / natural.width, style.maxImageHeight / natural.height)
        return (Size(width: natural.width * factor, height: natural.height * factor), placeholder)
    }

    /// A sticker's size: its picture fitted into the style's sticker box (enlarged or reduced,
    /// as the apps show every sticker at one size), never wider than `maxWidth`.
    func stickerSize(_ image: ImageAttachment, maxWidth: Double) -> (size: Size, placeholder: Bool) {
        let box = min(style.stickerSize, maxWidth)
        guard image.width.isFinite, image.height.isFinite, image.width > 0, image.height > 0 else {
            return (Size(width: box, height: box), true)
        }
        let factor = min(box / image.width, box / image.height)
        return (Size(width: image.width * factor, height: image.height * factor), false)
    }

    /// How many photos each row of a grid of `count` holds, as messaging apps lay them out
    /// (with two columns): pairs; three as one wide over two; an odd count from five on ends
    /// with a row of three — never an empty cell.
    ///
    ///     2: [2]   3: [1, 2]   4: [2, 2]   5: [2, 3]   7: [2, 2, 3]
    public static func gridRows(_ count: Int) -> [Int] {
        if count <= 2 { return [max(count, 0)] }
        if count == 3 { return [1, 2] }
        var rows = Array(repeating: 2, count: count / 2)
        if count % 2 == 1 { rows[rows.count - 1] = 3 }
        return rows
    }

    /// A grid of `count` photos: its size and each photo's cell. With two columns (the default),
    /// rows of `gridRows`: a pair's cells are square, a wide cell is as tall as a pair's, a row of
    /// three has three square cells across the same width. Other column counts: a uniform grid.
    public func gridLayout(count: Int, maxWidth: Double) -> (size: Size, cells: [Rect]) {
        let (columns, rows, cell) = gridCell(count: count, maxWidth: maxWidth)
        let gap = style.gridSpacing
        let width = Double(columns) * cell + Double(columns - 1) * gap
        var cells: [Rect] = []
        guard columns == 2 else {
            for k in 0..<count {
                cells.append(Rect(x: Double(k % columns) * (cell + gap), y: Double(k / columns) * (cell + gap), width: cell, height: cell))
            }
            return (Size(width: width, height: Double(rows) * cell + Double(rows - 1) * gap), cells)
        }
        var y = 0.0
        for n in Self.gridRows(count) {
            let w = (width - Double(n - 1) * gap) / Double(n)
            let h = n == 1 ? cell : w
            for k in 0..<n { cells.append(Rect(x: Double(k) * (w + gap), y: y, width: w, height: h)) }
            y += h + gap
        }
        return (Size(width: width, height: y - gap), cells)
    }

    /// A grid of `count` photos: its columns and rows, and the side of a pair's square cells.
    func gridCell(count: Int, maxWidth: Double) -> (columns: Int, rows: Int, cell: Double) {
        let columns = max(1, min(style.gridColumns, count))
        let rows = columns == 2 ? Self.gridRows(count).count : (count + columns - 1) / columns
        let gap = style.gridSpacing
        // The grid's height is a·cell + b (a row of three is (2·cell − gap)/3 tall): at most
        // 1.5 × the photo height.
        let triples = columns == 2 ? Double(Self.gridRows(count).filter { $0 == 3 }.count) : 0
        let a = Double(rows) - triples / 3, b = Double(rows - 1) * gap - triples * gap / 3
        let cell = max(1, min((maxWidth - Double(columns - 1) * gap) / Double(columns), (style.maxImageHeight * 1.5 - b) / a))
        return (columns, rows, cell)
    }

    /// The typing indicator: a small incoming bubble with three dots.
    public func typingLayout(rowWidth: Double, context: BubbleContext = BubbleContext()) throws(LayoutError) -> BubbleLayout {
        try Self.validate(rowWidth: rowWidth, style: style)
        let indent = context.avatarColumn ? style.avatarSize + style.besideGap : 0
        let size = style.typingBubbleSize
        var top = 0.0
        var labels: [LabelLayout] = []
        let x = style.sideMargin + indent
        if let name = context.senderName {
            let (t, w) = try measure(name, style: style.senderNameText, maxWidth: max(1, rowWidth / 2), maxLines: 1)
            labels.append(
                LabelLayout(
                    kind: .sender, string: name,
                    frame: Rect(x: x + min(style.senderNameInset, style.incomingPadding.left), y: 0, width: t.width, height: t.height),
                    text: t, wrapWidth: w, maxLines: 1))
            top = t.height + style.senderNameSpacing
        }
        let bubble = Rect(x: x, y: top, width: size.width, height: size.height)
        // Dots centred in the bubble's body (the padding's tail side excluded).
        let p = style.incomingPadding
        let d = style.typingDotSize, gap = d * 0.6
        let total = 3 * d + 2 * gap
        let cx = bubble.minX + p.left + (bubble.width - p.horizontal - total) / 2
        let cy = bubble.minY + p.top + (bubble.height - p.vertical - d) / 2
        let dots = (0..<3).map { Rect(x: cx + Double($0) * (d + gap), y: cy, width: d, height: d) }
        var avatar: Rect?
        if context.avatarColumn, context.showsAvatar {
            avatar = Rect(x: style.sideMargin, y: max(0, bubble.maxY - style.avatarSize), width: style.avatarSize, height: style.avatarSize)
        }
        var layout = BubbleLayout(
            direction: .incoming, bubble: bubble, textFrame: nil, text: .empty, textWrapWidth: 1,
            imageFrames: [], imageIsPlaceholder: false, hasTail: true, labels: labels,
            avatarFrame: avatar, typingDots: dots)
        if style.mirrored { layout = layout.mirroredLayout(rowWidth: rowWidth) }
        return layout
    }

    /// The areas of each link's text: per line it spans, from the width of the line's text
    /// before it to the width up to its end (measured with the same engine).
    func linkAreas(
        _ string: String, found: [DetectedLink], prepared: PreparedText?, text: TextLayout, boxWidth: Double,
        origin: Point, rangeWidths: inout [(range: Range<Int>, width: Double)]
    ) throws(LayoutError) -> [LinkLayout] {
        guard !found.isEmpty else { return [] }
        var known = rangeWidths
        defer { rangeWidths = known }
        func width(_ range: Range<Int>) throws(LayoutError) -> Double {
            guard !range.isEmpty else { return 0 }
            if let hit = known.first(where: { $0.range == range }) { return hit.width }
            let w = try measureWidth(range)
            if known.count < 16 {
                if known.isEmpty { known.reserveCapacity(4) }
                known.append((range, w))
            }
            return w
        }
        func measureWidth(_ range: Range<Int>) throws(LayoutError) -> Double {
            // The engine's own figures for a piece of the prepared text, when it has them.
            if let prepared, let advance = fastPath?.advance(of: range, in: prepared) { return advance }
            let utf8 = string.utf8
            guard range.lowerBound >= 0, range.upperBound <= utf8.count else { return 0 }
            var s = String(
                decoding: utf8[utf8.index(utf8.startIndex, offsetBy: range.lowerBound)..<utf8.index(utf8.startIndex, offsetBy: range.upperBound)],
                as: UTF8.self)
            while s.last?.isNewline == true { s.removeLast() }
            guard !s.isEmpty else { return 0 }
            return try measure(s, style: style.text, maxWidth: 100_000).0.width
        }
        var out: [LinkLayout] = []
        out.reserveCapacity(found.count)
        for link in found {
            var rects: [Rect] = []
            rects.reserveCapacity(2)
            for line in text.lines where line.range.overlaps(link.range) {
                let lo = max(line.range.lowerBound, link.range.lowerBound), hi = min(line.range.upperBound, link.range.upperBound)
                let x0: Double, x1: Double
                if line.isRightToLeft {
                    x0 = boxWidth - line.width; x1 = boxWidth
                } else {
                    // From the end: a prefix's trailing space is not measured by every engine.
                    x1 = try width(line.range.lowerBound..<hi)
                    x0 = x1 - (try width(lo..<hi))
                }
                guard x1 > x0 else { continue }
                rects.append(Rect(x: origin.x + x0, y: origin.y + line.top, width: x1 - x0, height: line.height))
            }
            if !rects.isEmpty { out.append(LinkLayout(url: link.url, rects: rects)) }
        }
        return out
    }

    /// Text laid out in `maxWidth`, and the width it was wrapped in; balanced: the narrowest
    /// width with the same line count.
    public func measure(
        _ string: String, style textStyle: TextStyle, maxWidth: Double,
        balanced: Bool = false, maxLines: Int? = nil
    ) throws(LayoutError) -> (TextLayout, Double) {
        let prepared: PreparedText
        do { prepared = try engine.prepare(string, style: textStyle) } catch { throw .text(error) }
        return try measure(prepared, maxWidth: maxWidth, balanced: balanced, maxLines: maxLines)
    }

    /// `measure` of `string`, prepared once: `handle` keeps what the engine prepared (made
    /// when nil) for the next measure of the same string in the same style.
    func measure(
        _ string: String, style textStyle: TextStyle, maxWidth: Double, maxLines: Int? = nil,
        reusing handle: inout PreparedHandle?
    ) throws(LayoutError) -> (TextLayout, Double) {
        let prepared: PreparedText
        if let handle {
            prepared = PreparedText(text: string, style: textStyle, storage: handle.storage)
        } else {
            do { prepared = try engine.prepare(string, style: textStyle) } catch { throw .text(error) }
            if fastPath?.preparedTextsAreCompact == true { handle = PreparedHandle(storage: prepared.storage) }
        }
        return try measure(prepared, maxWidth: maxWidth, maxLines: maxLines)
    }

    /// `measure` of a label around the bubble, its prepared text kept in `memo`'s `slot`.
    func measureLabel(
        _ string: String, _ slot: BubbleMemo.Label, style textStyle: TextStyle, maxWidth: Double,
        maxLines: Int?, memo: inout BubbleMemo
    ) throws(LayoutError) -> (TextLayout, Double) {
        let i = slot.rawValue
        var handle = i < memo.labels.count ? memo.labels[i] : nil
        let kept = handle != nil
        let result = try measure(string, style: textStyle, maxWidth: maxWidth, maxLines: maxLines, reusing: &handle)
        if !kept, handle != nil {
            // Room for every label at once (one allocation).
            if memo.labels.isEmpty { memo.labels = Array(repeating: nil, count: BubbleMemo.Label.allCases.count) }
            memo.labels[i] = handle
        }
        return result
    }

    /// `measure` of a text already prepared by this measurer's engine.
    public func measure(
        _ prepared: PreparedText, maxWidth: Double,
        balanced: Bool = false, maxLines: Int? = nil
    ) throws(LayoutError) -> (TextLayout, Double) {
        do {
            // Closures, not key paths: a key path literal is an object fetched (and retained) at
            // every call, one that every thread shares.
            return try Self.balance(maxWidth: maxWidth, balanced: balanced, lines: { $0.lines.count }, width: { $0.width }) { (w: Double) throws(TextError) in
                try engine.layout(prepared, maxWidth: w, maxLines: maxLines)
            }
        } catch {
            throw .text(error)
        }
    }

    /// `measure`'s layout of a prepared text summarised, found by the same search over
    /// summaries (no lines made: what a height needs). `storage` is the `PreparedText.storage`
    /// the engine made for the text; nil when the engine gives no summary from a storage
    /// (`TextEngine.summary(ofStorage:maxWidth:)`).
    func measureSummary(storage: AnyObject, maxWidth: Double, balanced: Bool) -> TextSummary? {
        try? Self.balance(maxWidth: maxWidth, balanced: balanced, lines: { $0.lineCount }, width: { $0.width }) { (w: Double) throws(TextError) in
            guard let summary = try fastPath?.summary(ofStorage: storage, maxWidth: w) else { throw .invalidWidth(w) }
            return summary
        }.0
    }

    /// `measureSummary(storage:…)` from a text's packed breaks (`TextEngine.packBreaks`); nil
    /// when they do not tell.
    func measureSummary(packed: UnsafeBufferPointer<UInt32>, maxWidth: Double, balanced: Bool) -> TextSummary? {
        try? Self.balance(maxWidth: maxWidth, balanced: balanced, lines: { $0.lineCount }, width: { $0.width }) { (w: Double) throws(TextError) in
            guard let summary = try fastPath?.summary(ofPacked: packed, maxWidth: w) else { throw .invalidWidth(w) }
            return summary
        }.0
    }

    /// The layout at `maxWidth`; balanced: the one at the narrowest width that keeps its line
    /// count. Line count only grows as the width shrinks: a binary search, to a quarter point.
    static func balance<R>(
        maxWidth: Double, balanced: Bool, lines: (R) -> Int, width: (R) -> Double,
        _ at: (Double) throws(TextError) -> R
    ) throws(TextError) -> (R, Double) {
        let full = try at(maxWidth)
        guard balanced, lines(full) > 1 else { return (full, maxWidth) }
        var lo = width(full) / Double(lines(full)), hi = width(full)
        var best = (full, maxWidth)
        while hi - lo > 0.25 {
            let mid = (lo + hi) / 2
            let candidate = try at(mid)
            if lines(candidate) == lines(full) {
                hi = min(mid, width(candidate)); best = (candidate, mid)
            } else {
                lo = mid
            }
        }
        return best
    }

    static func validate(rowWidth: Double, style: LayoutStyle) throws(LayoutError) {
        guard rowWidth.isFinite, rowWidth > 0 else { throw .invalidWidth(rowWidth) }
        guard rowWidth >= style.minimumRowWidth - 1e-9 else {
            throw .rowTooNarrow(width: rowWidth, minimum: style.minimumRowWidth)
        }
    }
}

extension Rect {
    /// Mirrored about the vertical centre line of a row `width` wide.
    public func mirrored(inWidth width: Double) -> Rect {
        Rect(x: width - maxX, y: minY, width: self.width, height: height)
    }
}

extension BubbleLayout {
    /// The same layout for a right-to-left interface: every frame mirrored in the row, except
    /// what lies inside the text box (time inside, link areas), which moves with the box.
    public func mirroredLayout(rowWidth w: Double) -> BubbleLayout {
        var m = self
        m.mirrored.toggle()
        m.bubble = bubble.mirrored(inWidth: w)
        let dx = textFrame.map { w - $0.maxX - $0.minX } ?? 0
        m.textFrame = textFrame?.mirrored(inWidth: w)
        m.imageFrames = imageFrames.map { $0.mirrored(inWidth: w) }
        m.labels = labels.map { label in
            var l = label
            l.frame = label.kind == .timeInside && textFrame != nil ? label.frame.offsetBy(dx: dx, dy: 0) : label.frame.mirrored(inWidth: w)
            return l
        }
        m.avatarFrame = avatarFrame?.mirrored(inWidth: w)
        m.failedBadge = failedBadge?.mirrored(inWidth: w)
        func badge(_ b: BadgeLayout?) -> BadgeLayout? {
            guard var b else { return nil }
            let shift = w - b.frame.maxX - b.frame.minX
            b.frame = b.frame.offsetBy(dx: shift, dy: 0)
            b.label.frame = b.label.frame.offsetBy(dx: shift, dy: 0)
            return b
        }
        m.reactions = badge(reactions)
        m.reply = badge(reply)
        m.links = links.map { LinkLayout(url: $0.url, rects: $0.rects.map { $0.offsetBy(dx: dx, dy: 0) }) }
        m.typingDots = typingDots.map { $0.mirrored(inWidth: w) }
        return m
    }
}

extension LayoutStyle {
    /// The photo grid of a message with `count` photos in a row `rowWidth` wide, as
    /// `BubbleMeasurer.layout` makes it (no text is measured): its size and cells.
    public func photoGrid(count: Int, rowWidth: Double, indent: Double) -> (size: Size, cells: [Rect]) {
        let maxWidth = max(1, maxBubbleWidth(rowWidth: rowWidth, indent: indent) - imageInset.horizontal)
        return BubbleMeasurer(style: self, engine: MonospaceTextEngine()).gridLayout(count: count, maxWidth: maxWidth)
    }
}
