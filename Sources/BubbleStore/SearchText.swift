import BubbleCore
import Foundation

/// How text goes into the full-text index and how a query comes out of it.
///
/// SQLite's `unicode61` tokenizer (diacritics removed, case folded) splits Latin, Cyrillic,
/// Greek, Arabic, Hebrew… into words. It does not split Chinese or Japanese, which are written
/// without spaces, so runs of CJK characters (Han, kana, Hangul) are indexed as overlapping
/// bigrams ("明天见" → "明天 天见"): a two-character word is one token, a longer one a phrase of
/// bigrams, and a single character a prefix. The original text is kept in the message table;
/// the index holds only this form (a contentless FTS5 table).
enum SearchText {
    static func isCJK(_ v: UInt32) -> Bool { CJK.contains(v) }

    /// Whether `text` may hold a CJK character: a UTF-8 lead byte of U+3040…U+9FFF, U+AC00…U+D7AF,
    /// U+F900…U+FAFF or a 4-byte sequence (U+20000…). Most texts have none and are indexed as they are.
    static func mayHaveCJK(_ text: String) -> Bool {
        var copy = text
        return copy.withUTF8 { bytes in bytes.contains { $0 >= 0xE3 && $0 != 0xEE || $0 >= 0xF0 } }
    }

    /// The indexed form of `text`.
    static func indexed(_ text: String) -> String {
        guard mayHaveCJK(text) else { return text }
        var out = String.UnicodeScalarView()
        var run: [Unicode.Scalar] = []
        func flush() {
            guard !run.isEmpty else { return }
            out.append(" ")
            if run.count == 1 {
                out.append(run[0])
            } else {
                for i in 0..<(run.count - 1) {
                    if i > 0 { out.append(" ") }
                    out.append(run[i]); out.append(run[i + 1])
                }
            }
            out.append(" ")
            run.removeAll(keepingCapacity: true)
        }
        for s in text.unicodeScalars {
            if isCJK(s.value) { run.append(s) } else { flush(); out.append(s) }
        }
        flush()
        return String(out)
    }

    /// A parsed query: what must match, what must not.
    struct Query: Equatable {
        /// Each term: its words, whether it was a "phrase", whether it ends in `*`.
        struct Term: Equatable { var text: String; var phrase: Bool; var prefix: Bool; var excluded: Bool }
        var terms: [Term]
    }

