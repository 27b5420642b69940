import Foundation

/// Rewrites an SMS Backup & Restore byte stream, chunk by chunk, before libxml2 sees it.
///
/// 1. Emoji. Android's exporter writes each UTF-16 code unit of an emoji as its own character
///    reference (`&#55357;&#56396;` for 👌). Those are surrogates, which XML forbids, and libxml2
///    drops them with an error. A pair becomes one reference to the real character (`&#128076;`).
///    A lone surrogate, or a reference to a character XML forbids (`&#0;`, `&#27;`), becomes
///    `&#xFFFD;` (�) and is reported, so the message is kept and the change is visible.
/// 2. DOCTYPE. Foundation's XMLParser on Linux runs libxml2 with XML_PARSE_NOENT (entities are
///    substituted) and XML_PARSE_RECOVER, and never reports entity declarations to its delegate
///    (`foundInternalEntityDeclarationWithName` is not wired up), so a delegate cannot stop a
///    "billion laughs" expansion. Entities can only be declared in a DOCTYPE, which SMS Backup &
///    Restore never writes: any DOCTYPE before the root element is refused here, before parsing.
///    External DTDs and entities are refused with it (and `shouldResolveExternalEntities` is off).
///
/// 3. Huge `data` attributes. libxml2 refuses attribute values over 10,000,000 bytes unless
///    XML_PARSE_HUGE is set, which Foundation does not do: one MMS video or big photo (base64 in
///    `data="…"`) would make the whole backup unreadable. A `data` value longer than
///    `maxDataBytes` is cut to its first `maxDataBytes` bytes and reported (`takeOversized`), so
///    the importer shows that part as a placeholder instead of decoding it.
///
/// References split across chunks are carried to the next chunk. Line numbers are unchanged;
/// columns shift where a reference was shortened, and `originalColumn` maps them back.
struct XMLByteFilter {
    struct Failure: Error, Equatable {
        var line: Int
        var column: Int
        var reason: String
    }

    /// A reference that was replaced by U+FFFD.
    struct Replacement: Equatable {
        var line: Int
        var column: Int
        var reference: String
        var reason: String
    }

    /// A `data` attribute value that was cut: where it starts and how long it was.
    struct Oversized: Equatable {
        var line: Int
        var column: Int
        var bytes: Int
    }

    /// Longest `data` value passed on whole (libxml2's own limit is 10,000,000).
    let maxDataBytes: Int
    /// Surrogate pairs turned into one character.
    private(set) var pairsJoined = 0
    private var oversized: [Oversized] = []
    /// Inside a `data="…"` value: its start and the bytes seen so far.
    private var dataValue: Oversized?
    private var dataCut = false
    /// The last bytes seen outside references, newest lowest: finds ` data="`.
    private var window: UInt64 = 0
    /// Replacements not yet handed to the caller (see `takeReplacements`).
    private var replacements: [Replacement] = []
    /// Position in the original input just after the bytes processed so far.
    private(set) var line = 1
    private(set) var column = 1
    private var outputColumn = 1
    private var carry: [UInt8] = []
    /// Bytes before the root element, held until it is found (nil after).
    private var prolog: [UInt8]? = []
    /// Per line: (output column after a shortened reference, columns it lost).
    private var shifts: [Int: [(at: Int, by: Int)]] = [:]
    private var chunkStartLines: [Int] = []
    static let maxPrologBytes = 1 << 20

    init(maxDataBytes: Int = 9_000_000) {
        self.maxDataBytes = maxDataBytes
    }

    mutating func takeReplacements() -> [Replacement] {
        defer { replacements.removeAll() }
        return replacements
    }

    /// `data` values cut so far, up to and including `line`.
    mutating func takeOversized(upToLine line: Int) -> [Oversized] {
        let end = oversized.firstIndex { $0.line > line } ?? oversized.count
        defer { oversized.removeFirst(end) }
        return Array(oversized[..<end])
    }

    /// Column in the original file for a column libxml2 reports on `line` of the filtered stream.
    func originalColumn(line: Int, column: Int) -> Int {
        column + (shifts[line] ?? []).reduce(0) { $0 + ($1.at <= column ? $1.by : 0) }
    }

