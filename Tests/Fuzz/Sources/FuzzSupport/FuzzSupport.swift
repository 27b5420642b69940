import BubbleCore
import BubbleImport
import Foundation

/// One libFuzzer input through one reader: the bytes become a file (the readers read files:
/// SQLite, zip, streamed XML and JSON), the reader reads it. Every input must end in a
/// conversation or an `ImportError`; anything else — a trap, a crash, a hang, runaway memory —
/// is what libFuzzer reports.
public enum FuzzReader {
    nonisolated(unsafe) private static var folder: String = {
        let f = NSTemporaryDirectory() + "bubblekit-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: f, withIntermediateDirectories: true)
        return f
    }()

    nonisolated(unsafe) static var format: ImportFormat = .native
    nonisolated(unsafe) static var fileName = "input"
    nonisolated(unsafe) static var key: DecryptionKey?

    /// Hands the process to libFuzzer's driver (its flags on the command line), each input going
    /// through `format`'s reader. The targets link libFuzzer without its own `main`.
    public static func drive(format: ImportFormat, fileName: String, key: DecryptionKey? = nil) -> Never {
        self.format = format
        self.fileName = fileName
        self.key = key
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        let status = LLVMFuzzerRunDriver(&argc, &argv) { data, count in
            guard let data else { return 0 }
            return FuzzReader.run(UnsafeRawPointer(data), count, format: FuzzReader.format, fileName: FuzzReader.fileName, key: FuzzReader.key)
        }
        exit(status)
    }

    public static func run(_ data: UnsafeRawPointer, _ count: Int, format: ImportFormat, fileName: String, key: DecryptionKey? = nil) -> CInt {
        let path = folder + "/" + fileName
        let bytes = Data(bytes: data, count: count)
        guard FileManager.default.createFile(atPath: path, contents: bytes) else { return 0 }
        var options = ImportOptions(timeZone: TimeZone(identifier: "UTC")!, attachmentsFolder: folder + "/attachments", key: key)
        options.limits.maxJSONValueBytes = 1 << 20
        options.limits.maxLineBytes = 1 << 20
        do {
            let result = try Importer.load(path: path, format: format, options: options)
            // Touch what a renderer reads: the messages and their texts.
            var n = 0
            for m in result.conversation.messages { n &+= (m.shownText?.utf8.count ?? 0) &+ m.images.count }
            if n == -1 { print(n) }
        } catch {
            _ = error.description
        }
        try? FileManager.default.removeItem(atPath: folder + "/attachments")
        return 0
    }
}

/// One libFuzzer input through the contacts readers (vCard, Google CSV, a Mac's address book):
/// every input ends in cards and warnings or an `ImportError`.
public enum FuzzContacts {
    nonisolated(unsafe) private static var folder: String = {
        let f = NSTemporaryDirectory() + "bubblekit-fuzz-contacts-\(getpid())"
        try? FileManager.default.createDirectory(atPath: f, withIntermediateDirectories: true)
        return f
    }()

    public static func drive() -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        let status = LLVMFuzzerRunDriver(&argc, &argv) { data, count in
            guard let data else { return 0 }
            return FuzzContacts.run(UnsafeRawPointer(data), count)
        }
        exit(status)
    }

    public static func run(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
        let path = folder + "/contacts"
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: count)) else { return 0 }
        do {
            let result = try ContactsReader.read(path)
            // Touch what naming reads: the identities of every card.
            let directory = ContactsReader.directory(result.contacts, region: "US", pictures: nil)
            var c = Conversation(title: nil, participants: result.contacts.prefix(20).flatMap { $0.phones + $0.emails }.map { Participant(id: $0, name: $0) })
            directory.name(&c, app: "sms", me: nil)
        } catch {
            _ = error.description
        }
        return 0
    }
}

/// libFuzzer's entry for programs with their own `main` (libclang_rt.fuzzer_no_main).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
