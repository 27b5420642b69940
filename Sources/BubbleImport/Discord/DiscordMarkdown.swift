import BubbleCore
import Foundation

/// Discord's markdown, as the app shows it, read into BubbleKit's spans with the markers removed:
///
///     **bold**  *italic*  _italic_  ***both***  __underline__  ~~strike~~  ||spoiler||
///     `code`  ``code with ` inside``  ```lang\n block```  > quote (a line)  >>> quote (the rest)
///     [masked link](https://…)  <https://…>  \*escaped\*
///
/// and its references: `<@id>`/`<@!id>` → "@name" (from the message's `mentions`), `<#id>` →
/// "#channel", `<@&id>` → "@role", `<:name:id>`/`<a:name:id>` → ":name:", `<t:unix:style>` →
/// the date and time in `timeZone` (the import's `--tz`). Nothing is formatted inside code; a marker without its closing twin stays text.
/// Texts over `maxFormatted` characters (Discord allows 4,000) are kept as they are: the search
/// for closing markers must not turn a damaged file's megabyte "message" into minutes.
enum DiscordMarkdown {
    static let maxFormatted = 8_000

    typealias Scalars = [Unicode.Scalar]
    static let utc = TimeZone(identifier: "UTC")!

    /// The bytes that may start markup: * _ ~ ` | > < [ \\
    static let markerBytes: [Bool] = (0..<256).map { [0x2A, 0x5F, 0x7E, 0x60, 0x7C, 0x3E, 0x3C, 0x5B, 0x5C].contains($0) }

    /// `mentions`: user id → the name to show.
    static func parse(_ text: String, mentions: [String: String] = [:], timeZone: TimeZone = utc) -> (text: String, spans: [TextSpan]) {
        // Most messages have no marker at all.
        var plain = text
        guard plain.withUTF8({ b in b.contains { markerBytes[Int($0)] } }) else { return (text, []) }
        let s = Array(text.unicodeScalars)
        guard s.count <= maxFormatted else { return (text, []) }
        var p = Parser(s: s, mentions: mentions, timeZone: timeZone)
        p.block(0, s.count)
        return p.result()
    }

    private struct Parser {
        let s: Scalars
        let mentions: [String: String]
        let timeZone: TimeZone
        var out: Scalars = []
        /// Scalar ranges of `out`.
        var spans: [(TextSpan.Style, Range<Int>, String?)] = []

        init(s: Scalars, mentions: [String: String], timeZone: TimeZone) {
            self.s = s
            self.mentions = mentions
            self.timeZone = timeZone
            out.reserveCapacity(s.count)
        }

        func starts(_ marker: String, at i: Int, end: Int) -> Bool {
            var k = i
            for m in marker.unicodeScalars {
                guard k < end, s[k] == m else { return false }
                k += 1
            }
            return true
        }

        /// The next `marker` at or after `from` (not escaped), before `end`.
        func find(_ marker: String, from: Int, end: Int) -> Int? {
            var k = from
            while k < end {
                if s[k] == "\\" { k += 2; continue }
                if starts(marker, at: k, end: end) { return k }
                k += 1
            }
            return nil
        }

        func atLineStart(_ i: Int) -> Bool { i == 0 || s[i - 1] == "\n" }

        /// Lines with quotes; the rest inline.
        mutating func block(_ from: Int, _ end: Int) {
            var i = from
            while i < end {
                if atLineStart(i), starts(">>> ", at: i, end: end) {
                    let start = out.count
                    inline(i + 4, end)
                    if out.count > start { spans.append((.quote, start..<out.count, nil)) }
                    return
                }
                if atLineStart(i), starts("> ", at: i, end: end) {
                    var lineEnd = i
                    while lineEnd < end, s[lineEnd] != "\n" { lineEnd += 1 }
                    let start = out.count
                    inline(i + 2, lineEnd)
                    if out.count > start { spans.append((.quote, start..<out.count, nil)) }
                    i = lineEnd
                    continue
                }
                // Up to the next line that starts a quote (code blocks may hold "> " lines).
                var k = i
                var next = end
                while k < end {
                    if starts("```", at: k, end: end), let close = find("```", from: k + 3, end: end) { k = close + 3; continue }
                    if s[k] == "\n", k + 1 < end, starts("> ", at: k + 1, end: end) || starts(">>> ", at: k + 1, end: end) {
                        next = k + 1
                        break
                    }
                    k += 1
                }
                inline(i, next)
                i = next
            }
        }

