import BubbleCore
import Foundation

/// SMS Backup & Restore (Android) XML, streamed: libxml2's push parser (`SAXPushParser`, SAX2
/// callbacks) is fed the file 128 KiB at a time through `XMLByteFilter`; no tree is built, and
/// only the attributes read below become strings. Each `sms` element becomes a
/// message as soon as it is seen; an `mms` is held only until its end tag (its parts and addresses).
///
///     <smses count="2">
///       <sms address="+15550102000" date="1700000000000" type="1" body="Hi" contact_name="Ann" … />
///       <mms date="1700000060000" msg_box="1" address="+15550102000~+15550103000" contact_name="Ann, Ben" …>
///         <parts><part seq="0" ct="image/jpeg" name="IMG_1.jpg" data="/9j/4AAQ…" /></parts>
///         <addrs><addr address="+15550102000" type="137" /></addrs>
///       </mms>
///     </smses>
///
/// A backup holds every conversation on the phone; `chat` picks one (contact name or number).
/// Without it, a backup of one conversation is read whole and one of several is an error listing them.
enum SMSBackupImporter {
    static func load(_ source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        guard let handle = FileHandle(forReadingAtPath: source.path) else {
            throw ImportError(path: source.displayPath, reason: "cannot be opened for reading")
        }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 4)) ?? Data())
        if head.isEmpty {
            throw ImportError(path: source.displayPath, reason: "is empty; expected an SMS Backup & Restore file")
        }
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) {
            throw ImportError(path: source.displayPath, location: "line 1, column 1",
                              reason: "is UTF-16; SMS Backup & Restore writes UTF-8 (convert the file to UTF-8)")
        }
        try? handle.seek(toOffset: 0)

        let stream = FilteredXMLStream(handle: handle)
        let reader = SMSBackupReader(context: context, path: source.displayPath, stream: stream)
        let parser = SAXPushParser(wantedAttributes: SMSBackupReader.attributesRead)
        parser.delegate = reader
        reader.parser = parser
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 17, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n = stream.read(chunk.baseAddress!.assumingMemoryBound(to: UInt8.self), maxLength: chunk.count)
            if n < 0 { break }
            guard parser.feed(UnsafeRawBufferPointer(rebasing: chunk[..<n]), isLast: n == 0), n > 0 else { break }
        }
        let ok = parser.wellFormed
        reader.reportReplacements(upToLine: .max, kept: true)

        if let refused = stream.failure {
            throw ImportError(path: source.displayPath, location: "line \(refused.line), column \(refused.column)", reason: refused.reason)
        }
        if let readError = stream.readError {
            throw ImportError(path: source.displayPath, reason: "cannot be read: \(readError.localizedDescription)")
        }
        if let failure = reader.failure { throw failure }
        if !ok {
            let code = parser.errorCode ?? 0
            throw ImportError(path: source.displayPath, location: reader.location(parser),
                              reason: SMSBackupReader.describe(libxml2Error: code, atEnd: stream.reachedEnd))
        }
        if !reader.sawRoot {
            throw ImportError(path: source.displayPath, reason: "has no <smses> element; expected an SMS Backup & Restore file")
        }
        return try reader.finish()
    }
}

/// The XMLParser delegate: turns elements into messages as they stream past.
final class SMSBackupReader: SAXPushParserDelegate {
    /// The attributes this reader looks at (the parser makes strings of these only).
    static let attributesRead: Set<String> = ["address", "contact_name", "type", "date", "body", "msg_box", "ct", "text",
                                              "data", "name", "cl"]

    private let context: ImportContext
    private let path: String
    private let stream: FilteredXMLStream
    weak var parser: SAXPushParser?
    private(set) var failure: ImportError?
    private(set) var sawRoot = false

    private var builder = ConversationBuilder()
    private var keeping = true
    private var depth = 0

