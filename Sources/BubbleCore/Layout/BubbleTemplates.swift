import Synchronization

/// The height facts (`QuickBubble`) of plain text bubbles measured in full, by all that is not
/// their text: direction, whether the bubble starts its group, its time where the style shows
/// it, its surroundings (`BubbleContext`: sender name, avatar, status). The labels of a bubble
/// are measured in rooms its text does not change, so the next plain bubble with the same key
/// has the same labels: a compact list gives it its height by the re-layout's formula
/// (`quickHeight`, the arithmetic of `BubbleMeasurer.layout` in the same order) from its text's
/// summary, without laying it out (`ConversationLayouter.placedRows`).
final class BubbleTemplates: Sendable {
    struct Key: Hashable, Sendable {
        var direction: Direction, startsGroup: Bool
        var time: String?, context: BubbleContext
    }

    /// The row width the facts hold at, and the rooms its bubbles have.
    let width: Double
    let rooms: RowRooms
    /// One table per pipeline thread (`RowPipelineSlots`): each is used by one thread at a
    /// time, its lock uncontended (but for copies of a list extended on two threads at once).
    private let tables: [Table]
    /// Keys a table holds at most (then it starts again).
    static let capacity = 2_048

    private final class Table: Sendable {
        let entries = Mutex<[Key: QuickBubble]>([:])
    }

    init(width: Double, rooms: RowRooms) {
        self.width = width
        self.rooms = rooms
        tables = (0..<RowPipelineSlots.count).map { _ in Table() }
    }

    func find(_ key: Key, slot: Int) -> QuickBubble? {
        tables[slot].entries.withLock { $0[key] }
    }

    func keep(_ facts: QuickBubble, for key: Key, slot: Int) {
        tables[slot].entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = facts
        }
    }
}

extension ConversationLayouter {
    /// Message `index` (`message`, after `after`) as `placed(_:of:packing:into:)` gives it from
    /// `rows(for:…)`; in a compact list (`packing`, with `templates`) a plain text bubble with
    /// no separator above it whose labels an earlier bubble had, by the formula.
    func placedRows(
        _ message: Message, index: Int, after: ConversationLayout.LastMessage?, width: Double, names: [String: String],
        isGroup: Bool, packing: Bool, templates: BubbleTemplates?, slot: Int, into words: inout [UInt32]
    ) throws(LayoutError) -> PlacedRows {
        var key: BubbleTemplates.Key?
        if packing, let templates, templates.width == width, Self.plain(message) {
            let day = dateTexts.localDay(message.date)
            let joining = joining(message, day: day, after: after)
            if !joining.separator {
                let context = context(for: message, continues: joining.continues, names: names, isGroup: isGroup)
                let style = measurer.style
                // The time counts where the bubble shows it: above a group's first bubble, inside or beside each.
                let shown = (!joining.continues && style.showsTimeAboveGroup) || style.timeInsideBubble || style.timeBeside
                let time = shown ? bubbleTime(message) : nil
                key = BubbleTemplates.Key(direction: message.direction, startsGroup: !joining.continues, time: time, context: context)
                if let facts = templates.find(key!, slot: slot),
                    let made = try byFormula(
                        message, facts, index: index, day: day, continues: joining.continues,
                        showsStatus: context.status != nil && !context.failed, maxBubble: templates.rooms.bubble(message.direction),
                        into: &words)
                {
                    return made
                }
            }
        }
        var made = try rows(for: message, index: index, memo: nil, after: after, width: width, names: names, isGroup: isGroup)
        let placed = placed(&made, of: message, packing: packing, into: &words)
        if let key, let templates, made.separator == nil, placed.quick.known, placed.quick.usable, !placed.quick.emojiOnly {
            templates.keep(placed.quick, for: key, slot: slot)
        }
        return placed
    }

    /// A text bubble with nothing but its text and labels: no photo, attachment, reply or reactions.
    static func plain(_ m: Message) -> Bool {
        m.kind == .message && m.images.isEmpty && m.attachment == nil && m.reply == nil && m.reactions.isEmpty
            && !(m.shownText ?? "").isEmpty
    }

    /// `message`'s rows with `facts` (a template's) for all but its text, its height by the
    /// formula; nil when its text needs the full measure (emoji only, not prepared, no summary).
    private func byFormula(
        _ message: Message, _ facts: QuickBubble, index: Int, day: Int, continues: Bool, showsStatus: Bool,
        maxBubble: Double, into words: inout [UInt32]
    ) throws(LayoutError) -> PlacedRows? {
        // What `memo(for:)` finds but the links, its text not kept (a compact list keeps neither).
        let memo = try measurer.memo(for: message, keeping: false)
        guard !memo.emojiOnly, memo.hasPrepared, let storage = memo.storage else { return nil }
        let style = measurer.style
        let maxText = max(1, maxBubble - style.padding(for: message.direction).horizontal)
        guard let text = measurer.measureSummary(storage: storage, maxWidth: maxText, balanced: style.widthMode == .balanced) else { return nil }
        // As `record` reads them off the bubble's text.
        var quick = facts
        quick.textWidth = QuickBubble.natural(text)
        quick.textRightToLeft = text.lastLineIsRightToLeft
        if !quick.known { quick.usable = false }
        let height = quickHeight(&quick, [], text: text, PlannedRow(kind: .message, index: Int32(index)), maxBubble: maxBubble)
        var shorter = height
        if showsStatus {
            shorter = quickHeight(
                &quick, [], text: text, PlannedRow(kind: .message, flags: PlannedRow.statusRemoved, index: Int32(index)), maxBubble: maxBubble)
        }
        let start = words.count
        _ = measurer.fastPath?.packBreaks(ofStorage: storage, into: &words)
        return PlacedRows(
            index: index, newDay: false, continues: continues, showsStatus: showsStatus, separator: nil,
            height: height, shorter: shorter, quick: quick, words: start..<words.count,
            last: ConversationLayout.LastMessage(
                sender: message.sender, direction: message.direction, kind: message.kind, date: message.date, day: day, row: -1),
            byFormula: true)
    }
}
