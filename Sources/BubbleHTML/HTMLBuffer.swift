import BubbleText
/// The bytes of an HTML document being built. Everything on the hot path appends raw UTF-8:
/// no `String` concatenation, no per-character allocation.
///
/// Escaping rules (`appendText`, `appendAttribute`) are the only way message content gets in,
/// so a message can never open a tag, close one, or start an attribute.
struct HTMLBuffer {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    var count: Int { bytes.count }
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    @inline(__always) mutating func append(_ s: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    @inline(__always) mutating func append(byte: UInt8) { bytes.append(byte) }

    mutating func append(bytes other: [UInt8]) { bytes.append(contentsOf: other) }

    /// Trusted text (markup we generate ourselves): copied as it is.
    mutating func append(raw s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// `n` in decimal, zero-padded to `width` digits.
    mutating func append(int n: Int, width: Int = 1) {
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var v = n.magnitude
        var count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[count] = UInt8(truncatingIfNeeded: v % 10) + 0x30
                v /= 10
                count += 1
            } while v > 0 && count < 20
            while count < min(width, 20) { d[count] = 0x30; count += 1 }
        }
        if n < 0 { bytes.append(0x2D) }
        withUnsafeBytes(of: &digits) { d in
            for i in stride(from: count - 1, through: 0, by: -1) { bytes.append(d[i]) }
        }
    }

    /// Message text as HTML text content (inside an element with `white-space: pre-wrap`),
    /// sanitised as `TextSanitizer` does for Pango so both see the same characters:
    /// `&`, `<`, `>` become entities; CR LF, CR, NEL, U+2028 and U+2029 become LF; the other C0
    /// and C1 controls and DEL are dropped. With `links`, `http://` and `https://` URLs become
    /// `<a href rel="noopener noreferrer">` (no other scheme is ever linked). Every scalar that
    /// is not ASCII is looked up in `coverage` and the face that draws it is added to `faces`.
    ///
    /// With `spans`, runs drawn by a fallback face in `spanFaces` (bit per face) are wrapped in
    /// `<span class="fN">`: that face first and Pango's line height for it, so a line of Japanese
    /// is as tall as Pango makes it (Noto Sans CJK's 23.2 pt instead of Liberation Sans' 18.4).
    /// Spaces after such a run stay in it, as Pango keeps them in the run's font; marks, joiners
    /// and variation selectors never split a run.
    mutating func appendText(_ text: String, links: Bool, coverage: FontCoverage, faces: inout UInt32, spanFaces: UInt32 = 0) {
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({
            appendText(utf8: $0, links: links, coverage: coverage, faces: &faces, spanFaces: spanFaces)
        }) {
            return done
        }
        let copy = Array(text.utf8)
        copy.withUnsafeBufferPointer { appendText(utf8: $0, links: links, coverage: coverage, faces: &faces, spanFaces: spanFaces) }
    }