    /// One conversation of the backup: who, and how many messages.
    private struct ThreadTally {
        var label: String
        var count = 0
        var wanted: Bool
    }
    private var threads: [String: ThreadTally] = [:]
    private var threadOrder: [String] = []
    /// Normalised address → the participant id it was first seen as.
    private var participantIDs: [String: String] = [:]

    /// An `mms` element being read.
    private struct PendingMMS {
        var line: Int
        var attributes: SAXAttributes
        var texts: [String] = []
        var images: [(data: String, mime: String, name: String?, line: Int, cutBytes: Int?)] = []
        var others: [String] = []
        var from: String?
    }
    private var mms: PendingMMS?

    init(context: ImportContext, path: String, stream: FilteredXMLStream) {
        self.context = context
        self.path = path
        self.stream = stream
    }

    // MARK: Positions and errors

    func location(_ parser: SAXPushParser) -> String {
        let line = parser.lineNumber
        return "line \(line), column \(stream.filter.originalColumn(line: line, column: parser.columnNumber))"
    }

    private func fail(_ parser: SAXPushParser, _ reason: String) {
        guard failure == nil else { return }
        failure = ImportError(path: path, location: location(parser), reason: reason)
        parser.abortParsing()
    }

    func parser(_ parser: SAXPushParser, errorCode: Int) {
        // The first error ends the import.
        guard failure == nil, stream.failure == nil, stream.readError == nil else { return }
        fail(parser, Self.describe(libxml2Error: errorCode, atEnd: stream.reachedEnd))
    }

    /// libxml2's error numbers (xmlParserErrors; Foundation passes them on without a message).
    static func describe(libxml2Error code: Int, atEnd: Bool) -> String {
        let what: String = switch code {
        case 1: "libxml2 hit an internal limit (a name or value over 10 MB?)"
        case 4: "the document is empty"
        case 5: "unexpected content after the document, or the document ends early"
        case 6, 7, 8: "invalid character reference"
        case 9: "a character that XML does not allow (a control character, or bytes that are not UTF-8)"
        case 22, 23: "'&' not followed by a reference; expected &amp;"
        case 26, 27: "an undeclared entity; only &lt; &gt; &amp; &quot; &apos; and &#…; are allowed"
        case 38: "'<' inside an attribute value; expected &lt;"
        case 39: "attribute value not started; expected a quote"
        case 40: "attribute value not finished; expected a closing quote"
        case 41: "attribute without a value"
        case 42: "the same attribute twice in one element"
        case 65: "a space was required"
        case 68: "a name was required"
        case 73: "expected '>'"
        case 76: "closing tag does not match the opening tag"
        case 77: "an element is not finished"
        case 85: "the elements are not balanced"
        case 86: "extra content at the end of the document"
        default: "XML error \(code) (libxml2)"
        }
        return atEnd ? "the file ends early (truncated?): \(what); expected the rest of the backup and </smses>"
                     : "is not well-formed XML: \(what)"
    }

    /// References the filter replaced, not yet matched to an element. The filter runs up to a
    /// chunk ahead of the parser, so they are matched by line when each element ends.
    private var replacements: [XMLByteFilter.Replacement] = []
    /// Whether the element that just ended became a message (its replacements are then reported).
    private var elementKept = false

    /// Warns about replaced references up to `line` that belong to a kept message (or to no message
    /// at all, `kept` at the end); the others went with their message.
    func reportReplacements(upToLine line: Int, kept: Bool) {
        replacements += stream.takeReplacements()
        guard let first = replacements.first, first.line <= line else { return }
        let end = replacements.firstIndex { $0.line > line } ?? replacements.count
        if kept {
            for r in replacements[..<end] {
                context.warn("line \(r.line), column \(r.column)", "character reference \(r.reference)",
                             "\(r.reason); replaced by U+FFFD")
            }
        }
        replacements.removeFirst(end)
    }

    // MARK: Elements

