import Foundation

/// How rendered conversations write days and times, in one time zone and one locale: the one
/// place dates become text for every renderer (the layout's day separators and bubble times, the
/// PDF header's date range, the HTML pages and their index).
///
///     let texts = DateTexts(timeZone: TimeZone(identifier: "Europe/Berlin")!, locale: Locale(identifier: "de_DE"))
///     texts.day(date)    // "Sonntag, 22. November 2026"
///     texts.time(date)   // "09:41"
///
/// Without a locale (or with `en_US_POSIX`) the texts are the fixed defaults: days
/// "Sunday, 22 November 2026", times "09:41" (24-hour), header dates "22 November 2026", months
/// "November 2026" — English, proleptic Gregorian, computed without a formatter. With a locale,
/// ICU's patterns for that locale (templates `EEEEdMMMMy`, `jmm`, `dMMMMy`, `MMMMy`) with its
/// weekday and month names and its 12/24-hour clock. Relative names ("Today", "Yesterday", in the
/// locale's words) only for day separators and only when a `now` is given: without it, the same
/// file renders the same whenever it is rendered.
///
/// Texts are cached per day and per minute of the day, so a long chat formats each only once.
public final class DateTexts: @unchecked Sendable {
    /// The zone days start in and times are shown in.
    public let timeZone: TimeZone
    /// nil: the fixed defaults.
    public let locale: Locale?
    /// The moment "today" and "yesterday" are counted from; nil: no relative names.
    public let now: Date?
    private var nowDay: Int?
    private let lock = NSLock()
    // Used under `lock` only: no dynamic exclusivity checks.
    @exclusivity(unchecked) private var days: [Int: String] = [:]
    @exclusivity(unchecked) private var times: [String?]
    private let dayFormatter: DateFormatter?
    private let timeFormatter: DateFormatter?
    private let shortFormatter: DateFormatter?
    private let monthFormatter: DateFormatter?
    /// The offset of a zone that has only one (UTC, a fixed offset): no look-up in the zone's
    /// rules (which takes a lock every thread laying out waits on) for every date.
    private let fixedOffset: Int?
    private static let fixedZones: Set<String> = ["UTC", "GMT", "Etc/UTC", "Etc/GMT", "Etc/Universal", "Etc/Zulu", "Universal", "Zulu"]

    /// Texts in `timeZone`, in `locale`'s words and clock (nil: fixed English, 24-hour), with
    /// "Today" and "Yesterday" relative to `now` when it is given.
    public init(timeZone: TimeZone, locale: Locale? = nil, now: Date? = nil) {
        self.timeZone = timeZone
        fixedOffset = Self.fixedZones.contains(timeZone.identifier) ? timeZone.secondsFromGMT() : nil
        let locale = locale?.identifier == "en_US_POSIX" ? nil : locale
        self.locale = locale
        self.now = now
        times = Array(repeating: nil, count: 1440)
        func formatter(_ template: String) -> DateFormatter? {
            guard let locale else { return nil }
            let f = DateFormatter()
            f.locale = locale
            // Day numbers are formatted as UTC noon (below): no zone, no DST.
            f.timeZone = TimeZone(identifier: "UTC")
            f.calendar = Calendar(identifier: .gregorian)
            f.dateFormat = DateFormatter.dateFormat(fromTemplate: template, options: 0, locale: locale) ?? template
            return f
        }
        dayFormatter = formatter("EEEEdMMMMy")
        timeFormatter = formatter("jmm")
        shortFormatter = formatter("dMMMMy")
        monthFormatter = formatter("MMMMy")
        if let now { nowDay = localDay(now) }
    }

    /// True when the texts are the fixed defaults (a renderer may then use its own fast path).
    public var isDefault: Bool { locale == nil }

    // MARK: Instants

    /// The day separator of the day `date` falls on in `timeZone`.
    public func day(_ date: Date) -> String { day(number: localDay(date)) }

    /// The time shown with a message.
    public func time(_ date: Date) -> String {
        let s = localSeconds(date)
        let second = s - Int((Double(s) / 86_400).rounded(.down)) * 86_400
        return time(hour: second / 3600, minute: second / 60 % 60)
    }

    /// The day separator and the time, for themes that show times in separators only
    /// ("Tuesday, 14 November 2023, 09:41").
    public func dayAndTime(_ date: Date) -> String { day(date) + ", " + time(date) }

