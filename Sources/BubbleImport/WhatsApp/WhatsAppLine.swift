/// The date-time prefix that starts a WhatsApp message line, read in one pass over the line's
/// bytes (no regular expressions, no Foundation: it runs on every line of the export).
///
///     12/24/19, 11:23 - Ann: text                 Android, en-US
///     03.08.21, 12:30 - Ann: text                 Android, dotted (de, ru, tr, pl…)
///     2023-12-20, 5:46 p.m. - Ann: text           Android, ISO date, Canadian English
///     28/3/2025, 9:29 p. m. - Ann: text           Android, Spanish
///     12/03/2020 à 14:32 - Ann: text              Android, French (a word between date and time)
///     12/05/20 14.22 - Ann: text                  Android, Indonesian (dot in the time)
///     2020. 6. 10. 오후 3:55 - Ann: text           Android, Korean (year first, marker before the time)
///     2020/06/10 午後3:55 - Ann: text              Android, Japanese (zh: 上午/下午)
///     ١٠‏/٦‏/٢٠٢٠، ٣:٥٥ م - Ann: text              Android, Arabic (Arabic-Indic digits, marks)
///     [14/10/2021, 3:34:09 PM] Ann: text          iOS (U+202F before PM, U+200E at line start)
///
/// The date's fields are kept as written: which is the day and which the month is only known
/// once the whole file has been read. docs/IMPORT.md lists every shape with an example.
struct WhatsAppLine: Equatable {
    enum Style: Equatable { case android, ios }
    enum Meridiem: Equatable { case am, pm }

    var style: Style
    /// The three date fields in written order; `isoOrder` when the first one is the year
    /// (a 4-digit first field, or the Korean/Hungarian "2020. 6. 10." shape).
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

    /// The 24-hour clock hour. Hour 00 with a morning marker ("00:08 a.m.", written by real
    /// Android exports) is midnight; 00 with an afternoon marker is noon.
    var hour24: Int {
        switch meridiem {
        case nil: hour
        case .am: hour == 12 ? 0 : hour
        case .pm: hour == 12 || hour == 0 ? 12 : hour + 12
        }
    }

