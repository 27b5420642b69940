import BubbleCore
import Foundation

/// SMS Backup & Restore (Android) XML, streamed: `SMSBackupScanner` reads the file 1 MiB at a
/// time and hands each element, with the attributes read below decoded into one reused buffer,
/// to `SMSBackupReader`; no tree is built. (A file declaring another encoding than UTF-8 goes
/// through `XMLByteFilter` and libxml2's push parser, `SAXPushParser`, instead.) Each `sms`
/// element becomes a message as soon as it is seen; an `mms` is held only until its end tag
/// (its parts and addresses).
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
        try load(source, context: context, readLimit: 1 << 20)
    }

    /// `readLimit`: longest single read (tests).
    static func load(_ source: ImportSource, context: ImportContext, readLimit: Int) throws(ImportError) -> ImportResult {
        guard let handle = FileHandle(forReadingAtPath: source.path) else {
            throw ImportError(path: source.displayPath, reason: "cannot be opened for reading")
        }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 4)) ?? Data())
        if head.isEmpty {
            throw ImportError(path: source.displayPath, reason: "is empty; expected an SMS Backup & Restore file")
        }
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) {
            throw ImportError(
                path: source.displayPath, location: "line 1, column 1",
                reason: "is UTF-16; SMS Backup & Restore writes UTF-8 (convert the file to UTF-8)")
        }
        try? handle.seek(toOffset: 0)

        let reader = SMSBackupReader(context: context, path: source.displayPath)
        var scanner = SMSBackupScanner(fd: handle.fileDescriptor, reader: reader, readLimit: readLimit)
        defer { scanner.release() }
        let outcome: SMSBackupScanner.Outcome
        do {
            outcome = try scanner.run()
        } catch {
            throw ImportError(
                path: source.displayPath, location: error.line.map { "line \($0), column \(error.column ?? 1)" },
                reason: error.reason)
        }
        if case .otherEncoding = outcome {
            // Before the root element: nothing was read into the reader yet.
            try? handle.seek(toOffset: 0)
            return try loadWithLibXML2(handle, source: source, context: context)
        }
        reader.reportReplacements(upToLine: .max, kept: true)
        if let failure = reader.failure { throw failure }
        if !reader.sawRoot {
            throw ImportError(path: source.displayPath, reason: "has no <smses> element; expected an SMS Backup & Restore file")
        }
        return try reader.finish()
    }

    /// The file through `XMLByteFilter` and libxml2's push parser: for a backup whose XML
    /// declaration names an encoding other than UTF-8 (libxml2 converts it).
    static func loadWithLibXML2(_ handle: FileHandle, source: ImportSource, context: ImportContext) throws(ImportError) -> ImportResult {
        let stream = FilteredXMLStream(handle: handle)
        let reader = SMSBackupReader(context: context, path: source.displayPath, stream: stream)
        let parser = SAXPushParser(wantedAttributes: SMSAttribute.allCases.map(\.xmlName))
        parser.delegate = reader
        reader.parser = parser
        reader.locate = { [unowned reader, unowned parser] in reader.location(parser) }
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
            throw ImportError(
                path: source.displayPath, location: reader.location(parser),
                reason: SMSBackupReader.describe(libxml2Error: code, atEnd: stream.reachedEnd))
        }
        if !reader.sawRoot {
            throw ImportError(path: source.displayPath, reason: "has no <smses> element; expected an SMS Backup & Restore file")
        }
        return try reader.finish()
    }
}

/// Turns elements into messages as they stream past, from `SMSBackupScanner` (or, for another
/// encoding, libxml2 through `SAXPushParserDelegate`).
final class SMSBackupReader: SAXPushParserDelegate {
    private let context: ImportContext
    private let path: String
    /// The libxml2 path only: the filter in front of the parser.
    private let stream: FilteredXMLStream?
    weak var parser: SAXPushParser?
    /// Where the element just read ends ("line 3, column 40"); the libxml2 path only (the scanner
    /// places a failure itself, `placeFailure`).
    var locate: (() -> String)?
    private(set) var failure: ImportError?
    private(set) var sawRoot = false

