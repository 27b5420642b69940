/// Recognises messages made only of emoji (drawn large, without a bubble).
package enum EmojiText {
    /// True when `text` is 1…`maximum` emoji, optionally separated by spaces, and nothing else.
    /// An emoji is a grapheme with an emoji-presentation scalar, or an emoji scalar followed by
    /// a variation selector, keycap or ZWJ sequence ("1" and "#" alone are not emoji).
    package static func isEmojiOnly(_ text: String, maximum: Int = 3) -> Bool {
        // Never in an emoji: an ASCII letter (digits, # and * start keycaps), a scalar in U+00C0–U+07FF
        // (only © and ® below U+0800 are emoji) or in U+4000–U+EFFF (CJK, Hangul, private use).
        var copy = text
        let cannot = copy.withUTF8 { bytes in
            bytes.indices.contains { i in
                let b = bytes[i]
                return (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A || (0xC3...0xDF).contains(b) || (0xE4...0xEE).contains(b)
                    || (b == 0xC2 && i + 1 < bytes.count && bytes[i + 1] != 0xA9 && bytes[i + 1] != 0xAE)
            }
        }
        if cannot { return false }
        var count = 0
        for ch in text {
            if ch == " " { continue }
            guard isEmoji(ch) else { return false }
            count += 1
            if count > maximum { return false }
        }
        return count > 0
    }

    package static func isEmoji(_ ch: Character) -> Bool {
        let scalars = ch.unicodeScalars
        guard let first = scalars.first else { return false }
        if scalars.contains(where: { $0.properties.isEmojiPresentation }) { return true }
        return first.properties.isEmoji && scalars.count > 1
            && scalars.dropFirst().contains { $0.value == 0xFE0F || $0.value == 0x20E3 || $0.value == 0x200D }
    }
}