    func parser(_ parser: SAXPushParser, didStartElement name: String, attributes: SAXAttributes) {
        depth += 1
        if depth == 1 {
            guard name == "smses" else {
                fail(parser, name == "calls"
                     ? "is a call log backup (<calls>), not messages; expected <smses>"
                     : "root element is <\(name)>; expected <smses> (SMS Backup & Restore)")
                return
            }
            sawRoot = true
            return
        }
        switch name {
        case "sms" where depth == 2:
            readSMS(attributes, line: parser.lineNumber)
        case "mms" where depth == 2:
            mms = PendingMMS(line: parser.lineNumber, attributes: attributes)
        case "part" where mms != nil:
            readPart(attributes, line: parser.lineNumber)
        case "addr" where mms != nil:
            // type 137 = PduHeaders.FROM; 151 = TO, 130 = CC.
            if attributes["type"] == "137", let address = value(attributes["address"]) { mms?.from = address }
        default:
            break
        }
        if depth == 2, name != "sms", name != "mms" {
            context.warn("line \(parser.lineNumber)", "<\(name)>", "not an sms or mms element; skipped", skipped: true)
        }
        if threads.count > 1, context.options.chat == nil, keeping {
            // The import will end in an error listing the conversations: stop keeping messages.
            keeping = false
            builder = ConversationBuilder()
        }
    }

    func parser(_ parser: SAXPushParser, didEndElement name: String) {
        if name == "mms", depth == 2, let pending = mms {
            mms = nil
            readMMS(pending)
        }
        if depth == 2 {
            reportReplacements(upToLine: parser.lineNumber, kept: elementKept)
            elementKept = false
        }
        depth -= 1
    }

    /// The literal "null" and "(Unknown)" the exporter writes for a missing value.
    private func value(_ s: String?) -> String? {
        guard let s, !s.isEmpty, s != "null", s != "(Unknown)" else { return nil }
        return s
    }

    /// Digits of a phone number, last 9 only (so "+44 7700 900123" and "07700 900123" match);
    /// other addresses (e-mail, short names) lowercased.
    private func key(_ address: String) -> String {
        if let cached = lastKey, cached.address == address { return cached.key }
        let k = Self.computeKey(address)
        lastKey = (address, k)
        return k
    }

    /// The last address and its key: a backup lists a conversation's messages together.
    private var lastKey: (address: String, key: String)?

    private static func computeKey(_ address: String) -> String {
        guard let digits = TextCleanup.phoneDigits(address) else { return address.lowercased() }
        return String(digits.suffix(9))
    }

    private func thread(key: String, label: String, addresses: [String], name: String?) -> Bool {
        if let t = threads[key] {
            threads[key]?.count += 1
            return t.wanted
        }
        var wanted = true
        if let chat = context.options.chat {
            wanted = [label, name ?? "", addresses.joined(separator: ", ")].contains { $0.caseInsensitiveCompare(chat) == .orderedSame }
                || (addresses.count == 1 && TextCleanup.sameContact(addresses[0], chat))
                || (name.map { TextCleanup.sameContact($0, chat) } ?? false)
        }
        threads[key] = ThreadTally(label: label, count: 1, wanted: wanted)
        threadOrder.append(key)
        return wanted
    }

    private func participantID(address: String, name: String?) -> String {
        let k = key(address)
        let id = participantIDs[k] ?? address
        participantIDs[k] = id
        builder.participant(id: id, name: name ?? address)
        return id
    }

    private func date(_ attributes: SAXAttributes, line: Int, what: String) -> Date? {
        guard let raw = attributes["date"], let t = Int64(raw) else {
            context.warn("line \(line)", what, "has no readable date (\"\(attributes["date"] ?? "")\"); skipped", skipped: true)
            return nil
        }
        // Milliseconds since 1970; a few tools write seconds for MMS.
        return Date(timeIntervalSince1970: t < 100_000_000_000 ? Double(t) : Double(t) / 1000)
    }

    /// type / msg_box: 1 received, 2 sent, 3 draft, 4 outbox, 5 failed, 6 queued. Outbox and
    /// queued are still being sent; a draft was never sent (no status).
    private func direction(_ raw: String?) -> (Direction, MessageStatus?)? {
        switch raw {
        case "1": (.incoming, nil)
        case "2": (.outgoing, .sent)
        case "3": (.outgoing, nil)
        case "4", "6": (.outgoing, .sending)
        case "5": (.outgoing, .failed)
        default: nil
        }
    }