    private var single = ConversationBuilder()
    /// With `everyChat`: a builder per conversation (spooling to disk), and the current one.
    private var builders: [ConversationBuilder] = []
    /// Whose message is read is whose missing media are counted (`ImportContext.mediaOwner`).
    private var current = 0 { didSet { context.mediaOwner = current } }
    /// The builder of the message being read.
    private var builder: ConversationBuilder {
        get { context.everyChat ? builders[current] : single }
        _modify {
            if context.everyChat { yield &builders[current] } else { yield &single }
        }
    }
    private var keeping = true
    private var depth = 0

    /// One conversation of the backup: who, and how many messages.
    private struct ThreadTally {
        /// The normalised numbers (`key`): the same on another phone's backup, whatever names
        /// its contacts give them.
        var key = ""
        var label: String
        var count = 0
        var wanted: Bool
    }
    private var threadIndex: [String: Int] = [:]
    /// In the order they appear.
    private var threads: [ThreadTally] = []
    /// Normalised address → the participant id it was first seen as.
    private var participantIDs: [String: String] = [:]

    /// An `mms` element being read.
    private struct PendingMMS {
        var line: Int
        var attributes: SAXAttributes
        var texts: [String] = []
        var images: [(data: String, mime: String, name: String?, line: Int, cutBytes: Int?)] = []
        /// Parts that are neither text nor pictures: video, audio, contact cards, files.
        var files: [(data: String, mime: String, name: String?, line: Int, cutBytes: Int?)] = []
        var others: [String] = []
        var from: String?
    }
    private var mms: PendingMMS?

    init(context: ImportContext, path: String, stream: FilteredXMLStream? = nil) {
        self.context = context
        self.path = path
        self.stream = stream
    }

    // MARK: Positions and errors

    func location(_ parser: SAXPushParser) -> String {
        let line = parser.lineNumber
        let column = stream?.filter.originalColumn(line: line, column: parser.columnNumber) ?? parser.columnNumber
        return "line \(line), column \(column)"
    }

    private func fail(_ reason: String) {
        guard failure == nil else { return }
        failure = ImportError(path: path, location: locate?(), reason: reason)
        parser?.abortParsing()
    }

    func placeFailure(_ location: String) {
        if failure?.location == nil { failure?.location = location }
    }

    func parser(_ parser: SAXPushParser, errorCode: Int) {
        // The first error ends the import.
        guard failure == nil, stream?.failure == nil, stream?.readError == nil else { return }
        fail(Self.describe(libxml2Error: errorCode, atEnd: stream?.reachedEnd ?? false))
    }

    /// libxml2's error numbers (xmlParserErrors), in words; `SMSBackupScanner` uses the same.
    static func phrase(libxml2Error code: Int) -> String {
        switch code {
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
        case 45: "a comment is not finished; expected -->"
        case 47: "a processing instruction is not finished; expected ?>"
        case 57: "the XML declaration is not finished; expected ?>"
        case 62: "']]>' outside a CDATA section"
        case 63: "a CDATA section is not finished; expected ]]>"
        case 64: "an XML declaration that is not at the start of the file"
        case 65: "a space was required"
        case 68: "a name was required"
        case 73: "expected '>'"
        case 76: "closing tag does not match the opening tag"
        case 77: "an element is not finished"
        case 80: "'--' inside a comment"
        case 85: "the elements are not balanced"
        case 86: "extra content at the end of the document"
        default: "XML error \(code) (libxml2)"
        }
    }

    static func describe(libxml2Error code: Int, atEnd: Bool) -> String {
        describe(phrase(libxml2Error: code), atEnd: atEnd)
    }

    static func describe(_ what: String, atEnd: Bool) -> String {
        atEnd
            ? "unexpected end of file (cut short?): \(what); expected the rest of the backup and </smses>"
            : "is not well-formed XML: \(what)"
    }

