import Foundation

/// One row of a laid-out conversation, in conversation coordinates (y grows down from 0).
public struct LayoutRow: Hashable, Sendable {
    /// What a row shows: a bubble, a day separator, a system line or the typing indicator.
    public enum Content: Hashable, Sendable {
        /// A message's bubble; `index` is the message's position in the conversation.
        case message(index: Int, BubbleLayout)
        /// A date line between days.
        case daySeparator(LabelLayout)
        /// A system line (centred, no bubble); `index` as for messages.
        case system(index: Int, LabelLayout)
        /// A typing indicator (three dots) for participant `sender`, after the last message.
        case typing(sender: String?, BubbleLayout)
    }
    /// What the row shows.
    public var content: Content
    /// The row's rectangle: full width, from its top to its bottom (spacing above excluded).
    public var frame: Rect

    /// The position in the conversation of the message or system line this row shows; nil for day
    /// separators and the typing indicator.
    public var messageIndex: Int? {
        switch content {
        case let .message(i, _), let .system(i, _): return i
        case .daySeparator, .typing: return nil
        }
    }
    /// The bubble of a message or typing row; nil for day separators and system lines.
    public var bubble: BubbleLayout? {
        switch content {
        case let .message(_, b), let .typing(_, b): return b
        default: return nil
        }
    }
}

/// A whole conversation laid out at one width: rows with their frames, total height, and
/// what a scrolling list needs — the rows in a visible rectangle in O(log n), and O(1)
/// appends that give exactly what a full layout of the longer conversation gives.
public struct ConversationLayout: Hashable, Sendable {
    /// The row width everything was laid out in (points).
    public private(set) var width: Double
    /// Every row, top to bottom.
    public internal(set) var rows: [LayoutRow] = []
    /// Height of everything, from 0 to the bottom of the last row.
    public private(set) var height: Double = 0
    /// What appending needs to know about the last message.
    private var last: LastMessage?
    private var messageCount = 0
    /// Participants by id (sender names, reply authors) and whether this is a group chat.
    var names: [String: String] = [:]
    var isGroup = false
    /// Row showing the (non-failed) delivery status under the last outgoing message.
    var statusRow: Int?
    /// What a re-layout reuses, per message (`ConversationLayouter.layout(_:width:reusing:)`).
    var memos = MessageMemos()

    struct LastMessage: Hashable, Sendable {
        var sender: String?
        var direction: Direction
        var kind: Message.Kind
        var date: Date
        /// Local day number (`DateTexts.localDay`).
        var day: Int
        /// Row index of the last message's row.
        var row: Int
        var key: GroupingKey { GroupingKey(sender: sender, direction: direction, kind: kind, date: date, day: day) }
    }

    init(width: Double) { self.width = width }

    /// Rows that intersect `rect` (only its vertical extent matters), in order. Binary search
    /// over the rows' tops — they increase — then a walk over the visible ones.
    public func rows(in rect: Rect) -> ArraySlice<LayoutRow> {
        rows[rowIndices(in: rect)]
    }

    /// Index range of `rows(in:)`.
    public func rowIndices(in rect: Rect) -> Range<Int> {
        Self.rowIndices(in: rect, count: rows.count, top: { rows[$0].frame.minY }, bottom: { rows[$0].frame.maxY })
    }

    /// Of `count` rows whose tops increase, those that intersect `rect` (its vertical extent):
    /// a binary search for the first whose bottom is below `rect`'s top, then a walk.
    static func rowIndices(in rect: Rect, count: Int, top: (Int) -> Double, bottom: (Int) -> Double) -> Range<Int> {
        let minY = rect.minY, maxY = rect.maxY
        guard maxY > minY || rect.height == 0 else { return 0..<0 }
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if bottom(mid) <= minY { lo = mid + 1 } else { hi = mid }
        }
        var end = lo
        while end < count, top(end) < maxY { end += 1 }
        return lo..<end
    }

    // MARK: building (used by ConversationLayouter)

    mutating func appendRow(_ content: consuming LayoutRow.Content, height rowHeight: Double, spacing: Double) {
        let top = rows.isEmpty ? 0 : height + spacing
        rows.append(LayoutRow(content: content, frame: Rect(x: 0, y: top, width: width, height: rowHeight)))
        height = top + rowHeight
    }

    /// The previous bubble of a group that goes on: no tail, no avatar.
    mutating func removeTail(ofRow index: Int) {
        guard case .message(let i, var bubble) = rows[index].content else { return }
        bubble.hasTail = false
        bubble.avatarFrame = nil
        rows[index].content = .message(index: i, bubble)
    }

    /// Takes the status label off a row (a later outgoing message shows it now). The row gets
    /// shorter by what the label added and the rows after it move up.
    mutating func removeStatus(ofRow index: Int) {
        guard case .message(let i, var bubble) = rows[index].content else { return }
        bubble.labels.removeAll { $0.kind == .status }
        let height = bubble.maxY
        let delta = rows[index].frame.height - height
        rows[index].content = .message(index: i, bubble)
        guard delta > 0 else { return }
        rows[index].frame.size.height = height
        for k in (index + 1)..<rows.count { rows[k].frame.origin.y -= delta }
        self.height -= delta
    }

    var lastMessage: LastMessage? {
        get { last }
        set { last = newValue }
    }
    var nextMessageIndex: Int {
        get { messageCount }
        set { messageCount = newValue }
    }
}

