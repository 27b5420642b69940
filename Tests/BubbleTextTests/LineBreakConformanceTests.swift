import Foundation
import BubbleTestSupport
import Testing
@testable import BubbleText

/// UAX #14 conformance of the segmenter FastTextEngine uses (ICU's root-locale line breaker)
/// against LineBreakTest.txt from Debian's `unicode-data` package.
///
/// ICU's rules are tailored for numbers (the regex of UAX #14's Example 7, extended); the test
/// file's are not tailored that way. The one documented difference, checked case by case: ICU
/// keeps a hyphen-minus, comma or full stop together with the letter or digit after it (`-#`,
/// `,0`, `a.2`, and `.35` after a space is one number: the break goes before the full stop).
/// With ICU 72 and unicode-data 15.0 that accounts for all 22 of 7,654 cases that differ.
@Suite struct LineBreakConformanceTests {
    static let file = "/usr/share/unicode/auxiliary/LineBreakTest.txt"

    struct Case {
        var line: Int
        var text: String
        /// Byte offsets (UTF-8) where the file says ÷, after position 0.
        var breaks: [Int]
        /// The rule numbers the comment gives at each position between characters.
        var rules: [String]
        var source: String
    }

    static func cases() throws -> [Case] {
        let content = try String(contentsOfFile: file, encoding: .utf8)
        var out: [Case] = []
        for (n, raw) in content.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let parts = raw.split(separator: "#", maxSplits: 1)
            guard let spec = parts.first, !spec.trimmingCharacters(in: .whitespaces).isEmpty, !raw.hasPrefix("#") else { continue }
            var text = String.UnicodeScalarView()
            var offset = 0
            var breaks: [Int] = []
            for token in spec.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                if token == "÷" {
                    if offset > 0 { breaks.append(offset) }
                } else if token == "×" {
                    continue
                } else if let v = UInt32(token, radix: 16), let scalar = Unicode.Scalar(v) {
                    text.append(scalar); offset += String(scalar).utf8.count
                }
            }
            let comment = parts.count > 1 ? String(parts[1]) : ""
            // "[9.0]" markers, one per position (start, between characters, end).
            var rules: [String] = []
            var rest = Substring(comment)
            while let open = rest.firstIndex(of: "["), let close = rest[open...].firstIndex(of: "]") {
                rules.append(String(rest[rest.index(after: open)..<close]))
                rest = rest[rest.index(after: close)...]
            }
            out.append(Case(line: n + 1, text: String(text), breaks: breaks, rules: rules, source: String(raw)))
        }
        return out
    }

    /// ICU's number tailoring (see above) at `position` (a scalar index) of `c`: the file breaks
    /// after a `-`, `,` or `.` (combining marks skipped) where ICU does not, or ICU breaks before a
    /// `.`/`,` that starts a number where the file does not.
    static func isNumberTailoring(_ c: Case, position: Int, icuBreaks: Bool) -> Bool {
        let scalars = Array(c.text.unicodeScalars)
        if !icuBreaks {
            var k = position - 1
            while k > 0, scalars[k].properties.generalCategory == .nonspacingMark { k -= 1 }
            return k >= 0 && ["-", ",", "."].contains(scalars[k])
        }
        return position + 1 < scalars.count && [",", "."].contains(scalars[position]) && scalars[position + 1].properties.numericType != nil
    }

    @Test func breaksLongAndNonASCIITextsAtByteOffsets() {
        // Over a million UTF-16 units: the per-thread copy is dropped after use, and the next
        // (short) text is broken correctly from a fresh one.
        let long = String(repeating: "ab ", count: 400_001)
        let breaks = LineBreaker.breaks(long)
        #expect(breaks.count == 400_001)
        #expect(breaks.first?.offset == 3 && breaks.last?.offset == long.utf8.count)
        // Offsets are UTF-8 bytes, also after characters of 2, 3 and 4 bytes (surrogate pairs
        // in UTF-16) and across a hard break.
        let mixed = LineBreaker.breaks("é 今日 😀 x\ny")
        #expect(mixed.map(\.offset) == [3, 6, 10, 15, 17, 18])  // é␠ | 今 | 日␠ | 😀␠ | x\n | y
        #expect(mixed.map(\.hard) == [false, false, false, false, true, false])
    }

    @Test("plain prose is broken without ICU exactly where ICU breaks it (drawn texts, hostile neighbours of every mark)")
    func proseShortcutAgreesWithICU() {
        // The shortcut's alphabet and what must send a text back to ICU: marks before letters
        // or digits, marks after a space or at the start, hyphens, quotes, brackets, tabs,
        // newlines, accented letters, emoji, CJK, bytes of a broken sequence repaired.
        let prose = [
            "a", "Z", "q", "7", "0", "'", " ", " ", "  ", ".", ",", "!", "?", "...", "?!", "hello", "3pm", "don't", "é", "Ü", "ß",
            "ÿ", "ő", "ɏ", "Ā", "д", "Ж", "ѐ", "џ", "café", "über"
        ]
        // What the shortcut must refuse: ASCII punctuation and controls, and the two-byte
        // characters beside its letters that are not letters of class AL (×, ÷, combining
        // marks, Greek, Cyrillic beyond U+045F, the no-break space, the soft hyphen, «»).
        let beside =
            prose + [
                "-", "\"", "(", ")", "/", ":", ";", "\t", "\n", "\r\n", "$", "%", "e.g", "1,000", "#", "@", "&", "*", "×", "÷",
                "e\u{0301}", "\u{0300}", "α", ";", "Ѡ", "\u{0483}", "\u{00A0}", "\u{00AD}", "«", "»", "¿", "¡", "°", "ʼ", "ˆ"
            ]
        let all = beside + ["😀", "日", "\u{2028}", "\u{FFFD}", "\u{200B}", "ا", "\u{2019}"]
        var rng = SplitMix64(seed: 0x1B2E)
        for n in 0..<30_000 {
            let count = Int(rng.next() % 12)
            // A third of the texts in the shortcut's alphabet (so that it is taken often), a
            // third with the ASCII it must refuse, a third with anything.
            let alphabet = [prose, beside, all][n % 3]
            let text = (0..<count).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }.joined()
            let fast = LineBreaker.breaks(text), icu = LineBreaker.breaks(text, icuOnly: true)
            #expect(fast.map(\.offset) == icu.map(\.offset) && fast.map(\.hard) == icu.map(\.hard), "\(text.debugDescription)")
        }
        // Texts that only the shortcut's rules cover, spelled out: breaks after each run of spaces.
        #expect(LineBreaker.breaks("Hi there,  it's 3pm!! ok?").map(\.offset) == [3, 11, 16, 22, 25])
        #expect(LineBreaker.breaks("  lead").map(\.offset) == [2, 6])
        #expect(LineBreaker.breaks("trail  ").map(\.offset) == [7])
        #expect(LineBreaker.breaks("naïve café, über").map(\.offset) == [7, 14, 19])
    }

    @Test func icuPassesLineBreakTestApartFromTailorings() throws {
        guard FileManager.default.fileExists(atPath: Self.file) else {
            Issue.record("\(Self.file) is missing: install Debian's unicode-data (scripts/bootstrap.sh does)")
            return
        }
        let cases = try Self.cases()
        #expect(cases.count > 7_000)
        var failures: [(Case, [Int])] = []
        var undocumented: [String] = []
        for c in cases {
            let got = LineBreaker.breaks(c.text).map(\.offset)
            guard got != c.breaks else { continue }
            failures.append((c, got))
            var offsets = [0]
            for s in c.text.unicodeScalars { offsets.append(offsets.last! + String(s).utf8.count) }
            guard let position = offsets.indices.dropFirst().first(where: { Set(got).contains(offsets[$0]) != Set(c.breaks).contains(offsets[$0]) }),
                Self.isNumberTailoring(c, position: position, icuBreaks: Set(got).contains(offsets[position]))
            else {
                undocumented.append("line \(c.line): \(c.source) — ICU breaks at \(got)")
                continue
            }
        }
        print(
            "LineBreakTest.txt: \(cases.count - failures.count) of \(cases.count) pass with ICU's root line breaker; \(failures.count) differ by ICU's number tailoring:"
        )
        for (c, got) in failures { print("  line \(c.line): \(c.source.prefix(120)) — ICU breaks at \(got)") }
        #expect(undocumented.isEmpty, "not a documented tailoring: \(undocumented.joined(separator: "\n"))")
        #expect(failures.count <= 22)
    }
}