    private mutating func appendText(
        utf8 p: UnsafeBufferPointer<UInt8>, links: Bool, coverage: FontCoverage,
        faces: inout UInt32, spanFaces: UInt32
    ) {
        let n = p.count
        guard n > 0 else { return }
        var runStart = 0
        var i = 0
        var sawASCII = false
        /// Face of the open `<span class="fN">`, or -1.
        var open = -1
        func flush(_ to: Int, _ buffer: inout [UInt8]) {
            if to > runStart { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<to])) }
        }
        let kinds = Self.asciiKind
        while i < n {
            let b = p[i]
            if b < 0x80 {
                sawASCII = true
                let kind = kinds[Int(b)]
                if kind == 0 {
                    // A visible ASCII character ends a fallback run; LF ends it too.
                    if open >= 0, Self.endsSpan[Int(b)] {
                        flush(i, &bytes); append("</span>"); open = -1; runStart = i
                    }
                    i += 1; continue
                }
                if open >= 0 { flush(i, &bytes); append("</span>"); open = -1; runStart = i }
                switch b {
                case 0x26: flush(i, &bytes); append("&amp;"); i += 1; runStart = i
                case 0x3C: flush(i, &bytes); append("&lt;"); i += 1; runStart = i
                case 0x3E: flush(i, &bytes); append("&gt;"); i += 1; runStart = i
                case 0x0D:
                    flush(i, &bytes); bytes.append(0x0A); i += 1
                    if i < n, p[i] == 0x0A { i += 1 }
                    runStart = i
                case 0x68 /* h */:
                    if links, let end = Self.urlEnd(p, at: i) {
                        flush(i, &bytes)
                        append("<a href=\"")
                        appendEscapedURL(p, i, end)
                        append("\" rel=\"noopener noreferrer\">")
                        appendEscapedURL(p, i, end)
                        append("</a>")
                        i = end; runStart = i
                    } else {
                        i += 1
                    }
                default:
                    // C0 controls other than TAB and LF, and DEL: dropped.
                    flush(i, &bytes); i += 1; runStart = i
                }
                continue
            }
            // Multi-byte scalar (Swift strings are valid UTF-8).
            var scalar: UInt32
            var length: Int
            if b < 0xE0 {
                scalar = UInt32(b & 0x1F) << 6 | UInt32(p[i + 1] & 0x3F); length = 2
            } else if b < 0xF0 {
                scalar = UInt32(b & 0x0F) << 12 | UInt32(p[i + 1] & 0x3F) << 6 | UInt32(p[i + 2] & 0x3F); length = 3
            } else {
                scalar = UInt32(b & 0x07) << 18 | UInt32(p[i + 1] & 0x3F) << 12 | UInt32(p[i + 2] & 0x3F) << 6 | UInt32(p[i + 3] & 0x3F)
                length = 4
            }
            if scalar < 0xA0 {
                // C1 controls: NEL is a line break, the others are dropped.
                flush(i, &bytes)
                if scalar == 0x85 { bytes.append(0x0A) }
                i += length; runStart = i
                continue
            }
            if scalar == 0x2028 || scalar == 0x2029 {
                // Pango breaks lines at these; CSS does not.
                flush(i, &bytes); bytes.append(0x0A)
                i += length; runStart = i
                continue
            }
            let bit = coverage.faceBit(scalar)
            faces |= bit
            if spanFaces != 0, !Self.joinsRun(scalar) {
                let face = bit == 0 ? -1 : bit.trailingZeroBitCount
                let wanted = bit & spanFaces != 0 ? face : -1
                if wanted != open && (bit != 0 || open >= 0) {
                    flush(i, &bytes)
                    if open >= 0 { append("</span>") }
                    if wanted >= 0 { append("<span class=\"f"); append(int: wanted); append("\">") }
                    open = wanted
                    runStart = i
                }
            }
            i += length
        }
        flush(n, &bytes)
        if open >= 0 { append("</span>") }
        if sawASCII { faces |= coverage.asciiFaces }
    }

    /// Where the URL starting at `i` ends (exclusive), or nil when `i` does not start one:
    /// `http://` or `https://` after a non-alphanumeric, then printable ASCII except `<>"'\``;
    /// trailing punctuation and unbalanced `)` are left out, as people write them after links.
    static func urlEnd(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> Int? {
        let n = p.count
        guard i + 8 <= n, p[i + 1] == 0x74, p[i + 2] == 0x74, p[i + 3] == 0x70 else { return nil }
        var j = i + 4
        if p[j] == 0x73 { j += 1 }  // s
        guard j + 3 <= n, p[j] == 0x3A, p[j + 1] == 0x2F, p[j + 2] == 0x2F else { return nil }
        if i > 0 {
            let prev = p[i - 1]
            if (prev >= 0x30 && prev <= 0x39) || (prev | 0x20 >= 0x61 && prev | 0x20 <= 0x7A) || prev >= 0x80 { return nil }
        }
        let hostStart = j + 3
        var end = hostStart
        var open = 0, close = 0
        while end < n {
            let c = p[end]
            guard c > 0x20, c < 0x7F, c != 0x3C, c != 0x3E, c != 0x22, c != 0x27, c != 0x60 else { break }
            if c == 0x28 { open += 1 } else if c == 0x29 { close += 1 }
            end += 1
        }
        while end > hostStart {
            let c = p[end - 1]
            if c == 0x2E || c == 0x2C || c == 0x3B || c == 0x3A || c == 0x21 || c == 0x3F {
                end -= 1
            } else if c == 0x29, close > open {
                close -= 1; end -= 1
            } else {
                break
            }
        }
        return end > hostStart ? end : nil
    }

    /// A URL's bytes (printable ASCII without quotes or angle brackets) for text or a
    /// double-quoted attribute: only `&` needs escaping.
    private mutating func appendEscapedURL(_ p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) {
        for k in from..<to {
            if p[k] == 0x26 { append("&amp;") } else { bytes.append(p[k]) }
        }
    }

    /// Text for a double-quoted attribute value: `& < > " '` escaped, controls dropped
    /// (newlines become spaces).
    mutating func appendAttribute(_ text: String) {
        for b in text.utf8 {
            switch b {
            case 0x26: append("&amp;")
            case 0x3C: append("&lt;")
            case 0x3E: append("&gt;")
            case 0x22: append("&quot;")
            case 0x27: append("&#39;")
            case 0x0A, 0x0D, 0x09: bytes.append(0x20)
            case 0..<0x20, 0x7F: continue
            default: bytes.append(b)
            }
        }
    }

    /// Plain text that is not a message (names, titles, file names, dates) as text content:
    /// escaped like an attribute so it is safe anywhere.
    mutating func appendEscaped(_ text: String) { appendAttribute(TextSanitizer.sanitize(text)) }

    /// A relative URL path: each segment percent-encoded (RFC 3986 unreserved characters stay),
    /// `/` kept between segments. The result is safe in a double-quoted attribute.
    mutating func appendURLPath(_ path: String) {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        for b in path.utf8 {
            let unreserved =
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E || b == 0x2F
            if unreserved {
                bytes.append(b)
            } else {
                bytes.append(0x25); bytes.append(hex[Int(b >> 4)]); bytes.append(hex[Int(b & 0xF)])
            }
        }
    }

    /// Standard base64 (RFC 4648, with padding) of `data`.
    mutating func appendBase64(_ data: UnsafeRawBufferPointer) {
        let table = Self.base64Table
        let n = data.count
        let full = n / 3 * 3
        let start = bytes.count
        bytes.reserveCapacity(start + (n + 2) / 3 * 4)
        var i = 0
        while i < full {
            let v = UInt32(data[i]) << 16 | UInt32(data[i + 1]) << 8 | UInt32(data[i + 2])
            bytes.append(table[Int(v >> 18)]); bytes.append(table[Int(v >> 12 & 63)])
            bytes.append(table[Int(v >> 6 & 63)]); bytes.append(table[Int(v & 63)])
            i += 3
        }
        let rest = n - full
        if rest == 1 {
            let v = UInt32(data[i]) << 16
            bytes.append(table[Int(v >> 18)]); bytes.append(table[Int(v >> 12 & 63)])
            bytes.append(0x3D); bytes.append(0x3D)
        } else if rest == 2 {
            let v = UInt32(data[i]) << 16 | UInt32(data[i + 1]) << 8
            bytes.append(table[Int(v >> 18)]); bytes.append(table[Int(v >> 12 & 63)])
            bytes.append(table[Int(v >> 6 & 63)]); bytes.append(0x3D)
        }
    }

    mutating func appendBase64(_ data: [UInt8]) {
        data.withUnsafeBytes { appendBase64($0) }
    }

    static let base64Table: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Characters that stay in the run before them: combining marks, ZWJ/ZWNJ, variation
    /// selectors, keycap, skin tones, tags.
    @inline(__always) static func joinsRun(_ v: UInt32) -> Bool {
        (0x0300...0x036F).contains(v) || v == 0x200C || v == 0x200D || (0xFE00...0xFE0F).contains(v) || v == 0x20E3
            || (0x1F3FB...0x1F3FF).contains(v) || (0xE0020...0xE007F).contains(v)
    }

    /// ASCII that closes a fallback run: every visible character (Pango picks the first face
    /// that has it, the Latin one) and LF; spaces and tabs stay in the run (Pango never picks a
    /// font for a space, it keeps the one before).
    static let endsSpan: [Bool] = (0..<128).map { b in (b > 0x20 && b < 0x7F) || b == 0x0A }

    /// 0: copied as it is; 1: needs a look (`& < > h`, CR, other controls, DEL).
    static let asciiKind: [UInt8] = (0..<128).map { b -> UInt8 in
        switch b {
        case 0x09, 0x0A: return 0
        case 0..<0x20, 0x7F: return 1
        case 0x26, 0x3C, 0x3E, 0x68: return 1
        default: return 0
        }
    }
}