    /// The delivery status under an outgoing message: "Sent", "Delivered", "Read 09:41" (with
    /// the read time when known), "Failed".
    public func status(_ status: MessageStatus, at date: Date?) -> String {
        switch status {
        case .sending: return "Sending…"
        case .sent: return "Sent"
        case .delivered: return "Delivered"
        case .read: return date.map { "Read " + time($0) } ?? "Read"
        case .failed: return "Failed"
        }
    }

    /// "22 November 2026" (the PDF header's date range).
    public func shortDay(_ date: Date) -> String { shortDay(number: localDay(date)) }

    /// Days since 1970-01-01 of the local date of `date` in `timeZone`.
    public func localDay(_ date: Date) -> Int { Int((Double(localSeconds(date)) / 86_400).rounded(.down)) }

    private func localSeconds(_ date: Date) -> Int {
        let t = date.timeIntervalSince1970
        guard t.isFinite, abs(t) < 1e14 else { return 0 }
        return Int((t + Double(fixedOffset ?? timeZone.secondsFromGMT(for: date))).rounded(.down))
    }

    // MARK: Local days and times

    /// The time text of a local hour (0…23) and minute.
    public func time(hour: Int, minute: Int) -> String {
        let i = (hour * 60 + minute) % 1440
        // The fixed 24-hour texts are made once for all, read without the lock.
        guard let timeFormatter else { return Self.defaultTimes[i] }
        lock.lock(); defer { lock.unlock() }
        if let hit = times[i] { return hit }
        let text = timeFormatter.string(from: Date(timeIntervalSince1970: TimeInterval(i * 60)))
        times[i] = text
        return text
    }

    /// "00:00" … "23:59", by minute of the day.
    private static let defaultTimes: [String] = (0..<1440).map { two($0 / 60) + ":" + two($0 % 60) }

    /// The day separator of a local day (days since 1970-01-01).
    public func day(number day: Int) -> String {
        lock.lock(); defer { lock.unlock() }
        if let hit = days[day] { return hit }
        var text = dayFormatter.map { $0.string(from: Self.noon(day)) } ?? Self.defaultDayLabel(day)
        if let nowDay, day == nowDay || day == nowDay - 1 { text = relativeName(day, from: nowDay) }
        if days.count > 100_000 { days.removeAll() }
        days[day] = text
        return text
    }

    /// The short name of a weekday, by day number (days since 1970-01-01): "Mon".
    public func shortDay(number day: Int) -> String {
        shortFormatter.map { $0.string(from: Self.noon(day)) } ?? Self.defaultShortDayLabel(day)
    }

    /// The name of the month the day number falls in: "March".
    public func month(number day: Int) -> String {
        monthFormatter.map { $0.string(from: Self.noon(day)) } ?? Self.defaultMonthLabel(day)
    }

    /// "Today" / "Yesterday" in the locale's words, first letter capitalised ("Heute", "Hier").
    private func relativeName(_ day: Int, from today: Int) -> String {
        guard let locale else { return day == today ? "Today" : "Yesterday" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let style = Date.AnchoredRelativeFormatStyle(
            anchor: Self.noon(day), allowedFields: [.day], presentation: .named,
            unitsStyle: .wide, locale: locale, calendar: calendar)
        let word = style.format(Self.noon(today))
        return word.prefix(1).uppercased(with: locale) + word.dropFirst()
    }

    // MARK: The fixed defaults

    static let weekdays = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]
    static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August",
        "September", "October", "November", "December"
    ]

    /// "Tuesday, 14 November 2023". Before the Gregorian reform (and far outside any chat)
    /// Foundation's calendar is the reference, as it is for day boundaries.
    public static func defaultDayLabel(_ day: Int) -> String {
        if day < -141_427 || day > 2_932_896 {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = TimeZone(identifier: "UTC")
            f.dateFormat = "EEEE, d MMMM yyyy"
            return f.string(from: noon(day))
        }
        let c = WallTime.civil(day)
        let weekday = weekdays[((day % 7) + 7) % 7]
        var year = String(c.year)
        if c.year >= 0, year.count < 4 { year = String(repeating: "0", count: 4 - year.count) + year }
        return "\(weekday), \(c.day) \(months[c.month - 1]) \(year)"
    }

    /// "14 November 2023".
    public static func defaultShortDayLabel(_ day: Int) -> String {
        let c = WallTime.civil(day)
        return "\(c.day) \(months[c.month - 1]) \(c.year)"
    }

    /// "November 2023".
    public static func defaultMonthLabel(_ day: Int) -> String {
        let c = WallTime.civil(day)
        return "\(months[c.month - 1]) \(c.year)"
    }

    private static func noon(_ day: Int) -> Date { Date(timeIntervalSince1970: Double(day) * 86_400 + 43_200) }
    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