        mutating func inline(_ from: Int, _ end: Int) {
            var i = from
            while i < end {
                let c = s[i]
                switch c {
                case "\\"
                where i + 1 < end && !s[i + 1].properties.isAlphabetic && !s[i + 1].properties.isWhitespace
                    && s[i + 1].isASCII:
                    out.append(s[i + 1])
                    i += 2
                    continue
                case "`":
                    if starts("```", at: i, end: end), let close = find("```", from: i + 3, end: end), close > i + 3 {
                        var bodyStart = i + 3
                        // A language name on the first line: left out.
                        var k = bodyStart
                        while k < close, s[k] != "\n", s[k].isASCII,
                            s[k].properties.isAlphabetic || s[k].properties.numericType != nil
                                || s[k] == "+" || s[k] == "#" || s[k] == "-"
                        { k += 1 }
                        if k < close, s[k] == "\n" { bodyStart = k + 1 } else if bodyStart < close, s[bodyStart] == "\n" { bodyStart += 1 }
                        var bodyEnd = close
                        if bodyEnd > bodyStart, s[bodyEnd - 1] == "\n" { bodyEnd -= 1 }
                        let start = out.count
                        out.append(contentsOf: s[bodyStart..<bodyEnd])
                        if out.count > start { spans.append((.pre, start..<out.count, nil)) }
                        i = close + 3
                        continue
                    }
                    let fence = starts("``", at: i, end: end) ? "``" : "`"
                    let n = fence.unicodeScalars.count
                    if let close = rawFind(fence, from: i + n, end: end), close > i + n {
                        var a = i + n, z = close
                        if n == 2, z - a >= 2, s[a] == " ", s[z - 1] == " " { a += 1; z -= 1 }
                        let start = out.count
                        out.append(contentsOf: s[a..<z])
                        spans.append((.code, start..<out.count, nil))
                        i = close + n
                        continue
                    }
                case "|" where starts("||", at: i, end: end):
                    if wrap("||", .spoiler, at: &i, end: end) { continue }
                case "*":
                    if starts("***", at: i, end: end), let close = closing("***", from: i + 3, end: end) {
                        let start = out.count
                        inline(i + 3, close)
                        spans.append((.bold, start..<out.count, nil))
                        spans.append((.italic, start..<out.count, nil))
                        i = close + 3
                        continue
                    }
                    if starts("**", at: i, end: end) {
                        if wrap("**", .bold, at: &i, end: end) { continue }
                    } else if i + 1 < end, !s[i + 1].properties.isWhitespace, wrap("*", .italic, at: &i, end: end) {
                        continue
                    }
                case "_":
                    if starts("__", at: i, end: end) {
                        if wrap("__", .underline, at: &i, end: end) { continue }
                    } else if i == from || !isWordy(s[i - 1]), let close = closing("_", from: i + 1, end: end),
                        close + 1 >= end || !isWordy(s[close + 1])
                    {
                        let start = out.count
                        inline(i + 1, close)
                        spans.append((.italic, start..<out.count, nil))
                        i = close + 1
                        continue
                    }
                case "~" where starts("~~", at: i, end: end):
                    if wrap("~~", .strike, at: &i, end: end) { continue }
                case "[":
                    if let link = maskedLink(at: i, end: end) {
                        let start = out.count
                        inline(i + 1, link.textEnd)
                        spans.append((.link, start..<out.count, link.url))
                        i = link.end
                        continue
                    }
                case "<":
                    if reference(at: &i, end: end) { continue }
                default: break
                }
                out.append(c)
                i += 1
            }
        }

        func isWordy(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c.properties.numericType != nil }

        /// The closing `marker` of one opened before `from`: content not empty, not starting or
        /// ending with a space.
        func closing(_ marker: String, from: Int, end: Int) -> Int? {
            guard from < end, !s[from].properties.isWhitespace else { return nil }
            var k = from
            while let close = find(marker, from: k, end: end) {
                if close > from, !s[close - 1].properties.isWhitespace { return close }
                k = close + 1
            }
            return nil
        }

