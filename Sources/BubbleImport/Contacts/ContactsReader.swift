import BubbleCore
import BubblePeople
import Foundation
import GRDB

/// Address books in: vCard files (`.vcf`, 2.1/3.0/4.0, one or many cards), a Mac's
/// `AddressBook-v22.abcddb` (or a folder holding them, as `~/Library/Application
/// Support/AddressBook`), a Google Contacts CSV. The kind is told from the content.
public enum ContactsReader {
    /// What a contacts file gave: its cards, and what was skipped or changed in them.
    public struct Result: Sendable {
        /// The cards read, in file order.
        public var contacts: [Contact] = []
        /// What was skipped or changed, each naming the file, the card and the line.
        public var warnings: [ImportWarning] = []
        /// An empty result.
        public init() {}
    }

    /// Pictures larger than this are left out, with a warning (phones keep ~100 KB ones).
    public static let maxPhotoBytes = 2_000_000

    /// Reads every file of `paths`; an error names the file that is none of the kinds.
    public static func read(_ paths: [String]) throws(ImportError) -> Result {
        var result = Result()
        for path in paths {
            let one = try read(path)
            result.contacts += one.contacts
            result.warnings += one.warnings
        }
        return result
    }

    /// Reads one contacts file or AddressBook folder, told apart by its content; throws an
    /// `ImportError` naming the file when it is none of the kinds.
    public static func read(_ path: String) throws(ImportError) -> Result {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { throw ImportError(path: path, reason: "no such file") }
        if isDir.boolValue {
            // A Mac's AddressBook folder: the top database and each account's under Sources/.
            var result = Result()
            let files = (FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? [])
                .filter { $0.hasSuffix(".abcddb") && !$0.contains("_SUPPORT") }.sorted()
            guard !files.isEmpty else { throw ImportError(path: path, reason: "is a folder without an AddressBook-v22.abcddb; expected a contacts file") }
            for f in files {
                var reader = AddressBookReader(path: path + "/" + f, maxPhotoBytes: maxPhotoBytes)
                try reader.read()
                result.contacts += reader.contacts
                result.warnings += reader.warnings
            }
            return result
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw ImportError(path: path, reason: "cannot be read (permission denied?)") }
        var result = Result()
        if data.starts(with: Array("SQLite format 3\0".utf8)) {
            var reader = AddressBookReader(path: path, maxPhotoBytes: maxPhotoBytes)
            try reader.read()
            result.contacts = reader.contacts
            result.warnings = reader.warnings
            return result
        }
        let text = decodeText(data)
        let start = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        if start.prefix(11).uppercased() == "BEGIN:VCARD" {
            var reader = VCardReader(path: path, maxPhotoBytes: maxPhotoBytes)
            reader.read(text)
            result.contacts = reader.contacts
            result.warnings = reader.warnings
            return result
        }
        if let header = CSVRows.parse(String(text.prefix(20_000).split(separator: "\n", maxSplits: 1).first ?? "")).first?.fields,
            GoogleContactsReader.looksLikeHeader(header)
        {
            var reader = GoogleContactsReader(path: path)
            try reader.read(text)
            result.contacts = reader.contacts
            result.warnings = reader.warnings
            return result
        }
        throw ImportError(path: path, reason: "is not a contacts file; expected vCards (BEGIN:VCARD), a Mac's AddressBook-v22.abcddb or a Google Contacts CSV")
    }

    /// UTF-8 (with or without a byte-order mark), UTF-16 with its mark, else Windows-1252 (what
    /// older phones write without saying).
    static func decodeText(_ data: Data) -> String {
        if data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF]) { return String(data: data, encoding: .utf16) ?? "" }
        if let s = String(data: data, encoding: .utf8) { return s }
        return String(data: data, encoding: .windowsCP1252) ?? String(decoding: data, as: UTF8.self)
    }

    /// The persons of `contacts` (numbers read in `region`), each card's picture written into
    /// `pictures` (made when needed) as its avatar.
    public static func directory(_ contacts: [Contact], region: String?, pictures: String?) -> PeopleDirectory {
        var persons: [Person] = []
        for c in contacts {
            var avatar: String?
            if let photo = c.photo, let pictures, let ext = Contact.pictureExtension(photo) {
                var hash = StableHash()
                hash.add(photo)
                let file = pictures + "/contact-" + String(hash.value, radix: 16) + "." + ext
                if FileManager.default.fileExists(atPath: file)
                    || ((try? FileManager.default.createDirectory(atPath: pictures, withIntermediateDirectories: true)) != nil
                        && FileManager.default.createFile(atPath: file, contents: photo))
                {
                    avatar = file
                }
            }
            persons.append(Person(name: c.name, avatar: avatar, identities: c.identities(region: region)))
        }
        return PeopleDirectory(persons: persons, region: region)
    }
}
