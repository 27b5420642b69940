import Foundation

/// A conversation laid out for a scrolling list: the frame of every row at one width, and the
/// full geometry (`LayoutRow`) only of the rows asked for — the visible ones
/// (`ConversationLayouter.rows(in:of:)`).
///
/// A re-layout at another width (a resized window, `scrollingLayout(_:width:)`) finds every
/// row's new height from what the previous layout kept: a row whose texts keep their lines and
/// photos their size keeps its height; a text bubble's height otherwise needs only its line
/// count and last line (`TextEngine.summary`, no lines made) put through the bubble's
/// arithmetic. What neither covers (a reply snippet or a label that wraps, a photo grid or an
/// emoji-only line that changes size, typing) is measured in full.
///
///     var list = try layouter.scrollingLayout(conversation, width: 375)
///     list = try layouter.scrollingLayout(list, width: 414)
///     let visible = try layouter.rows(in: Rect(x: 0, y: scrollY, width: 414, height: 800), of: list)
///
/// Its rows are those `layout(_:width:)` makes, their heights equal. Their tops agree to 1e-9 pt
/// (when a status label moves to a later message, the full layout shifts the rows in between
/// by a subtraction, this one sums): equal too when no status label moved.
public struct ScrollingLayout: Sendable {
    /// The row width the conversation is laid out in (points).
    public internal(set) var width: Double
    /// Height of everything, from 0 to the bottom of the last row.
    public internal(set) var height: Double = 0
    /// The conversation laid out (appends add to it).
    public internal(set) var conversation: Conversation
    /// Rows measured in full since the last re-layout began (the others took the height
    /// formula or kept their height); a first layout and appends measure every row they add
    /// but, in a compact layout, the plain bubbles whose labels an earlier one had.
    public internal(set) var rowsMeasuredInFull = 0
    /// Rows the last re-layout found by the height formula (the rest of those not measured in
    /// full kept their height), and those a compact layout added by it since.
    public internal(set) var rowsByFormula = 0
    /// The top of every 64th row (`markShift`): the others are summed from there as the layout
    /// summed them (bottom = top + height, top = bottom + spacing), so they are the same numbers
    /// — 8 bytes a row fewer for every reader of a long conversation.
    var marks: [Double] = []
    /// Space above a row continuing a group, and above any other.
    var spacings = (row: 0.0, grouped: 0.0)
    static let markShift = 6
    var heights = RowHeights()
    var plan: [PlannedRow] = []
    /// Per message: what a re-layout reuses (prepared texts, links, days) and what its height
    /// formula needs.
    var memos = MessageMemos()
    var quick: [QuickBubble] = []
    /// Per message of a layout that holds its memos: the message text's prepared storage, not
    /// retained (the message's `BubbleMemo` in the same layout holds it for as long as this
    /// exists; a re-layout touches it only to read). Empty in a compact layout.
    var storages: [StorageRef?] = []
    var names: [String: String] = [:]
    var isGroup = false
    var last: ConversationLayout.LastMessage?
    var statusRow: Int?
    /// `statusRow`'s height without its status label, at the width it was stitched at: what
    /// the next outgoing message makes it (none: measured again).
    var statusRowShorter: (width: Double, height: Double)?
    /// Set by `ConversationLayouter.compact(_:)`: the messages and their prepared texts let go.
    var compacted: Compacted?
    /// A compact layout's plain bubbles by their labels, at its width (`BubbleTemplates`);
    /// shared by its copies (a cache: never part of its value).
    private var bubbleTemplates: BubbleTemplates?

    /// The templates a compact (`packing`) layout adds messages with (made, or made again after
    /// a re-layout, for its width); nil when it is not compact.
    mutating func templates(_ packing: Bool, _ layouter: ConversationLayouter) -> BubbleTemplates? {
        guard packing else { return nil }
        if bubbleTemplates?.width != width {
            let avatars = layouter.shows(layouter.style.avatars, group: isGroup)
            bubbleTemplates = BubbleTemplates(width: width, rooms: RowRooms(width: width, measurer: layouter.measurer, avatarColumn: avatars))
        }
        return bubbleTemplates
    }

    /// What a compact layout keeps instead of the messages: their count, each text's breaks as
    /// `TextEngine.packBreaks` packs them (message `k`'s words are `packed[offsets[k]..<offsets[k + 1]]`,
    /// none when empty), the photos of the messages that have some, and the message whose row
    /// shows the status (an outgoing message appended later takes it away).
    struct Compacted: Sendable {
        var count: Int
        var packed: [UInt32]
        var offsets: [UInt32]
        var images: [Int32: [ImageAttachment]]
        var statusMessage: Message?

        func words(_ k: Int) -> Range<Int> { Int(offsets[k])..<Int(offsets[k + 1]) }
    }

    init(width: Double, conversation: Conversation) {
        self.width = width
        self.conversation = conversation
        isGroup = conversation.isGroup
        for p in conversation.participants where !p.name.isEmpty { names[p.id] = p.name }
    }

    /// How many rows the conversation has (bubbles, separators, system lines, typing).
    public var rowCount: Int { plan.count }

    /// Space above row `i` (not the first).
    func spacing(before i: Int) -> Double {
        let p = plan[i]
        return p.kind == .message && p.has(PlannedRow.grouped) ? spacings.grouped : spacings.row
    }

    /// Row `i`'s top: from the mark before it, at most 63 rows summed.
    func top(ofRow i: Int) -> Double {
        var r = (i >> Self.markShift) << Self.markShift
        var t = marks[i >> Self.markShift]
        while r < i {
            let bottom = t + heights[r]
            r += 1
            t = bottom + spacing(before: r)
        }
        return t
    }

    /// Messages laid out (in a compact layout too).
    public var messageCount: Int { compacted?.count ?? conversation.messages.count }

    /// True after `ConversationLayouter.compact(_:)`: the layout holds no messages, only what its
    /// re-layouts need; rows in full and re-layouts take the messages they measure from the caller.
    public var isCompact: Bool { compacted != nil }

    /// Makes this compact layout keep `other`'s packed breaks instead of its own when they are
    /// the same (the same messages in the same text style: another reader's layout of the
    /// conversation, from the other side or at another width): one copy for both. False when
    /// they differ or either layout is not compact.
    public mutating func shareBreaks(with other: ScrollingLayout) -> Bool {
        guard let mine = compacted, let theirs = other.compacted, mine.count == theirs.count,
            mine.offsets == theirs.offsets, mine.packed == theirs.packed
        else { return false }
        compacted!.offsets = theirs.offsets
        compacted!.packed = theirs.packed
        return true
    }

    /// Message `k` when the layout holds it (a compact one holds only the one showing the status).
    func heldMessage(_ k: Int) -> Message? {
        guard let compacted else { return conversation.messages[k] }
        return compacted.statusMessage.flatMap { statusRow.map { plan[$0].index } == Int32(k) ? $0 : nil }
    }

