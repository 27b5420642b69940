import BubbleCore
import BubbleText
import Foundation

/// Days and times of messages in one time zone, as `ConversationLayouter` shows them (day
/// separators "EEEE, d MMMM yyyy", times "HH:mm", en_US_POSIX, Gregorian), without a
/// `Calendar` or `DateFormatter` call per message: the zone's offset is looked up once per
/// offset period (until the next transition) and the civil date is integer arithmetic.
struct HTMLClock {
    let zone: TimeZone
    private var validFrom = Double.infinity
    private var validUntil = -Double.infinity
    private var offset = 0.0

    init(zone: TimeZone) { self.zone = zone }

    /// A moment in local time: the day number (days since 1970-01-01, local) and the second of
    /// that day.
    struct Local: Hashable {
        var day: Int
        var second: Int
        var hour: Int { second / 3600 }
        var minute: Int { second / 60 % 60 }
    }

    mutating func local(_ date: Date) -> Local {
        let t = date.timeIntervalSince1970
        guard t.isFinite, abs(t) < 1e14 else { return Local(day: 0, second: 0) }
        if !(t >= validFrom && t < validUntil) {
            offset = Double(zone.secondsFromGMT(for: date))
            validFrom = t
            // Offsets change at transitions; re-check at least weekly in case a zone's rule
            // change is not reported as one.
            let next = zone.nextDaylightSavingTimeTransition(after: date)?.timeIntervalSince1970 ?? .infinity
            validUntil = min(next, t + 7 * 86_400)
        }
        let seconds = (t + offset).rounded(.down)
        let day = Int((seconds / 86_400).rounded(.down))
        return Local(day: day, second: Int(seconds) - day * 86_400)
    }

    /// Month number for "by month" pages: year × 12 + month − 1.
    static func monthKey(_ day: Int) -> Int {
        let c = WallTime.civil(day)
        return c.year * 12 + c.month - 1
    }

    /// "Tuesday, 14 November 2023" — `ConversationLayouter`'s default day separator text
    /// (`DateTexts`, where every date text is made).
    static func dayLabel(_ day: Int) -> String { DateTexts.defaultDayLabel(day) }
}
