/// Recognises messages made only of emoji (drawn large, without a bubble).
package enum EmojiText {
    /// True when `text` is 1…`maximum` emoji, optionally separated by spaces, and nothing else.
    /// An emoji is a grapheme with an emoji-presentation scalar, or an emoji scalar followed by
    /// a variation selector, keycap or ZWJ sequence ("1" and "#" alone are not emoji).
    package static func isEmojiOnly(_ text: String, maximum: Int = 3) -> Bool {
        // An ASCII letter is never part of an emoji (digits, # and * can start keycaps).
        var copy = text
        let hasLetter = copy.withUTF8 { bytes in
            for b in bytes where (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A { return true }
            return false
        }
        if hasLetter { return false }
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