    /// Message `k`'s photos.
    func images(of k: Int) -> [ImageAttachment] {
        guard let compacted else { return conversation.messages[k].images }
        return compacted.images[Int32(k)] ?? []
    }

    /// Row `i`'s rectangle: full width, from its top to its bottom.
    public func frame(ofRow i: Int) -> Rect {
        Rect(x: 0, y: top(ofRow: i), width: width, height: heights[i])
    }

    /// Indices of the rows that intersect `rect` (only its vertical extent matters).
    public func rowIndices(in rect: Rect) -> Range<Int> {
        ConversationLayout.rowIndices(in: rect, count: plan.count, top: { top(ofRow: $0) }, bottom: { top(ofRow: $0) + heights[$0] })
    }

    /// The row that shows message `k` (its bubble or system line; a day separator before it is
    /// the row above), nil when `k` is out of range. A binary search: rows are in message order.
    public func rowIndex(ofMessage k: Int) -> Int? {
        guard k >= 0, k < messageCount else { return nil }
        var lo = 0, hi = plan.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let row = plan[mid]
            let index = Int(row.index)
            // Typing rows come last; a separator sorts before its message's row.
            if row.kind == .typing || index > k || (index == k && row.kind != .separator) { hi = mid } else { lo = mid + 1 }
        }
        return lo < plan.count && plan[lo].kind != .typing && Int(plan[lo].index) == k ? lo : nil
    }

    /// The message row `i` shows (a day separator belongs to the message below it); nil for a
    /// typing row.
    public func messageIndex(ofRow i: Int) -> Int? {
        plan[i].kind == .typing ? nil : Int(plan[i].index)
    }

    /// The top of message `k`'s first row: its day separator when it has one, else its bubble or
    /// system line; nil when `k` is out of range.
    public func top(ofMessage k: Int) -> Double? {
        guard let r = rowIndex(ofMessage: k) else { return nil }
        if r > 0, plan[r - 1].kind == .separator, Int(plan[r - 1].index) == k { return top(ofRow: r - 1) }
        return top(ofRow: r)
    }

    /// Bytes this layout keeps per row and per message (its arrays' elements; a compact one's
    /// packed breaks too; not the conversation nor the engine's prepared texts).
    public var bytesPerMessage: Double {
        let perRow = MemoryLayout<Float>.stride + MemoryLayout<PlannedRow>.stride
        let perMessage = MemoryLayout<QuickBubble>.stride + (compacted == nil ? MemoryLayout<MessageMemos.Memo>.stride + 8 : 4)
        let packed = (compacted?.packed.count ?? 0) * 4
        let messages = max(1, messageCount)
        return Double(perRow * plan.count + 8 * marks.count + perMessage * quick.count + packed) / Double(messages)
    }

    /// Room for `messages` messages in all (and their rows), so that appends up to there do
    /// not grow any array (a growth copies the whole conversation once).
    public mutating func reserveCapacity(_ messages: Int) {
        let rows = messages + messages / 8 + conversation.typing.count
        if compacted == nil { conversation.messages.reserveCapacity(messages); memos.items.reserveCapacity(messages) }
        plan.reserveCapacity(rows); marks.reserveCapacity(rows >> Self.markShift + 1); heights.reserveCapacity(rows)
        quick.reserveCapacity(messages)
        if compacted == nil { storages.reserveCapacity(messages) }
    }

    /// Adds a row below the others, its spacing by `spacing(before:)` (the rule its top is
    /// summed by later), counted as measured in full or (`byFormula`) by the height formula.
    mutating func appendRow(_ row: PlannedRow, height rowHeight: Double, byFormula: Bool = false) {
        plan.append(row)
        let i = plan.count - 1
        let top = i == 0 ? 0 : height + spacing(before: i)
        if i & ((1 << Self.markShift) - 1) == 0 { marks.append(top) }
        if byFormula { rowsByFormula += 1 } else { rowsMeasuredInFull += 1 }
        heights.append(rowHeight)
        height = top + rowHeight
    }
}

/// What a row is, whatever the width: its kind, the message (or typing participant) it shows,
/// and what later messages changed about it.
struct PlannedRow: Sendable {
    enum Kind: UInt8, Sendable { case separator, message, system, typing }
    // One word (every reader of a long conversation keeps one a row): kind in bits 0–1, flags
    // in 2–5, the index above.
    private var bits: UInt32

    init(kind: Kind, flags: UInt8 = 0, index: Int32) {
        bits = UInt32(kind.rawValue) | UInt32(flags & 0xF) << 2 | UInt32(index) << 6
    }

    /// Messages a scrolling layout holds at most (the index's 26 bits).
    static let indexLimit = 1 << 26

    var kind: Kind { Kind(rawValue: UInt8(bits & 3))! }
    var flags: UInt8 {
        get { UInt8((bits >> 2) & 0xF) }
        set { bits = bits & ~(0xF << 2) | UInt32(newValue & 0xF) << 2 }
    }
    /// The message's index (a separator: of the message after it); typing: index in `typing`.
    var index: Int32 { Int32(bits >> 6) }

    static let grouped: UInt8 = 1  // continues the group above (grouped spacing, no name)
    static let tailRemoved: UInt8 = 2  // the next message continues the group
    static let statusRemoved: UInt8 = 4  // a later outgoing message shows the status now
    static let newDay: UInt8 = 8  // a separator for a new day (not for a pause)

    func has(_ flag: UInt8) -> Bool { flags & flag != 0 }
}

/// A message's rows as `ConversationLayouter.place` adds them to a scrolling layout
/// (`placed(_:of:packing:into:)`): small, so that the thread that measured the bubble lets it go.
struct PlacedRows {
    var index: Int
    var newDay, continues, showsStatus: Bool
    var separator: Double?  // the separator row's height (nil: none before the message)
    var height, shorter: Double  // the row's height, and without the status label
    var quick: QuickBubble
    var words: Range<Int>  // where its text's packed breaks are in its chunk's words
    /// The message as the next one joins it (its row set when placed).
    var last: ConversationLayout.LastMessage
    /// Kept by a layout that is not compact (moved out of the rows).
    var memo: MessageMemos.Memo?
    /// The height is the formula's (`BubbleTemplates`), not a full measure's.
    var byFormula = false
}

