import BubbleCore
import Foundation

/// One kind of export and the reader of it: what it reads, how it is recognised, how it hands
/// its messages over. `Importer` goes through `ExportReaders.all` — a table, not a switch — so a
/// new format is one type conforming here and one line in the table.
protocol ExportReader: Sendable {
    /// The formats this reader reads (Meta's reader: Messenger and Instagram).
    static var formats: [ImportFormat] { get }
    /// When `Importer.load` with a sink receives the messages.
    static var delivery: MessageTiming { get }
    /// Whether one export holds many chats (`Importer.loadEach` then reads one after another).
    static var holdsManyChats: Bool { get }
    /// Whether a result without a sink lists the messages by date rather than in file order (an
    /// SMS backup lists all SMS before all MMS).
    static var sortsByDate: Bool { get }
    /// The file that stands for an export folder when the format is named ("result.json").
    static var fileInFolder: String? { get }
    /// Whether `probe` is this reader's export, and how sure the reader is: the first `certain`
    /// answer in the table's order wins, else the first `likely` one. Throws when the content is
    /// recognisably this format's but cannot be read (a WhatsApp backup older than crypt14).
    static func recognizes(_ probe: ExportProbe) throws(ImportError) -> Recognition?
    /// Reads the export.
    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult
}

extension ExportReader {
    static var delivery: MessageTiming { .whenRead }
    static var holdsManyChats: Bool { false }
    static var sortsByDate: Bool { false }
    static var fileInFolder: String? { nil }
}

/// When a reader hands its messages to a sink.
enum MessageTiming {
    /// Each message as it is read: its side is known then (SMS, iMessage, the apps' databases).
    case whenRead
    /// At the end, once the owner is decided from every author (WhatsApp's text export).
    case atEnd
    /// As read, on the incoming side and with reply ids, when the caller asks for it
    /// (`provisional`; `StreamedFixup` settles sides and quotes afterwards): Telegram.
    case provisionally
}

/// A reader's answer to a probe: the format it saw and how sure it is.
struct Recognition {
    enum Certainty: Int { case likely, certain }
    var format: ImportFormat
    var certainty: Certainty
    /// The file to read when the probe was a folder standing for one (`msgstore.db` in a folder).
    var path: String?

    static func certain(_ format: ImportFormat, path: String? = nil) -> Recognition { Recognition(format: format, certainty: .certain, path: path) }
    static func likely(_ format: ImportFormat) -> Recognition { Recognition(format: format, certainty: .likely) }
}

/// What detection looks at, read once and shared by every reader's `recognizes`: the path, whether
/// it is a folder, a file's first 64 KiB and its first line; a zip's file names when asked for.
final class ExportProbe {
    let path: String
    let isFolder: Bool
    /// A file's first bytes (64 KiB); empty for a folder.
    let head: [UInt8]
    /// Where the content starts in `head`: after a UTF-8 byte-order mark and white space.
    let start: Int
    /// `head` from `start`, as UTF-8 text.
    let text: String
    /// The first line of `text`.
    let firstLine: String

    init(path: String) throws(ImportError) {
        var folder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &folder) else {
            throw ImportError(path: path, reason: "no such file or folder")
        }
        self.path = path
        isFolder = folder.boolValue
        head = isFolder ? [] : try FormatDetector.readHead(path, count: 64 << 10)
        var start = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[start]) { start += 1 }
        self.start = start
        text = String(decoding: head[min(start, head.count)...], as: UTF8.self)
        firstLine = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first.map(String.init) ?? ""
    }

    /// The first content byte (after a BOM and white space).
    var first: UInt8? { head[safe: start] }
    var isSQLite: Bool { head.starts(with: Array("SQLite format 3\u{0}".utf8)) }
    var isZip: Bool { FormatDetector.isZip(head: head) }

    /// A zip's file paths (read once; nil when it is not a zip that opens).
    private(set) lazy var zipFiles: [String]? = isZip ? (try? ZipExport(path: path, displayPath: path, limits: ImportLimits()))?.filePaths : nil

    /// The names in a folder (read once).
    private(set) lazy var names: [String] = isFolder ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []) : []

    /// `name` inside the folder, when it exists.
    func file(_ name: String) -> String? {
        let inside = (path as NSString).appendingPathComponent(name)
        return FileManager.default.fileExists(atPath: inside) ? inside : nil
    }

    /// The first 64 KiB of up to 200 of the folder's `.json` files, in name order (read once).
    private(set) lazy var jsonHeads: [String] = names.sorted().filter { $0.lowercased().hasSuffix(".json") }.prefix(200).compactMap { name in
        (try? FormatDetector.readHead((path as NSString).appendingPathComponent(name), count: 64 << 10)).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Every reader, in the order detection asks them (earlier wins among equally sure answers).
enum ExportReaders {
    static let all: [any ExportReader.Type] = [
        IPhoneBackupImporter.self, SignalDesktopImporter.self, WhatsAppDatabaseImporter.self, IMessageImporter.self,
        SMSBackupImporter.self, SignalExportImporter.self, NativeImporter.self, DiscordImporter.self, MetaImporter.self,
        TelegramImporter.self, WhatsAppImporter.self
    ]

    private static let byFormat: [ImportFormat: any ExportReader.Type] = {
        var table: [ImportFormat: any ExportReader.Type] = [:]
        for reader in all { for format in reader.formats { table[format] = reader } }
        return table
    }()

    /// The reader of `format` (every format has one: `ExportReaderTests` checks the table).
    static func reader(of format: ImportFormat) -> any ExportReader.Type {
        guard let reader = byFormat[format] else { preconditionFailure("no reader for \(format)") }
        return reader
    }
}