/// What of each message a re-layout at another width reuses: its local day and its bubble's
/// width-independent facts (`BubbleMemo`: prepared text, emoji-only, links). Not part of the
/// layout's value: two layouts with the same rows are equal whatever their memos.
struct MessageMemos: Hashable, @unchecked Sendable {
    struct Memo {
        var day: Int
        var bubble: BubbleMemo?
        /// The day separator (or pause) label before the message, prepared.
        var separator: PreparedHandle?
    }
    var items: [Memo] = []
    static func == (a: MessageMemos, b: MessageMemos) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// Lays out conversations with one style and one text engine.
///
///     let layouter = ConversationLayouter(style: LayoutStyle(), engine: PangoTextEngine(), timeZone: .gmt)
///     var layout = try layouter.layout(conversation, width: 375)
///     try layouter.append(newMessage, to: &layout)
///     let visible = layout.rows(in: Rect(x: 0, y: scrollY, width: 375, height: 667))
public struct ConversationLayouter {
    /// Measures each message into a `BubbleLayout`.
    public let measurer: BubbleMeasurer
    /// The numbers every bubble is measured with (`measurer.style`).
    public var style: LayoutStyle { measurer.style }
    /// Zone in which days start (day separators) and times are shown.
    public let calendar: Calendar
    /// Day separators and message times (zone and locale): `DateTexts`.
    public let dateTexts: DateTexts

    /// `locale` nil (or `en_US_POSIX`): the fixed English day and 24-hour time texts; `now`:
    /// today's and yesterday's separators say so.
    public init(
        style: LayoutStyle, engine: any TextEngine, timeZone: TimeZone = .current,
        locale: Locale? = nil, now: Date? = nil
    ) {
        self.measurer = BubbleMeasurer(style: style, engine: engine)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
        dateTexts = DateTexts(timeZone: timeZone, locale: locale, now: now)
    }

    /// The whole conversation at `width`, then a typing indicator for each id in
    /// `conversation.typing`. Calling it again with another width is the re-layout.
    public func layout(_ conversation: Conversation, width: Double) throws(LayoutError) -> ConversationLayout {
        try layout(conversation, width: width, reusing: nil)
    }

    /// The re-layout of `conversation` at `width`, given `previous`, a layout of the same
    /// conversation (same messages, in order; typing and participants may differ) by this
    /// layouter at any width: the same result as `layout(_:width:)`, but what does not depend on
    /// the width — prepared texts, emoji-only checks, links, local days — is taken from `previous`
    /// instead of being worked out again. A `previous` with another message count is ignored.
    public func layout(
        _ conversation: Conversation, width: Double,
        reusing previous: ConversationLayout?
    ) throws(LayoutError) -> ConversationLayout {
        try BubbleMeasurer.validate(rowWidth: width, style: measurer.style)
        var layout = ConversationLayout(width: width)
        layout.isGroup = conversation.isGroup
        for p in conversation.participants where !p.name.isEmpty { layout.names[p.id] = p.name }
        let memos = previous.flatMap { $0.memos.items.count == conversation.messages.count ? $0.memos.items : nil }
        // Rows: messages plus day separators. Room for a separator every other message: only
        // virtual memory until used, and growing the array later would copy every row.
        let count = conversation.messages.count
        layout.rows.reserveCapacity(previous.map { $0.rows.count + conversation.typing.count } ?? count + count / 2 + 16)
        layout.memos.items.reserveCapacity(conversation.messages.count)
        if let memos {
            for k in memos.indices { try append(conversation.messages[k], memo: memos[k], to: &layout) }
        } else {
            // A long first layout: the other cores measure messages ahead of this walk, which
            // stitches them in order (and measures those nobody took).
            let messages = conversation.messages, names = layout.names, isGroup = layout.isGroup
            try RowPipeline.forEachMessage(messages, layouter: self) { (i, after, _, _) throws(LayoutError) in
                try rows(for: messages[i], index: i, memo: nil, after: after, width: width, names: names, isGroup: isGroup)
            } _: { (k, made, _) throws(LayoutError) in
                if let made {
                    stitch(&made.pointee, of: conversation.messages[k], into: &layout)
                } else {
                    try append(conversation.messages[k], memo: nil, to: &layout)
                }
            }
        }
        for sender in conversation.typing { try appendTyping(sender, to: &layout) }
        return layout
    }