/// What a message's row height at another width needs, read off a full layout of its bubble:
/// the natural widths of its one-line texts (a text keeps its layout, and so its height, in any
/// room at least that wide), and for the height formula the bubble's top, the lowest edge above
/// it and the heights of the labels that follow it.
struct QuickBubble: Sendable {
    // Kept small (40 bytes): a re-layout streams through one of these per message, and every
    // reader of a long conversation keeps one a message. Flags in one word; label widths as
    // Float16 rounded up (they are only compared with a room, so a wider figure can only send a
    // row to a full measure); heights and the text's widths as Float when exact (else the row
    // is measured in full).
    private var bits: UInt16 = 0
    private var needs: (row: Float16, bubble: Float16, reply: Float16, separator: Float16, system: Float16) = (0, 0, 0, .infinity, .infinity)
    private var heights: (top: Float, aboveMaxY: Float, status: Float, beside: Float, inside: Float) = (0, -.infinity, 0, 0, 0)
    private var widths: (text: Float, inside: Float) = (0, 0)

    private func bit(_ n: UInt16) -> Bool { bits & (1 << n) != 0 }
    private mutating func set(_ n: UInt16, _ on: Bool) { if on { bits |= 1 << n } else { bits &= ~(1 << n) } }

    /// Every label (and the reply snippet) is one line at its natural width: at a width where
    /// they all still fit, the row height changes only with the main text and the photos.
    var known: Bool {
        get { bit(0) && !bit(13) }
        set { set(0, newValue) }
    }
    /// The height formula applies: a text bubble, maybe with one photo; no reply, not
    /// emoji-only; its heights are exact as kept.
    var usable: Bool {
        get { bit(1) && !bit(12) }
        set { set(1, newValue) }
    }
    var hasStatus: Bool {
        get { bit(2) }
        set { set(2, newValue) }
    }
    var failed: Bool {
        get { bit(3) }
        set { set(3, newValue) }
    }
    var avatar: Bool {
        get { bit(4) }
        set { set(4, newValue) }
    }
    var beside: Bool {
        get { bit(5) }
        set { set(5, newValue) }
    }
    var inside: Bool {
        get { bit(6) }
        set { set(6, newValue) }
    }
    var emojiOnly: Bool {
        get { bit(7) }
        set { set(7, newValue) }
    }
    var textRightToLeft: Bool {
        get { bit(8) }
        set { set(8, newValue) }
    }
    /// The message's direction and whether it has photos (so a re-layout need not read it).
    var incoming: Bool {
        get { bit(9) }
        set { set(9, newValue) }
    }
    var hasImages: Bool {
        get { bit(10) }
        set { set(10, newValue) }
    }
    /// The message shows a text (a compact layout finds its packed breaks; none: measure in full).
    var hasText: Bool {
        get { bit(11) }
        set { set(11, newValue) }
    }

    /// Widest one-line label whose room comes from the row (time above or below, reactions,
    /// status, time beside); the sender's name (room: the widest bubble); the reply snippet;
    /// the separator row before the message (or a system message's own line).
    var needRow: Double {
        get { Double(needs.row) }
        set { needs.row = Self.up(newValue) }
    }
    var needBubble: Double {
        get { Double(needs.bubble) }
        set { needs.bubble = Self.up(newValue) }
    }
    var needReply: Double {
        get { Double(needs.reply) }
        set { needs.reply = Self.up(newValue) }
    }
    var separatorNeed: Double {
        get { Double(needs.separator) }
        set { needs.separator = Self.up(newValue) }
    }
    var systemNeed: Double {
        get { Double(needs.system) }
        set { needs.system = Self.up(newValue) }
    }

    /// The main text's natural width when it is one line (infinite when it wraps; 0 without
    /// text), and the time inside's: exact, they decide where that time goes (not exact as a
    /// Float: nothing is known).
    var textWidth: Double {
        get { Double(widths.text) }
        set { widths.text = exact(newValue, else: 13) }
    }
    var insideWidth: Double {
        get { Double(widths.inside) }
        set { widths.inside = exact(newValue, else: 13) }
    }

    /// The bubble's top, the lowest edge above it, the heights of the labels after it.
    var top: Double {
        get { Double(heights.top) }
        set { heights.top = exact(newValue) }
    }
    var aboveMaxY: Double {
        get { Double(heights.aboveMaxY) }
        set { heights.aboveMaxY = exact(newValue) }
    }
    var statusHeight: Double {
        get { Double(heights.status) }
        set { heights.status = exact(newValue) }
    }
    var besideHeight: Double {
        get { Double(heights.beside) }
        set { heights.beside = exact(newValue) }
    }
    var insideHeight: Double {
        get { Double(heights.inside) }
        set { heights.inside = exact(newValue) }
    }

    /// `x` as a Float; when that is not exactly `x`, `flag` is set (12: the formula is off; 13:
    /// nothing is known).
    private mutating func exact(_ x: Double, else flag: UInt16 = 12) -> Float {
        let f = Float(x)
        if Double(f) != x { set(flag, true) }
        return f
    }

    /// The smallest Float16 not below `x`.
    static func up(_ x: Double) -> Float16 {
        let f = Float16(x)
        return Double(f) >= x ? f : f.nextUp
    }

    /// Natural width of a one-line label or text (infinite when it wrapped or was cut).
    static func natural(_ text: TextLayout) -> Double { natural(text.summary) }
    static func natural(_ text: TextSummary) -> Double { text.lineCount == 1 && !text.isTruncated ? text.width : .infinity }
}

/// The widths a row's texts get at one row width (`BubbleMeasurer.layout`'s arithmetic).
struct RowRooms {
    var width: Double
    /// Widest bubble: incoming (an avatar column may take some), outgoing.
    var incomingBubble: Double, outgoingBubble: Double
    /// Room of the labels sized from the row (the narrowest of them).
    var row: Double

    init(width w: Double, measurer: BubbleMeasurer, avatarColumn: Bool) {
        let style = measurer.style
        width = w
        incomingBubble = measurer.maxBubbleWidth(rowWidth: w, indent: avatarColumn ? style.avatarSize + style.besideGap : 0)
        outgoingBubble = measurer.maxBubbleWidth(rowWidth: w, indent: 0)
        row = min(w - 2 * style.sideMargin, max(1, w / 2))
    }

    func bubble(_ direction: Direction) -> Double { direction == .incoming ? incomingBubble : outgoingBubble }
}

extension ConversationLayouter {
    /// `conversation` laid out at `width` for a scrolling list; with `previous` (the same
    /// conversation — same messages, typing and participants — at any width, by this
    /// layouter) a re-layout that measures in full only what its height formula cannot tell.
    public func scrollingLayout(
        _ conversation: Conversation, width: Double,
        reusing previous: ScrollingLayout? = nil
    ) throws(LayoutError) -> ScrollingLayout {
        try BubbleMeasurer.validate(rowWidth: width, style: measurer.style)
        if let previous, !previous.isCompact, previous.conversation.messages.count == conversation.messages.count,
            previous.conversation.typing == conversation.typing, previous.conversation.participants == conversation.participants
        {
            return try finish(previous, try relayout(previous, width: width), messages: [:])
        }
        var list = ScrollingLayout(width: width, conversation: conversation)
        list.spacings = (measurer.style.rowSpacing, measurer.style.groupedSpacing)
        list.reserveCapacity(conversation.messages.count)
        // As the full first layout: the other cores measure ahead, this walk stitches.
        try placeAll(conversation.messages, base: 0, into: &list)
        for (t, sender) in conversation.typing.enumerated() { try addTyping(sender, index: t, to: &list) }
        return list
    }

