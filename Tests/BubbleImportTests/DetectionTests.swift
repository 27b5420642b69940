import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

@Suite("Format detection and the native format")
struct DetectionTests {
    @Test("each fixture is recognised from its content")
    func fixtures() throws {
        let expected: [(String, ImportFormat)] = [
            ("native.json", .native), ("sms/sms-backup.xml", .smsBackup), ("whatsapp-android-de.txt", .whatsapp),
            ("whatsapp-android-en-ca.txt", .whatsapp), ("whatsapp-android-es.txt", .whatsapp), ("whatsapp-ios/_chat.txt", .whatsapp),
            ("whatsapp-ios", .whatsapp), ("whatsapp-android-us", .whatsapp), ("telegram-account", .telegram),
            ("telegram-single/result.json", .telegram)
        ]
        for (path, format) in expected {
            #expect(try Importer.detect(path: Fixtures.path(path)) == format, "\(path)")
        }
    }

    @Test("the native format goes through ConversationFile, `me` and since/until included")
    func native() throws {
        let path = Fixtures.path("native.json")
        let r = try Importer.load(path: path, options: ImportOptions(me: "zoe"))
        #expect(r.format == .native)
        #expect(r.me == "zoe")
        #expect(r.conversation.title == "Native")
        #expect(r.conversation.messages.map(\.direction) == [.outgoing, .incoming])
        #expect(r.conversation.participants.count == 2)
        let late = try Importer.load(path: path, options: ImportOptions(since: instant("2026-11-22T09:40:30Z")))
        #expect(late.conversation.messages.map(\.text) == ["Nice"])
        #expect(late.excluded == 1)
        // Errors keep ConversationFile's location.
        let scratch = ScratchFolder()
        let bad = scratch.write("bad.json", #"{"format": "bubblekit-conversation", "messages": [{"date": "nope", "text": "x"}]}"#)
        #expect(importError { () throws(ImportError) in try Importer.load(path: bad, options: ImportOptions()) }?.location == "messages[0].date")
    }

    @Test("missing files, empty files, unknown content and unknown folders are errors that say what was expected")
    func unknown() {
        let scratch = ScratchFolder()
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: scratch.file("nope.txt"), options: ImportOptions()) }?
                .reason == "no such file or folder")
        let empty = scratch.write("empty.txt", "")
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: empty, options: ImportOptions()) }?
                .reason == "is empty; expected a chat export")
        let binary = scratch.write("x.bin", Data([0x00, 0x01, 0x02, 0xFF]))
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: binary, options: ImportOptions()) }?
                .location == "line 1")
        let folder = scratch.file("folder")
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: folder, options: ImportOptions()) }?
                .reason.hasPrefix("is a folder without a chat export") == true)
        let zip = scratch.write("x.zip", Data([0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18)))
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: zip, options: ImportOptions()) }?
                .reason.hasPrefix("is a zip that holds no chat export") == true)
        // Named as WhatsApp backups: an older one is said to be unsupported, a cut one cut.
        let old = scratch.write("msgstore.db.crypt12", Data([0x00, 0x01, 0x02]))
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: old, options: ImportOptions()) }?
                .reason.hasPrefix("is a WhatsApp .crypt12 backup; only crypt14 and crypt15") == true)
        let cut = scratch.write("msgstore.db.crypt15", Data([0x2A, 0x01, 0x0A]))
        let error = importError { () throws(ImportError) in try Importer.load(path: cut, options: ImportOptions()) }
        #expect(error?.location == "header" && error?.reason.contains("cut short or damaged") == true, "\(String(describing: error))")
    }

    @Test("native JSON: a key nothing reads is a warning naming it and the key meant (\"sender\" → \"from\", a typo → the word); --strict refuses it")
    func unknownKeys() throws {
        let scratch = ScratchFolder()
        let file = scratch.write(
            "chat.json",
            """
            {"format":"bubblekit-conversation","version":2,"me":"me","colour":"red",
             "participants":[{"id":"ann","name":"Ann","phone":"+1"},{"id":"me","name":"Me"}],
             "messages":[{"sender":"ann","date":"2025-05-24T10:00:00Z","text":"hi"},
                         {"sender":"me","date":"2025-05-24T10:01:00Z","tetx":"x","text":"hello"},
                         {"from":"ann","date":"2025-05-24T10:02:00Z","text":"ok","Direction":"incoming","mood":"fine"}]}
            """)
        let r = try Importer.load(path: file, options: ImportOptions())
        let said = r.warnings.map(\.description)
        #expect(
            said.contains { $0.contains("messages[0]") && $0.contains("\"sender\"") && $0.contains("in 2 objects") && $0.contains("did you mean \"from\"") },
            "\(said)")
        #expect(said.contains { $0.contains("messages[1]") && $0.contains("\"tetx\"") && $0.contains("did you mean \"text\"") })
        #expect(said.contains { $0.contains("\"Direction\"") && $0.contains("did you mean \"direction\"") })
        #expect(said.contains { $0.contains("\"mood\"") && $0.contains("it is left out") })
        #expect(ConversationFile.nearest("isMe", in: ConversationFile.participantKeys) == nil, "not \"name\"")
        #expect(ConversationFile.nearest("date_", in: ConversationFile.messageKeys) == "date")
        #expect(said.contains { $0.contains("participants[0]") && $0.contains("\"phone\"") })
        #expect(said.contains { $0.contains("top level") && $0.contains("\"colour\"") })
        #expect(said.filter { $0.contains("unknown key") }.count == 6)
        var strict = ImportOptions()
        strict.strict = true
        let refused = importError { () throws(ImportError) in try Importer.load(path: file, options: strict) }
        #expect(refused?.location == "top level" && refused?.reason.contains("--strict") == true, "\(String(describing: refused))")
        // A file with only known keys says nothing.
        let clean = scratch.write(
            "clean.json",
            """
            {"format":"bubblekit-conversation","version":2,"participants":[{"id":"ann","name":"Ann"}],
             "messages":[{"from":"ann","date":"2025-05-24T10:00:00Z","text":"hi","reactions":[{"emoji":"👍","count":1}]}]}
            """)
        #expect(try Importer.load(path: clean, options: ImportOptions()).warnings.isEmpty)
    }

    @Test("warnings beyond the limit are counted in one last warning")
    func warningLimit() throws {
        let scratch = ScratchFolder()
        let lines = (0..<20).map { "<sms address=\"1\" date=\"\($0)\" type=\"7\" body=\"x\" />" }.joined(separator: "\n")
        let file = scratch.write("many.xml", "<smses>\n\(lines)\n</smses>")
        var options = ImportOptions()
        options.limits.maxWarnings = 5
        let r = try Importer.load(path: file, options: options)
        #expect(r.skipped == 20)
        #expect(r.warnings.count == 6)
        #expect(r.warnings.last?.description == "\(file): 15 more warnings: not listed (limit 5)")
    }
}

