import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The elements `SMSBackupReader` tells apart, found by comparing bytes (no String per element).
enum SMSElement {
    case smses, sms, mms, part, addr, other

    static func of(_ p: UnsafePointer<UInt8>, _ n: Int) -> SMSElement {
        func eq(_ s: StaticString) -> Bool { memcmp(p, s.utf8Start, n) == 0 }
        switch n {
        case 3: return eq("sms") ? .sms : eq("mms") ? .mms : .other
        case 4: return eq("part") ? .part : eq("addr") ? .addr : .other
        case 5: return eq("smses") ? .smses : .other
        default: return .other
        }
    }
}

/// The attributes `SMSBackupReader` reads; the raw value is the index in `SAXAttributes`.
enum SMSAttribute: Int, CaseIterable {
    case address, contactName, type, date, body, msgBox, ct, text, data, name, cl

    var xmlName: String {
        switch self {
        case .address: "address"
        case .contactName: "contact_name"
        case .type: "type"
        case .date: "date"
        case .body: "body"
        case .msgBox: "msg_box"
        case .ct: "ct"
        case .text: "text"
        case .data: "data"
        case .name: "name"
        case .cl: "cl"
        }
    }

    /// The index of the attribute named by `n` bytes at `p`, or -1 for one not read.
    @inline(__always)
    static func index(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        func eq(_ s: StaticString) -> Bool { memcmp(p, s.utf8Start, n) == 0 }
        switch n {
        case 2: return p[0] != 0x63 ? -1 : p[1] == 0x74 ? SMSAttribute.ct.rawValue : p[1] == 0x6C ? SMSAttribute.cl.rawValue : -1
        case 4:
            switch p[0] {
            case 0x74: return eq("type") ? SMSAttribute.type.rawValue : eq("text") ? SMSAttribute.text.rawValue : -1
            case 0x64: return eq("date") ? SMSAttribute.date.rawValue : eq("data") ? SMSAttribute.data.rawValue : -1
            case 0x62: return eq("body") ? SMSAttribute.body.rawValue : -1
            case 0x6E: return eq("name") ? SMSAttribute.name.rawValue : -1
            default: return -1
            }
        case 7: return eq("address") ? SMSAttribute.address.rawValue : eq("msg_box") ? SMSAttribute.msgBox.rawValue : -1
        case 12: return eq("contact_name") ? SMSAttribute.contactName.rawValue : -1
        default: return -1
        }
    }
}

/// A hand-written XML scanner for SMS Backup & Restore files, reading the file descriptor in
/// 1 MiB chunks and handing `SMSBackupReader` each element with the attributes it reads, decoded
/// into one reused buffer: no libxml2, no byte filter in front, no String per element or name.
///
/// It reads all of XML except the DTD: elements, attributes in double or single quotes (values
/// normalised as XML says: literal tab and line breaks become spaces), the five predefined entity
/// references and character references, comments, processing instructions, CDATA, the XML
/// declaration, text (ignored). It checks what libxml2 checks for well-formedness (names, quotes,
/// `<` in values, undeclared entities, UTF-8, characters XML forbids, duplicate attributes, tag
/// balance, one root) and stops at the first error with its line and column in the file.
///
/// Safety, as with `XMLByteFilter` in front of libxml2: a DOCTYPE is refused before the root, so
/// no entity is ever declared or expanded and nothing external is loaded. Emoji that Android writes
/// as two surrogate references (`&#55357;&#56396;`) decode to one character; a lone surrogate or a
/// reference to a character XML forbids becomes U+FFFD and is reported to the reader. A `data`
/// value longer than `maxDataBytes` is cut (`SAXAttributes.cutDataBytes`), any other value over
/// `maxValueBytes` is an error, as are names, comments or tags over 64 MB: memory stays bounded.
///
/// An XML declaration naming an encoding other than UTF-8 is the one thing outside this subset:
/// `run` returns `.otherEncoding` before any element is read, and the caller uses libxml2.
struct SMSBackupScanner {
    struct Failure: Error {
        /// nil for a read error (no position).
        var line: Int?
        var column: Int?
        var reason: String
    }

    enum Outcome {
        case done
        case otherEncoding(String)
    }

    private let fd: Int32
    private let reader: SMSBackupReader
    private var buf: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var pos = 0, end = 0
    /// Offset in the file of `buf[0]`.
    private var base = 0
    private var eof = false

    private(set) var line = 1
    /// Offset in the file where the current line starts.
    private var lineStart = 0
    /// Characters of the current line before `buf[0]` (when it started before the buffer).
    private var lineCharsBefore = 0

    let maxDataBytes: Int
    static let maxValueBytes = 10_000_000
    static let maxTokenBytes = 64 << 20

    /// Bytes that end a plain run: in a "…" value, in a '…' value, in text.
    private let special: UnsafeMutablePointer<UInt8>
    /// Per byte: 1 may be in a name, 2 may start one (non-ASCII: both, checked as UTF-8).
    private let nameTable: UnsafeMutablePointer<UInt8>