    private func meParticipant() {
        builder.participant(id: "me", name: context.options.me ?? "Me")
    }

    private func readSMS(_ a: SAXAttributes, line: Int) {
        let address = value(a["address"]) ?? "Unknown"
        let name = value(a["contact_name"])
        let wanted = thread(key: key(address), label: name.map { "\($0) (\(address))" } ?? address,
                            addresses: [address], name: name)
        guard wanted, keeping else { return }  // another conversation: not even its problems matter
        guard let (direction, status) = direction(a["type"]) else {
            context.warn("line \(line)", "sms", "type \"\(a["type"] ?? "")\" is not 1–6 (received, sent, draft, outbox, failed, queued); skipped",
                         skipped: true)
            return
        }
        guard let date = date(a, line: line, what: "sms") else { return }
        // "null" is the exporter's word for no body ("(Unknown)" is only used for names).
        guard let body = a["body"], body != "null", !body.isEmpty else {
            context.warn("line \(line)", "sms", "has no body; skipped", skipped: true)
            return
        }
        let sender: String
        if direction == .outgoing {
            meParticipant()
            sender = "me"
        } else {
            sender = participantID(address: address, name: name)
        }
        elementKept = builder.append(Message(sender: sender, direction: direction, date: date, text: body, status: status),
                                     context: context)
    }

    private func readPart(_ a: SAXAttributes, line: Int) {
        // `data` values the filter had to cut (over libxml2's attribute limit), up to this part:
        // earlier parts took theirs, so these are this part's.
        let cut = stream.takeOversized(upToLine: line).last?.bytes
        let mime = (a["ct"] ?? "").lowercased()
        if mime == "application/smil" { return }
        if mime == "text/plain" {
            if let text = value(a["text"]) { mms?.texts.append(text) }
        } else if mime.hasPrefix("image/") {
            mms?.images.append((a["data"] ?? "", mime, value(a["name"]) ?? value(a["cl"]), line, cut))
        } else {
            let name = value(a["name"]) ?? value(a["cl"])
            mms?.others.append("[Attachment: \(name.map { "\($0), " } ?? "")\(mime.isEmpty ? "unknown type" : mime)]")
        }
    }