    static func parse(_ bytes: [UInt8]) -> WhatsAppLine? {
        // Raw bytes, no bounds checks beyond the parser's own: this runs on every line.
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> WhatsAppLine? {
        var i = skipMarks(b, 0)
        let style: Style
        if i < b.count, b[i] == UInt8(ascii: "[") { style = .ios; i = skipMarks(b, i + 1) } else { style = .android }

        // The date: three numbers with one kind of separator.
        guard let (f1, d1) = number(b, &i, maxDigits: 4) else { return nil }
        guard let separator = dateSeparator(b, &i) else { return nil }
        guard let (f2, _) = number(b, &i, maxDigits: 2), dateSeparator(b, &i) == separator,
            let (f3, d3) = number(b, &i, maxDigits: 4)
        else { return nil }
        let iso = d1 == 4 || (separator == .dotSpace && d3 <= 2)
        if iso ? d3 > 2 : (d1 > 2 || (d3 != 2 && d3 != 4)) { return nil }
        i = skipMarks(b, i)
        if i < b.count, b[i] == UInt8(ascii: "."), separator == .dot || separator == .dotSpace { i += 1 }  // "03.08.21." "2020. 6. 10."

        // Between date and time: ",", "،" (Arabic comma), spaces, or a short word ("à").
        var sawSeparator = false
        i = skipMarks(b, i)
        if i < b.count, b[i] == UInt8(ascii: ",") {
            i += 1; sawSeparator = true
        } else if i + 1 < b.count, b[i] == 0xD8, b[i + 1] == 0x8C {
            i += 2; sawSeparator = true
        }
        if skipSpaces(b, &i) { sawSeparator = true }
        if sawSeparator, let end = connectorWord(b, i) { i = end }

        // The time, with its 12-hour marker before it (ko, ja, zh) or after it.
        var meridiem: Meridiem?
        // (Every marker written before the time is CJK: ASCII digits skip the table.)
        if i < b.count, b[i] >= 0x80, let (m, end) = match(b, i, meridiemsBefore, mustEnd: false) {
            meridiem = m
            i = end
            if skipSpaces(b, &i) { sawSeparator = true }
            sawSeparator = true
        }
        guard sawSeparator else { return nil }
        guard let (hour, _) = number(b, &i, maxDigits: 2), i < b.count,
            b[i] == UInt8(ascii: ":") || b[i] == UInt8(ascii: ".")
        else { return nil }
        let timeSeparator = b[i]
        i += 1
        guard let (minute, dm) = number(b, &i, maxDigits: 2), dm == 2 else { return nil }
        var second = 0
        if i + 1 < b.count, b[i] == timeSeparator, isDigit(b, i + 1) {
            i += 1
            guard let (s, ds) = number(b, &i, maxDigits: 2), ds == 2 else { return nil }
            second = s
        }
        if meridiem == nil {
            var afterTime = i
            _ = skipSpaces(b, &afterTime)
            if let (m, end) = readMeridiem(b, afterTime)
                ?? (afterTime < b.count && (b[afterTime] >= 0x80 || b[afterTime] | 0x20 == UInt8(ascii: "v") || b[afterTime] | 0x20 == UInt8(ascii: "n"))
                    ? match(b, afterTime, meridiemsAfter, mustEnd: true) : nil)
            {
                meridiem = m
                i = end
            }
        }
        guard meridiem == nil ? hour <= 23 : hour <= 12, minute <= 59, second <= 59 else { return nil }

        i = skipMarks(b, i)
        switch style {
        case .ios:
            guard i < b.count, b[i] == UInt8(ascii: "]") else { return nil }
            i += 1
            _ = skipSpaces(b, &i)
            i = skipMarks(b, i)
        case .android:
            guard skipSpaces(b, &i), i < b.count else { return nil }
            i = skipMarks(b, i)
            guard i < b.count else { return nil }
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
                i = skipMarks(b, i)
            }
        }
        return WhatsAppLine(
            style: style, fields: (f1, f2, f3), isoOrder: iso, hour: hour, minute: minute,
            second: second, meridiem: meridiem, restStart: i)
    }

    /// Whether a line that `parse` refused still looks like a message header — a date-like run
    /// at its start (digits, a date separator, a digit) and " - " or "] " soon after — so it is
    /// reported instead of being glued onto the message before it.
    /// `cutShort`: the line is the file's last and has no line break, so the date-like run alone
    /// is enough (the rest of the header was cut off).
    static func looksLikeHeader(_ bytes: [UInt8], cutShort: Bool = false) -> Bool {
        bytes.withUnsafeBufferPointer { looksLikeHeader($0, cutShort: cutShort) }
    }

    static func looksLikeHeader(_ b: UnsafeBufferPointer<UInt8>, cutShort: Bool = false) -> Bool {
        var i = skipMarks(b, 0)
        if i < b.count, b[i] == UInt8(ascii: "[") { i = skipMarks(b, i + 1) }
        guard number(b, &i, maxDigits: 4) != nil, dateSeparator(b, &i) != nil, isDigit(b, i) else { return false }
        if cutShort {
            // Two fields and both separators of a date ("13/06/"), then only what a header's date
            // and time are made of: "14/06 breakfast" and "15.06.2020 hike-day" are text.
            var k = i
            guard number(b, &k, maxDigits: 2) != nil, dateSeparator(b, &k) != nil else { return false }
            while k < b.count {
                let c = b[k]
                let allowed =
                    c >= 0x80 || (c >= 0x30 && c <= 0x39) || c == 0x20 || c == 0x2C || c == 0x3A || c == 0x2E
                    || c == 0x2D || c == 0x5B || c == 0x5D || "apmAPM".utf8.contains(c)
                if !allowed { return false }
                k += 1
            }
            return true
        }
        let end = min(b.count, i + 80)
        var k = i
        while k + 1 < end {
            if b[k] == UInt8(ascii: "]"), b[k + 1] == 0x20 { return true }
            if k + 2 < end, b[k] == 0x20, b[k + 1] == UInt8(ascii: "-"), b[k + 2] == 0x20 { return true }
            if k + 4 < end, b[k] == 0x20, b[k + 1] == 0xE2, b[k + 2] == 0x80, b[k + 3] == 0x93, b[k + 4] == 0x20 { return true }
            k += 1
        }
        return false
    }