    /// The style shows a time with bubbles (above groups, inside or beside them).
    /// The time is inside or beside each bubble (an edit is marked there, else under the bubble).
    var timeOnBubble: Bool { measurer.style.timeInsideBubble || measurer.style.timeBeside }
    var showsBubbleTimes: Bool { measurer.style.showsTimeAboveGroup || measurer.style.timeInsideBubble || measurer.style.timeBeside }

    func shows(_ rule: LayoutStyle.Rule, group: Bool) -> Bool {
        rule == .always || (rule == .groups && group)
    }

    /// A typing indicator for `sender` at the end (after it, append no more messages).
    public func appendTyping(_ sender: String?, to layout: inout ConversationLayout) throws(LayoutError) {
        let bubble = try typingBubble(sender, width: layout.width, names: layout.names, isGroup: layout.isGroup)
        layout.appendRow(.typing(sender: sender, bubble), height: bubble.maxY, spacing: measurer.style.rowSpacing)
        layout.lastMessage = nil
    }

    func typingBubble(_ sender: String?, width: Double, names: [String: String], isGroup: Bool) throws(LayoutError) -> BubbleLayout {
        let avatars = shows(measurer.style.avatars, group: isGroup)
        let name = shows(measurer.style.senderNames, group: isGroup) ? sender.flatMap { names[$0] } : nil
        return try measurer.typingLayout(
            rowWidth: width,
            context: BubbleContext(
                senderName: name, avatarColumn: avatars, showsAvatar: avatars))
    }

    /// How `message` joins the previous one: `LayoutStyle.joining`, the rule HTML follows too.
    func joining(_ message: Message, day: Int, after previous: ConversationLayout.LastMessage?) -> RowJoining {
        measurer.style.joining(GroupingKey(message, day: day), after: previous?.key)
    }

    /// The text of the separator row before `message`.
    func separatorString(_ message: Message, newDay: Bool) -> String {
        measurer.style.timeInDaySeparator
            ? (newDay ? dateTexts.dayAndTime(message.date) : dateTexts.time(message.date))
            : dateTexts.day(message.date)
    }

    /// The time shown with the bubble (nil when the style shows none there).
    func bubbleTime(_ message: Message) -> String? {
        measurer.style.timeInDaySeparator || !showsBubbleTimes
            ? nil
            : message.edited != nil && timeOnBubble ? "edited " + dateTexts.time(message.date) : dateTexts.time(message.date)
    }

    /// A message bubble's surroundings: the sender's name when it starts a group, avatars, the
    /// delivery status of an outgoing message, the reply's author.
    func context(for message: Message, continues: Bool, names: [String: String], isGroup: Bool) -> BubbleContext {
        let avatars = shows(measurer.style.avatars, group: isGroup)
        var context = BubbleContext(avatarColumn: avatars, showsAvatar: avatars)
        if !continues, shows(measurer.style.senderNames, group: isGroup), let sender = message.sender {
            context.senderName = names[sender] ?? sender
        }
        if message.direction == .outgoing, let status = message.status {
            context.status = dateTexts.status(status, at: message.statusDate)
            context.failed = status == .failed
        }
        if let reply = message.reply {
            context.replyAuthor = reply.sender.flatMap { names[$0] }
        }
        context.edited = message.edited != nil && !timeOnBubble
        return context
    }

    /// Adds one message at the end, in O(1) (one message measured; the previous bubble only
    /// loses its tail when the new one continues its group).
    public func append(_ message: Message, to layout: inout ConversationLayout) throws(LayoutError) {
        try append(message, memo: nil, to: &layout)
    }

    private func append(_ message: Message, memo: MessageMemos.Memo?, to layout: inout ConversationLayout) throws(LayoutError) {
        var made = try rows(
            for: message, index: layout.nextMessageIndex, memo: memo, after: layout.lastMessage,
            width: layout.width, names: layout.names, isGroup: layout.isGroup)
        stitch(&made, of: message, into: &layout)
    }

    /// The rows of one message measured on their own: all that does not depend on the rows
    /// before it, only on the message before it (`previous`), so any thread can make them
    /// ahead of `stitch` (`RowPipeline`).
    struct MessageRows {
        var index: Int
        var day: Int
        /// The separator before the message starts a new day (else it marks a pause).
        var newDay: Bool
        var continues: Bool
        /// The day separator (or pause) row before the message.
        var separator: LabelLayout?
        var content: LayoutRow.Content
        var height: Double
        var spacing: Double
        /// The bubble shows the delivery status (so the previous one to show it loses it).
        var showsStatus: Bool
        var memo: MessageMemos.Memo