    /// References replaced by U+FFFD, not yet matched to an element. `SMSBackupScanner` adds them
    /// as it reads; the libxml2 path takes them from its filter, which runs up to a chunk ahead of
    /// the parser, so they are matched by line when each element ends.
    var replacements: [XMLByteFilter.Replacement] = []
    /// Whether the element that just ended became a message (its replacements are then reported).
    private var elementKept = false

    /// Warns about replaced references up to `line` that belong to a kept message (or to no message
    /// at all, `kept` at the end); the others went with their message.
    func reportReplacements(upToLine line: Int, kept: Bool) {
        if let stream { replacements += stream.takeReplacements() }
        guard let first = replacements.first, first.line <= line else { return }
        let end = replacements.firstIndex { $0.line > line } ?? replacements.count
        if kept {
            for r in replacements[..<end] {
                context.warn(
                    "line \(r.line), column \(r.column)", "character reference \(r.reference)",
                    "\(r.reason); replaced by U+FFFD")
            }
        }
        replacements.removeFirst(end)
    }

    // MARK: Elements

    func parser(_ parser: SAXPushParser, didStartElement name: String, attributes: SAXAttributes) {
        var name = name
        let kind = name.withUTF8 { SMSElement.of($0.baseAddress!, $0.count) }
        var attributes = attributes
        if kind == .part, let stream {
            // `data` values the filter had to cut (over libxml2's attribute limit), up to this part:
            // earlier parts took theirs, so these are this part's.
            attributes.cutDataBytes = stream.takeOversized(upToLine: parser.lineNumber).last?.bytes
        }
        name.withUTF8 { startElement(kind, name: $0, attributes: attributes, line: parser.lineNumber) }
    }

    func parser(_ parser: SAXPushParser, didEndElement name: String) {
        var name = name
        endElement(name.withUTF8 { SMSElement.of($0.baseAddress!, $0.count) }, line: parser.lineNumber)
    }

    func startElement(_ kind: SMSElement, name: UnsafeBufferPointer<UInt8>, attributes: SAXAttributes, line: Int) {
        depth += 1
        if depth == 1 {
            guard kind == .smses else {
                let name = String(decoding: name, as: UTF8.self)
                fail(
                    name == "calls"
                        ? "is a call log backup (<calls>), not messages; expected <smses>"
                        : "root element is <\(name)>; expected <smses> (SMS Backup & Restore)")
                return
            }
            sawRoot = true
            return
        }
        switch kind {
        case .sms where depth == 2:
            readSMS(attributes, line: line)
        case .mms where depth == 2:
            mms = PendingMMS(line: line, attributes: attributes)
        case .part where mms != nil:
            readPart(attributes, line: line)
        case .addr where mms != nil:
            // type 137 = PduHeaders.FROM; 151 = TO, 130 = CC.
            if attributes.equals(SMSAttribute.type.rawValue, "137"), let address = value(attributes, .address) { mms?.from = address }
        default:
            break
        }
        if depth == 2, kind != .sms, kind != .mms {
            context.warn("line \(line)", "<\(String(decoding: name, as: UTF8.self))>", "not an sms or mms element; skipped", skipped: true)
        }
        if threads.count > 1, context.options.chat == nil, keeping, !context.everyChat {
            // The import will end in an error listing the conversations: stop keeping messages.
            keeping = false
            single = ConversationBuilder()
        }
    }

    func endElement(_ kind: SMSElement, line: Int) {
        if kind == .mms, depth == 2, let pending = mms {
            mms = nil
            readMMS(pending)
        }
        if depth == 2 {
            if stream == nil {
                // The scanner adds replacements as it reads: all pending ones are this element's.
                reportReplacements(upToLine: .max, kept: elementKept)
            } else {
                reportReplacements(upToLine: line, kept: elementKept)
            }
            elementKept = false
        }
        depth -= 1
    }

