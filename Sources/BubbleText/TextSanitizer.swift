/// What `PangoTextEngine` does to a text before Pango sees it. `TextLine.range` offsets are UTF-8
/// byte offsets into the result (`PangoTextStorage.sanitizedText`), not into the original string.
///
/// - `\r\n` and a lone `\r` become `\n`; NEL (U+0085) becomes `\n` too;
/// - the other C0 controls (U+0000–U+001F except `\t` and `\n`), DEL (U+007F) and the other C1
///   controls (U+0080–U+009F) are **removed** (not replaced): they have no glyph, and Pango would
///   otherwise draw them as hex boxes; a NUL would also end the C string early;
/// - everything else (tabs, U+2028 and U+2029 separators, format characters, emoji sequences) is
///   kept as it is. A Swift `String` is always valid Unicode, so there is nothing else to repair.
package enum TextSanitizer {
    package static func sanitize(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsWork) else { return text }
        var out = String.UnicodeScalarView()
        var afterCR = false
        for scalar in text.unicodeScalars {
            let v = scalar.value
            defer { afterCR = v == 0x0D }
            switch v {
            case 0x0A:
                if !afterCR { out.append(scalar) }  // the \n of \r\n: already written
            case 0x0D, 0x85:
                out.append("\n")
            case 0x09:
                out.append(scalar)
            case 0x00...0x1F, 0x7F...0x9F:
                continue
            default:
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Breaks every paragraph (run of text between `\n`s) longer than `maxBytes` UTF-8 bytes into
    /// pieces of at most `maxBytes`: at the last space (U+0020) that keeps the piece short enough,
    /// which becomes `\n`, or else between two characters (grapheme clusters) with a `\n`
    /// inserted. Texts without such paragraphs come back unchanged.
    package static func breakLongParagraphs(_ text: String, maxBytes: Int) -> String {
        precondition(maxBytes > 0)
        guard text.utf8.count > maxBytes,
            text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).contains(where: { $0.count > maxBytes })
        else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + text.utf8.count / maxBytes + 1)
        var piece = ""
        var pieceBytes = 0
        var lastSpace: Int?  // UTF-8 offset of the last space in `piece`
        for character in text {
            if character == "\n" {
                out += piece; out += "\n"
                piece = ""; pieceBytes = 0; lastSpace = nil
                continue
            }
            let bytes = character.utf8.count
            if pieceBytes + bytes > maxBytes, pieceBytes > 0 {
                if let space = lastSpace {
                    let cut = piece.utf8.index(piece.utf8.startIndex, offsetBy: space)
                    out += piece[..<cut]; out += "\n"
                    piece = String(piece[piece.utf8.index(after: cut)...])
                } else {
                    out += piece; out += "\n"
                    piece = ""
                }
                pieceBytes = piece.utf8.count; lastSpace = nil
            }
            if character == " " { lastSpace = pieceBytes }
            piece.append(character)
            pieceBytes += bytes
        }
        out += piece
        return out
    }

    private static func needsWork(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return (v < 0x20 && v != 0x0A && v != 0x09) || (0x7F...0x9F).contains(v)
    }
}