    // MARK: Pieces

    private enum DateSeparator: Equatable { case slash, dot, dash, dotSpace }

    /// "/", ".", "-" or ". " (dot then spaces: Korean, Hungarian), after any direction marks.
    @inline(__always)
    private static func dateSeparator(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> DateSeparator? {
        var k = skipMarks(b, i)
        guard k < b.count else { return nil }
        let kind: DateSeparator
        switch b[k] {
        case UInt8(ascii: "/"): kind = .slash
        case UInt8(ascii: "-"): kind = .dash
        case UInt8(ascii: "."): kind = .dot
        default: return nil
        }
        k += 1
        if kind == .dot, skipSpaces(b, &k) {
            i = skipMarks(b, k)
            return .dotSpace
        }
        i = skipMarks(b, k)
        return kind
    }

    /// The value of the digit at `i` (ASCII, Arabic-Indic, Persian, Devanagari or Thai) and its
    /// length in bytes.
    @inline(__always)
    private static func digit(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> (value: Int, length: Int)? {
        guard i < b.count else { return nil }
        let c = b[i]
        if c < 0x80 { return c >= 0x30 && c <= 0x39 ? (Int(c - 0x30), 1) : nil }
        guard i + 1 < b.count else { return nil }
        let d = b[i + 1]
        if c == 0xD9, d >= 0xA0, d <= 0xA9 { return (Int(d - 0xA0), 2) }  // U+0660…0669
        if c == 0xDB, d >= 0xB0, d <= 0xB9 { return (Int(d - 0xB0), 2) }  // U+06F0…06F9
        guard c == 0xE0, i + 2 < b.count else { return nil }
        let e = b[i + 2]
        if d == 0xA5, e >= 0xA6, e <= 0xAF { return (Int(e - 0xA6), 3) }  // U+0966…096F
        if d == 0xB9, e >= 0x90, e <= 0x99 { return (Int(e - 0x90), 3) }  // U+0E50…0E59
        return nil
    }

    @inline(__always)
    private static func isDigit(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool { digit(b, i) != nil }

    @inline(__always)
    private static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, maxDigits: Int) -> (Int, Int)? {
        var value = 0, digits = 0
        while digits < maxDigits, let (v, n) = digit(b, i) {
            value = value * 10 + v
            digits += 1
            i += n
        }
        if digits == 0 || isDigit(b, i) { return nil }
        return (value, digits)
    }

    /// Skips LRM, RLM, ALM, the isolates and embeddings and a BOM: marks exports put around
    /// numbers and at line starts.
    @inline(__always)
    private static func skipMarks(_ b: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var i = start
        while i + 1 < b.count, b[i] >= 0xD8 {
            if b[i] == 0xD8, b[i + 1] == 0x9C { i += 2; continue }  // U+061C
            guard i + 2 < b.count else { break }
            let (c, d, e) = (b[i], b[i + 1], b[i + 2])
            if c == 0xE2, d == 0x80, e == 0x8E || e == 0x8F || (e >= 0xAA && e <= 0xAE) { i += 3; continue }
            if c == 0xE2, d == 0x81, e >= 0xA6, e <= 0xA9 { i += 3; continue }
            if c == 0xEF, d == 0xBB, e == 0xBF { i += 3; continue }
            break
        }
        return i
    }

    /// Skips spaces, NO-BREAK SPACE (U+00A0), NARROW NO-BREAK SPACE (U+202F) and THIN SPACE
    /// (U+2009), with direction marks among them; true if any space.
    @discardableResult @inline(__always)
    private static func skipSpaces(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        var sawSpace = false
        while i < b.count {
            if b[i] == 0x20 {
                i += 1
            } else if i + 1 < b.count, b[i] == 0xC2, b[i + 1] == 0xA0 {
                i += 2
            } else if i + 2 < b.count, b[i] == 0xE2, b[i + 1] == 0x80, b[i + 2] == 0xAF || b[i + 2] == 0x89 {
                i += 3
            } else {
                let k = skipMarks(b, i)
                if k == i { break }
                i = k
                continue
            }
            sawSpace = true
        }
        return sawSpace
    }

    /// A word some locales write between date and time ("à" in French): 1 to 3 letters, then a
    /// space, then a digit; returns where the digit starts.
    private static func connectorWord(_ b: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        guard start < b.count, !isDigit(b, start) else { return nil }
        for word in connectorWords where start + word.count < b.count {
            if b[start..<start + word.count].elementsEqual(word) {
                var i = start + word.count
                guard skipSpaces(b, &i), isDigit(b, i) else { return nil }
                return i
            }
        }
        return nil
    }

    private static let connectorWords = ["à", "às", "um", "alle", "a las", "a la", "в", "om", "klo"].map { Array($0.utf8) }

    /// AM, PM, am, a.m., p. m., A.M. (with any of the spaces above inside); returns the end offset.
    private static func readMeridiem(_ b: UnsafeBufferPointer<UInt8>, _ start: Int) -> (Meridiem, Int)? {
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
        return endsToken(b, i) ? (m, i) : nil
    }

    /// A marker must end the time: followed by "]", a space, a mark or the line end.
    private static func endsToken(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool {
        i >= b.count || b[i] == UInt8(ascii: "]") || b[i] == 0x20 || b[i] == 0xC2 || b[i] == 0xE2
    }

    /// The first of `table`'s markers at `start` (ASCII letters compared without case), ending
    /// the token when `mustEnd`.
    private static func match(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ table: [([UInt8], Meridiem)], mustEnd: Bool) -> (Meridiem, Int)? {
        guard start < b.count, b[start] >= 0x41 else { return nil }
        for (word, m) in table where start + word.count <= b.count {
            var k = 0
            while k < word.count {
                let c = b[start + k], w = word[k]
                if c != w && !(w >= 0x61 && w <= 0x7A && c | 0x20 == w) { break }
                k += 1
            }
            if k == word.count, !mustEnd || endsToken(b, start + k) { return (m, start + k) }
        }
        return nil
    }

    /// Markers written before the time: Korean, Japanese, Chinese (with its flexible day periods).
    private static let meridiemsBefore: [([UInt8], Meridiem)] = markers([
        "오전": .am, "오후": .pm, "午前": .am, "午後": .pm,
        "上午": .am, "下午": .pm, "凌晨": .am, "早上": .am, "中午": .pm, "晚上": .pm
    ])

    /// Markers after the time other than the Latin a.m./p.m. family (lower case: ASCII letters
    /// match either case).
    private static let meridiemsAfter: [([UInt8], Meridiem)] = markers([
        "ص": .am, "م": .pm,  // Arabic
        "ق.ظ.": .am, "ب.ظ.": .pm, "ق.ظ": .am, "ب.ظ": .pm,  // Persian
        "לפנה״צ": .am, "אחה״צ": .pm, "לפנה\"צ": .am, "אחה\"צ": .pm,  // Hebrew
        "öö": .am, "ös": .pm, "ÖÖ": .am, "ÖS": .pm,  // Turkish
        "पूर्वाह्न": .am, "अपराह्न": .pm,  // Hindi
        "ก่อนเที่ยง": .am, "หลังเที่ยง": .pm,  // Thai
        "vorm.": .am, "nachm.": .pm,  // German (older phones)
        "午前": .am, "午後": .pm, "上午": .am, "下午": .pm, "오전": .am, "오후": .pm
    ])

    private static func markers(_ list: KeyValuePairs<String, Meridiem>) -> [([UInt8], Meridiem)] {
        list.map { (Array($0.key.utf8), $0.value) }
    }
}
