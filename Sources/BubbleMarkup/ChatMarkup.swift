import BubbleCore

/// Chat markup — WhatsApp's formatting, as the app applies it — read into spans with the markers
/// removed. The WhatsApp importer reads exports with it, and `bubbles serve`'s composer reads
/// what people type (so `*bold*` typed in the page shows bold, as in the app):
///
///     *bold*  _italic_  ~strike~  `inline code`  ```monospace block```  > quote (at a line start)
///
/// The rules (checked against what the app shows):
/// - a marker opens only before a non-space and not after a letter or digit, and closes only
///   after a non-space and not before a letter or digit: `2*3*4`, `snake_case_name`,
///   `a * b * c` and `~/path` stay literal;
/// - bold, italic and strike stay on one line and may nest (`*_both_*`);
/// - nothing is formatted inside code (inline or block) or inside a web address
///   (`https://x.org/_a_/`);
/// - `* ` and `- ` list items and `1. ` numbered ones are text as they are.
package enum ChatMarkup {
    package static func parse(_ text: String) -> (text: String, spans: [TextSpan]) {
        let utf8 = text.utf8
        // Most messages have no marker character at all.
        guard utf8.contains(where: { $0 == 0x2A || $0 == 0x5F || $0 == 0x7E || $0 == 0x60 || $0 == 0x3E }) else { return (text, []) }
        let s = Array(text.unicodeScalars)
        var removed = [Bool](repeating: false, count: s.count)
        var protected = [Bool](repeating: false, count: s.count)
        var spans: [(TextSpan.Style, Range<Int>)] = []  // scalar indices, markers excluded

        // Web addresses: never formatted inside.
        var scalarAt: [Int: Int] = [:]  // UTF-8 offset → scalar index
        var offset = 0
        for (i, c) in s.enumerated() { scalarAt[offset] = i; offset += String(c).utf8.count }
        scalarAt[offset] = s.count
        for link in LinkDetector.links(in: text) {
            guard let a = scalarAt[link.range.lowerBound], let z = scalarAt[link.range.upperBound] else { continue }
            for i in a..<z { protected[i] = true }
        }

        func isSpace(_ i: Int) -> Bool { s[i].properties.isWhitespace }
        func isWordy(_ i: Int) -> Bool { s[i].properties.isAlphabetic || s[i].properties.numericType != nil }

        // Each search for a closing marker looks its answer up in a table made from the end of the
        // text, so a long text full of unclosed markers costs linear time, not quadratic.
        // ```blocks``` (may span lines).
        func tick(_ k: Int) -> Bool { k + 2 < s.count && s[k] == "`" && s[k + 1] == "`" && s[k + 2] == "`" }
        var nextTick = [Int](repeating: s.count, count: s.count + 1)
        for k in stride(from: s.count - 1, through: 0, by: -1) { nextTick[k] = tick(k) ? k : nextTick[k + 1] }
        var i = 0
        while i < s.count {
            if tick(i), !protected[i] {
                let j = i + 3 <= s.count ? nextTick[i + 3] : s.count
                if j < s.count, j > i + 3 {
                    for k in i..<(j + 3) { protected[k] = true }
                    for k in [i, i + 1, i + 2, j, j + 1, j + 2] { removed[k] = true }
                    spans.append((.pre, (i + 3)..<j))
                    i = j + 3
                    continue
                }
            }
            i += 1
        }
        // `inline code` on one line: the next backtick or line end after each position.
        var nextStop = [Int](repeating: s.count, count: s.count + 1)
        for k in stride(from: s.count - 1, through: 0, by: -1) { nextStop[k] = s[k] == "`" || s[k] == "\n" ? k : nextStop[k + 1] }
        i = 0
        while i < s.count {
            if s[i] == "`", !protected[i] {
                let j = nextStop[i + 1]
                if j < s.count, s[j] == "`", j > i + 1, !protected[j] {
                    for k in i...j { protected[k] = true }
                    removed[i] = true; removed[j] = true
                    spans.append((.code, (i + 1)..<j))
                    i = j + 1
                    continue
                }
            }
            i += 1
        }
        // "> " quotes at line starts.
        var lineStart = 0
        for k in 0...s.count {
            guard k == s.count || s[k] == "\n" else { continue }
            if k - lineStart >= 3, s[lineStart] == ">", s[lineStart + 1] == " ", !protected[lineStart] {
                removed[lineStart] = true; removed[lineStart + 1] = true
                spans.append((.quote, (lineStart + 2)..<k))
            }
            lineStart = k + 1
        }
        // *bold* _italic_ ~strike~, each marker on its own pass (so they nest).
        var nextCloser = [Int](repeating: -1, count: s.count + 1)
        for (marker, style) in [("*" as Unicode.Scalar, TextSpan.Style.bold), ("_", .italic), ("~", .strike)] {
            // The nearest position on the same line that can close this marker (pairs made in
            // this pass lie before the opener looked at, so the table stays true during it).
            var next = -1
            nextCloser[s.count] = -1
            for j in stride(from: s.count - 1, through: 0, by: -1) {
                if s[j] == "\n" {
                    next = -1
                } else if s[j] == marker, j > 0, !protected[j], !removed[j], !isSpace(j - 1),
                    j + 1 == s.count || !isWordy(j + 1)
                {
                    next = j
                }
                nextCloser[j] = next
            }
            var i = 0
            while i < s.count {
                let opens =
                    s[i] == marker && !protected[i] && !removed[i] && i + 1 < s.count && !isSpace(i + 1)
                    && s[i + 1] != marker && (i == 0 || !isWordy(i - 1))
                guard opens, i + 2 <= s.count else { i += 1; continue }
                let j = nextCloser[i + 2]
                guard j > 0 else { i += 1; continue }
                removed[i] = true; removed[j] = true
                spans.append((style, (i + 1)..<j))
                i = j + 1
            }
        }
        guard removed.contains(true) || !spans.isEmpty else { return (text, []) }
        // The text without the markers; scalar indices → UTF-8 offsets in it.
        var out = String.UnicodeScalarView()
        var newOffset = [Int](repeating: 0, count: s.count + 1)
        var at = 0
        for (k, c) in s.enumerated() {
            newOffset[k] = at
            if !removed[k] { out.append(c); at += String(c).utf8.count }
        }
        newOffset[s.count] = at
        let result = spans.compactMap { style, r -> TextSpan? in
            let a = newOffset[r.lowerBound], z = newOffset[r.upperBound]
            return z > a ? TextSpan(style, a..<z) : nil
        }.sorted { $0.range.lowerBound < $1.range.lowerBound }
        return (String(out), result)
    }

    /// `text` with the markers of its spans put back — what a person would type to get them
    /// (`parse` reads it back to the same text and spans): `*bold*`, `_italic_`, `~strike~`,
    /// `` `code` ``, ```` ```block``` ````, `> quote`. Styles without a marker (underline,
    /// spoiler, links, mentions) are left out.
    package static func format(_ text: String, spans: [TextSpan]) -> String {
        let bytes = Array(text.utf8)
        // (offset, order, marker): at one offset closers come before openers, inner before outer.
        var inserts: [(at: Int, order: Int, marker: String)] = []
        for (k, s) in spans.enumerated() where s.range.upperBound <= bytes.count && !s.range.isEmpty {
            let marker: String
            switch s.style {
            case .bold: marker = "*"
            case .italic: marker = "_"
            case .strike: marker = "~"
            case .code: marker = "`"
            case .pre: marker = "```"
            case .quote:
                inserts.append((s.range.lowerBound, 1_000_000 + k, "> "))
                continue
            default: continue
            }
            inserts.append((s.range.lowerBound, 1_000_000 + k, marker))
            inserts.append((s.range.upperBound, -k, marker))
        }
        guard !inserts.isEmpty else { return text }
        inserts.sort { $0.at != $1.at ? $0.at < $1.at : $0.order < $1.order }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 2 * inserts.count)
        var at = 0
        for i in inserts {
            out.append(contentsOf: bytes[at..<i.at])
            out.append(contentsOf: i.marker.utf8)
            at = i.at
        }
        out.append(contentsOf: bytes[at...])
        return String(decoding: out, as: UTF8.self)
    }
}
