/// How bubbles are measured and arranged: the numbers a theme gives the layout engine.
/// All lengths in points.
public struct LayoutStyle: Hashable, Sendable {
    /// How wide a bubble of several lines is.
    public enum WidthMode: String, Hashable, Sendable, Codable {
        /// The bubble hugs its widest line.
        case fit
        /// The narrowest bubble that keeps the same number of lines (no lonely last word).
        case balanced
    }

    /// The message text's font, size and line height.
    public var text: TextStyle
    /// Text inset inside an incoming bubble (the tail side is usually wider).
    public var incomingPadding: EdgeInsets
    /// Text inset inside an outgoing bubble; by default the mirror of `incomingPadding`.
    public var outgoingPadding: EdgeInsets
    /// Smallest bubble the art can be drawn at without shrinking its caps.
    public var minimumBubbleSize: Size
    /// Largest bubble width as a share of the row (seed 002: 0.65, seed 003: 0.70).
    public var maxWidthShare: Double
    /// Absolute cap on bubble width, whatever the row width; nil for none.
    public var maxBubbleWidth: Double?
    /// Distance from the row's edge to the bubble.
    public var sideMargin: Double
    /// How wide a bubble of several lines is: fitting its widest line, or balanced.
    public var widthMode: WidthMode
    /// Inset of a photo inside its bubble.
    public var imageInset: EdgeInsets
    /// Gap between a photo and the text under it.
    public var imageTextSpacing: Double
    /// The tallest a photo is shown (a taller one is scaled down to it).
    public var maxImageHeight: Double
    /// Size laid out for a photo whose own size is unusable (0×0, NaN).
    public var placeholderImageSize: Size
    /// The box a sticker is fitted into (points), as messaging apps show stickers: 140.
    public var stickerSize: Double = 140
    /// A video's frame when neither the video nor its poster says its size: 16:9.
    public var videoFrameSize: Size = Size(width: 240, height: 135)
    /// Space above a row that starts a new group / continues a group.
    public var rowSpacing: Double
    /// Space above a row that continues a group (the same sender, close in time).
    public var groupedSpacing: Double
    /// Messages of one sender closer than this (seconds) form a group.
    public var groupingInterval: Double
    /// Day separator and system line text, and their vertical padding.
    public var separatorText: TextStyle
    /// Space above and below a day separator or system line.
    public var separatorPadding: Double
    /// The style of system lines.
    public var systemText: TextStyle
    /// Time label above the first bubble of each group (seed 000's date label).
    public var showsTimeAboveGroup: Bool
    /// The style of the time above a group.
    public var timeLabelText: TextStyle
    /// Gap between the time above a group and its first bubble.
    public var timeLabelSpacing: Double
    /// WhatsApp: the message time sits inside the bubble, after the last line when it fits there,
    /// else on a line of its own below (measured with `timeLabelText`).
    public var timeInsideBubble: Bool = false
    /// Gap between the last line and a time inside the bubble.
    public var timeInsideGap: Double = 6
    /// The time beside each bubble, on its open side (as when swiped into view), bottom-aligned.
    public var timeBeside: Bool = false
    /// The time only in day separators: the day and the first message's time, and a separator
    /// of its own after a pause longer than `timeSeparatorGap` seconds.
    public var timeInDaySeparator: Bool = false
    /// With `timeInDaySeparator`: a pause longer than this (seconds) gets a separator of its own.
    public var timeSeparatorGap: Double = 3600
    /// Gap between a bubble and what sits beside it (time, failed badge, avatar).
    public var besideGap: Double = 6

