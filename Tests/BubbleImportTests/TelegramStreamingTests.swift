import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

/// The streaming reader behind the Telegram importer: chunk boundaries, the second pass for a
/// chat whose `messages` come before its `name`, and bad input (oversize value, wrong encoding,
/// deep nesting, trailing bytes), each an error with its JSON path and position.
@Suite("Telegram JSON, streamed")
struct TelegramStreamingTests {
    /// One Telegram message object, as Telegram Desktop writes it.
    static func message(_ id: Int, from: String = "Ann", fromID: String = "user1", unix: Int = 1_700_000_000, text: String) -> String {
        let escaped = String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
        return #"{"id": \#(id), "type": "message", "date": "2023-11-14T22:13:20", "date_unixtime": "\#(unix + id)", "#
            + #""from": "\#(from)", "from_id": "\#(fromID)", "text": \#(escaped), "text_entities": [{"type": "plain", "text": \#(escaped)}]}"#
    }

    @Test("a chat of many chunks (1.5 MB): every message, escapes and emoji split across 256 KiB reads intact")
    func manyChunks() throws {
        let scratch = ScratchFolder()
        let texts = (0..<6000).map { i in
            "Message \(i) — \"quoted\" \\ back\\slash, tab\tand é \u{1F600} " + String(repeating: "x", count: i % 200)
        }
        let body = texts.enumerated().map { i, t in Self.message(i, from: i % 3 == 0 ? "Ben" : "Ann", fromID: i % 3 == 0 ? "user2" : "user1", text: t) }
        // \u escapes too, as some tools write them: "\u00e9" and a surrogate pair.
        let json =
            #"{"name": "Ann", "type": "personal_chat", "id": 1, "messages": [\#n"# + body.joined(separator: ",\n")
            + #",{"id": 9999, "type": "message", "date_unixtime": "1700009999", "from": "Ann", "from_id": "user1", "text": "caf\u00e9 \ud83d\ude00"}]}"#
        let path = scratch.write("result.json", json)
        #expect(json.utf8.count > 6 * JSONScanner.chunkSize)
        let r = try Importer.load(path: path, options: ImportOptions(timeZone: zone("UTC")))
        let messages = r.conversation.messages
        #expect(messages.count == 6001)
        #expect(messages.prefix(6000).map(\.text) == texts)
        #expect(messages.last?.text == "café 😀")
        #expect(messages[1].date == Date(timeIntervalSince1970: 1_700_000_001))
        // Chat id 1 is Ann's (user1): the other author, Ben, exported it.
        #expect(r.me == "user2")
        #expect(messages[0].direction == .outgoing && messages[1].direction == .incoming)
        #expect(r.warnings.isEmpty)
    }