    /// Words, "quoted phrases", `prefix*`, and `-word` / `-"phrase"` to exclude. Nil when the
    /// query has nothing to find.
    static func parse(_ query: String) -> Query? {
        var terms: [Query.Term] = []
        var chars = Array(query)
        chars.append(" ")
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c.isWhitespace { i += 1; continue }
            var excluded = false
            if c == "-", i + 1 < chars.count, !chars[i + 1].isWhitespace { excluded = true; i += 1 }
            if chars[i] == "\"" {
                var j = i + 1
                while j < chars.count, chars[j] != "\"" { j += 1 }
                let text = String(chars[(i + 1)..<min(j, chars.count - 1)]).trimmingCharacters(in: .whitespaces)
                var prefix = false
                var next = j + 1
                if next < chars.count, chars[next] == "*" { prefix = true; next += 1 }
                if !text.isEmpty { terms.append(.init(text: text, phrase: true, prefix: prefix, excluded: excluded)) }
                i = next
                continue
            }
            var j = i
            while j < chars.count, !chars[j].isWhitespace { j += 1 }
            var word = String(chars[i..<j])
            var prefix = false
            if word.hasSuffix("*") { prefix = true; word.removeLast() }
            if !word.isEmpty { terms.append(.init(text: word, phrase: false, prefix: prefix, excluded: excluded)) }
            i = j
        }
        guard terms.contains(where: { !$0.excluded }) else { return nil }
        return Query(terms: terms)
    }

    /// The FTS5 MATCH expression of `query`: every term quoted (nothing in it is FTS syntax),
    /// CJK runs as bigram phrases, included terms joined with AND, excluded ones with NOT.
    static func match(_ query: Query) -> String {
        func expression(_ t: Query.Term) -> String {
            let form = indexed(t.text)
            let tokens = form.split(whereSeparator: { $0.isWhitespace }).map(String.init)
            // A lone CJK character matches as the start of a bigram.
            let lone = t.text.unicodeScalars.count == 1 && isCJK(t.text.unicodeScalars.first!.value)
            let quoted = "\"" + tokens.joined(separator: " ").replacingOccurrences(of: "\"", with: "\"\"") + "\""
            return quoted + (t.prefix || lone ? "*" : "")
        }
        let included = query.terms.filter { !$0.excluded }.map(expression)
        var out = included.joined(separator: " AND ")
        for t in query.terms where t.excluded { out += " NOT " + expression(t) }
        return out
    }

    /// `text` around the first place one of `query`'s included terms occurs (case and accents
    /// ignored), about `radius` characters each side, cut with "…": the part before the match,
    /// the match, the part after (no match: the start of the text).
    static func snippetParts(_ text: String, query: Query, radius: Int = 40) -> (before: String, match: String, after: String) {
        let options: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive]
        var best: Range<String.Index>?
        for t in query.terms where !t.excluded {
            for piece in [t.text] + t.text.split(separator: " ").map(String.init) {
                if let r = text.range(of: piece, options: options), best == nil || r.lowerBound < best!.lowerBound { best = r }
            }
            if best != nil { break }
        }
        guard var match = best else {
            return (text.count > radius * 2 ? String(text.prefix(radius * 2)) + "…" : text, "", "")
        }
        // A prefix search marks the whole word.
        while match.upperBound < text.endIndex, text[match.upperBound].isLetter || text[match.upperBound].isNumber {
            match = match.lowerBound..<text.index(after: match.upperBound)
        }
        let start = text.index(match.lowerBound, offsetBy: -radius, limitedBy: text.startIndex) ?? text.startIndex
        let end = text.index(match.upperBound, offsetBy: radius, limitedBy: text.endIndex) ?? text.endIndex
        return (
            (start > text.startIndex ? "…" : "") + text[start..<match.lowerBound], String(text[match]),
            text[match.upperBound..<end] + (end < text.endIndex ? "…" : "")
        )
    }

    /// Whether `text` holds every included term as written (only case ignored): exact matches
    /// rank before ones found through folded accents.
    static func isExact(_ text: String, query: Query) -> Bool {
        query.terms.filter { !$0.excluded }.allSatisfy { text.range(of: $0.text, options: .caseInsensitive) != nil }
    }

    /// Hits from candidate rows in rank order: exact matches first (stable: rank order
    /// otherwise), a snippet made for each hit kept.
    /// `extra` is the row's `message.extra`: a spoiler in its spans is masked in the hit's text
    /// and snippet, as in a reply's quote.
    static func hits(
        _ found: [(conversation: Int64, seq: Int64, date: Double, sender: String?, text: String, senderName: String?, extra: String?)],
        query: Query, limit: Int
    ) -> [StoreHit] {
        let rows = found.map { r in
            (
                conversation: r.conversation, seq: r.seq, date: r.date, sender: r.sender,
                text: StoreCodec.hidingSpoilers(r.text, extra: r.extra), senderName: r.senderName
            )
        }
        let ranked = rows.enumerated().map { (offset: $0.offset, row: $0.element, exact: isExact($0.element.text, query: query)) }
            .sorted { a, b in a.exact != b.exact ? a.exact : a.offset < b.offset }
        return ranked.prefix(limit).map { r in
            let parts = snippetParts(r.row.text, query: query)
            return StoreHit(
                conversation: r.row.conversation, seq: r.row.seq, date: Date(timeIntervalSince1970: r.row.date),
                sender: r.row.sender, senderName: r.row.senderName, text: r.row.text,
                snippet: parts.match.isEmpty ? parts.before : parts.before + "[" + parts.match + "]" + parts.after,
                snippetParts: [parts.before, parts.match, parts.after])
        }
    }
}