    /// Filters one chunk, appending to `output`. `isLast` flushes whatever was carried.
    mutating func process(_ input: UnsafeRawBufferPointer, isLast: Bool, into output: inout [UInt8]) throws(Failure) {
        forgetOldShifts()
        if var held = prolog {
            held.append(contentsOf: input)
            guard try foundRoot(held, isLast: isLast) else {
                prolog = held
                return
            }
            prolog = nil
            var failure: Failure?
            held.withUnsafeBytes { raw in
                do throws(Failure) { try filter(raw, isLast: isLast, into: &output) } catch { failure = error }
            }
            if let failure { throw failure }
            return
        }
        try filter(input, isLast: isLast, into: &output)
    }

    private mutating func forgetOldShifts() {
        chunkStartLines.append(line)
        if chunkStartLines.count > 4 { chunkStartLines.removeFirst() }
        // libxml2 reports positions inside the chunk it was just given (or one before): older
        // lines can go.
        if shifts.count > 256, let oldest = chunkStartLines.first {
            shifts = shifts.filter { $0.key >= oldest }
        }
    }

    /// Whether the prolog so far reaches the root element (or the end); throws on a DOCTYPE.
    private func foundRoot(_ b: [UInt8], isLast: Bool) throws(Failure) -> Bool {
        var i = 0
        func starts(_ s: String, at j: Int) -> Bool {
            let u = Array(s.utf8)
            return j + u.count <= b.count && b[j..<(j + u.count)].elementsEqual(u)
        }
        func skip(past end: String, from j: Int) -> Int? {
            let u = Array(end.utf8)
            var k = j
            while k + u.count <= b.count {
                if b[k..<(k + u.count)].elementsEqual(u) { return k + u.count }
                k += 1
            }
            return nil
        }
        while i < b.count {
            guard b[i] == UInt8(ascii: "<") else { i += 1; continue }
            if i + 1 >= b.count { break }
            if starts("<?", at: i) {
                guard let next = skip(past: "?>", from: i + 2) else { break }
                i = next
            } else if starts("<!--", at: i) {
                guard let next = skip(past: "-->", from: i + 4) else { break }
                i = next
            } else if b[i + 1] == UInt8(ascii: "!") {
                let (l, c) = position(of: i, in: b)
                throw Failure(
                    line: l, column: c,
                    reason: "has a DOCTYPE (or other declaration) before the root element; SMS Backup & Restore never "
                        + "writes one, and it is where entity expansion attacks live, so it is refused")
            } else {
                return true
            }
        }
        if b.count > Self.maxPrologBytes {
            throw Failure(line: 1, column: 1, reason: "has no root element in its first \(Self.maxPrologBytes >> 20) MB; expected <smses>")
        }
        return isLast
    }

    private func position(of offset: Int, in b: [UInt8]) -> (Int, Int) {
        var l = 1, c = 1
        for byte in b[..<offset] {
            if byte == 0x0A { l += 1; c = 1 } else if byte & 0xC0 != 0x80 { c += 1 }
        }
        return (l, c)
    }

    private enum Reference {
        case incomplete
        case none
        case value(UInt32, length: Int)
    }

    /// A numeric character reference at `i` ("&#128524;", "&#x1F60C;").
    private static func reference(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Reference {
        var j = i + 1
        guard j < b.count else { return .incomplete }
        guard b[j] == UInt8(ascii: "#") else { return .none }
        j += 1
        guard j < b.count else { return .incomplete }
        var hex = false
        if b[j] == UInt8(ascii: "x") {
            hex = true
            j += 1
        }
        var value: UInt32 = 0, digits = 0
        while j < b.count {
            let c = b[j]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x61...0x66 where hex: d = UInt32(c - 0x61 + 10)
            case 0x41...0x46 where hex: d = UInt32(c - 0x41 + 10)
            case UInt8(ascii: ";"): return digits > 0 ? .value(value, length: j + 1 - i) : .none
            default: return .none
            }
            digits += 1
            if digits > 8 { return .none }  // libxml2 will say what is wrong with it
            value = value * (hex ? 16 : 10) + d
            j += 1
        }
        return .incomplete
    }