    /// `list`'s conversation re-laid out at `width` (a resized list). A compact list
    /// (`compact(_:)`) is re-laid out with `relayout(_:width:)` and `finish(_:_:messages:)`:
    /// it needs the messages its rows measured in full show.
    public func scrollingLayout(_ list: ScrollingLayout, width: Double) throws(LayoutError) -> ScrollingLayout {
        if list.isCompact { return try finish(list, try relayout(list, width: width), messages: [:]) }
        return try scrollingLayout(list.conversation, width: width, reusing: list)
    }

    /// Adds one message at the end (after a typing indicator, as `append(_:to:)` on a full
    /// layout does): one message measured; the previous bubble may lose its tail, and the last
    /// outgoing one its status (that row gets shorter and the rows after it move up).
    public func append(_ message: Message, to list: inout ScrollingLayout) throws(LayoutError) {
        let k = list.messageCount
        if list.compacted != nil { list.compacted!.count += 1 } else { list.conversation.messages.append(message) }
        try add(message, index: k, to: &list)
    }

    /// Adds `messages` at the end, measured on every core as a first layout measures (`append`
    /// one by one otherwise): how a long conversation is laid out chunk by chunk, compact from
    /// the first chunk, without ever holding all its messages.
    public func extend(_ list: inout ScrollingLayout, with messages: [Message]) throws(LayoutError) {
        guard list.conversation.typing.isEmpty, !messages.isEmpty else {
            for m in messages { try append(m, to: &list) }
            return
        }
        let base = list.messageCount
        if list.compacted != nil { list.compacted!.count += messages.count } else { list.conversation.messages += messages }
        try placeAll(messages, base: base, into: &list)
    }

    /// Adds `messages` (from index `base` on) to `list`, measured on every core (`RowPipeline`):
    /// the workers keep only what `place` needs of each bubble (a compact list: its packed
    /// breaks, no memo) and let the rest go on the thread that made it.
    private func placeAll(_ messages: [Message], base: Int, into list: inout ScrollingLayout) throws(LayoutError) {
        let width = list.width, names = list.names, isGroup = list.isGroup, packing = list.compacted != nil
        let templates = list.templates(packing, self)
        try RowPipeline.forEachMessage(messages, layouter: self, base: base, previous: list.last) { (i, after, words, slot) throws(LayoutError) in
            try placedRows(
                messages[i], index: base + i, after: after, width: width, names: names, isGroup: isGroup,
                packing: packing, templates: templates, slot: slot, into: &words)
        } _: { (k, made, words) throws(LayoutError) in
            guard let made else { return try add(messages[k - base], index: k, to: &list) }
            try place(&made.pointee, words: words[made.pointee.words], into: &list) { messages[k - base] }
        }
    }

    /// Lets go of `list`'s messages and prepared texts, keeping per message what a re-layout's
    /// height formula needs (its text's breaks as the engine packs them, ~4 bytes a word; its
    /// photos' sizes): a long conversation then costs its frames and a few dozen bytes a message.
    /// Rows in full (`rows(in:of:messages:)`) and re-layouts (`relayout(_:width:)`) then take
    /// the messages they show or measure from the caller.
    public func compact(_ list: inout ScrollingLayout) {
        guard list.compacted == nil else { return }
        let count = list.conversation.messages.count
        var packed: [UInt32] = []
        packed.reserveCapacity(count * 12)
        var offsets: [UInt32] = []
        offsets.reserveCapacity(count + 1)
        offsets.append(0)
        let status = list.statusRow.map { list.conversation.messages[Int(list.plan[$0].index)] }
        var compacted = ScrollingLayout.Compacted(count: count, packed: packed, offsets: offsets, images: [:], statusMessage: status)
        // Each text's packed breaks (none when the engine packs none: its rows are then measured
        // in full) and photos.
        for (k, message) in list.conversation.messages.enumerated() {
            if let memo = list.memos.items[k].bubble, memo.hasPrepared, let storage = memo.storage {
                _ = measurer.fastPath?.packBreaks(ofStorage: storage, into: &compacted.packed)
            }
            compacted.offsets.append(UInt32(compacted.packed.count))
            if !message.images.isEmpty { compacted.images[Int32(k)] = message.images }
        }
        list.compacted = compacted
        list.conversation.messages = []
        list.memos.items = []
        list.storages = []
    }

    /// The full geometry of the rows that intersect `rect`, as `ConversationLayout.rows(in:)`
    /// gives them.
    public func rows(in rect: Rect, of list: ScrollingLayout) throws(LayoutError) -> [LayoutRow] {
        try rows(in: rect, of: list, messages: [:])
    }

    /// `rows(in:of:)` of a compact list (`compact(_:)`): `messages` holds the messages the rows
    /// show, by index (those of `messageIndex(ofRow:)` for the rows of `rowIndices(in:)`).
    public func rows(in rect: Rect, of list: ScrollingLayout, messages: [Int: Message]) throws(LayoutError) -> [LayoutRow] {
        var out: [LayoutRow] = []
        for i in list.rowIndices(in: rect) { out.append(try row(i, of: list, messages: messages)) }
        return out
    }

    /// Row `i` in full.
    public func row(_ i: Int, of list: ScrollingLayout) throws(LayoutError) -> LayoutRow {
        try row(i, of: list, messages: [:])
    }

    /// Message `k` of `list`, or of `given` when the list does not hold it (compact).
    private func message(_ k: Int, of list: ScrollingLayout, _ given: [Int: Message]) throws(LayoutError) -> Message {
        if let m = list.heldMessage(k) ?? given[k] { return m }
        throw .messageNotHeld(k)
    }