    @Test("account export with `messages` before `name`: the chosen chat is read in a second pass; a lone chat needs no `chat`")
    func messagesBeforeName() throws {
        let scratch = ScratchFolder()
        let first =
            #"{"messages": [\#(Self.message(1, text: "first chat")), \#(Self.message(2, text: "again"))], "name": "Ann", "type": "personal_chat", "id": 1}"#
        let second = #"{"messages": [\#(Self.message(3, from: "Cy", fromID: "user3", text: "second chat"))], "id": 3, "type": "personal_chat", "name": "Cy"}"#
        let path = scratch.write("result.json", #"{"chats": {"list": [\#(first), \#(second)]}, "personal_information": {"user_id": 9}}"#)
        let ann = try Importer.load(path: path, options: ImportOptions(chat: "ann", timeZone: zone("UTC")))
        #expect(ann.conversation.title == "Ann")
        #expect(ann.conversation.messages.map(\.text) == ["first chat", "again"])
        #expect(ann.me == "user9")  // personal_information came after the chats
        let cy = try Importer.load(path: path, options: ImportOptions(chat: "3", timeZone: zone("UTC")))
        #expect(cy.conversation.messages.map(\.text) == ["second chat"])
        #expect(cy.conversation.participants == [Participant(id: "user3", name: "Cy")])
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: path, options: ImportOptions()) }?.description
                == "\(path): chats.list: holds 2 chats; pick one with `chat` (name or id): Ann (personal_chat, 2 messages); Cy (personal_chat, 1 message)")

        let lone = scratch.write("lone.json", #"{"chats": {"list": [\#(second)]}}"#)
        #expect(try Importer.load(path: lone, options: ImportOptions(me: "Cy")).conversation.messages.map(\.direction) == [.outgoing])
    }

    @Test("a message over ImportLimits.maxJSONValueBytes: error with its JSON path, line, column and byte offset")
    func oversize() throws {
        let scratch = ScratchFolder()
        let head = #"{"name": "Ann", "type": "personal_chat", "id": 1, "messages": [\#n"#
        let small = Self.message(1, text: "short")
        let json = head + small + ",\n " + Self.message(2, text: String(repeating: "long ", count: 100)) + "]}"
        let path = scratch.write("result.json", json)
        var options = ImportOptions()
        options.limits.maxJSONValueBytes = 400
        let error = try #require(importError { () throws(ImportError) in try Importer.load(path: path, options: options) })
        let offset = head.utf8.count + small.utf8.count + 3
        #expect(error.location == "messages[1], line 3, column 2 (byte \(offset))")
        #expect(error.reason.hasPrefix("is longer than 400 bytes (ImportLimits.maxJSONValueBytes)"))
        // The same file reads with the default limit.
        #expect(try Importer.load(path: path, options: ImportOptions()).conversation.messages.count == 2)
    }

    @Test("wrong encoding: UTF-16 is refused at line 1; a Latin-1 byte inside a message names its path and position")
    func encodings() throws {
        let scratch = ScratchFolder()
        let json = #"{"name": "Ann", "type": "personal_chat", "id": 1, "messages": [\#(Self.message(1, text: "ok"))]}"#
        var utf16 = Data([0xFF, 0xFE])
        utf16.append(json.data(using: .utf16LittleEndian)!)
        let wide = scratch.write("wide.json", utf16)
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: wide, format: .telegram) }?.description
                == "\(wide): line 1, column 1: is UTF-16; Telegram Desktop writes UTF-8 (convert the file to UTF-8)")

        var latin = Data((#"{"name": "Ann", "messages": ["# + "\n  " + #"{"id": 1, "type": "message", "text": "caf"#).utf8)
        latin.append(0xE9)  // é in Latin-1
        latin.append(Data(#""}]}"#.utf8))
        let bad = scratch.write("latin.json", latin)
        let error = try #require(importError { () throws(ImportError) in try Importer.load(path: bad, format: .telegram) })
        let byte = latin.firstIndex(of: 0xE9)!
        #expect(error.location == "messages[0], line 2, column 44 (byte \(byte))")
        #expect(error.reason == "has bytes that are not UTF-8; Telegram Desktop writes UTF-8 (wrong encoding?)")
    }

    @Test("damaged structure: deep nesting, a wrong container type, bytes after the JSON, a file cut inside a string")
    func damaged() throws {
        let scratch = ScratchFolder()
        let deep = scratch.write("deep.json", #"{"about": "# + String(repeating: "[", count: 100_000) + "]}")
        let deepError = try #require(importError { () throws(ImportError) in try Importer.load(path: deep, format: .telegram) })
        #expect(deepError.location == "about, line 1, column \(11 + JSONScanner.maxDepth)")
        #expect(deepError.reason == "nests arrays and objects more than \(JSONScanner.maxDepth) deep; expected a Telegram export")

        let notArray = scratch.write("object.json", #"{"name": "X", "messages": {"id": 1}}"#)
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: notArray, format: .telegram) }?.description
                == "\(notArray): messages: has the wrong type; expected an array")

        let trailing = scratch.write("trailing.json", #"{"name": "X", "messages": []}"# + "\n}")
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: trailing, format: .telegram) }?.description
                == "\(trailing): line 2, column 1: is not valid JSON (damaged?)")

        let cut = scratch.write("cut.json", #"{"name": "X", "messages": [{"id": 1, "text": "unfinish"#)
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: cut, format: .telegram) }?.description
                == "\(cut): line 1, column 55: unexpected end of file (cut short?), expected the rest of a string and its closing quote")

        let badEscape = scratch.write("escape.json", #"{"name": "X", "messages": [{"id": 1, "text": "a\qb"}]}"#)
        #expect(
            importError { () throws(ImportError) in try Importer.load(path: badEscape, format: .telegram) }?.description
                == "\(badEscape): line 1, column 49: is not valid JSON (damaged?)")
    }
}
