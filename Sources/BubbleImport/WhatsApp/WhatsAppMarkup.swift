import BubbleCore
import BubbleMarkup

/// WhatsApp's own words in an export: "<This message was edited>" (and its translations) at the
/// end of a message (removed; the message is marked edited). Formatting: `ChatMarkup`.
enum WhatsAppMarkup {
    /// `text` without a final "<This message was edited>" (or a translation), and whether it had
    /// one. The marker is a `<…>` at the very end whose words say edited.
    static func editedMarker(_ text: String) -> (text: String, edited: Bool) {
        guard text.hasSuffix(">"), let open = text.lastIndex(of: "<") else { return (text, false) }
        let inner = text[text.index(after: open)..<text.index(before: text.endIndex)].lowercased()
        guard inner.count < 60, editedWords.contains(where: { inner.contains($0) }) else { return (text, false) }
        var rest = String(text[..<open])
        while let last = rest.last, last.isWhitespace || last == "\u{200E}" { rest.removeLast() }
        return (rest, true)
    }

    /// "edited" in the languages docs/IMPORT.md lists (English, German, Spanish, French,
    /// Portuguese, Italian, Dutch, Russian, Turkish, Polish, Indonesian).
    static let editedWords = [
        "edited", "bearbeitet", "editado", "editó", "modifié", "modificato", "bewerkt",
        "изменено", "отредактировано", "düzenlendi", "edytowana", "diedit"
    ]
}