    /// Row `i` in full, its message from `messages` when the list is compact.
    public func row(_ i: Int, of list: ScrollingLayout, messages: [Int: Message]) throws(LayoutError) -> LayoutRow {
        let planned = list.plan[i]
        let k = Int(planned.index)
        let content: LayoutRow.Content
        switch planned.kind {
        case .separator:
            var handle = list.memos.items.isEmpty ? nil : list.memos.items[k].separator
            let string = separatorString(try message(k, of: list, messages), newDay: planned.has(PlannedRow.newDay))
            content = .daySeparator(
                try centredLabel(
                    string, kind: .daySeparator, style: measurer.style.separatorText,
                    width: list.width, reusing: &handle))
        case .system:
            content = .system(
                index: k,
                try centredLabel(
                    try message(k, of: list, messages).text ?? "", kind: .system,
                    style: measurer.style.systemText, width: list.width))
        case .message:
            var bubble = try measuredBubble(k, planned, of: list, messages).0
            if planned.has(PlannedRow.statusRemoved) { bubble.labels.removeAll { $0.kind == .status } }
            if planned.has(PlannedRow.tailRemoved) {
                bubble.hasTail = false
                bubble.avatarFrame = nil
            }
            content = .message(index: k, bubble)
        case .typing:
            let sender = list.conversation.typing[k]
            content = .typing(sender: sender, try typingBubble(sender, width: list.width, names: list.names, isGroup: list.isGroup))
        }
        return LayoutRow(content: content, frame: list.frame(ofRow: i))
    }

    /// Message `k`'s bubble at `width` measured in full, as it was before later messages took
    /// its tail or status away, and its memo.
    private func measuredBubble(
        _ k: Int, _ planned: PlannedRow, of list: ScrollingLayout,
        _ given: [Int: Message]
    ) throws(LayoutError) -> (BubbleLayout, BubbleMemo?) {
        let message = try self.message(k, of: list, given)
        let continues = planned.has(PlannedRow.grouped)
        var memo = list.memos.items.isEmpty ? nil : list.memos.items[k].bubble
        let bubble = try measurer.layout(
            message, rowWidth: list.width, hasTail: true, time: bubbleTime(message),
            startsGroup: !continues,
            context: context(for: message, continues: continues, names: list.names, isGroup: list.isGroup),
            memo: &memo)
        return (bubble, memo)
    }

    // MARK: building

    private func add(_ message: Message, index k: Int, to list: inout ScrollingLayout) throws(LayoutError) {
        var words: [UInt32] = []
        let packing = list.compacted != nil
        var made = try placedRows(
            message, index: k, after: list.last, width: list.width, names: list.names, isGroup: list.isGroup,
            packing: packing, templates: list.templates(packing, self), slot: RowPipelineSlots.walker, into: &words)
        try place(&made, words: words[...], into: &list) { message }
    }

    /// What `place` needs of `made`, the rows of `message` (`rows(for:…)`), on the thread that
    /// made them: the bubble's height facts, its height without the status label, and its text's
    /// packed breaks appended to `words` (`PlacedRows.words` says where) or, not `packing`, its memo.
    func placed(_ made: inout MessageRows, of message: Message, packing: Bool, into words: inout [UInt32]) -> PlacedRows {
        var p = PlacedRows(
            index: made.index, newDay: made.newDay, continues: made.continues, showsStatus: made.showsStatus,
            separator: nil, height: made.height, shorter: made.height, quick: QuickBubble(), words: words.count..<words.count,
            last: ConversationLayout.LastMessage(
                sender: message.sender, direction: message.direction, kind: message.kind, date: message.date, day: made.day, row: -1))
        if let label = made.separator {
            p.quick.separatorNeed = QuickBubble.natural(label.text)
            p.separator = label.frame.maxY + measurer.style.separatorPadding
        }
        switch made.content {
        case let .system(_, label):
            p.quick.systemNeed = QuickBubble.natural(label.text)
        case let .message(_, bubble):
            record(bubble, of: message, memo: made.memo.bubble, into: &p.quick)
            if made.showsStatus {
                var shorter = bubble
                shorter.labels.removeAll { $0.kind == .status }
                p.shorter = shorter.maxY
            }
        case .daySeparator, .typing:
            preconditionFailure("rows(for:) makes system lines and bubbles")
        }
        if !packing {
            p.memo = made.takeMemo()
        } else if let memo = made.memo.bubble, memo.hasPrepared, let storage = memo.storage {
            _ = measurer.fastPath?.packBreaks(ofStorage: storage, into: &words)
            p.words = p.words.lowerBound..<words.count
        }
        return p
    }

    /// Adds a message's rows at the end of `list`: its plan, frames and height facts; the
    /// previous bubble of its group loses its tail, and the previous outgoing one its status. A
    /// compact list keeps `words` (its packed breaks), its photos and, when it shows the status,
    /// the message (`message` is asked only for those); another its memo (moved out of `made`).
    func place(_ made: inout PlacedRows, words: ArraySlice<UInt32>, into list: inout ScrollingLayout, _ message: () -> Message) throws(LayoutError) {
        let k = made.index
        guard k < PlannedRow.indexLimit else { throw .tooManyMessages(limit: PlannedRow.indexLimit - 1) }
        let previous = list.last
        if let height = made.separator {
            list.appendRow(PlannedRow(kind: .separator, flags: made.newDay ? PlannedRow.newDay : 0, index: Int32(k)), height: height)
        }
        if made.last.kind == .system {
            list.appendRow(PlannedRow(kind: .system, index: Int32(k)), height: made.height)
        } else {
            if made.continues, let previous { list.plan[previous.row].flags |= PlannedRow.tailRemoved }
            if made.last.direction == .outgoing, let row = list.statusRow {
                try removeStatus(ofRow: row, in: &list)
                list.statusRow = nil
            }
            list.appendRow(
                PlannedRow(kind: .message, flags: made.continues ? PlannedRow.grouped : 0, index: Int32(k)), height: made.height,
                byFormula: made.byFormula)
            if made.showsStatus {
                list.statusRow = list.plan.count - 1
                list.statusRowShorter = (list.width, made.shorter)
            }
        }
        list.last = made.last
        list.last!.row = list.plan.count - 1
        if let memo = made.memo.take() {
            list.storages.append(memo.bubble?.storage.map { StorageRef(object: Unmanaged.passUnretained($0)) })
            list.memos.items.append(memo)
        } else if list.compacted != nil {
            list.compacted!.packed += words
            list.compacted!.offsets.append(UInt32(list.compacted!.packed.count))
            if made.quick.hasImages || made.showsStatus {
                let message = message()
                if !message.images.isEmpty { list.compacted!.images[Int32(k)] = message.images }
                if made.showsStatus { list.compacted!.statusMessage = message }
            }
        }
        list.quick.append(made.quick)
    }

    /// A typing indicator for `sender` at the end, as `appendTyping(_:to:)` on a full layout.
    public func appendTyping(_ sender: String, to list: inout ScrollingLayout) throws(LayoutError) {
        list.conversation.typing.append(sender)
        try addTyping(sender, index: list.conversation.typing.count - 1, to: &list)
    }

    private func addTyping(_ sender: String, index t: Int, to list: inout ScrollingLayout) throws(LayoutError) {
        let bubble = try typingBubble(sender, width: list.width, names: list.names, isGroup: list.isGroup)
        list.appendRow(PlannedRow(kind: .typing, index: Int32(t)), height: bubble.maxY)
        list.last = nil
    }

