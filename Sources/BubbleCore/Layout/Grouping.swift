import Foundation

/// What the grouping rule knows of a message: who wrote it, on which side, its kind, its instant
/// and its local day (`DateTexts.localDay` in the conversation's time zone).
package struct GroupingKey: Hashable, Sendable {
    package var sender: String?
    package var direction: Direction
    package var kind: Message.Kind
    package var date: Date
    package var day: Int

    package init(sender: String?, direction: Direction, kind: Message.Kind, date: Date, day: Int) {
        self.sender = sender; self.direction = direction; self.kind = kind; self.date = date; self.day = day
    }

    package init(_ message: Message, day: Int) {
        self.init(sender: message.sender, direction: message.direction, kind: message.kind, date: message.date, day: day)
    }
}

/// How a message joins the one before it: a separator row before it (a new day, or a long
/// pause when times show in separators only; `newDay` tells which), and whether its bubble
/// `continues` the previous one's group (no tail on the previous bubble, no name or time above).
package struct RowJoining: Hashable, Sendable {
    package var separator: Bool
    package var newDay: Bool
    package var continues: Bool
}

extension LayoutStyle {
    /// The grouping rule, the one every renderer follows (Cairo's layout and the HTML writer):
    /// a message continues the previous one's group when both are messages (not system lines) of
    /// the same sender on the same side, on the same day with no separator between them, in
    /// order and at most `groupingInterval` seconds apart. A separator comes with a new day, and
    /// with times in separators only (`timeInDaySeparator`) after a pause over `timeSeparatorGap`.
    package func joining(_ message: GroupingKey, after previous: GroupingKey?) -> RowJoining {
        guard let p = previous else { return RowJoining(separator: true, newDay: true, continues: false) }
        let newDay = p.day != message.day
        let pause = timeInDaySeparator && message.date.timeIntervalSince(p.date) > timeSeparatorGap
        let continues =
            !(newDay || pause) && message.kind == .message && p.kind == .message
            && p.sender == message.sender && p.direction == message.direction
            && message.date >= p.date && message.date.timeIntervalSince(p.date) <= groupingInterval
        return RowJoining(separator: newDay || pause, newDay: newDay, continues: continues)
    }
}