    private enum Mode { case prolog, content, epilog }
    private var mode = Mode.prolog
    private enum Stage { case none, name, between(space: Bool), value, slash }
    private var stage = Stage.none

    private var attributes = SAXAttributes(count: SMSAttribute.allCases.count)
    /// Names of the open elements, back to back, and where each ends; their kinds.
    private var openNames: [UInt8] = []
    private var openEnds: [Int] = []
    private var openKinds: [SMSElement] = []
    /// The current start tag's attribute names (duplicates): hash, offset in the file, length.
    private var tagNameSpans: [(hash: UInt64, start: Int, count: Int)] = []
    /// Their hashes in a 128-slot open-addressing table, stamped with `tagStamp` (nothing is
    /// cleared between tags); `suspect` once two hashes are equal or there are too many names.
    private let slotHash: UnsafeMutablePointer<UInt64>
    private let slotStamp: UnsafeMutablePointer<UInt32>
    private var tagStamp: UInt32 = 0
    private var suspect = false
    /// The attribute names read, as little-endian words (names of up to 8 bytes).
    private let wordCT = word("ct"), wordCL = word("cl"), wordType = word("type"), wordText = word("text")
    private let wordDate = word("date"), wordData = word("data"), wordBody = word("body"), wordName = word("name")
    private let wordAddress = word("address"), wordMsgBox = word("msg_box")
    private var tagKind = SMSElement.other

    /// The attribute value being read.
    private var valueIndex = -1
    private var valueQuote: UInt8 = 0x22
    private var valueRaw = 0
    private var valueCut = false
    private var valueIsData = false

    /// Longest single read (tests make it tiny, so every token crosses chunk boundaries).
    let readLimit: Int