    private static func isXMLChar(_ v: UInt32) -> Bool {
        switch v {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    private mutating func filter(_ raw: UnsafeRawBufferPointer, isLast: Bool, into output: inout [UInt8]) throws(Failure) {
        var data = carry
        carry = []
        let input: UnsafeBufferPointer<UInt8>
        if data.isEmpty {
            input = raw.bindMemory(to: UInt8.self)
            try run(input, isLast: isLast, into: &output)
        } else {
            data.append(contentsOf: raw)
            var failure: Failure?
            data.withUnsafeBufferPointer { b in
                do throws(Failure) { try run(b, isLast: isLast, into: &output) } catch { failure = error }
            }
            if let failure { throw failure }
        }
    }

    /// ` data="` read backwards from the newest byte in `window`: the quote, then "data=", then
    /// a space, tab or line break.
    private var windowOpensData: Bool {
        guard window & 0xFF == 0x22, (window >> 8) & 0xFF_FFFF_FFFF == 0x64_6174_613D else { return false }
        let before = (window >> 48) & 0xFF
        return before == 0x20 || before == 0x09 || before == 0x0A || before == 0x0D
    }

    /// Passes over (or cuts) the bytes of a `data` value from `i`; returns where it stopped.
    private mutating func runData(
        _ b: UnsafeBufferPointer<UInt8>, from i: Int, copied: inout Int,
        into output: inout [UInt8]
    ) -> Int {
        let n = b.count
        var end = n
        if let hit = memchr(b.baseAddress! + i, 0x22, n - i) {
            end = b.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
        guard var value = dataValue else { return i }
        let length = end - i
        var kept = length
        if dataCut {
            kept = 0
        } else if value.bytes + length > maxDataBytes {
            kept = maxDataBytes - value.bytes
            dataCut = true
        }
        if kept < length {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: b[copied..<(i + kept)]))
            copied = end
        }
        // Base64 is ASCII without line breaks; count them anyway so lines stay right.
        var newline = memchr(b.baseAddress! + i, 0x0A, length)
        if newline == nil {
            column += length
            outputColumn += kept
        } else {
            while let hit = newline {
                let at = b.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                line += 1; column = 1; outputColumn = 1
                newline = at + 1 < end ? memchr(b.baseAddress! + at + 1, 0x0A, end - at - 1) : nil
                if newline == nil { column += end - at - 1; outputColumn += end - at - 1 }
            }
        }
        value.bytes += length
        dataValue = value
        if end < n {  // the closing quote: the value is over
            if dataCut {
                oversized.append(value)
                shifts[line, default: []].append((at: outputColumn, by: value.bytes - maxDataBytes))
            }
            dataValue = nil
            dataCut = false
        }
        return end
    }

    private mutating func run(_ b: UnsafeBufferPointer<UInt8>, isLast: Bool, into output: inout [UInt8]) throws(Failure) {
        var i = 0, copied = 0
        let n = b.count
        while i < n {
            if dataValue != nil {
                i = runData(b, from: i, copied: &copied, into: &output)
                continue
            }
            // Fast run over bytes that need nothing but counting (most of the file), in locals.
            let runStart = i
            var col = column, outCol = outputColumn
            while i < n {
                let c = b[i]
                if c == 0x26 || c == 0x22 || c == 0x0A { break }
                if c & 0xC0 != 0x80 { col += 1; outCol += 1 }
                i += 1
            }
            column = col
            outputColumn = outCol
            if i > runStart {
                var w = window
                for k in max(runStart, i - 8)..<i { w = w << 8 | UInt64(b[k]) }
                window = w
            }
            if i == n { break }
            let byte = b[i]
            window = window << 8 | UInt64(byte)
            if byte == 0x22, windowOpensData {
                dataValue = Oversized(line: line, column: column + 1, bytes: 0)
                i += 1; column += 1; outputColumn += 1
                continue
            }
            if byte == UInt8(ascii: "&") {
                let first = Self.reference(b, at: i)
                guard case .value(let v, let length) = first else {
                    if case .incomplete = first, !isLast { break }
                    i += 1; column += 1; outputColumn += 1
                    continue
                }
                var replacement: [UInt8]? = nil
                var consumed = length
                var reason = ""
                if (0xD800...0xDBFF).contains(v) {
                    let j = i + length
                    // The low half may be in the next chunk: carry from here.
                    if j >= n && !isLast { break }
                    let next: Reference = j < n && b[j] == UInt8(ascii: "&") ? Self.reference(b, at: j) : .none
                    if case .incomplete = next, !isLast { break }
                    if case .value(let low, let lowLength) = next, (0xDC00...0xDFFF).contains(low) {
                        let scalar = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                        replacement = Array("&#\(scalar);".utf8)
                        consumed = length + lowLength
                        pairsJoined += 1
                    } else {
                        reason = "high surrogate without its low half"
                    }
                } else if (0xDC00...0xDFFF).contains(v) {
                    reason = "low surrogate without its high half"
                } else if !Self.isXMLChar(v) {
                    reason = "character U+\(String(v, radix: 16, uppercase: true)) is not allowed in XML"
                }
                if replacement == nil && reason.isEmpty {
                    i += length; column += length; outputColumn += length  // an ordinary reference
                    continue
                }
                if replacement == nil {
                    replacement = Array("&#xFFFD;".utf8)
                    let text = String(decoding: UnsafeBufferPointer(rebasing: b[i..<(i + consumed)]), as: UTF8.self)
                    replacements.append(Replacement(line: line, column: column, reference: text, reason: reason))
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: b[copied..<i]))
                let new = replacement!
                output.append(contentsOf: new)
                column += consumed
                outputColumn += new.count
                if consumed != new.count { shifts[line, default: []].append((at: outputColumn, by: consumed - new.count)) }
                i += consumed
                copied = i
                continue
            }
            if byte == 0x0A {
                line += 1; column = 1; outputColumn = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1; outputColumn += 1
            }
            i += 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: b[copied..<i]))
        if i < n { carry = Array(UnsafeBufferPointer(rebasing: b[i..<n])) }
    }
}

