import CLibXML2
import Foundation

/// The attributes of one element that the caller asked for, by their index in the list it gave
/// (`SAXPushParser(wantedAttributes:)`, `SMSAttribute`): their values, decoded, back to back in
/// one reused byte buffer. A repeated name is a well-formedness error the parser reports.
struct SAXAttributes {
    private(set) var storage: [UInt8] = []
    /// Per wanted name: start in `storage` and length; start -1 when absent.
    private var spans: [Int]
    /// `SMSBackupScanner`/`XMLByteFilter`: the `data` value was cut; its length in the file.
    var cutDataBytes: Int?

    init(count: Int) {
        spans = [Int](repeating: -1, count: count * 2)
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        for i in stride(from: 0, to: spans.count, by: 2) { spans[i] = -1 }
        cutDataBytes = nil
    }

    /// Starts the value of name `index`; `append` its bytes, then `finish(index)`.
    @inline(__always)
    mutating func begin(_ index: Int) {
        spans[2 * index] = storage.count
        spans[2 * index + 1] = 0
    }
    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) { storage.append(contentsOf: bytes) }
    @inline(__always)
    mutating func append(_ byte: UInt8) { storage.append(byte) }
    @inline(__always)
    mutating func finish(_ index: Int) { spans[2 * index + 1] = storage.count - spans[2 * index] }

    mutating func set(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) {
        begin(index)
        append(bytes)
        finish(index)
    }

    func has(_ index: Int) -> Bool { spans[2 * index] >= 0 }

    /// The value's bytes (nil when absent).
    @inline(__always)
    func withBytes<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        let start = spans[2 * index]
        guard start >= 0 else { return nil }
        let count = spans[2 * index + 1]
        return storage.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[start..<(start + count)])) }
    }

    func string(_ index: Int) -> String? { withBytes(index) { String(decoding: $0, as: UTF8.self) } }

    /// Whether the value is exactly `s`.
    func equals(_ index: Int, _ s: StaticString) -> Bool {
        withBytes(index) { b in
            b.count == s.utf8CodeUnitCount && (b.count == 0 || memcmp(b.baseAddress!, s.utf8Start, b.count) == 0)
        } ?? false
    }

    /// The value as `Int64(_:)` reads it (optional sign, digits, nothing else).
    func int64(_ index: Int) -> Int64? {
        withBytes(index) { b -> Int64? in
            var i = 0
            var negative = false
            if i < b.count, b[i] == 0x2B || b[i] == 0x2D { negative = b[i] == 0x2D; i += 1 }
            guard i < b.count else { return nil }
            var v: Int64 = 0
            while i < b.count {
                let d = b[i] &- 0x30
                guard d < 10 else { return nil }
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (a, o2) = negative ? m.subtractingReportingOverflow(Int64(d)) : m.addingReportingOverflow(Int64(d))
                guard !o1, !o2 else { return nil }
                v = a
                i += 1
            }
            return v
        } ?? nil
    }
}

/// What `SAXPushParser` reports: elements as they start and end, and the first error.
protocol SAXPushParserDelegate: AnyObject {
    /// `attributes` holds only the wanted attributes (`SAXPushParser(wantedAttributes:)`), by index.
    func parser(_ parser: SAXPushParser, didStartElement name: String, attributes: SAXAttributes)
    func parser(_ parser: SAXPushParser, didEndElement name: String)
    /// libxml2's error number (xmlParserErrors).
    func parser(_ parser: SAXPushParser, errorCode: Int)
}

/// libxml2's push parser driven through SAX2 callbacks, owning its context. Safe settings:
/// XML_PARSE_NONET, no XML_PARSE_NOENT (entities are not substituted), no DTD loading, no entity
/// callbacks (only the five predefined entities and character references are known; the
/// `XMLByteFilter` in front refuses any DOCTYPE anyway). Only the attributes a caller asks for
/// become Swift strings: an SMS element has ~16, the importer reads 5.
final class SAXPushParser {
    weak var delegate: (any SAXPushParserDelegate)?
    /// Attribute names to hand over, with their NUL and index, by first byte (no hashing per attribute).
    private let wanted: [[(name: [UInt8], index: Int)]]
    private var attributes: SAXAttributes
    private var context: xmlParserCtxtPtr?
    private var stopped = false
    /// First error libxml2 reported, if any.
    private(set) var errorCode: Int?

