import BubbleCore
import BubblePeople
import Foundation
import GRDB

/// Reads a Mac's address book (`AddressBook-v22.abcddb`, Core Data on SQLite): `ZABCDRECORD`
/// (names, organisation, picture), `ZABCDPHONENUMBER.ZFULLNUMBER` and
/// `ZABCDEMAILADDRESS.ZADDRESS` by `ZOWNER`. A picture blob starts with one byte: 0x01 and the
/// JPEG or PNG bytes; 0x02 and a reference to a file in the database's
/// `.AddressBook-v22_SUPPORT/_EXTERNAL_DATA` folder.
struct AddressBookReader {
    let path: String
    let maxPhotoBytes: Int
    private(set) var contacts: [Contact] = []
    private(set) var warnings: [ImportWarning] = []

    init(path: String, maxPhotoBytes: Int) { self.path = path; self.maxPhotoBytes = maxPhotoBytes }

    static func isAddressBook(_ db: Database) -> Bool {
        (try? db.tableExists("ZABCDRECORD")) == true
    }

    mutating func read() throws(ImportError) {
        var config = Configuration()
        config.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: config)
            try queue.read { db in
                guard Self.isAddressBook(db) else {
                    throw ImportError(path: path, reason: "is an SQLite database without ZABCDRECORD; expected a Mac's AddressBook-v22.abcddb")
                }
                let columns = Set(try db.columns(in: "ZABCDRECORD").map { $0.name.uppercased() })
                func column(_ name: String) -> String { columns.contains(name) ? name : "NULL" }
                var phones: [Int64: [String]] = [:], emails: [Int64: [String]] = [:]
                if try db.tableExists("ZABCDPHONENUMBER") {
                    for row in try Row.fetchAll(db, sql: "SELECT ZOWNER, ZFULLNUMBER FROM ZABCDPHONENUMBER WHERE ZFULLNUMBER IS NOT NULL ORDER BY Z_PK") {
                        if let owner: Int64 = row[0], let n: String = row[1] { phones[owner, default: []].append(n) }
                    }
                }
                if try db.tableExists("ZABCDEMAILADDRESS") {
                    for row in try Row.fetchAll(db, sql: "SELECT ZOWNER, ZADDRESS FROM ZABCDEMAILADDRESS WHERE ZADDRESS IS NOT NULL ORDER BY Z_PK") {
                        if let owner: Int64 = row[0], let e: String = row[1] { emails[owner, default: []].append(e) }
                    }
                }
                let sql = """
                    SELECT Z_PK, \(column("ZFIRSTNAME")), \(column("ZMIDDLENAME")), \(column("ZLASTNAME")), \(column("ZNICKNAME")),
                           \(column("ZORGANIZATION")), \(column("ZTHUMBNAILIMAGEDATA")), \(column("ZIMAGEDATA"))
                    FROM ZABCDRECORD ORDER BY Z_PK
                    """
                for row in try Row.fetchAll(db, sql: sql) {
                    let pk: Int64 = row[0]
                    let parts = [1, 2, 3].compactMap { (row[$0] as String?)?.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                    let candidates = [parts.joined(separator: " "), row[4] as String? ?? "", row[5] as String? ?? ""]
                    let p = phones[pk] ?? [], e = emails[pk] ?? []
                    guard let name = candidates.first(where: { !PeopleDirectory.isPlaceholder($0) }) else { continue }
                    guard !p.isEmpty || !e.isEmpty else { continue }
                    let photo = picture(row[6] as Data?, record: pk, name: name) ?? picture(row[7] as Data?, record: pk, name: name)
                    contacts.append(Contact(name: name, phones: p, emails: e, photo: photo, origin: "\(path): ZABCDRECORD Z_PK \(pk)"))
                }
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError(path: path, reason: "cannot be read as a Mac address book: \(error)")
        }
    }

    private mutating func picture(_ blob: Data?, record: Int64, name: String) -> Data? {
        guard let blob, blob.count > 1 else { return nil }
        var bytes = blob.dropFirst()
        if blob.first == 0x02 {
            // A reference: the file's name, NUL-terminated, in _EXTERNAL_DATA.
            let reference = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            let folder = (path as NSString).deletingLastPathComponent + "/.AddressBook-v22_SUPPORT/_EXTERNAL_DATA/"
            guard !reference.contains("/"), let data = FileManager.default.contents(atPath: folder + reference) else { return nil }
            bytes = data[...]
        } else if blob.first != 0x01 {
            bytes = blob[...]
        }
        if bytes.count > maxPhotoBytes {
            warnings.append(
                ImportWarning(
                    path: path, location: "ZABCDRECORD Z_PK \(record)", what: "\"\(name)\"",
                    why: String(format: "picture is %.1f MB, more than %d MB; read without it", Double(bytes.count) / 1e6, maxPhotoBytes / 1_000_000)))
            return nil
        }
        let data = Data(bytes)
        return Contact.pictureExtension(data) != nil ? data : nil
    }
}
