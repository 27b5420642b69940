import BubbleCore
import Foundation

/// A card from an address book (a vCard, a Google Contacts row, a Mac's address book record).
public struct Contact: Hashable, Sendable {
    /// The name the card shows (its formatted name, else the parts joined).
    public var name: String
    /// Numbers as the card writes them ("(555) 010-2000", "+49 151 2345 6789").
    public var phones: [String]
    /// Email addresses as the card writes them.
    public var emails: [String]
    /// The card's picture (JPEG, PNG or GIF bytes), when it has a readable one.
    public var photo: Data?
    /// Where the card is: "contacts.vcf: card 3 (line 41)".
    public var origin: String

    /// A card; `origin` says where it was read ("contacts.vcf: card 3 (line 41)").
    public init(name: String, phones: [String] = [], emails: [String] = [], photo: Data? = nil, origin: String) {
        self.name = name; self.phones = phones; self.emails = emails; self.photo = photo; self.origin = origin
    }

    /// Its numbers (read in `region`) and emails as identity keys, each once.
    public func identities(region: String?) -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        for text in emails + phones {
            guard let identity = PersonIdentity(key: text, region: region) else { continue }
            if case .app = identity { continue }
            if seen.insert(identity.key).inserted { out.append(identity.key) }
        }
        return out
    }

    /// The extension of `photo`'s picture format ("jpg", "png", "gif"), nil when it is none of them.
    public static func pictureExtension(_ data: Data) -> String? {
        let b = [UInt8](data.prefix(8))
        if b.count >= 3, b[0] == 0xFF, b[1] == 0xD8, b[2] == 0xFF { return "jpg" }
        if b.count >= 8, b == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return "png" }
        if b.count >= 6, b[0] == 0x47, b[1] == 0x49, b[2] == 0x46, b[3] == 0x38 { return "gif" }
        return nil
    }
}
