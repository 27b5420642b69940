import Foundation

/// A wall-clock date and time with no time zone: what a WhatsApp line ("22/11/2026, 09:41") or a
/// Telegram `date` without `date_unixtime` says. It becomes an instant only once a zone is chosen
/// (`--tz`); the model keeps it so that writing the conversation back loses nothing, whatever
/// zone it was read in (even a time that falls in a daylight-saving gap of that zone).
public struct WallTime: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Year of the proleptic Gregorian calendar.
    public var year: Int
    /// Month, 1…12.
    public var month: Int
    /// Day of the month, 1…31.
    public var day: Int
    /// Hour, 0…23.
    public var hour: Int
    /// Minute, 0…59.
    public var minute: Int
    /// Second, 0…59.
    public var second: Int

    /// nil for an impossible date or time (month 13, 31 April, 25:00, a year beyond ±100,000,
    /// whose seconds would overflow).
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        guard (-100_000...100_000).contains(year), (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        self.year = year; self.month = month; self.day = day
        self.hour = hour; self.minute = minute; self.second = second
    }

    /// The wall-clock time an instant shows in `zone`.
    public init(_ date: Date, in zone: TimeZone) {
        let seconds = Int((date.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: date))).rounded(.down))
        let days = Int((Double(seconds) / 86_400).rounded(.down))
        let (y, m, d) = Self.civil(days)
        let rest = seconds - days * 86_400
        self.year = y; self.month = m; self.day = d
        self.hour = rest / 3600; self.minute = rest / 60 % 60; self.second = rest % 60
    }

    /// Days since 1970-01-01 of the date.
    public var dayNumber: Int { Self.daysFromCivil(year: year, month: month, day: day) }
    /// Seconds since 1970-01-01T00:00 counted on the wall clock (no zone).
    public var localSeconds: Int { dayNumber * 86_400 + hour * 3600 + minute * 60 + second }

    /// The instant this wall-clock time is in `zone`. In a daylight-saving gap (a time the clocks
    /// skip) it is read with the offset before the gap.
    public func instant(in zone: TimeZone) -> Date {
        let local = localSeconds
        return Date(timeIntervalSince1970: TimeInterval(local - Self.offset(forLocal: local, in: zone)))
    }

    /// The offset in force in `zone` at a local wall-clock time (seconds since 1970 read as UTC):
    /// guess with the offset at the same number read as UTC, then correct once.
    public static func offset(forLocal local: Int, in zone: TimeZone) -> Int {
        let guess = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(local)))
        return zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(local - guess)))
    }

    /// `2026-11-22T09:41:00`: ISO 8601 local date-time, no offset.
    public var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var y = String(abs(year))
        if y.count < 4 { y = String(repeating: "0", count: 4 - y.count) + y }
        return (year < 0 ? "-" : "") + "\(y)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))"
    }

    /// Reads `YYYY-MM-DDTHH:MM[:SS]` (no offset, no fraction); nil for anything else.
    public init?(iso text: String) {
        let b = Array(text.utf8)
        guard b.count == 16 || b.count == 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "), b[13] == UInt8(ascii: ":"),
            b.count == 16 || b[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ r: Range<Int>) -> Int? {
            var n = 0
            for i in r {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                n = n * 10 + Int(b[i] - 48)
            }
            return n
        }
        guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
            let h = number(11..<13), let mi = number(14..<16)
        else { return nil }
        let s = b.count == 19 ? number(17..<19) : 0
        guard let s else { return nil }
        self.init(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }

    public static func < (a: WallTime, b: WallTime) -> Bool { a.localSeconds < b.localSeconds }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// (year, month 1…12, day 1…31) of a day number (Howard Hinnant's `civil_from_days`).
    public static func civil(_ day: Int) -> (year: Int, month: Int, day: Int) {
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// The number of days in `month` (1…12) of `year`, leap years counted.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

extension WallTime: Codable {
    /// Coded as its ISO 8601 text without offset, `"2026-11-22T09:41:00"`.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = WallTime(iso: text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "\"\(text)\" is not a wall-clock time; expected YYYY-MM-DDTHH:MM:SS"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
