import Foundation

/// Every date and time shown in a conversation, formatted in one place (so locale and zone can
/// be changed here alone): message times, day separators, delivery status.
public struct TimeLabels {
    public let calendar: Calendar
    private let day: DateFormatter
    private let time: DateFormatter

    public init(timeZone: TimeZone, locale: Locale = Locale(identifier: "en_US_POSIX")) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
        day = DateFormatter()
        day.locale = locale
        day.timeZone = timeZone
        day.dateFormat = "EEEE, d MMMM yyyy"
        time = DateFormatter()
        time.locale = locale
        time.timeZone = timeZone
        time.dateFormat = "HH:mm"
    }

    /// "09:41".
    public func time(_ date: Date) -> String { time.string(from: date) }
    /// "Tuesday, 14 November 2023".
    public func day(_ date: Date) -> String { day.string(from: date) }
    /// "Tuesday, 14 November 2023, 09:41".
    public func dayAndTime(_ date: Date) -> String { day(date) + ", " + time(date) }

    /// "Sent", "Delivered", "Read 09:41" (with the read date when known), "Failed".
    public func status(_ status: MessageStatus, at date: Date?) -> String {
        switch status {
        case .sending: return "Sending…"
        case .sent: return "Sent"
        case .delivered: return "Delivered"
        case .read: return date.map { "Read " + time($0) } ?? "Read"
        case .failed: return "Failed"
        }
    }
}