    /// As `ConversationLayout.removeStatus(ofRow:)`: the row gets shorter by what the status
    /// label added, and the rows after it move up by as much.
    private func removeStatus(ofRow i: Int, in list: inout ScrollingLayout) throws(LayoutError) {
        list.plan[i].flags |= PlannedRow.statusRemoved
        let height: Double
        if let shorter = list.statusRowShorter, i == list.statusRow, shorter.width == list.width {
            // Known from when it was stitched: the bubble is measured as then (`rowHeight`).
            height = shorter.height
        } else {
            height = try rowHeight(i, of: &list)
        }
        list.statusRowShorter = nil
        let delta = list.heights[i] - height
        guard delta > 0 else { return }
        list.heights[i] = height
        // The rows after it move up: the marks after it by the difference (the rows between are
        // summed from their mark).
        for m in ((i >> ScrollingLayout.markShift) + 1)..<list.marks.count { list.marks[m] -= delta }
        list.height -= delta
    }

    /// What a re-layout needs of a message, from its bubble measured in full (before a later
    /// message removes its tail or status).
    private func record(_ bubble: BubbleLayout, of message: Message, memo: BubbleMemo?, into q: inout QuickBubble) {
        let separatorNeed = q.separatorNeed
        q = QuickBubble()
        q.separatorNeed = separatorNeed
        guard message.kind == .message else { return }
        let hasText = !(message.shownText ?? "").isEmpty
        q.hasText = hasText
        q.emojiOnly = bubble.emojiOnly
        q.incoming = message.direction == .incoming
        q.hasImages = !message.images.isEmpty
        q.textWidth = hasText ? QuickBubble.natural(bubble.text) : 0
        q.textRightToLeft = bubble.text.lines.last?.isRightToLeft ?? false
        q.top = bubble.bubble.minY
        q.avatar = bubble.avatarFrame != nil
        q.failed = bubble.failedBadge != nil
        if let reactions = bubble.reactions {
            q.aboveMaxY = max(q.aboveMaxY, reactions.frame.maxY)
            q.needRow = max(q.needRow, QuickBubble.natural(reactions.label.text))
        }
        if let reply = bubble.reply { q.needReply = QuickBubble.natural(reply.label.text) }
        for label in bubble.labels {
            let natural = QuickBubble.natural(label.text)
            switch label.kind {
            case .time:
                // Above the group; an emoji-only message's is below it.
                if !bubble.emojiOnly { q.aboveMaxY = max(q.aboveMaxY, label.frame.maxY) }
                q.needRow = max(q.needRow, natural)
            case .sender:
                q.aboveMaxY = max(q.aboveMaxY, label.frame.maxY)
                q.needBubble = natural
            case .status, .failedStatus:
                q.hasStatus = true
                q.statusHeight = label.frame.height
                q.needRow = max(q.needRow, natural)
            case .timeBeside:
                q.beside = true
                q.besideHeight = label.frame.height
                q.needRow = max(q.needRow, natural)
            case .timeInside:
                q.inside = true
                q.insideWidth = natural
                q.insideHeight = label.frame.height
            case .edited:
                // Not in the height formula: an edited message is measured in full again.
                q.needRow = .infinity
            case .daySeparator, .system, .badge:
                return
            }
        }
        q.known = q.needRow.isFinite && q.needBubble.isFinite && q.needReply.isFinite && q.insideWidth.isFinite
        q.usable =
            q.known && !bubble.emojiOnly && message.reply == nil && message.images.count <= 1
            && (hasText ? memo?.hasPrepared == true : message.images.count == 1 && !q.inside)
    }

    // MARK: re-layout

    /// The first half of `list` re-laid out at `width`: the rows whose heights need no full
    /// measure (on every core), and which messages the others show — what a compact list's
    /// caller reads (from its store) and hands to `finish(_:_:messages:)`.
    public func relayout(_ previous: ScrollingLayout, width: Double) throws(LayoutError) -> PendingRelayout {
        try BubbleMeasurer.validate(rowWidth: width, style: measurer.style)
        let count = previous.plan.count
        var byFormula = 0
        // Heights that need no full measure (NaN: measure in full), on every core for a long
        // conversation: rows are independent, each chunk writes its own part.
        let heights = [Double](unsafeUninitializedCapacity: count) { buffer, initialized in
            let chunks = count >= 8_192 ? min(8, UsableCores.count) : 1
            // Each chunk initialises its own part of the buffer.
            let out = Unchecked(buffer)
            // `knownHeights` only reads the layouter, and an engine that summarises storages
            // allows it from several threads at once (`TextEngine.summary(ofStorage:maxWidth:)`).
            let me = Unchecked(self)
            let formulaCounts = Unchecked(UnsafeMutableBufferPointer<Int>.allocate(capacity: chunks))
            defer { formulaCounts.value.deallocate() }
            DispatchQueue.concurrentPerform(iterations: chunks) { c in
                let range = (count * c / chunks)..<(count * (c + 1) / chunks)
                formulaCounts.value[c] = me.value.knownHeights(range, of: previous, width: width, into: out.value)
            }
            byFormula = formulaCounts.value.reduce(0, +)
            initialized = count
        }
        var needed: [Int] = []
        for i in 0..<count where heights[i].isNaN && previous.plan[i].kind != .typing {
            let k = Int(previous.plan[i].index)
            if needed.last != k { needed.append(k) }
        }
        return PendingRelayout(width: width, heights: heights, byFormula: byFormula, messagesToMeasure: needed)
    }

    /// `list` at `pending`'s width: the rows `relayout(_:width:)` left measured in full —
    /// their messages from `messages` when the list is compact — and every row's top.
    public func finish(_ previous: ScrollingLayout, _ pending: PendingRelayout, messages: [Int: Message]) throws(LayoutError) -> ScrollingLayout {
        var list = previous
        list.width = pending.width
        list.rowsMeasuredInFull = 0
        list.rowsByFormula = pending.byFormula
        let count = previous.plan.count
        guard pending.heights.count == count else { throw .invalidStyle("a re-layout begun on another list") }
        var heights = pending.heights
        for i in 0..<count where heights[i].isNaN { heights[i] = try rowHeight(i, of: &list, messages) }
        var marks = [Double]()
        marks.reserveCapacity(count >> ScrollingLayout.markShift + 1)
        let kept = RowHeights(heights)
        var bottom = 0.0
        for i in 0..<count {
            let top = i == 0 ? 0 : bottom + list.spacing(before: i)
            if i & ((1 << ScrollingLayout.markShift) - 1) == 0 { marks.append(top) }
            // The height as kept (exact: a Float when it is one, else aside).
            bottom = top + kept[i]
        }
        list.marks = marks
        list.heights = kept
        list.height = bottom
        return list
    }

