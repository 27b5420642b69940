/// The date-time prefix that starts a WhatsApp message line, read in one pass over the line's
/// bytes (no regular expressions, no Foundation: it runs on every line of the export).
///
///     12/24/19, 11:23 - Ann: text                 Android, US
///     03.08.21, 12:30 - Ann: text                 Android, dotted (de, ru…)
///     2023-12-20, 5:46 p.m. - Ann: text           Android, ISO date, Canadian English
///     28/3/2025, 9:29 p. m. - Ann: text           Android, Spanish
///     [14/10/2021, 3:34:09 PM] Ann: text          iOS (U+202F before PM, U+200E at line start)
///
/// The date's fields are kept as written: which is the day and which the month is only known
/// once the whole file has been read.
struct WhatsAppLine: Equatable {
    enum Style: Equatable { case android, ios }
    enum Meridiem: Equatable { case am, pm }

    var style: Style
    /// The three date fields in written order; `isoOrder` when the first one is a 4-digit year.
    var fields: (Int, Int, Int)
    var isoOrder: Bool
    var hour: Int
    var minute: Int
    var second: Int
    var meridiem: Meridiem?
    /// Byte offset where "Name: text" (or a system line) begins.
    var restStart: Int

    static func == (a: WhatsAppLine, b: WhatsAppLine) -> Bool {
        a.style == b.style && a.fields == b.fields && a.isoOrder == b.isoOrder && a.hour == b.hour
            && a.minute == b.minute && a.second == b.second && a.meridiem == b.meridiem && a.restStart == b.restStart
    }

    /// The 24-hour clock hour.
    var hour24: Int {
        switch meridiem {
        case nil: hour
        case .am: hour == 12 ? 0 : hour
        case .pm: hour == 12 ? 12 : hour + 12
        }
    }

    static func parse(_ b: [UInt8]) -> WhatsAppLine? {
        var i = 0
        // U+200E / U+200F / U+FEFF before the date (iOS marks some lines so).
        while i + 2 < b.count, b[i] == 0xE2, b[i + 1] == 0x80, b[i + 2] == 0x8E || b[i + 2] == 0x8F { i += 3 }
        if i + 2 < b.count, b[i] == 0xEF, b[i + 1] == 0xBB, b[i + 2] == 0xBF { i += 3 }

        let style: Style
        if i < b.count, b[i] == UInt8(ascii: "[") { style = .ios; i += 1 } else { style = .android }

        guard let (f1, d1) = number(b, &i, maxDigits: 4), i < b.count else { return nil }
        let separator = b[i]
        guard separator == UInt8(ascii: "/") || separator == UInt8(ascii: ".") || separator == UInt8(ascii: "-") else { return nil }
        i += 1
        guard let (f2, _) = number(b, &i, maxDigits: 2), i < b.count, b[i] == separator else { return nil }
        i += 1
        guard let (f3, d3) = number(b, &i, maxDigits: 4) else { return nil }
        let iso = d1 == 4
        if iso ? d3 > 2 : (d1 > 2 || (d3 != 2 && d3 != 4)) { return nil }
        if i < b.count, b[i] == UInt8(ascii: "."), separator == UInt8(ascii: ".") { i += 1 }  // "03.08.21."

        // ", " or just spaces between date and time.
        var sawSeparator = false
        if i < b.count, b[i] == UInt8(ascii: ",") { i += 1; sawSeparator = true }
        if skipSpaces(b, &i) { sawSeparator = true }
        guard sawSeparator else { return nil }

        guard let (hour, _) = number(b, &i, maxDigits: 2), i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
        i += 1
        guard let (minute, dm) = number(b, &i, maxDigits: 2), dm == 2 else { return nil }
        var second = 0
        if i < b.count, b[i] == UInt8(ascii: ":") {
            i += 1
            guard let (s, ds) = number(b, &i, maxDigits: 2), ds == 2 else { return nil }
            second = s
        }
        var meridiem: Meridiem?
        var afterTime = i
        _ = skipSpaces(b, &afterTime)
        if let (m, end) = readMeridiem(b, afterTime) {
            meridiem = m
            i = end
        }
        guard meridiem == nil ? hour <= 23 : (1...12).contains(hour), minute <= 59, second <= 59 else { return nil }

        switch style {
        case .ios:
            guard i < b.count, b[i] == UInt8(ascii: "]") else { return nil }
            i += 1
            _ = skipSpaces(b, &i)
        case .android:
            guard skipSpaces(b, &i), i < b.count else { return nil }
            if b[i] == UInt8(ascii: "-") {
                i += 1
            } else if i + 2 < b.count, b[i] == 0xE2, b[i + 1] == 0x80, b[i + 2] == 0x93 {  // en dash
                i += 3
            } else {
                return nil
            }
            // "- " then the rest; a line that is only the prefix has an empty rest.
            if i < b.count {
                guard skipSpaces(b, &i) else { return nil }
            }
        }
        return WhatsAppLine(style: style, fields: (f1, f2, f3), isoOrder: iso, hour: hour, minute: minute,
                            second: second, meridiem: meridiem, restStart: i)
    }

    private static func number(_ b: [UInt8], _ i: inout Int, maxDigits: Int) -> (Int, Int)? {
        var value = 0, digits = 0
        while i < b.count, digits < maxDigits, b[i] >= 0x30, b[i] <= 0x39 {
            value = value * 10 + Int(b[i] - 0x30)
            digits += 1
            i += 1
        }
        if digits == 0 || (i < b.count && b[i] >= 0x30 && b[i] <= 0x39) { return nil }
        return (value, digits)
    }

    /// Skips spaces, NO-BREAK SPACE (U+00A0) and NARROW NO-BREAK SPACE (U+202F); true if any.
    @discardableResult
    private static func skipSpaces(_ b: [UInt8], _ i: inout Int) -> Bool {
        let start = i
        while i < b.count {
            if b[i] == 0x20 {
                i += 1
            } else if i + 1 < b.count, b[i] == 0xC2, b[i + 1] == 0xA0 {
                i += 2
            } else if i + 2 < b.count, b[i] == 0xE2, b[i + 1] == 0x80, b[i + 2] == 0xAF {
                i += 3
            } else {
                break
            }
        }
        return i > start
    }

    /// AM, PM, am, a.m., p. m., A.M. (with any of the spaces above inside); returns the end offset.
    private static func readMeridiem(_ b: [UInt8], _ start: Int) -> (Meridiem, Int)? {
        var i = start
        guard i < b.count else { return nil }
        let m: Meridiem
        switch b[i] | 0x20 {
        case UInt8(ascii: "a"): m = .am
        case UInt8(ascii: "p"): m = .pm
        default: return nil
        }
        i += 1
        if i < b.count, b[i] == UInt8(ascii: ".") { i += 1 }
        skipSpaces(b, &i)
        guard i < b.count, b[i] | 0x20 == UInt8(ascii: "m") else { return nil }
        i += 1
        if i < b.count, b[i] == UInt8(ascii: ".") { i += 1 }
        // Must end the time: followed by "]", a space, or the line end.
        if i < b.count, b[i] != UInt8(ascii: "]"), b[i] != 0x20, b[i] != 0xC2, b[i] != 0xE2 { return nil }
        return (m, i)
    }
}
