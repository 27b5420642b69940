import BubbleCore
import BubblePeople
import Foundation

/// Reads vCards 2.1, 3.0 and 4.0 as phones write them: several cards a file, folded lines (a
/// leading space or tab), quoted-printable values with soft line breaks and a `CHARSET`,
/// `item1.TEL` groups, `TYPE=` and bare 2.1 parameters, `PHOTO` as base64 (`ENCODING=b`,
/// `ENCODING=BASE64`) or a `data:` URI. A broken card (no `END:VCARD`, a photo that is not
/// base64 or too large) gives a warning naming it; the rest is read.
struct VCardReader {
    let path: String
    let maxPhotoBytes: Int
    private(set) var contacts: [Contact] = []
    private(set) var warnings: [ImportWarning] = []

    init(path: String, maxPhotoBytes: Int) { self.path = path; self.maxPhotoBytes = maxPhotoBytes }

    private struct Card {
        var number: Int
        var line: Int
        var fn: String?
        var n: String?
        var nickname: String?
        var org: String?
        var phones: [String] = []
        var emails: [String] = []
        var photo: Data?
    }

    mutating func read(_ text: String) {
        var card: Card?
        var count = 0
        for property in VCardText.properties(text) {
            switch (property.name, property.value.uppercased()) {
            case ("BEGIN", "VCARD"):
                if let open = card {
                    warn(open, "has no END:VCARD before the next card (line \(property.line)); read as far as it went")
                    finish(open)
                }
                count += 1
                card = Card(number: count, line: property.line)
            case ("END", "VCARD"):
                if let open = card { finish(open) }
                card = nil
            default:
                guard card != nil else { continue }
                take(property, into: &card!)
            }
        }
        if let open = card {
            warn(open, "has no END:VCARD (the file ends inside it); read as far as it went")
            finish(open)
        }
    }

    private mutating func take(_ p: VCardText.Property, into card: inout Card) {
        switch p.name {
        case "FN": card.fn = VCardText.text(p)
        case "N": card.n = VCardText.structuredName(VCardText.decoded(p))
        case "NICKNAME": card.nickname = VCardText.text(p)
        case "ORG": card.org = VCardText.split(VCardText.decoded(p), by: ";").first.map(VCardText.unescape)
        case "TEL":
            let t = VCardText.text(p)
            if !t.isEmpty { card.phones.append(t) }
        case "EMAIL":
            let t = VCardText.text(p)
            if !t.isEmpty { card.emails.append(t) }
        case "PHOTO": card.photo = photo(p, card: card) ?? card.photo
        default: break
        }
    }

    /// The picture of a `PHOTO` property; nil with a warning when it cannot be used.
    private mutating func photo(_ p: VCardText.Property, card: Card) -> Data? {
        var value = p.value
        if value.lowercased().hasPrefix("data:") {
            // 4.0: data:image/jpeg;base64,….
            guard let comma = value.firstIndex(of: ","), value[..<comma].lowercased().hasSuffix(";base64") else {
                warn(card, "PHOTO (line \(p.line)) is a data: URI without base64; card read without its photo")
                return nil
            }
            value = String(value[value.index(after: comma)...])
        } else if !(p.has("B") || p.has("BASE64")) {
            // A link (VALUE=uri: http…): nothing is fetched.
            return nil
        }
        let encodedLimit = (maxPhotoBytes / 3 + 1) * 4 + 1024
        let encoded = value.utf8.count
        if encoded > encodedLimit {
            let mb = Double(encoded) * 3 / 4 / 1_000_000
            warn(card, String(format: "PHOTO (line \(p.line)) is %.1f MB, more than %d MB; card read without its photo", mb, maxPhotoBytes / 1_000_000))
            return nil
        }
        let cleaned = value.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: cleaned, options: .ignoreUnknownCharacters), !data.isEmpty,
            cleaned.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/" || $0 == "=" || $0 == "-" || $0 == "_") })
        else {
            warn(card, "PHOTO (line \(p.line)) is not valid base64; card read without its photo")
            return nil
        }
        guard Contact.pictureExtension(data) != nil else {
            warn(card, "PHOTO (line \(p.line)) is not a JPEG, PNG or GIF picture; card read without its photo")
            return nil
        }
        return data
    }

    private mutating func finish(_ card: Card) {
        let candidates = [card.fn, card.n, card.nickname, card.org]
        guard let name = candidates.compactMap({ $0?.trimmingCharacters(in: .whitespaces) }).first(where: { !PeopleDirectory.isPlaceholder($0) }) else {
            if !card.phones.isEmpty || !card.emails.isEmpty { warn(card, "has no name (FN, N, NICKNAME or ORG); skipped") }
            return
        }
        contacts.append(
            Contact(
                name: name, phones: card.phones, emails: card.emails, photo: card.photo,
                origin: "\(path): card \(card.number) (line \(card.line))"))
    }

    private mutating func warn(_ card: Card, _ why: String) {
        let name = [card.fn, card.n, card.org].compactMap { $0 }.first
        warnings.append(
            ImportWarning(
                path: path, location: "card \(card.number) (line \(card.line))",
                what: name.map { "\"\($0)\"" } ?? "card", why: why))
    }
}