    /// When incoming bubbles show who wrote them.
    public enum Rule: String, Hashable, Sendable, Codable {
        /// No names.
        case never
        /// Only in group chats (more than two participants).
        case groups
        /// Above every incoming group, also in one-to-one chats.
        case always
    }
    /// Sender names above the first bubble of an incoming group.
    public var senderNames: Rule = .groups
    /// The style of sender names.
    public var senderNameText: TextStyle = TextStyle(size: 11)
    /// From the bubble's left edge to the name.
    public var senderNameInset: Double = 12
    /// Gap between a sender's name and the bubble under it.
    public var senderNameSpacing: Double = 2
    /// Avatars beside the last bubble of an incoming group; incoming bubbles move right by
    /// `avatarSize + besideGap` wherever avatars show.
    public var avatars: Rule = .groups
    /// Diameter of an avatar (the column beside incoming bubbles is this plus `besideGap`).
    public var avatarSize: Double = 28
    /// Delivery status under the last outgoing message ("Delivered", "Read 09:41"), and
    /// "Failed" with a red badge under each failed one.
    public var statusText: TextStyle = TextStyle(size: 11)
    /// Gap between a bubble and the status under it.
    public var statusSpacing: Double = 2
    /// Diameter of the red badge beside a message that failed to send.
    public var failedBadgeSize: Double = 18
    /// Messages of 1–3 emoji and nothing else: drawn in `emojiText`, without a bubble.
    public var emojiText: TextStyle = TextStyle(size: 40)
    /// The most emoji a message may have to be drawn large without a bubble (`emojiText`).
    public var emojiOnlyMaximum: Int = 3
    /// Reaction badges: text style, inset of the text in the pill, how far the pill rises
    /// above the bubble's top edge (share of its height).
    public var reactionText: TextStyle = TextStyle(size: 12)
    /// Inset of a reaction's text inside its pill.
    public var reactionPadding: EdgeInsets = EdgeInsets(top: 3, left: 7, bottom: 3, right: 7)
    /// How far a reaction pill rises above the bubble's top edge, as a share of the pill's height.
    public var reactionRise: Double = 0.6
    /// Reply snippets: text style (at most `replyMaxLines` lines), inset, gap to the bubble.
    public var replyText: TextStyle = TextStyle(size: 12)
    /// Inset of a reply snippet's text inside its box.
    public var replyPadding: EdgeInsets = EdgeInsets(top: 4, left: 10, bottom: 5, right: 10)
    /// The most lines a reply snippet shows (an ellipsis ends the last).
    public var replyMaxLines: Int = 2
    /// Gap between a reply snippet and the bubble under it.
    public var replySpacing: Double = 2
    /// Several photos: a grid of `gridColumns` square cells `gridSpacing` apart.
    public var gridColumns: Int = 2
    /// Gap between the cells of a photo grid.
    public var gridSpacing: Double = 2
    /// Typing indicator bubble: its size and its dots' diameter.
    public var typingBubbleSize: Size = Size(width: 62, height: 34)
    /// Diameter of a typing indicator's dots.
    public var typingDotSize: Double = 8
    /// Links, phone numbers and e-mail addresses become links.
    public var detectsLinks: Bool = true
    /// Right-to-left interface: incoming on the right, outgoing on the left; every frame is the
    /// mirror image (x ↦ rowWidth − maxX) of the normal layout's, except what sits inside the
    /// text box (a time inside the bubble, link areas), which moves with it.
    public var mirrored: Bool = false

    /// A style; every parameter is the property of the same name. The defaults are seed 001's:
    /// 16-point text, padding (4, 22, 7, 16) incoming and (4, 16, 7, 22) outgoing.
    public init(
        text: TextStyle = TextStyle(size: 16),
        incomingPadding: EdgeInsets = EdgeInsets(top: 4, left: 22, bottom: 7, right: 16),
        outgoingPadding: EdgeInsets? = nil,
        minimumBubbleSize: Size = Size(width: 42, height: 30),
        maxWidthShare: Double = 0.7,
        maxBubbleWidth: Double? = nil,
        sideMargin: Double = 10,
        widthMode: WidthMode = .fit,
        imageInset: EdgeInsets = EdgeInsets(top: 4, left: 10, bottom: 4, right: 10),
        imageTextSpacing: Double = 4,
        maxImageHeight: Double = 240,
        placeholderImageSize: Size = Size(width: 120, height: 90),
        rowSpacing: Double = 10,
        groupedSpacing: Double = 2,
        groupingInterval: Double = 300,
        separatorText: TextStyle = TextStyle(size: 12, weight: .bold),
        separatorPadding: Double = 8,
        systemText: TextStyle = TextStyle(size: 12),
        showsTimeAboveGroup: Bool = false,
        timeLabelText: TextStyle = TextStyle(size: 11),
        timeLabelSpacing: Double = 2
    ) {
        self.text = text
        self.incomingPadding = incomingPadding
        self.outgoingPadding =
            outgoingPadding
            ?? EdgeInsets(
                top: incomingPadding.top, left: incomingPadding.right,
                bottom: incomingPadding.bottom, right: incomingPadding.left)
        self.minimumBubbleSize = minimumBubbleSize
        self.maxWidthShare = maxWidthShare
        self.maxBubbleWidth = maxBubbleWidth
        self.sideMargin = sideMargin
        self.widthMode = widthMode
        self.imageInset = imageInset
        self.imageTextSpacing = imageTextSpacing
        self.maxImageHeight = maxImageHeight
        self.placeholderImageSize = placeholderImageSize
        self.rowSpacing = rowSpacing
        self.groupedSpacing = groupedSpacing
        self.groupingInterval = groupingInterval
        self.separatorText = separatorText
        self.separatorPadding = separatorPadding
        self.systemText = systemText
        self.showsTimeAboveGroup = showsTimeAboveGroup
        self.timeLabelText = timeLabelText
        self.timeLabelSpacing = timeLabelSpacing
    }

