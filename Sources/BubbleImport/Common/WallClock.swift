import BubbleCore
import Foundation

/// Turns wall-clock date-times (as WhatsApp and Telegram's `date` write them) into instants in one
/// time zone. Pure arithmetic for the calendar part; the zone's offset is asked once per day
/// (chat files are in date order), and per message only on a day the offset changes (DST).
struct WallClock {
    let timeZone: TimeZone
    private var cachedDay = Int.min
    private var cachedOffset: Int?

    init(timeZone: TimeZone) { self.timeZone = timeZone }

    /// The instant of a proleptic-Gregorian wall-clock time, or nil for an impossible date
    /// (month 13, 31 April, 25:00, a year beyond ±100,000…). In a DST gap the time is read with the offset before the gap.
    mutating func instant(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        // `WallTime` says what a date can be (a damaged "20333333333319-05-01" is none).
        guard let wall = WallTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second) else { return nil }
        let days = wall.dayNumber
        let local = days * 86_400 + hour * 3600 + minute * 60 + second
        if days != cachedDay {
            cachedDay = days
            let start = offset(forLocal: days * 86_400)
            let end = offset(forLocal: days * 86_400 + 86_399)
            cachedOffset = start == end ? start : nil
        }
        let offset = cachedOffset ?? offset(forLocal: local)
        return Date(timeIntervalSince1970: TimeInterval(local - offset))
    }

    private func offset(forLocal local: Int) -> Int { WallTime.offset(forLocal: local, in: timeZone) }
}