/// The readers' table (`ExportReaders`): every format read by exactly one reader, which declares
/// how it delivers, and detection's order — a sure answer beats a likely one wherever it sits.
@Suite("Import: the readers' table")
struct ExportReaderTableTests {
    @Test("every format has exactly one reader, and the reader lists it")
    func everyFormat() {
        for format in ImportFormat.allCases {
            let readers = ExportReaders.all.filter { $0.formats.contains(format) }
            #expect(readers.count == 1, "\(format)")
            #expect(ExportReaders.reader(of: format).formats.contains(format))
        }
    }

    @Test("what each reader declares is what the importer does with it")
    func declarations() {
        let streaming = ImportFormat.allCases.filter { Importer.streamsMessages($0) }
        #expect(Set(streaming) == [.smsBackup, .imessage, .native, .whatsappDatabase, .signal])
        #expect(ImportFormat.allCases.filter { Importer.streamsProvisionally($0) } == [.telegram])
        #expect(ImportFormat.allCases.filter { Importer.sortsByDate($0) } == [.smsBackup])
        let single = ImportFormat.allCases.filter { !ExportReaders.reader(of: $0).holdsManyChats }
        #expect(Set(single) == [.native, .whatsapp, .signalExport])
    }

    @Test("a likely answer (any zip, any JSON object) loses to a sure one, whatever the table's order")
    func likelyLosesToCertain() throws {
        let scratch = ScratchFolder()
        // JSON with Telegram's keys: Telegram sure, native only likely (it comes first in the table).
        let telegram = scratch.write("export.json", #"{"name": "Ann", "type": "personal_chat", "id": 1, "messages": []}"#)
        #expect(try Importer.detect(path: telegram) == .telegram)
        // Any other JSON object: native, the likely answer nobody overrules.
        let other = scratch.write("other.json", #"{"title": "x", "messages": []}"#)
        #expect(try Importer.detect(path: other) == .native)
        // A thread of a Meta download names itself; "bubblekit-conversation" inside a message does not make it native.
        let thread = scratch.write(
            "message_1.json",
            #"{"participants": [{"name": "Ann"}], "messages": [{"sender_name": "Ann", "timestamp_ms": 1, "content": "bubblekit-conversation"}], "title": "Ann", "thread_path": "inbox/ann_1"}"#
        )
        #expect(try Importer.detect(path: thread) == .messenger)
        // Bytes that are not UTF-8 after "{" are nobody's sure answer: native is tried and says what is wrong.
        let binary = scratch.write("odd.json", Data([0x7B, 0xFF, 0xFE, 0x00, 0xC3]))
        #expect(try Importer.detect(path: binary) == .native)
        #expect(importError { () throws(ImportError) in try Importer.load(path: binary) } != nil)
    }

    @Test("a named format's folder stands for the file each reader names")
    func folders() throws {
        let scratch = ScratchFolder()
        let folder = scratch.file("export")
        scratch.write("export/result.json", #"{"name": "Ann", "type": "personal_chat", "id": 1, "messages": []}"#)
        #expect(try Importer.detect(path: folder) == .telegram)
        #expect(FormatDetector.source(path: folder, format: .telegram).path == folder + "/result.json")
        #expect(FormatDetector.source(path: folder, format: .whatsapp).path == folder)
        #expect(FormatDetector.source(path: folder, format: .imessage).path == folder + "/chat.db")
    }
}