    /// `wantedAttributes[i]` is handed over as index `i` of `SAXAttributes`.
    init(wantedAttributes: [String]) {
        var table = [[(name: [UInt8], index: Int)]](repeating: [], count: 256)
        for (i, name) in wantedAttributes.enumerated() where !name.isEmpty {
            table[Int(name.utf8.first!)].append((Array(name.utf8) + [0], i))
        }
        wanted = table
        attributes = SAXAttributes(count: wantedAttributes.count)
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { ctx, localname, _, _, _, _, count, _, attributes in
            guard let me = SAXPushParser.owner(ctx), let localname else { return }
            me.start(localname, count: Int(count), attributes)
        }
        sax.endElementNs = { ctx, localname, _, _ in
            guard let me = SAXPushParser.owner(ctx), let localname, !me.stopped else { return }
            me.delegate?.parser(me, didEndElement: String(cString: localname))
        }
        sax.serror = { _, error in
            guard let error, let ctx = error.pointee.ctxt, let me = SAXPushParser.owner(ctx),
                error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue, me.errorCode == nil
            else { return }
            me.errorCode = Int(error.pointee.code)
            if !me.stopped { me.delegate?.parser(me, errorCode: Int(error.pointee.code)) }
        }
        context = xmlCreatePushParserCtxt(&sax, nil, nil, 0, nil)
        if let context {
            _ = xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
            context.pointee._private = Unmanaged.passUnretained(self).toOpaque()
        }
    }

    deinit {
        if let context { xmlFreeParserCtxt(context) }
    }

    private static func owner(_ ctx: UnsafeMutableRawPointer?) -> SAXPushParser? {
        guard let ctx, let me = ctx.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private else { return nil }
        return Unmanaged<SAXPushParser>.fromOpaque(me).takeUnretainedValue()
    }

    private func start(_ localname: UnsafePointer<xmlChar>, count: Int, _ attributes_: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard !stopped, let delegate else { return }
        attributes.removeAll()
        if let list = attributes_ {
            for i in 0..<count {
                guard let name = list[i * 5], let value = list[i * 5 + 3], let end = list[i * 5 + 4] else { continue }
                guard let key = wantedIndex(name) else { continue }
                let bytes = UnsafeBufferPointer(start: value, count: value.distance(to: end))
                if bytes.contains(0x26) {
                    Self.unescapeAmpersands(bytes).withUnsafeBufferPointer { attributes.set(key, $0) }
                } else {
                    attributes.set(key, bytes)
                }
            }
        }
        delegate.parser(self, didStartElement: String(cString: localname), attributes: attributes)
    }

    /// The attribute's index when it is one of the wanted ones.
    @inline(__always)
    private func wantedIndex(_ name: UnsafePointer<xmlChar>) -> Int? {
        for candidate in wanted[Int(name[0])] {
            var k = 1
            while k < candidate.name.count && name[k] == candidate.name[k] { k += 1 }
            if k == candidate.name.count { return candidate.index }
        }
        return nil
    }

    /// Without XML_PARSE_NOENT libxml2 hands an attribute's `&` (written `&amp;` or `&#38;`) on as
    /// "&#38;", for a tree builder to re-parse; any `&` in a value it reports starts one of those.
    static func unescapeAmpersands(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x26, i + 4 < bytes.count, bytes[i + 1] == 0x23, bytes[i + 2] == 0x33, bytes[i + 3] == 0x38, bytes[i + 4] == 0x3B {
                out.append(0x26)
                i += 5
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// Line of the parser's position (in a callback: the end of the tag just read).
    var lineNumber: Int { context.map { Int(xmlSAX2GetLineNumber($0)) } ?? 0 }
    var columnNumber: Int { context.map { Int(xmlSAX2GetColumnNumber($0)) } ?? 0 }

    /// Stops at once: no more callbacks.
    func abortParsing() {
        stopped = true
        if let context { xmlStopParser(context) }
    }

    /// Feeds bytes; `isLast` ends the document. Returns false once parsing has stopped (error or abort).
    @discardableResult
    func feed(_ bytes: UnsafeRawBufferPointer, isLast: Bool) -> Bool {
        guard let context, !stopped else { return false }
        let status = xmlParseChunk(context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), isLast ? 1 : 0)
        if status != 0 && errorCode == nil { errorCode = Int(status) }
        return status == 0 && !stopped
    }

    /// Whether the whole document was well-formed.
    var wellFormed: Bool { errorCode == nil && (context?.pointee.wellFormed ?? 0) != 0 }
}