/// Text direction of a paragraph as Pango's auto-dir and CSS `unicode-bidi: plaintext` see it:
/// from its first strong character.
enum ParagraphDirection {
    /// True when the text's last paragraph starts (first strong character) right to left.
    /// Works on the UTF-8 bytes: back to the last line break, then forward to the first letter.
    static func lastParagraphIsRightToLeft(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { p -> Bool in
            let n = p.count
            var start = n
            // Paragraph separators: LF, CR, NEL (C2 85), U+2028/U+2029 (E2 80 A8/A9).
            while start > 0 {
                let b = p[start - 1]
                if b == 0x0A || b == 0x0D { break }
                if b == 0x85, start >= 2, p[start - 2] == 0xC2 { break }
                if (b == 0xA8 || b == 0xA9), start >= 3, p[start - 2] == 0x80, p[start - 3] == 0xE2 { break }
                start -= 1
            }
            var i = start
            while i < n {
                let b = p[i]
                var v: UInt32, length: Int
                if b < 0x80 {
                    v = UInt32(b); length = 1
                } else if b < 0xE0 {
                    v = UInt32(b & 0x1F) << 6 | UInt32(p[i + 1] & 0x3F); length = 2
                } else if b < 0xF0 {
                    v = UInt32(b & 0x0F) << 12 | UInt32(p[i + 1] & 0x3F) << 6 | UInt32(p[i + 2] & 0x3F); length = 3
                } else {
                    v = UInt32(b & 0x07) << 18 | UInt32(p[i + 1] & 0x3F) << 12 | UInt32(p[i + 2] & 0x3F) << 6 | UInt32(p[i + 3] & 0x3F)
                    length = 4
                }
                switch strength(v) {
                case .rtl: return true
                case .ltr: return false
                case .neutral: i += length
                }
            }
            return false
        }
    }

    enum Strength { case ltr, rtl, neutral }

    /// A close approximation of the Unicode bidi classes L / R, AL / everything else.
    static func strength(_ v: UInt32) -> Strength {
        switch v {
        case 0x41...0x5A, 0x61...0x7A: return .ltr
        case 0..<0xC0: return .neutral
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: return .rtl
        case 0x2000...0x2BFF, 0x2E00...0x2E7F, 0x3000...0x3004, 0x3008...0x3020, 0xFE00...0xFE0F,
            0x1F000...0x1FFFF, 0xE0000...0xE007F, 0x0300...0x036F:
            return .neutral
        default: return .ltr
        }
    }
}

/// Text for HTML outside the export's byte buffer (the index of `--all`, the server's pages):
/// `& < > " '` as entities, everything else as it is.
package enum HTMLEscape {
    package static func text(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