    /// The text inset inside a bubble on `direction`'s side.
    public func padding(for direction: Direction) -> EdgeInsets {
        direction == .incoming ? incomingPadding : outgoingPadding
    }

    /// One bound on a bubble's width: `share` of the row's width plus `points` (negative for a
    /// margin taken off). CSS writes it as `calc(share × 100% + points px)`.
    public struct WidthBound: Hashable, Sendable {
        /// Share of the row's width, 0…1 (seed 002's 65 %: 0.65).
        public var share: Double
        /// Points added to the share (negative: a margin taken off).
        public var points: Double
        /// The bound in a row `rowWidth` points wide.
        public func width(inRow rowWidth: Double) -> Double { share * rowWidth + points }
    }

    /// The maximum bubble width rule, its one home: the widest a bubble may be is the smallest of
    /// these bounds (and at least 1 pt) — the style's share of the row, its cap in points, and the
    /// row less its side margins and `indent` (an avatar column). The layout engine computes
    /// `maxBubbleWidth(rowWidth:indent:)` from them; the HTML writer turns them into its CSS
    /// `max-width`, so the two cannot drift apart.
    public func maxBubbleWidthBounds(indent: Double = 0) -> [WidthBound] {
        var bounds: [WidthBound] = []
        forEachMaxWidthBound(indent: indent) { bounds.append($0) }
        return bounds
    }

    /// The bounds themselves, one call each (no array: the layout asks for every message).
    @inline(__always)
    func forEachMaxWidthBound(indent: Double, _ body: (WidthBound) -> Void) {
        body(WidthBound(share: maxWidthShare, points: 0))
        body(WidthBound(share: 1, points: -2 * sideMargin - indent))
        if let cap = maxBubbleWidth { body(WidthBound(share: 0, points: cap)) }
    }

    /// The widest a bubble may be in a row `rowWidth` wide whose bubbles are indented by `indent`
    /// (an avatar column): the smallest of `maxBubbleWidthBounds`, at least 1.
    public func maxBubbleWidth(rowWidth: Double, indent: Double = 0) -> Double {
        var widest = Double.infinity
        forEachMaxWidthBound(indent: indent) { widest = min(widest, $0.width(inRow: rowWidth)) }
        return max(1, widest)
    }

    /// Narrowest row this style can lay out: the margins plus the smallest bubble.
    public var minimumRowWidth: Double {
        let padding = max(incomingPadding.horizontal, outgoingPadding.horizontal)
        let bubble = max(minimumBubbleSize.width, padding + 1)
        return max(2 * sideMargin + bubble, bubble / maxWidthShare)
    }
}

/// Why a layout was refused.
public enum LayoutError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A row width that is not a finite number above 0.
    case invalidWidth(Double)
    /// A row too narrow for the style's paddings and margins: `minimum` is the least that fits.
    case rowTooNarrow(width: Double, minimum: Double)
    /// A style whose numbers contradict each other, with what is wrong.
    case invalidStyle(String)
    /// The text engine refused a text or a style.
    case text(TextError)
    /// A compact scrolling layout was asked for a row in full without the message it shows.
    case messageNotHeld(Int)
    /// A scrolling layout holds at most `limit` messages.
    case tooManyMessages(limit: Int)

    public var description: String {
        switch self {
        case let .tooManyMessages(limit): return "a scrolling layout holds at most \(limit) messages; expected a shorter conversation"
        case let .messageNotHeld(k): return "message \(k) is not held by this compact layout; expected it among the messages given"
        case let .invalidWidth(w): return "row width \(w) is not usable; expected a finite number > 0"
        case let .rowTooNarrow(w, min): return "row width \(w.short) is too narrow for this style; expected at least \(min.short) points"
        case let .invalidStyle(why): return "layout style: \(why)"
        case let .text(e): return e.description
        }
    }
}
