/// A link found in a message's text: its UTF-8 byte range and the URL it opens.
package struct DetectedLink: Hashable, Sendable {
    package var range: Range<Int>
    package var url: String
    package init(range: Range<Int>, url: String) { self.range = range; self.url = url }
}

/// Finds web addresses (`http://`, `https://`, `www.`), e-mail addresses and phone numbers in
/// text. (Foundation's NSDataDetector is not implemented on Linux.) Only `http`, `https`,
/// `mailto` and `tel` URLs are ever produced; trailing punctuation and an unbalanced `)` are
/// left out, as people write them after links.
package enum LinkDetector {
    package static func links(in text: String) -> [DetectedLink] {
        mayHaveLinks(text) ? scan(text) : []
    }

    /// The scan itself, without the quick check.
    static func scan(_ text: String) -> [DetectedLink] {
        var copy = text
        return copy.withUTF8 { scan(bytes: $0) }
    }

    /// The scan over the text's UTF-8 (in place, no copy).
    static func scan(bytes b: UnsafeBufferPointer<UInt8>) -> [DetectedLink] {
        var out: [DetectedLink] = []
        var i = 0
        func isWordByte(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) }
        func lower(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }
        func hasPrefix(_ p: StaticString, at k: Int) -> Bool {
            p.withUTF8Buffer { p in
                guard k + p.count <= b.count else { return false }
                for j in 0..<p.count where lower(b[k + j]) != p[j] { return false }
                return true
            }
        }
        /// End of a URL starting at `k`: up to whitespace, `<`, `>`, `"`, minus trailing punctuation.
        func urlEnd(_ k: Int) -> Int {
            var e = k
            while e < b.count, b[e] > 0x20, b[e] != 0x3C, b[e] != 0x3E, b[e] != 0x22 { e += 1 }
            while e > k {
                let c = b[e - 1]
                switch c {
                case 0x2E, 0x2C, 0x3A, 0x3B, 0x21, 0x3F, 0x27: e -= 1; continue
                default: break
                }
                if c == 0x29 {
                    let opens = b[k..<e].filter { $0 == 0x28 }.count, closes = b[k..<e].filter { $0 == 0x29 }.count
                    if closes > opens { e -= 1; continue }
                }
                break
            }
            return e
        }
        while i < b.count {
            let atWordStart = i == 0 || !isWordByte(b[i - 1])
            let first = b[i] | 0x20  // the prefixes below start with h or w (either case)
            if atWordStart, first == 0x68, hasPrefix("https://", at: i) || hasPrefix("http://", at: i) {
                let scheme = hasPrefix("https://", at: i) ? 8 : 7
                let e = urlEnd(i)
                if e > i + scheme {
                    out.append(DetectedLink(range: i..<e, url: String(decoding: b[i..<e], as: UTF8.self)))
                    i = e; continue
                }
            }
            if atWordStart, first == 0x77, hasPrefix("www.", at: i) {
                let e = urlEnd(i)
                if e > i + 5, b[(i + 4)..<e].contains(0x2E) || e - i > 6 {
                    out.append(DetectedLink(range: i..<e, url: "https://" + String(decoding: b[i..<e], as: UTF8.self)))
                    i = e; continue
                }
            }
            if b[i] == 0x40, let link = email(around: i, b) {  // @
                if let last = out.last, last.range.overlaps(link.range) { i += 1; continue }
                out.append(link); i = link.range.upperBound; continue
            }
            if atWordStart, b[i] == 0x2B || (b[i] >= 0x30 && b[i] <= 0x39) || b[i] == 0x28, let link = phone(at: i, b) {
                out.append(link); i = link.range.upperBound; continue
            }
            i += 1
        }
        return out
    }

    /// False when `text` cannot hold a link: no `:` (of `://`), no `www.`, no `@` and fewer than
    /// seven digits. One pass over the bytes, without allocating: most messages stop here.
    static func mayHaveLinks(_ text: String) -> Bool {
        var copy = text
        return copy.withUTF8 { b in
            var digits = 0
            for i in 0..<b.count {
                let c = b[i]
                if c == 0x3A || c == 0x40 { return true }  // : @
                if c >= 0x30 && c <= 0x39 { digits += 1; if digits >= 7 { return true }; continue }
                if c == 0x2E, i >= 3, b[i - 1] | 0x20 == 0x77, b[i - 2] | 0x20 == 0x77, b[i - 3] | 0x20 == 0x77 { return true }  // www.
            }
            return false
        }
    }

    /// `local@domain.tld` around the `@` at `at`.
    static func email(around at: Int, _ b: UnsafeBufferPointer<UInt8>) -> DetectedLink? {
        func local(_ c: UInt8) -> Bool {
            (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) || c == 0x2E || c == 0x5F || c == 0x25 || c == 0x2B || c == 0x2D
        }
        func domain(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) || c == 0x2D || c == 0x2E }
        var s = at
        while s > 0, local(b[s - 1]) { s -= 1 }
        var e = at + 1
        while e < b.count, domain(b[e]) { e += 1 }
        while e > at + 1, b[e - 1] == 0x2E || b[e - 1] == 0x2D { e -= 1 }
        let host = b[(at + 1)..<e]
        guard s < at, let dot = host.lastIndex(of: 0x2E), dot > at + 1, e - dot > 2 else { return nil }
        return DetectedLink(range: s..<e, url: "mailto:" + String(decoding: b[s..<e], as: UTF8.self))
    }

    /// A phone number: an optional `+`, then 7–15 digits with single spaces, dashes, dots or
    /// parentheses between them; not part of a longer run of digits or letters.
    static func phone(at k: Int, _ b: UnsafeBufferPointer<UInt8>) -> DetectedLink? {
        var e = k, digits = 0, lastDigitEnd = k
        let plus = b[e] == 0x2B
        if plus { e += 1 }
        var previousSeparator = true
        while e < b.count {
            let c = b[e]
            if c >= 0x30 && c <= 0x39 {
                digits += 1; e += 1; lastDigitEnd = e; previousSeparator = false
            } else if c == 0x20 || c == 0x2D || c == 0x2E || c == 0x28 || c == 0x29, !(previousSeparator && c != 0x28) || e == k {
                previousSeparator = c != 0x29; e += 1
            } else {
                break
            }
        }
        // Not glued to letters or more digits.
        if lastDigitEnd < b.count {
            let c = b[lastDigitEnd]
            if (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) || c == 0x40 { return nil }
        }
        guard digits >= 7, digits <= 15 else { return nil }
        // Dates written with separators (2023-11-14, 14.11.2023) are not phone numbers.
        if !plus, digits == 8 {
            let groups = String(decoding: b[k..<lastDigitEnd], as: UTF8.self)
                .split(whereSeparator: { !$0.isNumber && $0 != "+" }).map(\.count)
            if groups == [4, 2, 2] || groups == [2, 2, 4] { return nil }
            // A bare date, 20211014 (as in file names): year 1900–2099, month, day.
            if groups == [8] {
                let d = b[k..<lastDigitEnd].map { Int($0) - 0x30 }
                let year = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3], month = d[4] * 10 + d[5], day = d[6] * 10 + d[7]
                if (1900...2099).contains(year), (1...12).contains(month), (1...31).contains(day) { return nil }
            }
        }
        // "tel:", the plus, the digits: made as bytes, one string at the end.
        let url = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 5 + lastDigitEnd - k) { out in
            var n = 0
            for c in "tel:".utf8 { out[n] = c; n += 1 }
            if plus { out[n] = 0x2B; n += 1 }
            for c in b[k..<lastDigitEnd] where c >= 0x30 && c <= 0x39 { out[n] = c; n += 1 }
            return String(decoding: out[..<n], as: UTF8.self)
        }
        return DetectedLink(range: k..<lastDigitEnd, url: url)
    }
}