        /// The content, moved out (an empty system line left in its place).
        mutating func takeContent() -> LayoutRow.Content {
            var content = LayoutRow.Content.system(index: index, .empty)
            swap(&content, &self.content)
            return content
        }

        /// The memo, moved out (an empty one left in its place).
        mutating func takeMemo() -> MessageMemos.Memo {
            var memo = MessageMemos.Memo(day: day, bubble: nil, separator: nil)
            swap(&memo, &self.memo)
            return memo
        }
    }

    func rows(
        for message: Message, index: Int, memo: MessageMemos.Memo?, after previous: ConversationLayout.LastMessage?,
        width: Double, names: [String: String], isGroup: Bool
    ) throws(LayoutError) -> MessageRows {
        let day = memo?.day ?? dateTexts.localDay(message.date)
        var bubbleMemo = memo?.bubble
        var separatorHandle = memo?.separator
        let joining = joining(message, day: day, after: previous)
        var separator: LabelLayout?
        if joining.separator {
            separator = try centredLabel(
                separatorString(message, newDay: joining.newDay), kind: .daySeparator,
                style: measurer.style.separatorText, width: width, reusing: &separatorHandle)
        }
        let continues = joining.continues
        let content: LayoutRow.Content
        let height: Double
        var spacing = measurer.style.rowSpacing
        var showsStatus = false
        switch message.kind {
        case .system:
            let label = try centredLabel(message.text ?? "", kind: .system, style: measurer.style.systemText, width: width)
            content = .system(index: index, label)
            height = label.frame.maxY + measurer.style.separatorPadding
        case .message:
            let context = context(for: message, continues: continues, names: names, isGroup: isGroup)
            let bubble = try measurer.layout(
                message, rowWidth: width, hasTail: true, time: bubbleTime(message),
                startsGroup: !continues, context: context, memo: &bubbleMemo)
            content = .message(index: index, bubble)
            height = bubble.maxY
            if continues { spacing = measurer.style.groupedSpacing }
            showsStatus = context.status != nil && !context.failed
        }
        return MessageRows(
            index: index, day: day, newDay: joining.newDay, continues: continues, separator: separator, content: content,
            height: height, spacing: spacing, showsStatus: showsStatus,
            memo: MessageMemos.Memo(day: day, bubble: bubbleMemo, separator: separatorHandle))
    }

    /// Adds `made`, the rows of `message`, at the end of `layout`: the previous bubble of its
    /// group loses its tail, and the previous outgoing one its status. What the layout keeps is
    /// moved out of `made` (which is left with empty rows and memo).
    func stitch(_ made: inout MessageRows, of message: Message, into layout: inout ConversationLayout) {
        let previous = layout.lastMessage
        if let label = made.separator.take() {
            layout.appendRow(
                .daySeparator(label), height: label.frame.maxY + measurer.style.separatorPadding,
                spacing: measurer.style.rowSpacing)
        }
        if message.kind == .message {
            if made.continues, let previous { layout.removeTail(ofRow: previous.row) }
            // The status shows under the last outgoing message only ("Failed" under each).
            if message.direction == .outgoing, let row = layout.statusRow {
                layout.removeStatus(ofRow: row)
                layout.statusRow = nil
            }
        }
        layout.appendRow(made.takeContent(), height: made.height, spacing: made.spacing)
        if made.showsStatus { layout.statusRow = layout.rows.count - 1 }
        layout.lastMessage = ConversationLayout.LastMessage(
            sender: message.sender, direction: message.direction,
            kind: message.kind, date: message.date, day: made.day,
            row: layout.rows.count - 1)
        layout.nextMessageIndex = made.index + 1
        layout.memos.items.append(made.takeMemo())
    }

    func centredLabel(
        _ string: String, kind: LabelLayout.Kind, style textStyle: TextStyle,
        width: Double
    ) throws(LayoutError) -> LabelLayout {
        var handle: PreparedHandle?
        return try centredLabel(string, kind: kind, style: textStyle, width: width, reusing: &handle)
    }

    func centredLabel(
        _ string: String, kind: LabelLayout.Kind, style textStyle: TextStyle,
        width: Double, reusing handle: inout PreparedHandle?
    ) throws(LayoutError) -> LabelLayout {
        let maxWidth = max(1, width * measurer.style.maxWidthShare)
        let (text, wrap) = try measurer.measure(string, style: textStyle, maxWidth: maxWidth, reusing: &handle)
        let frame = Rect(x: (width - text.width) / 2, y: measurer.style.separatorPadding, width: text.width, height: text.height)
        return LabelLayout(kind: kind, string: string, frame: frame, text: text, wrapWidth: wrap)
    }
}