    /// The heights of rows `range` at `width` that need no full measure, into `out` (NaN for
    /// the others). Reads only; safe to run on several threads for disjoint ranges.
    private func knownHeights(
        _ range: Range<Int>, of previous: ScrollingLayout, width: Double,
        into out: UnsafeMutableBufferPointer<Double>
    ) -> Int {
        var byFormula = 0
        let style = measurer.style
        // Day separators and system lines: their room now; in a compact layout, whose facts are
        // from the width each message was added at, also before (a label that did not fit then
        // was measured in full: its previous height is no guide).
        let labelRoom = max(1, width * style.maxWidthShare)
        let wasLabelRoom = previous.isCompact ? max(1, previous.width * style.maxWidthShare) : .infinity
        let avatarColumn = shows(style.avatars, group: previous.isGroup)
        let was = RowRooms(width: previous.width, measurer: measurer, avatarColumn: avatarColumn)
        let now = RowRooms(width: width, measurer: measurer, avatarColumn: avatarColumn)
        // A compact list's packed breaks (none: the memos' prepared texts).
        let packed = previous.compacted?.packed ?? [], offsets = previous.compacted?.offsets ?? []
        previous.quick.withUnsafeBufferPointer { quick in
            previous.storages.withUnsafeBufferPointer { storages in
                packed.withUnsafeBufferPointer { packed in
                    offsets.withUnsafeBufferPointer { offsets in
                        for i in range {
                            // The prepared text a few rows ahead is requested now (a cache miss each,
                            // else: prepared texts lie all over the heap).
                            if i + Self.prefetchDistance < range.upperBound {
                                let ahead = previous.plan[i + Self.prefetchDistance]
                                if ahead.kind == .message, !storages.isEmpty, let storage = storages[Int(ahead.index)] {
                                    measurer.fastPath?.prefetch(storage: UnsafeRawPointer(storage.object.toOpaque()))
                                }
                            }
                            let planned = previous.plan[i]
                            let k = Int(planned.index)
                            var h: Double?
                            switch planned.kind {
                            case .separator:
                                if quick[k].separatorNeed <= min(labelRoom, wasLabelRoom) { h = previous.heights[i] }  // one line that still fits
                            case .system:
                                if quick[k].systemNeed <= min(labelRoom, wasLabelRoom) { h = previous.heights[i] }
                            case .message:
                                let words = offsets.isEmpty ? nil : UnsafeBufferPointer(rebasing: packed[Int(offsets[k])..<Int(offsets[k + 1])])
                                h = messageHeight(
                                    quick.baseAddress! + k, k, of: previous, storage: storages.isEmpty ? nil : storages[k]?.object, words: words, planned,
                                    previous: previous.heights[i], was: was, now: now, byFormula: &byFormula)
                            case .typing:
                                break
                            }
                            (out.baseAddress! + i).initialize(to: h ?? .nan)
                        }
                    }
                }
            }
        }
        return byFormula
    }

    static let prefetchDistance = 6

    /// A message row's height at `now`'s width without measuring it in full, or nil: the
    /// previous height when its texts keep their lines and its photos their size (what a
    /// vertical layout depends on), else the formula when it applies.
    /// `words`: a compact list's packed breaks of the message's text (nil: not compact).
    private func messageHeight(
        _ q: UnsafePointer<QuickBubble>, _ k: Int, of list: ScrollingLayout, storage: Unmanaged<AnyObject>?,
        words: UnsafeBufferPointer<UInt32>?,
        _ planned: PlannedRow, previous: Double, was: RowRooms, now: RowRooms,
        byFormula: inout Int
    ) -> Double? {
        guard q.pointee.known else { return nil }
        let style = measurer.style
        let direction: Direction = q.pointee.incoming ? .incoming : .outgoing
        let padding = q.pointee.emojiOnly ? .zero : style.padding(for: direction)
        // Every label (and the reply snippet, the time inside) on one line in these rooms.
        func labelsFit(_ rooms: RowRooms) -> Bool {
            let maxBubble = rooms.bubble(direction)
            return q.pointee.needRow <= rooms.row && q.pointee.needBubble <= maxBubble
                && q.pointee.needReply <= max(1, maxBubble - style.replyPadding.horizontal)
                && (!q.pointee.inside || q.pointee.insideWidth <= max(1, maxBubble - padding.horizontal))
        }
        guard labelsFit(now) else { return nil }
        let maxBubble = now.bubble(direction)
        let maxText = max(1, maxBubble - padding.horizontal)
        let wasText = max(1, was.bubble(direction) - padding.horizontal)
        // A time inside goes after the last line when it fits there: the same choice as before?
        func timeFitsAfter(_ room: Double) -> Bool {
            measurer.timeFitsAfter(
                lastLine: q.pointee.textWidth, rightToLeft: q.pointee.textRightToLeft,
                time: q.pointee.insideWidth, room: room)
        }
        // One line before and now (the memo may be from another width than the previous one).
        // A compact layout's facts are from the width the message was added at: they also had
        // to hold at the previous width (else that height came from a full measure of another
        // case).
        if q.pointee.textWidth <= maxText, q.pointee.textWidth <= wasText, !q.pointee.inside || timeFitsAfter(wasText) == timeFitsAfter(maxText),
            !list.isCompact || labelsFit(was),
            !q.pointee.hasImages || photosKeepTheirSize(list.images(of: k), was: was.bubble(direction), now: maxBubble)
        {
            return previous
        }
        guard q.pointee.usable,
            let height = quickHeight(
                q, q.pointee.hasImages ? list.images(of: k) : [], storage: storage, words: words, planned,
                maxBubble: maxBubble)
        else { return nil }
        byFormula += 1
        return height
    }

    /// Photos are as large in a bubble at most `now` wide as at most `was` wide.
    private func photosKeepTheirSize(_ images: [ImageAttachment], was: Double, now: Double) -> Bool {
        guard !images.isEmpty, was != now else { return true }
        let inset = measurer.style.imageInset.horizontal
        let a = max(1, was - inset), b = max(1, now - inset)
        if images.count == 1 { return measurer.photoSize(images[0], maxWidth: a).size == measurer.photoSize(images[0], maxWidth: b).size }
        return measurer.gridCell(count: images.count, maxWidth: a).cell == measurer.gridCell(count: images.count, maxWidth: b).cell
    }