/// A file read through `XMLByteFilter`, as the InputStream XMLParser pulls from (128 KiB at a time).
final class FilteredXMLStream: InputStream {
    private let handle: FileHandle
    private(set) var filter = XMLByteFilter()
    private var output: [UInt8] = []
    private var outputStart = 0
    private var finished = false
    /// The filter refused the input (DOCTYPE).
    private(set) var failure: XMLByteFilter.Failure?
    private(set) var readError: (any Error)?
    /// The whole file has been handed over: an error now means it ended early.
    private(set) var reachedEnd = false

    init(handle: FileHandle) {
        self.handle = handle
        super.init(data: Data())
    }

    func takeReplacements() -> [XMLByteFilter.Replacement] { filter.takeReplacements() }
    func takeOversized(upToLine line: Int) -> [XMLByteFilter.Oversized] { filter.takeOversized(upToLine: line) }

    override func open() {}
    override func close() {}
    override var hasBytesAvailable: Bool { !finished || outputStart < output.count }
    override var streamStatus: Stream.Status { finished && outputStart >= output.count ? .atEnd : .open }
    override var streamError: (any Error)? { readError ?? failure }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        while outputStart >= output.count {
            if finished {
                reachedEnd = true
                return 0
            }
            output.removeAll(keepingCapacity: true)
            outputStart = 0
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: 1 << 17) ?? Data()
            } catch {
                readError = error
                return -1
            }
            let isLast = chunk.isEmpty
            var refused: XMLByteFilter.Failure?
            chunk.withUnsafeBytes { raw in
                do throws(XMLByteFilter.Failure) {
                    try filter.process(raw, isLast: isLast, into: &output)
                } catch {
                    refused = error
                }
            }
            if let refused {
                failure = refused
                return -1
            }
            if isLast { finished = true }
        }
        let n = min(len, output.count - outputStart)
        output.withUnsafeBufferPointer { b in
            buffer.update(from: b.baseAddress! + outputStart, count: n)
        }
        outputStart += n
        return n
    }
}