    /// The literal "null" and "(Unknown)" the exporter writes for a missing value.
    private func value(_ s: String?) -> String? {
        guard let s, !s.isEmpty, s != "null", s != "(Unknown)" else { return nil }
        return s
    }

    private func value(_ a: SAXAttributes, _ name: SMSAttribute) -> String? {
        guard
            let present = a.withBytes(
                name.rawValue,
                { b in
                    !b.isEmpty && !Self.same(b, "null") && !Self.same(b, "(Unknown)")
                }), present
        else { return nil }
        return a.string(name.rawValue)
    }

    @inline(__always)
    private static func same(_ b: UnsafeBufferPointer<UInt8>, _ s: StaticString) -> Bool {
        b.count == s.utf8CodeUnitCount && memcmp(b.baseAddress!, s.utf8Start, b.count) == 0
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

    /// Counts a message of the conversation `key`; returns its index in `threads`.
    private func thread(key: String, label: String, addresses: [String], name: String?) -> Int {
        if let i = threadIndex[key] {
            threads[i].count += 1
            if context.everyChat { current = i }
            return i
        }
        func matches(_ chat: String) -> Bool {
            [label, name ?? "", addresses.joined(separator: ", ")].contains { $0.caseInsensitiveCompare(chat) == .orderedSame }
                || (addresses.count == 1 && TextCleanup.sameContact(addresses[0], chat))
                || (name.map { TextCleanup.sameContact($0, chat) } ?? false)
        }
        var wanted = true
        if context.everyChat {
            wanted = context.wants(matches)
            if wanted { matchedChats.formUnion(context.chatDelivery?.chats.filter(matches) ?? []) }
            var b = ConversationBuilder()
            if wanted {
                do { b.spool = try context.makeSpool() } catch { fail(error.reason) }
            }
            builders.append(b)
            current = builders.count - 1
        } else if let chat = context.options.chat {
            wanted = matches(chat)
        }
        threadIndex[key] = threads.count
        threads.append(ThreadTally(key: key, label: label, count: 1, wanted: wanted))
        return threads.count - 1
    }
    /// With `everyChat` and `chats`: those that matched a conversation.
    private var matchedChats = Set<String>()

    private func participantID(address: String, name: String?) -> String {
        let k = key(address)
        let id = participantIDs[k] ?? address
        participantIDs[k] = id
        builder.participant(id: id, name: name ?? address)
        return id
    }

    /// Milliseconds since 1970; a few tools write seconds for MMS.
    private func date(_ a: SAXAttributes, line: Int, what: String) -> Date? {
        guard let t = a.int64(SMSAttribute.date.rawValue) else {
            context.warn(
                "line \(line)", what, "has no readable date (\"\(a.string(SMSAttribute.date.rawValue) ?? "")\"); skipped",
                skipped: true)
            return nil
        }
        return Date(timeIntervalSince1970: t < 100_000_000_000 ? Double(t) : Double(t) / 1000)
    }

    /// type / msg_box: 1 received, 2 sent, 3 draft, 4 outbox, 5 failed, 6 queued. Outbox and
    /// queued are still being sent; a draft was never sent (no status).
    private func direction(_ a: SAXAttributes, _ name: SMSAttribute) -> (Direction, MessageStatus?)? {
        let digit = a.withBytes(name.rawValue) { $0.count == 1 ? $0[0] : 0 } ?? 0
        switch digit {
        case 0x31: return (.incoming, nil)
        case 0x32: return (.outgoing, .sent)
        case 0x33: return (.outgoing, nil)
        case 0x34, 0x36: return (.outgoing, .sending)
        case 0x35: return (.outgoing, .failed)
        default: return nil
        }
    }

    /// Conversations (their builder's number; 0 when there is one builder) that have "me".
    private var meAdded = Set<Int>()
    private func meParticipant() {
        let n = context.everyChat ? current : 0
        guard !meAdded.contains(n) else { return }
        builder.participant(id: "me", name: context.options.me ?? "Me")
        meAdded.insert(n)
    }

    /// The last `sms` element's address and contact_name bytes, and what they gave: a backup lists
    /// a conversation's messages together, so most elements repeat them.
    private struct SMSSender {
        var addressBytes: [UInt8]?
        var nameBytes: [UInt8]?
        var address: String
        var name: String?
        var thread: Int
        /// The participant id, once an incoming message needed it.
        var id: String?
    }
    private var lastSender: SMSSender?

    private static func sameBytes(_ a: SAXAttributes, _ name: SMSAttribute, _ bytes: [UInt8]?) -> Bool {
        let result = a.withBytes(name.rawValue) { b -> Bool in
            guard let bytes, bytes.count == b.count else { return false }
            return b.isEmpty || bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, b.baseAddress!, b.count) == 0 }
        }
        return result ?? (bytes == nil)
    }

    private func readSMS(_ a: SAXAttributes, line: Int) {
        let threadNumber: Int
        if let last = lastSender, Self.sameBytes(a, .address, last.addressBytes), Self.sameBytes(a, .contactName, last.nameBytes) {
            threads[last.thread].count += 1
            threadNumber = last.thread
            if context.everyChat { current = threadNumber }
        } else {
            let address = value(a, .address) ?? "Unknown"
            let name = value(a, .contactName)
            threadNumber = thread(
                key: key(address), label: name.map { "\($0) (\(address))" } ?? address,
                addresses: [address], name: name)
            lastSender = SMSSender(
                addressBytes: a.withBytes(SMSAttribute.address.rawValue) { Array($0) },
                nameBytes: a.withBytes(SMSAttribute.contactName.rawValue) { Array($0) },
                address: address, name: name, thread: threadNumber)
        }
        guard threads[threadNumber].wanted, keeping else { return }  // another conversation: not even its problems matter
        guard let (direction, status) = direction(a, .type) else {
            context.warn(
                "line \(line)", "sms",
                "type \"\(a.string(SMSAttribute.type.rawValue) ?? "")\" is not 1–6 (received, sent, draft, outbox, failed, queued); skipped",
                skipped: true)
            return
        }
        guard let date = date(a, line: line, what: "sms") else { return }
        // "null" is the exporter's word for no body ("(Unknown)" is only used for names).
        guard
            let body = a.withBytes(
                SMSAttribute.body.rawValue,
                { b -> String? in
                    b.isEmpty || Self.same(b, "null") ? nil : String(decoding: b, as: UTF8.self)
                }) ?? nil
        else {
            context.warn("line \(line)", "sms", "has no body; skipped", skipped: true)
            return
        }
        let sender: String
        if direction == .outgoing {
            meParticipant()
            sender = "me"
        } else if let id = lastSender!.id {
            sender = id
        } else {
            sender = participantID(address: lastSender!.address, name: lastSender!.name)
            lastSender!.id = sender
        }
        elementKept = builder.append(
            Message(sender: sender, direction: direction, date: date, text: body, status: status),
            context: context)
    }

    private func readPart(_ a: SAXAttributes, line: Int) {
        let mime = (a.string(SMSAttribute.ct.rawValue) ?? "").lowercased()
        if mime == "application/smil" { return }
        if mime == "text/plain" {
            if let text = value(a, .text) { mms?.texts.append(text) }
        } else if mime.hasPrefix("image/") {
            mms?.images.append((a.string(SMSAttribute.data.rawValue) ?? "", mime, value(a, .name) ?? value(a, .cl), line, a.cutDataBytes))
        } else {
            mms?.files.append((a.string(SMSAttribute.data.rawValue) ?? "", mime, value(a, .name) ?? value(a, .cl), line, a.cutDataBytes))
        }
    }

    private func readMMS(_ m: PendingMMS) {
        let a = m.attributes
        let location = "line \(m.line)"
        let addresses = (value(a, .address) ?? "Unknown").split(separator: "~").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        let contactName = value(a, .contactName)
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
        let wanted = threads[thread(key: key, label: label, addresses: addresses, name: contactName)].wanted
        guard wanted, keeping else { return }
        guard let (direction, status) = direction(a, .msgBox) else {
            context.warn(location, "mms", "msg_box \"\(a.string(SMSAttribute.msgBox.rawValue) ?? "")\" is not 1–6; skipped", skipped: true)
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
                context.warn(
                    "line \(part.line)", "mms image \(shown)",
                    "\(part.mime) is not a format the renderer reads; "
                        + "shown as a placeholder", skipped: true, media: true)
                continue
            }
            if let cut = part.cutBytes {
                placeholders.append("[Photo: \(shown)]")
                context.warn(
                    "line \(part.line)", "mms image \(shown)",
                    "its data is \(cut / 1_000_000) MB of base64, more than "
                        + "a photo may be here (limit 9 MB); shown as a placeholder", skipped: true, media: true)
                continue
            }
            guard !part.data.isEmpty, let bytes = Data(base64Encoded: part.data, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
                placeholders.append("[Photo: \(shown)]")
                context.warn(
                    "line \(part.line)", "mms image \(shown)",
                    part.data.isEmpty
                        ? "has no data (backed up without media?); shown as a placeholder"
                        : "data is not valid base64; shown as a placeholder", skipped: true, media: true)
                continue
            }
            do {
                let folder = try context.attachmentsFolder()
                // Our own name, never the part's: `name` and `cl` come from the sender's phone.
                let file = context.uniqueAttachmentName(stem: "mms-\(stamp)-\(k + 1)", ext: ext)
                let full = (folder as NSString).appendingPathComponent(file)
                try bytes.write(to: URL(fileURLWithPath: full))
                // The part's name is kept to name the photo in messages (never as a path).
                images.append(ImageAttachment(path: full, width: 0, height: 0, name: part.name))
            } catch {
                placeholders.append("[Photo: \(shown)]")
                context.warn(
                    "line \(part.line)", "mms image \(shown)", "cannot be written (\(error)); shown as a placeholder",
                    skipped: true, media: true)
            }
        }
        // The first other part is the message's typed attachment; a further one is named in its text.
        var attachment: MediaAttachment?
        for (k, part) in m.files.enumerated() {
            let file = self.file(part, stamp: stamp, number: m.images.count + k + 1)
            if attachment == nil { attachment = file } else { placeholders.append(file.displayText) }
        }
        let text = (placeholders + m.texts).joined(separator: "\n")
        if images.isEmpty && text.isEmpty && attachment == nil {
            context.warn(location, "mms", "has neither text nor pictures; skipped", skipped: true)
            return
        }
        // All pictures in one message (a grid), the text as their caption.
        elementKept = builder.append(
            Message(
                sender: sender, direction: direction, date: date, text: text.isEmpty ? nil : text,
                images: images, status: status, attachment: attachment),
            context: context)
    }

    /// An MMS part that is not a picture (`video/3gpp`, `audio/amr`, `text/x-vCard`…): written to
    /// the attachments folder under our own name and described from its headers; without its
    /// data (backed up without media, too large, not base64), a placeholder with a warning.
    private func file(
        _ part: (data: String, mime: String, name: String?, line: Int, cutBytes: Int?), stamp: Int64,
        number: Int
    ) -> MediaAttachment {
        let kind: MediaAttachment.Kind =
            part.mime.hasPrefix("video/")
            ? .video
            : part.mime == "audio/amr" || part.mime == "audio/3gpp"
                ? .voice
                : part.mime.hasPrefix("audio/")
                    ? .audio
                    : part.mime.contains("vcard")
                        ? .contact
                        : .document
        let shown = part.name ?? part.mime
        let ext: String =
            switch part.mime {
            case "video/3gpp": "3gp"
            case "video/mp4": "mp4"
            case "audio/amr": "amr"
            case "audio/mpeg", "audio/mp3": "mp3"
            case "audio/ogg": "ogg"
            case "audio/mp4", "audio/aac": "m4a"
            case "text/x-vcard", "text/vcard": "vcf"
            default: PathText.fileExtension(part.name ?? "").lowercased().filter { $0.isLetter || $0.isNumber }
            }
        var missing = MediaAttachment(kind: kind, fileName: part.name, mimeType: part.mime.isEmpty ? nil : part.mime)
        if missing.fileName == nil { missing.label = shown }
        guard part.cutBytes == nil, !part.data.isEmpty,
            let bytes = Data(base64Encoded: part.data, options: .ignoreUnknownCharacters), !bytes.isEmpty
        else {
            context.warn(
                "line \(part.line)", "mms part \(shown)",
                part.cutBytes != nil
                    ? "its data is over the 9 MB limit; shown as a placeholder"
                    : part.data.isEmpty
                        ? "has no data (backed up without media?); shown as a placeholder"
                        : "data is not valid base64; shown as a placeholder", skipped: true, media: true)
            return missing
        }
        do {
            let folder = try context.attachmentsFolder()
            let full = (folder as NSString).appendingPathComponent(context.uniqueAttachmentName(stem: "mms-\(stamp)-\(number)", ext: ext))
            try bytes.write(to: URL(fileURLWithPath: full))
            return MediaAttachment.described(
                kind: kind, fileName: part.name ?? (full as NSString).lastPathComponent, path: full,
                mimeType: missing.mimeType)
        } catch {
            context.warn("line \(part.line)", "mms part \(shown)", "cannot be written (\(error)); shown as a placeholder", skipped: true, media: true)
            return missing
        }
    }

    // MARK: Result

    func finish() throws(ImportError) -> ImportResult {
        if let chats = context.chatDelivery {
            // Every wanted conversation, in the order they appear, one at a time from its spool.
            chats.unmatched = chats.chats.filter { !matchedChats.contains($0) }
            let total = threads.filter(\.wanted).count
            for i in threads.indices where threads[i].wanted {
                builders[i].title = threads[i].label
                let result = try builders[i].finish(format: .smsBackup, me: "me", sortByDate: true, keep: "me")
                builders[i] = ConversationBuilder()
                try context.deliverConversation(result, key: threads[i].label, of: total, owner: i, identity: "sms:" + threads[i].key)
            }
            return ImportResult(conversation: Conversation(title: nil, participants: [], messages: []), format: .smsBackup, me: "me")
        }
        // Busiest first; equal counts in the order they appear.
        let ranked = threads.indices.sorted { a, b in
            let (ca, cb) = (threads[a].count, threads[b].count)
            return ca != cb ? ca > cb : a < b
        }
        let listing = TextCleanup.list(ranked.map { "\(threads[$0].label): \(TextCleanup.count(threads[$0].count, "message"))" })
        if let chat = context.options.chat {
            let picked = threads.indices.filter { threads[$0].wanted }
            if picked.isEmpty {
                throw ImportError(path: path, reason: "has no conversation with \"\(chat)\"; conversations: \(listing)")
            }
            if picked.count == 1 { builder.title = threads[picked[0]].label }
        } else if threads.count > 1 {
            throw ImportError(
                path: path,
                reason: "holds \(threads.count) conversations; pick one with `chat` "
                    + "(contact name or phone number): \(listing)")
        } else if let only = threads.first {
            builder.title = only.label
        }
        return try builder.finish(format: .smsBackup, me: "me", sortByDate: true, keep: "me")
    }
}

extension SMSBackupImporter: ExportReader {
    static let formats: [ImportFormat] = [.smsBackup]
    static let holdsManyChats = true
    static let sortsByDate = true

    /// XML: the first thing after a byte-order mark and white space is `<`.
    static func recognizes(_ probe: ExportProbe) -> Recognition? {
        probe.first == UInt8(ascii: "<") ? .certain(.smsBackup) : nil
    }
}