    init(fd: Int32, reader: SMSBackupReader, maxDataBytes: Int = 9_000_000, readLimit: Int = 1 << 20) {
        self.fd = fd
        self.readLimit = max(readLimit, 1)
        self.reader = reader
        self.maxDataBytes = maxDataBytes
        capacity = 1 << 20
        // 8 bytes more: a name's first word may be loaded past the bytes read.
        buf = .allocate(capacity: capacity + 8)
        buf.initialize(repeating: 0, count: capacity + 8)
        slotHash = .allocate(capacity: 128)
        slotHash.initialize(repeating: 0, count: 128)
        slotStamp = .allocate(capacity: 128)
        slotStamp.initialize(repeating: 0, count: 128)
        special = .allocate(capacity: 3 * 256)
        special.initialize(repeating: 0, count: 3 * 256)
        for k in 0..<3 {
            let t = special + 256 * k
            for c in 0..<0x20 { t[c] = 1 }
            for c in 0x80..<0x100 { t[c] = 1 }
            t[0x26] = 1  // &
            t[0x3C] = 1  // <
        }
        special[0x22] = 1  // " ends a "…" value
        special[256 + 0x27] = 1  // ' ends a '…' value
        special[512 + 0x5D] = 1  // ] may start ]]> in text
        nameTable = .allocate(capacity: 256)
        for c in 0..<256 {
            let b = UInt8(c)
            let start = (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A || b == 0x5F || b == 0x3A || b >= 0x80
            let inside = start || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E
            nameTable[c] = (inside ? 1 : 0) | (start ? 2 : 0)
        }
    }

    /// Frees the buffers (the scanner is a struct: no exclusivity checks in its loops).
    func release() {
        buf.deallocate()
        special.deallocate()
        nameTable.deallocate()
        slotHash.deallocate()
        slotStamp.deallocate()
    }

    // MARK: Positions and errors

    private static func characters(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        var count = 0
        for i in 0..<max(n, 0) where p[i] & 0xC0 != 0x80 { count += 1 }
        return count
    }

    /// Column (in characters, from 1) of `buf[p]` on the current line.
    private func column(at p: Int) -> Int {
        let ls = lineStart - base
        if ls >= 0 { return Self.characters(buf + ls, p - ls) + 1 }
        return lineCharsBefore + Self.characters(buf, p) + 1
    }

    /// Where the scan is: the end of the tag just read, during the reader's callbacks.
    func location() -> String { "line \(line), column \(column(at: pos))" }

    @inline(__always)
    private mutating func newline(at p: Int) {
        line += 1
        lineStart = base + p + 1
    }

    /// Counts the line breaks in `buf[a..<b]`, a token read whole.
    private mutating func countLines(_ a: Int, _ b: Int) {
        var p = a
        while p < b, let hit = memchr(buf + p, 0x0A, b - p) {
            let at = buf.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            newline(at: at)
            p = at + 1
        }
    }

    private func failure(at p: Int, _ what: String, atEnd: Bool = false) -> Failure {
        Failure(line: line, column: column(at: p), reason: SMSBackupReader.describe(what, atEnd: atEnd))
    }

    private func failure(at p: Int, code: Int) -> Failure {
        failure(at: p, SMSBackupReader.phrase(libxml2Error: code), atEnd: eof && p >= end)
    }

    /// At the end of the file in the middle of something.
    private func truncated(_ code: Int) -> Failure {
        failure(at: end, SMSBackupReader.phrase(libxml2Error: code), atEnd: true)
    }

    // MARK: Input

    /// Keeps the unread bytes (from `pos`), reads more; grows the buffer when one token fills it.
    private mutating func fill() throws(Failure) {
        if pos > 0 {
            let ls = lineStart - base
            if ls < pos {
                lineCharsBefore = (ls >= 0 ? 0 : lineCharsBefore) + Self.characters(buf + max(ls, 0), pos - max(ls, 0))
            }
            if end > pos { memmove(buf, buf + pos, end - pos) }
            end -= pos
            base += pos
            pos = 0
        }
        if end == capacity {
            guard capacity < Self.maxTokenBytes else {
                throw failure(at: 0, "a tag, name, comment or run of spaces over \(Self.maxTokenBytes >> 20) MB")
            }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2 + 8)
            bigger.initialize(repeating: 0, count: capacity * 2 + 8)
            bigger.update(from: buf, count: end)
            buf.deallocate()
            buf = bigger
            capacity *= 2
        }
        while true {
            let n = Glibc.read(fd, buf + end, min(capacity - end, readLimit))
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw Failure(line: nil, column: nil, reason: "cannot be read: \(String(cString: strerror(errno)))") }
            if n == 0 { eof = true } else { end += n }
            return
        }
    }

    // MARK: Characters

    /// Length of the valid UTF-8 character XML allows at `p` (non-ASCII lead byte); 0 when
    /// invalid, -1 when it runs past the bytes read so far.
    @inline(__always)
    private func utf8Length(at p: Int) -> Int {
        let c = buf[p]
        let n: Int
        var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
        switch c {
        case 0xC2...0xDF: n = 2
        case 0xE0: n = 3; lo = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: n = 3
        case 0xED: n = 3; hi = 0x9F
        case 0xF0: n = 4; lo = 0x90
        case 0xF1...0xF3: n = 4
        case 0xF4: n = 4; hi = 0x8F
        default: return 0
        }
        let available = min(n, end - p)
        for k in 1..<available {
            let b = buf[p + k]
            if k == 1 ? (b < lo || b > hi) : (b & 0xC0 != 0x80) { return 0 }
        }
        if available < n { return -1 }
        // U+FFFE and U+FFFF are not XML characters.
        if c == 0xEF && buf[p + 1] == 0xBF && buf[p + 2] >= 0xBE { return 0 }
        return n
    }

    private static func isXMLChar(_ v: UInt32) -> Bool {
        switch v {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    private enum Reference {
        case incomplete
        /// A character (`&lt;`, `&#233;`, a joined surrogate pair), `length` bytes.
        case character(UInt32, length: Int)
        /// A reference to something XML forbids: U+FFFD, reported.
        case replaced(length: Int, reason: String)
    }

    /// A numeric reference at `p` ("&#…;", "&#x…;"): its value (clamped), its length; nil when malformed.
    private func numeric(at p: Int) -> (value: UInt32, length: Int)?? {
        var j = p + 2
        guard j < end else { return eof ? .some(nil) : nil }
        var hex = false
        if buf[j] == 0x78 { hex = true; j += 1 }
        var value: UInt32 = 0, digits = 0
        while j < end {
            let c = buf[j]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x61...0x66 where hex: d = UInt32(c - 0x61 + 10)
            case 0x41...0x46 where hex: d = UInt32(c - 0x41 + 10)
            case 0x3B: return digits > 0 ? .some((value, j + 1 - p)) : .some(nil)
            default: return .some(nil)
            }
            digits += 1
            value = min(value * (hex ? 16 : 10) + d, 0x110000)
            j += 1
            if j - p > 64 { return .some(nil) }
        }
        return eof ? .some(nil) : nil
    }

    /// The reference at `p` (`buf[p]` is `&`); throws for a malformed or undeclared one.
    private func reference(at p: Int) throws(Failure) -> Reference {
        guard p + 1 < end else {
            if eof { throw failure(at: p, code: 22) }
            return .incomplete
        }
        if buf[p + 1] == 0x23 {
            guard let parsed = numeric(at: p) else { return .incomplete }
            guard let (v, length) = parsed else { throw failure(at: p, code: 6) }
            if (0xD800...0xDBFF).contains(v) {
                // The low half must follow at once.
                let j = p + length
                if j >= end {
                    if !eof { return .incomplete }
                } else if buf[j] == 0x26 {
                    if j + 1 >= end {
                        if !eof { return .incomplete }
                    } else if buf[j + 1] == 0x23 {
                        guard let next = numeric(at: j) else { return .incomplete }
                        if let (low, lowLength) = next, (0xDC00...0xDFFF).contains(low) {
                            return .character(0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00), length: length + lowLength)
                        }
                    }
                }
                return .replaced(length: length, reason: "high surrogate without its low half")
            }
            if (0xDC00...0xDFFF).contains(v) { return .replaced(length: length, reason: "low surrogate without its high half") }
            if !Self.isXMLChar(v) {
                return .replaced(length: length, reason: "character U+\(String(v, radix: 16, uppercase: true)) is not allowed in XML")
            }
            return .character(v, length: length)
        }
        // A named reference: only the five predefined entities exist here.
        var j = p + 1
        while j < end, j - p <= 64, isNameByte(buf[j]) { j += 1 }
        if j == end && !eof { return .incomplete }
        if j == p + 1 || !isNameStart(buf[p + 1]) { throw failure(at: p, code: 22) }
        guard j < end, buf[j] == 0x3B else { throw failure(at: p, code: 23) }
        let n = j - (p + 1)
        let name = buf + p + 1
        func eq(_ s: StaticString) -> Bool { n == s.utf8CodeUnitCount && memcmp(name, s.utf8Start, n) == 0 }
        let v: UInt32
        if eq("lt") {
            v = 0x3C
        } else if eq("gt") {
            v = 0x3E
        } else if eq("amp") {
            v = 0x26
        } else if eq("quot") {
            v = 0x22
        } else if eq("apos") {
            v = 0x27
        } else {
            throw failure(at: p, code: 26)
        }
        return .character(v, length: n + 2)
    }

    /// Records a replaced reference with the reader (which reports it if its message is kept).
    private func replaced(at p: Int, length: Int, reason: String) {
        let text = String(decoding: UnsafeBufferPointer(start: buf + p, count: length), as: UTF8.self)
        reader.replacements.append(XMLByteFilter.Replacement(line: line, column: column(at: p), reference: text, reason: reason))
    }

    @inline(__always)
    private func isNameStart(_ c: UInt8) -> Bool { nameTable[Int(c)] & 2 != 0 }

    @inline(__always)
    private func isNameByte(_ c: UInt8) -> Bool { nameTable[Int(c)] & 1 != 0 }

    /// The end of the name from `p` in what has been read, and whether it has non-ASCII bytes.
    @inline(__always)
    private func nameEnd(from p: Int) -> (end: Int, nonASCII: Bool) {
        let t = nameTable, b = buf, e = end
        var q = p
        var high: UInt8 = 0
        while q < e {
            let c = b[q]
            if t[Int(c)] & 1 == 0 { break }
            high |= c
            q += 1
        }
        return (q, high >= 0x80)
    }

    @inline(__always)
    private func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D }

    /// Checks the non-ASCII bytes of a name read whole.
    private func checkName(_ a: Int, _ b: Int) throws(Failure) {
        var p = a
        while p < b {
            if buf[p] < 0x80 { p += 1; continue }
            let n = utf8Length(at: p)
            guard n > 0, p + n <= b else { throw failure(at: p, code: 9) }
            p += n
        }
    }

    /// Checks the characters of a comment, PI or CDATA body read whole, counting its lines.
    private mutating func checkCharacters(_ a: Int, _ b: Int) throws(Failure) {
        var p = a
        while p < b {
            let c = buf[p]
            if c >= 0x20 && c < 0x80 { p += 1; continue }
            if c == 0x0A { newline(at: p); p += 1; continue }
            if c == 0x09 || c == 0x0D { p += 1; continue }
            let n = c >= 0x80 ? utf8Length(at: p) : 0
            guard n > 0, p + n <= b else { throw failure(at: p, code: 9) }
            p += n
        }
    }

    /// Finds `terminator` from `p`; nil when it is not in the bytes read so far.
    private func find(_ terminator: StaticString, from p: Int) -> Int? {
        let n = terminator.utf8CodeUnitCount
        let first = Int32(terminator.utf8Start[0])
        var q = p
        while q + n <= end, let hit = memchr(buf + q, first, end - q) {
            let at = buf.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if at + n > end { return nil }
            if memcmp(buf + at, terminator.utf8Start, n) == 0 { return at }
            q = at + 1
        }
        return nil
    }

    // MARK: Scanning

    /// Reads the whole file into the reader. Stops early when the reader fails.
    mutating func run() throws(Failure) -> Outcome {
        try fill()
        // UTF-8 byte order mark, then the XML declaration.
        while end < 9 && !eof { try fill() }
        if end >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF { pos = 3 }
        if end - pos >= 6, memcmp(buf + pos, "<?xml", 5) == 0, isSpace(buf[pos + 5]) {
            var close = find("?>", from: pos)
            while close == nil && !eof {
                try fill()
                close = find("?>", from: pos)
            }
            guard let close else { throw truncated(57) }
            if let encoding = try declaration(pos + 5, close) { return .otherEncoding(encoding) }
            countLines(pos, close)
            pos = close + 2
        }
        while true {
            if try scan() { return .done }
            if reader.failure != nil { return .done }
            try fill()
        }
    }

    /// The XML declaration's pseudo-attributes in `buf[a..<b]`; the encoding when it is not UTF-8.
    private func declaration(_ a: Int, _ b: Int) throws(Failure) -> String? {
        var p = a
        var encoding: String?
        var seen = 0
        while true {
            let spaceStart = p
            while p < b && isSpace(buf[p]) { p += 1 }
            if p == b { break }
            let nameStart = p
            while p < b && isNameByte(buf[p]) { p += 1 }
            let name = String(decoding: UnsafeBufferPointer(start: buf + nameStart, count: p - nameStart), as: UTF8.self)
            // A space before each pseudo-attribute (libxml2 lets `standalone` follow a quote).
            if nameStart == spaceStart && name != "standalone" { throw failure(at: nameStart, code: 65) }
            while p < b && isSpace(buf[p]) { p += 1 }
            guard p < b, buf[p] == 0x3D else { throw failure(at: p, "the XML declaration is not well-formed") }
            p += 1
            while p < b && isSpace(buf[p]) { p += 1 }
            guard p < b, buf[p] == 0x22 || buf[p] == 0x27 else { throw failure(at: p, "the XML declaration is not well-formed") }
            let quote = buf[p]
            let valueStart = p + 1
            p = valueStart
            while p < b && buf[p] != quote { p += 1 }
            guard p < b else { throw failure(at: p, "the XML declaration is not well-formed") }
            let value = String(decoding: UnsafeBufferPointer(start: buf + valueStart, count: p - valueStart), as: UTF8.self)
            p += 1
            switch (name, seen) {
            case ("version", 0):
                seen = 1
                guard value.hasPrefix("1."), value.utf8.dropFirst(2).allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw failure(at: valueStart, "the XML declaration is not well-formed (version \(value))")
                }
            case ("encoding", 1):
                seen = 2
                if !["utf-8", "utf8", "us-ascii", "ascii"].contains(value.lowercased()) { encoding = value }
            case ("standalone", 1), ("standalone", 2):
                seen = 3
                guard value == "yes" || value == "no" else { throw failure(at: valueStart, "the XML declaration is not well-formed") }
            default:
                throw failure(at: nameStart, "the XML declaration is not well-formed")
            }
        }
        guard seen > 0 else { throw failure(at: a, "the XML declaration is not well-formed (no version)") }
        return encoding
    }

    /// Scans what has been read; true at the end of the document, false when more input is needed
    /// (or the reader failed).
    private mutating func scan() throws(Failure) -> Bool {
        while true {
            if reader.failure != nil { return false }
            switch stage {
            case .none: break
            default:
                if !(try startTag()) { return false }
                continue
            }
            // Between tags: text (ignored but checked), then markup.
            var p = pos
            while p < end {
                let c = buf[p]
                if c == 0x3C { break }
                if c == 0x20 || c == 0x09 || c == 0x0D { p += 1; continue }
                if c == 0x0A { newline(at: p); p += 1; continue }
                if mode != .content {
                    throw failure(
                        at: p,
                        mode == .prolog
                            ? "text before the root element; expected <smses>"
                            : SMSBackupReader.phrase(libxml2Error: 86))
                }
                if c == 0x26 {
                    let ref = try reference(at: p)
                    switch ref {
                    case .incomplete: pos = p; return false
                    case .character(_, let length): p += length
                    case .replaced(let length, let reason): replaced(at: p, length: length, reason: reason); p += length
                    }
                    continue
                }
                if c == 0x5D {
                    if end - p < 3 && !eof { pos = p; return false }
                    if end - p >= 3 && buf[p + 1] == 0x5D && buf[p + 2] == 0x3E { throw failure(at: p, code: 62) }
                    p += 1
                    continue
                }
                if c < 0x20 { throw failure(at: p, code: 9) }
                if c >= 0x80 {
                    let n = utf8Length(at: p)
                    if n < 0 && !eof { pos = p; return false }
                    if n <= 0 { throw failure(at: p, code: 9) }
                    p += n
                    continue
                }
                p += 1
            }
            pos = p
            if p == end {
                guard eof else { return false }
                switch mode {
                case .prolog: throw truncated(4)
                case .content: throw truncated(77)
                case .epilog: return true
                }
            }
            // buf[p] is '<'.
            if end - p < 2 && !eof { return false }
            let next = p + 1 < end ? buf[p + 1] : 0
            if next == 0x2F {
                if !(try endTag(p)) { return false }
            } else if next == 0x21 {
                if !(try declarationOrComment(p)) { return false }
            } else if next == 0x3F {
                guard let close = find("?>", from: p + 2) else {
                    if eof { throw truncated(47) }
                    return false
                }
                var q = p + 2
                while q < close && isNameByte(buf[q]) { q += 1 }
                if q == p + 2 || !isNameStart(buf[p + 2]) { throw failure(at: p + 2, code: 68) }
                if q - (p + 2) == 3 && (buf[p + 2] | 0x20) == 0x78 && (buf[p + 3] | 0x20) == 0x6D && (buf[p + 4] | 0x20) == 0x6C {
                    throw failure(at: p, code: 64)
                }
                if q < close && !isSpace(buf[q]) { throw failure(at: q, code: 65) }
                try checkCharacters(p + 2, close)
                pos = close + 2
            } else {
                if mode == .epilog { throw failure(at: p, code: 86) }
                pos = p + 1
                stage = .name
            }
        }
    }

    /// `<!--…-->`, `<![CDATA[…]]>`, or a declaration (refused). False when more input is needed.
    private mutating func declarationOrComment(_ p: Int) throws(Failure) -> Bool {
        if end - p < 4 && !eof { return false }
        if end - p >= 4 && buf[p + 2] == 0x2D && buf[p + 3] == 0x2D {
            guard let close = find("--", from: p + 4) else {
                if eof { throw truncated(45) }
                return false
            }
            if close + 2 >= end {
                if eof { throw truncated(45) }
                return false
            }
            if buf[close + 2] != 0x3E { throw failure(at: close, code: 80) }
            try checkCharacters(p + 4, close)
            pos = close + 3
            return true
        }
        if mode == .content {
            if end - p < 9 && !eof { return false }
            if end - p >= 9 && memcmp(buf + p, "<![CDATA[", 9) == 0 {
                guard let close = find("]]>", from: p + 9) else {
                    if eof { throw truncated(63) }
                    return false
                }
                try checkCharacters(p + 9, close)
                pos = close + 3
                return true
            }
        }
        guard mode == .prolog else { throw failure(at: p, "a declaration (<!…>) inside the document; only comments and CDATA may start with <!") }
        throw Failure(
            line: line, column: column(at: p),
            reason: "has a DOCTYPE (or other declaration) before the root element; SMS Backup & Restore never "
                + "writes one, and it is where entity expansion attacks live, so it is refused")
    }

    /// `</name>` at `p`. False when more input is needed.
    private mutating func endTag(_ p: Int) throws(Failure) -> Bool {
        let nameStart = p + 2
        var q = nameStart
        while q < end && isNameByte(buf[q]) { q += 1 }
        var r = q
        while r < end && isSpace(buf[r]) { r += 1 }
        if r == end {
            if eof { throw truncated(77) }
            return false
        }
        if q == nameStart { throw failure(at: nameStart, code: 68) }
        if buf[r] != 0x3E { throw failure(at: r, code: 73) }
        guard let open = openEnds.last else { throw failure(at: p, code: mode == .epilog ? 86 : 5) }
        let openStart = openEnds.count > 1 ? openEnds[openEnds.count - 2] : 0
        let n = q - nameStart
        let matches = open - openStart == n && openNames.withUnsafeBufferPointer { memcmp($0.baseAddress! + openStart, buf + nameStart, n) == 0 }
        if !matches { throw failure(at: nameStart, code: 76) }
        countLines(q, r)
        pos = r + 1
        let kind = openKinds.removeLast()
        openEnds.removeLast()
        openNames.removeLast(n)
        reader.endElement(kind, line: line)
        if openEnds.isEmpty { mode = .epilog }
        return true
    }

    /// Continues the start tag in `stage`; true once it is read and handed over.
    private mutating func startTag() throws(Failure) -> Bool {
        var p = pos
        while true {
            switch stage {
            case .none:
                return true
            case .name:
                let (q, nonASCII) = nameEnd(from: p)
                if q == end {
                    if eof { throw truncated(77) }
                    pos = p
                    return false
                }
                if q == p || !isNameStart(buf[p]) { throw failure(at: p, code: 68) }
                if nonASCII { try checkName(p, q) }
                tagKind = SMSElement.of(buf + p, q - p)
                openNames.append(contentsOf: UnsafeBufferPointer(start: buf + p, count: q - p))
                openEnds.append(openNames.count)
                openKinds.append(tagKind)
                tagNameSpans.removeAll(keepingCapacity: true)
                tagStamp &+= 1
                if tagStamp == 0 {
                    slotStamp.update(repeating: 0, count: 128)
                    tagStamp = 1
                }
                suspect = false
                attributes.removeAll()
                p = q
                stage = .between(space: false)
            case .between(let sawSpace):
                var space = sawSpace
                while p < end {
                    let c = buf[p]
                    if c == 0x20 || c == 0x09 || c == 0x0D { space = true; p += 1 } else if c == 0x0A { newline(at: p); space = true; p += 1 } else { break }
                }
                if p == end {
                    if eof { throw truncated(77) }
                    stage = .between(space: space)
                    pos = p
                    return false
                }
                let c = buf[p]
                if c == 0x3E || c == 0x2F {
                    try checkDuplicates(at: p)
                    if c == 0x2F {
                        stage = .slash
                        p += 1
                        continue
                    }
                    pos = p + 1
                    stage = .none
                    try started(empty: false)
                    return true
                }
                if !isNameStart(c) { throw failure(at: p, code: 73) }
                if !space { throw failure(at: p, code: 65) }
                // name S? = S? quote, read whole.
                let (q, nonASCII) = nameEnd(from: p)
                var r = q
                while r < end && isSpace(buf[r]) { r += 1 }
                if r < end {
                    if buf[r] != 0x3D { throw failure(at: r, code: 41) }
                    r += 1
                    while r < end && isSpace(buf[r]) { r += 1 }
                }
                if r == end {
                    if eof { throw truncated(77) }
                    stage = .between(space: true)
                    pos = p
                    return false
                }
                let quote = buf[r]
                if quote != 0x22 && quote != 0x27 { throw failure(at: r, code: 39) }
                if nonASCII { try checkName(p, q) }
                let w = Self.load(buf + p, q - p)
                remember(p, q - p, w)
                countLines(q, r)
                valueIndex = attributeIndex(buf + p, q - p, w)
                valueIsData = valueIndex == SMSAttribute.data.rawValue
                valueQuote = quote
                valueRaw = 0
                valueCut = false
                if valueIndex >= 0 { attributes.begin(valueIndex) }
                p = r + 1
                stage = .value
            case .value:
                pos = p
                if !(try value()) { return false }
                p = pos
                stage = .between(space: false)
            case .slash:
                if p == end {
                    if eof { throw truncated(77) }
                    pos = p
                    return false
                }
                if buf[p] != 0x3E { throw failure(at: p, code: 73) }
                pos = p + 1
                stage = .none
                try started(empty: true)
                return true
            }
        }
    }

    static func word(_ s: StaticString) -> UInt64 {
        var w: UInt64 = 0
        for i in 0..<min(s.utf8CodeUnitCount, 8) { w |= UInt64(s.utf8Start[i]) << (8 * i) }
        return w
    }

    /// The first (up to) 8 bytes of the `n`-byte name at `p`, little-endian, zero-padded.
    @inline(__always)
    private static func load(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        let w = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
        return n >= 8 ? w : w & ((1 << (UInt64(n) &* 8)) &- 1)
    }

    /// `SMSAttribute.index` from the name's first word.
    @inline(__always)
    private func attributeIndex(_ p: UnsafePointer<UInt8>, _ n: Int, _ w: UInt64) -> Int {
        switch n {
        case 2: return w == wordCT ? SMSAttribute.ct.rawValue : w == wordCL ? SMSAttribute.cl.rawValue : -1
        case 4:
            if w == wordType { return SMSAttribute.type.rawValue }
            if w == wordDate { return SMSAttribute.date.rawValue }
            if w == wordBody { return SMSAttribute.body.rawValue }
            if w == wordText { return SMSAttribute.text.rawValue }
            if w == wordData { return SMSAttribute.data.rawValue }
            if w == wordName { return SMSAttribute.name.rawValue }
            return -1
        case 7: return w == wordAddress ? SMSAttribute.address.rawValue : w == wordMsgBox ? SMSAttribute.msgBox.rawValue : -1
        case 12: return SMSAttribute.index(p, n)
        default: return -1
        }
    }

    /// Notes an attribute name of the tag being read (`w`: its first word). Names of up to 8 bytes
    /// are their own hash (no NUL in a name), so equal hashes are equal names.
    @inline(__always)
    private mutating func remember(_ p: Int, _ n: Int, _ w: UInt64) {
        let h =
            n <= 8 ? w : (w &* 0x9E37_79B9_7F4A_7C15) ^ (UnsafeRawPointer(buf + p + n - 8).loadUnaligned(as: UInt64.self) &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(n)
        tagNameSpans.append((h, base + p, n))
        if suspect { return }
        if tagNameSpans.count > 96 {
            suspect = true
            return
        }
        var slot = Int(truncatingIfNeeded: (h &* 0x9E37_79B9_7F4A_7C15) >> 57)
        while slotStamp[slot] == tagStamp {
            if slotHash[slot] == h {
                suspect = true
                return
            }
            slot = (slot + 1) & 127
        }
        slotStamp[slot] = tagStamp
        slotHash[slot] = h
    }

    /// libxml2 reports a repeated attribute where the attribute list ends (`/` or `>` at `p`). Only
    /// a tag with two equal hashes (or over 96 names) is looked at: names sorted by hash, those
    /// with equal hashes compared byte by byte when both are still in the buffer (a value over
    /// 1 MB between them may have moved the first out: then the hash decides).
    private func checkDuplicates(at p: Int) throws(Failure) {
        guard suspect else { return }
        let sorted = tagNameSpans.sorted { $0.hash < $1.hash }
        var i = 0
        while i < sorted.count {
            var j = i + 1
            while j < sorted.count && sorted[j].hash == sorted[i].hash { j += 1 }
            for a in i..<j {
                for b in (a + 1)..<max(a + 1, j) {
                    let (x, y) = (sorted[a], sorted[b])
                    guard x.count == y.count else { continue }
                    if x.start >= base && y.start >= base && memcmp(buf + (x.start - base), buf + (y.start - base), x.count) != 0 { continue }
                    throw failure(at: p, code: 42)
                }
            }
            i = j
        }
    }

    /// Hands the start tag just read to the reader (and its end, for `<…/>`).
    private mutating func started(empty: Bool) throws(Failure) {
        let kind = tagKind
        let nameEnd = openEnds[openEnds.count - 1]
        let nameStart = openEnds.count > 1 ? openEnds[openEnds.count - 2] : 0
        if mode == .prolog { mode = .content }
        openNames.withUnsafeBufferPointer { names in
            reader.startElement(kind, name: UnsafeBufferPointer(rebasing: names[nameStart..<nameEnd]), attributes: attributes, line: line)
        }
        if reader.failure != nil {
            reader.placeFailure(location())
            return
        }
        if empty {
            openKinds.removeLast()
            openEnds.removeLast()
            openNames.removeLast(nameEnd - nameStart)
            reader.endElement(kind, line: line)
            if openEnds.isEmpty { mode = .epilog }
        }
    }

    /// Adds `buf[a..<b]` to the value being read (a `data` value only up to `maxDataBytes`).
    @inline(__always)
    private mutating func keep(_ a: Int, _ b: Int) throws(Failure) {
        guard b > a else { return }
        let before = valueRaw
        valueRaw += b - a
        if valueIsData {
            guard !valueCut else { return }
            if valueRaw > maxDataBytes {
                valueCut = true
                attributes.append(UnsafeBufferPointer(start: buf + a, count: maxDataBytes - before))
                return
            }
        } else if valueRaw > Self.maxValueBytes {
            throw failure(at: b, "an attribute value over \(Self.maxValueBytes / 1_000_000) MB (a damaged file?)")
        }
        if valueIndex >= 0 { attributes.append(UnsafeBufferPointer(start: buf + a, count: b - a)) }
    }

    @inline(__always)
    private mutating func keep(scalar v: UInt32, rawLength: Int) throws(Failure) {
        if valueIndex >= 0 && !valueCut {
            if v < 0x80 {
                attributes.append(UInt8(v))
            } else if v < 0x800 {
                attributes.append(UInt8(0xC0 | (v >> 6)))
                attributes.append(UInt8(0x80 | (v & 0x3F)))
            } else if v < 0x10000 {
                attributes.append(UInt8(0xE0 | (v >> 12)))
                attributes.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
                attributes.append(UInt8(0x80 | (v & 0x3F)))
            } else {
                attributes.append(UInt8(0xF0 | (v >> 18)))
                attributes.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
                attributes.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
                attributes.append(UInt8(0x80 | (v & 0x3F)))
            }
        }
        valueRaw += rawLength
        if valueRaw > (valueIsData ? Int.max : Self.maxValueBytes) {
            throw failure(at: pos, "an attribute value over \(Self.maxValueBytes / 1_000_000) MB (a damaged file?)")
        }
    }

    /// Continues the attribute value at `pos`; true once its closing quote is read.
    private mutating func value() throws(Failure) -> Bool {
        var p = pos
        var run = p
        let table = special + (valueQuote == 0x22 ? 0 : 256)
        let b = buf
        let e = end
        while true {
            while p < e && table[Int(b[p])] == 0 { p += 1 }
            if p == e {
                try keep(run, p)
                pos = p
                if eof { throw truncated(40) }
                return false
            }
            let c = b[p]
            if c >= 0x80 {
                let n = utf8Length(at: p)
                if n > 0 { p += n; continue }
                try keep(run, p)
                pos = p
                if n < 0 && !eof { return false }
                throw failure(at: p, code: 9)
            }
            try keep(run, p)
            switch c {
            case valueQuote:
                pos = p + 1
                if valueIndex >= 0 { attributes.finish(valueIndex) }
                if valueCut { attributes.cutDataBytes = valueRaw }
                return true
            case 0x26:
                pos = p
                switch try reference(at: p) {
                case .incomplete:
                    return false
                case .character(let v, let length):
                    try keep(scalar: v, rawLength: length)
                    p += length
                case .replaced(let length, let reason):
                    replaced(at: p, length: length, reason: reason)
                    try keep(scalar: 0xFFFD, rawLength: length)
                    p += length
                }
            case 0x3C:
                throw failure(at: p, code: 38)
            case 0x0A:
                newline(at: p)
                try keep(scalar: 0x20, rawLength: 1)
                p += 1
            case 0x09:
                try keep(scalar: 0x20, rawLength: 1)
                p += 1
            case 0x0D:
                if p + 1 == e && !eof {
                    pos = p
                    return false
                }
                try keep(scalar: 0x20, rawLength: 1)
                if p + 1 < e && b[p + 1] == 0x0A {
                    newline(at: p + 1)
                    p += 2
                } else {
                    p += 1
                }
            default:
                throw failure(at: p, code: 9)
            }
            run = p
        }
    }
}