    /// Row `i`'s height at the list's width, measured in full (a message's height facts and a
    /// label's natural width are recorded again for the next re-layout).
    private func rowHeight(_ i: Int, of list: inout ScrollingLayout, _ given: [Int: Message] = [:]) throws(LayoutError) -> Double {
        list.rowsMeasuredInFull += 1
        let planned = list.plan[i]
        let k = Int(planned.index)
        let style = measurer.style
        switch planned.kind {
        case .message:
            var bubble = try measuredBubble(k, planned, of: list, given).0
            if list.isCompact {
                // The facts recorded when it was added stand (they hold at any width): the
                // records stay shared with the layouts at other widths made from this one.
            } else {
                // The memo the layout keeps (it holds the prepared text `record` points at).
                record(bubble, of: list.conversation.messages[k], memo: list.memos.items[k].bubble, into: &list.quick[k])
            }
            if planned.has(PlannedRow.statusRemoved) { bubble.labels.removeAll { $0.kind == .status } }
            return bubble.maxY
        case .separator, .system, .typing:
            switch try row(i, of: list, messages: given).content {
            case let .daySeparator(label):
                if !list.isCompact { list.quick[k].separatorNeed = QuickBubble.natural(label.text) }
                return label.frame.maxY + style.separatorPadding
            case let .system(_, label):
                if !list.isCompact { list.quick[k].systemNeed = QuickBubble.natural(label.text) }
                return label.frame.maxY + style.separatorPadding
            case let .typing(_, bubble), let .message(_, bubble):
                return bubble.maxY
            }
        }
    }

    /// A message's row height in a bubble at most `maxBubble` wide by the formula (a bubble
    /// `record` found `usable`, whose labels fit): the same arithmetic, in the same order, as
    /// `BubbleMeasurer.layout` and `BubbleLayout.maxY`, with the text's summary for its lines.
    func quickHeight(
        _ quick: UnsafePointer<QuickBubble>, _ images: [ImageAttachment], storage: Unmanaged<AnyObject>?,
        words: UnsafeBufferPointer<UInt32>?,
        _ planned: PlannedRow, maxBubble: Double
    ) -> Double? {
        let style = measurer.style
        let q = quick.pointee  // no references: a copy is free
        let padding = style.padding(for: q.incoming ? .incoming : .outgoing)
        let maxText = max(1, maxBubble - padding.horizontal)
        var text = TextLayout.empty.summary
        if let storage {
            // Not retained: the layout's memo holds it (`ScrollingLayout.storages`).
            guard
                let summary = storage._withUnsafeGuaranteedRef({ object in
                    measurer.measureSummary(storage: object, maxWidth: maxText, balanced: style.widthMode == .balanced)
                })
            else { return nil }
            text = summary
        } else if let words, q.hasText {
            // A compact list: the packed breaks stand for the prepared text.
            guard !words.isEmpty,
                let summary = measurer.measureSummary(packed: words, maxWidth: maxText, balanced: style.widthMode == .balanced)
            else { return nil }
            text = summary
        }
        return quickHeight(quick, images, text: text, planned, maxBubble: maxBubble)
    }

    /// `quickHeight` with the text's summary at the bubble's widest (empty without text).
    func quickHeight(
        _ quick: UnsafePointer<QuickBubble>, _ images: [ImageAttachment], text: TextSummary, _ planned: PlannedRow, maxBubble: Double
    ) -> Double {
        let style = measurer.style
        let q = quick.pointee  // no references: a copy is free
        let padding = style.padding(for: q.incoming ? .incoming : .outgoing)
        let maxText = max(1, maxBubble - padding.horizontal)
        var imageSize: Size?
        if q.hasImages, images.count == 1 {
            imageSize = measurer.photoSize(images[0], maxWidth: max(1, maxBubble - style.imageInset.horizontal)).size
        }
        let hasText = text.lineCount > 0
        var insideOwnLine = false
        if q.inside {
            let fitsAfter =
                hasText
                && measurer.timeFitsAfter(
                    lastLine: text.lastLineWidth, rightToLeft: text.lastLineIsRightToLeft,
                    time: q.insideWidth, room: maxText)
            insideOwnLine = !fitsAfter && hasText
        }
        let height = measurer.contentHeight(
            photo: imageSize?.height, text: hasText ? text.height : nil,
            ownLineTime: insideOwnLine ? q.insideHeight : nil, padding: padding)
        let bubble = Rect(x: 0, y: q.top, width: 0, height: max(height, style.minimumBubbleSize.height))
        var maxY = max(bubble.maxY, q.aboveMaxY)
        if q.inside, hasText {
            let imageBottom = imageSize.map { bubble.minY + style.imageInset.top + $0.height }
            let textTop = imageBottom.map { $0 + style.imageTextSpacing } ?? bubble.minY + padding.top
            let bottom = insideOwnLine ? textTop + text.height + q.insideHeight : textTop + text.lastLineTop + text.lastLineHeight
            maxY = max(maxY, bottom - q.insideHeight + q.insideHeight)
        }
        if q.hasStatus, !planned.has(PlannedRow.statusRemoved) {
            maxY = max(maxY, bubble.maxY + style.statusSpacing + q.statusHeight)
        }
        if q.failed {
            let s = style.failedBadgeSize
            maxY = max(maxY, bubble.midY - s / 2 + s)
        }
        if q.beside { maxY = max(maxY, bubble.maxY - q.besideHeight + q.besideHeight) }
        if q.avatar {
            let s = style.avatarSize
            maxY = max(maxY, max(0, bubble.maxY - s) + s)
        }
        return maxY
    }
}

/// A value handed to other threads where the compiler cannot tell it is safe: each use says why.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Row heights as Floats (4 bytes a row), the few a Float cannot hold exactly kept aside as
/// Doubles (NaN marks them).
struct RowHeights: Sendable {
    private var values: [Float] = []
    private var exact: [Int32: Double] = [:]

    init() {}
    init(_ heights: [Double]) {
        values.reserveCapacity(heights.count)
        for h in heights { append(h) }
    }

    var count: Int { values.count }
    mutating func reserveCapacity(_ n: Int) { values.reserveCapacity(n) }
    mutating func append(_ h: Double) {
        values.append(0)
        self[values.count - 1] = h
    }

    subscript(i: Int) -> Double {
        get {
            let f = values[i]
            return f.isNaN ? exact[Int32(i)]! : Double(f)
        }
        set {
            let f = Float(newValue)
            if Double(f) == newValue {
                values[i] = f
                if !exact.isEmpty { exact[Int32(i)] = nil }
            } else {
                values[i] = .nan
                exact[Int32(i)] = newValue
            }
        }
    }
}

/// A prepared text's storage, not retained (`ScrollingLayout.storages`): only read, by the
/// threads of a re-layout, while the layout's memo holds it.
struct StorageRef: @unchecked Sendable {
    let object: Unmanaged<AnyObject>
}

/// A re-layout begun by `ConversationLayouter.relayout(_:width:)`: the heights its formula
/// found, and the messages whose rows `finish(_:_:messages:)` measures in full.
public struct PendingRelayout: Sendable {
    /// The row width the re-layout is for (points).
    public let width: Double
    var heights: [Double]
    var byFormula: Int
    /// Indices of the messages the rows measured in full show, ascending, each once.
    public let messagesToMeasure: [Int]
}
