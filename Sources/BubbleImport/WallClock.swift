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
    /// (month 13, 31 April, 25:00…). In a DST gap the time is read with the offset before the gap.
    mutating func instant(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
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

    /// Offset in force at a local wall-clock time: guess with the offset at the same number read
    /// as UTC, then correct once.
    private func offset(forLocal local: Int) -> Int {
        let guess = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(local)))
        return timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(local - guess)))
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