    private func readMMS(_ m: PendingMMS) {
        let a = m.attributes
        let location = "line \(m.line)"
        let addresses = (value(a["address"]) ?? "Unknown").split(separator: "~").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        let contactName = value(a["contact_name"])
        // Group MMS: "Ann, Ben" goes with "+1555…~+1666…" in the same order.
        var names: [String: String] = [:]
        if let contactName {
            let parts = contactName.components(separatedBy: ", ")
            if parts.count == addresses.count {
                for (address, name) in zip(addresses, parts) { names[key(address)] = value(name) }
            } else if addresses.count == 1 {
                names[key(addresses[0])] = contactName
            }
        }
        let key = addresses.map { self.key($0) }.sorted().joined(separator: ",")
        let label = contactName.map { "\($0) (\(addresses.joined(separator: ", ")))" } ?? addresses.joined(separator: ", ")
        let wanted = thread(key: key, label: label, addresses: addresses, name: contactName)
        guard wanted, keeping else { return }
        guard let (direction, status) = direction(a["msg_box"]) else {
            context.warn(location, "mms", "msg_box \"\(a["msg_box"] ?? "")\" is not 1–6; skipped", skipped: true)
            return
        }
        guard let date = date(a, line: m.line, what: "mms") else { return }
        guard context.isWanted(date) else {
            builder.countExcluded()  // before any picture is written
            return
        }

        let sender: String
        if direction == .outgoing {
            meParticipant()
            sender = "me"
        } else {
            guard let from = m.from ?? (addresses.count == 1 ? addresses[0] : nil) else {
                context.warn(location, "mms", "received, but no sender (addr type 137) is given; skipped", skipped: true)
                return
            }
            sender = participantID(address: from, name: names[self.key(from)])
        }

        var images: [ImageAttachment] = []
        var placeholders = m.others
        let stamp = Int64((date.timeIntervalSince1970 * 1000).rounded())
        for (k, part) in m.images.enumerated() {
            let shown = part.name ?? part.mime
            guard let ext = TextCleanup.photoExtension(ofMIMEType: part.mime) else {
                placeholders.append("[Photo: \(shown)]")
                context.warn("line \(part.line)", "mms image \(shown)", "\(part.mime) is not a format the renderer reads; "
                                 + "shown as a placeholder", skipped: true)
                continue
            }
            if let cut = part.cutBytes {
                placeholders.append("[Photo: \(shown)]")
                context.warn("line \(part.line)", "mms image \(shown)", "its data is \(cut / 1_000_000) MB of base64, more than "
                                 + "an XML attribute may hold here (libxml2 refuses over 10 MB); shown as a placeholder", skipped: true)
                continue
            }
            guard !part.data.isEmpty, let bytes = Data(base64Encoded: part.data, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
                placeholders.append("[Photo: \(shown)]")
                context.warn("line \(part.line)", "mms image \(shown)", part.data.isEmpty
                                 ? "has no data (backed up without media?); shown as a placeholder"
                                 : "data is not valid base64; shown as a placeholder", skipped: true)
                continue
            }
            do {
                let folder = try context.attachmentsFolder()
                // Our own name, never the part's: `name` and `cl` come from the sender's phone.
                let file = context.uniqueAttachmentName(stem: "mms-\(stamp)-\(k + 1)", ext: ext)
                let full = (folder as NSString).appendingPathComponent(file)
                try bytes.write(to: URL(fileURLWithPath: full))
                images.append(ImageAttachment(path: full, width: 0, height: 0))
            } catch {
                placeholders.append("[Photo: \(shown)]")
                context.warn("line \(part.line)", "mms image \(shown)", "cannot be written (\(error)); shown as a placeholder",
                             skipped: true)
            }
        }
        let text = (placeholders + m.texts).joined(separator: "\n")
        if images.isEmpty && text.isEmpty {
            context.warn(location, "mms", "has neither text nor pictures; skipped", skipped: true)
            return
        }
        if images.isEmpty {
            elementKept = builder.append(Message(sender: sender, direction: direction, date: date, text: text, status: status),
                                         context: context)
            return
        }
        // All pictures in one message (a grid), the text as their caption.
        elementKept = builder.append(Message(sender: sender, direction: direction, date: date, text: text.isEmpty ? nil : text,
                                             images: images, status: status),
                                     context: context)
    }

    // MARK: Result

    func finish() throws(ImportError) -> ImportResult {
        // Busiest first; equal counts in the order they appear.
        let ranked = threadOrder.enumerated().sorted { a, b in
            let (ca, cb) = (threads[a.element]!.count, threads[b.element]!.count)
            return ca != cb ? ca > cb : a.offset < b.offset
        }.map(\.element)
        let listing = TextCleanup.list(ranked.map { "\(threads[$0]!.label): \(threads[$0]!.count) messages" })
        if let chat = context.options.chat {
            let picked = threadOrder.filter { threads[$0]!.wanted }
            if picked.isEmpty {
                throw ImportError(path: path, reason: "has no conversation with \"\(chat)\"; conversations: \(listing)")
            }
            if picked.count == 1 { builder.title = threads[picked[0]]!.label }
        } else if threads.count > 1 {
            throw ImportError(path: path, reason: "holds \(threads.count) conversations; pick one with `chat` "
                                  + "(contact name or phone number): \(listing)")
        } else if let only = threadOrder.first {
            builder.title = threads[only]!.label
        }
        return builder.finish(format: .smsBackup, me: "me", sortByDate: true, keep: "me")
    }
}
