/// Han, kana and Hangul: scripts written without spaces between words, which search indexes and
/// statistics count as overlapping two-character words.
package enum CJK {
    package static func contains(_ v: UInt32) -> Bool {
        (0x4E00...0x9FFF).contains(v) || (0x3400...0x4DBF).contains(v) || (0x3040...0x30FF).contains(v)
            || (0x31F0...0x31FF).contains(v) || (0xAC00...0xD7AF).contains(v) || (0xF900...0xFAFF).contains(v)
            || (0x20000...0x2FFFF).contains(v)
    }
}