        /// Code ends at the same fence, escapes or not.
        func rawFind(_ marker: String, from: Int, end: Int) -> Int? {
            var k = from
            while k < end {
                if starts(marker, at: k, end: end) { return k }
                k += 1
            }
            return nil
        }

        mutating func wrap(_ marker: String, _ style: TextSpan.Style, at i: inout Int, end: Int) -> Bool {
            let n = marker.unicodeScalars.count
            guard var close = closing(marker, from: i + n, end: end) else { return false }
            // "**bold *italic***": the run's last two close the bold (its first, the italic).
            let m = marker.unicodeScalars.first!
            while n == 2, close + n < end, s[close + n] == m { close += 1 }
            let start = out.count
            inline(i + n, close)
            spans.append((style, start..<out.count, nil))
            i = close + n
            return true
        }

        /// `[text](https://…)`.
        func maskedLink(at i: Int, end: Int) -> (textEnd: Int, url: String, end: Int)? {
            guard let close = find("](", from: i + 1, end: end), close > i + 1,
                !s[(i + 1)..<close].contains("\n")
            else { return nil }
            var k = close + 2
            var url = String.UnicodeScalarView()
            while k < end, s[k] != ")", !s[k].properties.isWhitespace { url.append(s[k]); k += 1 }
            let target = String(url)
            guard k < end, s[k] == ")", target.hasPrefix("https://") || target.hasPrefix("http://") else { return nil }
            return (close, target, k + 1)
        }

        /// `<@id>`, `<@!id>`, `<#id>`, `<@&id>`, `<:name:id>`, `<a:name:id>`, `<t:unix:style>`, `<https://…>`.
        mutating func reference(at i: inout Int, end: Int) -> Bool {
            var k = i + 1
            while k < end, k - i < 200, s[k] != ">", s[k] != "<", s[k] != "\n" { k += 1 }
            guard k < end, s[k] == ">" else { return false }
            let inner = String(String.UnicodeScalarView(s[(i + 1)..<k]))
            var shown: String?
            var style: TextSpan.Style?
            var url: String?
            if inner.hasPrefix("@&") {
                shown = "@role"; style = .mention
            } else if inner.hasPrefix("@") {
                let id = String(inner.dropFirst(inner.hasPrefix("@!") ? 2 : 1))
                guard !id.isEmpty, id.allSatisfy(\.isNumber) else { return false }
                shown = "@" + (mentions[id] ?? "unknown-user"); style = .mention; url = id
            } else if inner.hasPrefix("#") {
                let id = inner.dropFirst()
                guard !id.isEmpty, id.allSatisfy(\.isNumber) else { return false }
                shown = "#channel"; style = .mention
            } else if inner.hasPrefix(":") || inner.hasPrefix("a:") {
                let parts = inner.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 3, !parts[1].isEmpty, parts[2].allSatisfy(\.isNumber) else { return false }
                shown = ":" + parts[1] + ":"
            } else if inner.hasPrefix("t:") {
                let parts = inner.split(separator: ":")
                guard parts.count >= 2, let seconds = Double(parts[1]) else { return false }
                shown = DiscordTime.shown(seconds, in: timeZone)
            } else if inner.hasPrefix("https://") || inner.hasPrefix("http://"), !inner.contains(" ") {
                shown = inner; style = .link; url = inner
            } else {
                return false
            }
            let start = out.count
            out.append(contentsOf: shown!.unicodeScalars)
            if let style { spans.append((style, start..<out.count, url)) }
            i = k + 1
            return true
        }

        /// The text and its spans in UTF-8 offsets, sorted by start.
        func result() -> (text: String, spans: [TextSpan]) {
            var offsets = [Int](repeating: 0, count: out.count + 1)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(out.count + out.count / 2)
            for (k, c) in out.enumerated() {
                UTF8.encode(c) { bytes.append($0) }
                offsets[k + 1] = bytes.count
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let made = spans.filter { !$0.1.isEmpty }.map { TextSpan($0.0, offsets[$0.1.lowerBound]..<offsets[$0.1.upperBound], url: $0.2) }
            return (text, made.sorted { $0.range.lowerBound < $1.range.lowerBound })
        }
    }
}
