import CLibXML2
import Foundation

/// The attributes of one element that the caller asked for: a handful, so a list searched in
/// order (no hashing per element). A repeated name is a well-formedness error libxml2 reports.
struct SAXAttributes {
    private(set) var pairs: [(name: String, value: String)] = []
    mutating func append(_ name: String, _ value: String) { pairs.append((name, value)) }
    subscript(name: String) -> String? {
        for pair in pairs where pair.name == name { return pair.value }
        return nil
    }
}

/// What `SAXPushParser` reports: elements as they start and end, and the first error.
protocol SAXPushParserDelegate: AnyObject {
    /// `attributes` holds only the attributes `SAXPushParser.wantedAttribute` accepts.
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
    /// Attribute names to hand over, with their NUL, by first byte (no hashing per attribute).
    private let wanted: [[[UInt8]]]
    private var context: xmlParserCtxtPtr?
    private var stopped = false
    /// First error libxml2 reported, if any.
    private(set) var errorCode: Int?

    init(wantedAttributes: Set<String>) {
        var table = [[[UInt8]]](repeating: [], count: 256)
        for name in wantedAttributes where !name.isEmpty { table[Int(name.utf8.first!)].append(Array(name.utf8) + [0]) }
        wanted = table
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
                  error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue, me.errorCode == nil else { return }
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

    private func start(_ localname: UnsafePointer<xmlChar>, count: Int, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard !stopped, let delegate else { return }
        var dict = SAXAttributes()
        if let attributes {
            for i in 0..<count {
                guard let name = attributes[i * 5], let value = attributes[i * 5 + 3], let end = attributes[i * 5 + 4] else { continue }
                guard let key = wantedName(name) else { continue }
                let bytes = UnsafeBufferPointer(start: value, count: value.distance(to: end))
                dict.append(key, bytes.contains(0x26) ? Self.unescapeAmpersands(bytes) : String(decoding: bytes, as: UTF8.self))
            }
        }
        delegate.parser(self, didStartElement: String(cString: localname), attributes: dict)
    }

    /// The attribute's name as a String when it is one of the wanted ones.
    @inline(__always)
    private func wantedName(_ name: UnsafePointer<xmlChar>) -> String? {
        for candidate in wanted[Int(name[0])] {
            var k = 1
            while k < candidate.count && name[k] == candidate[k] { k += 1 }
            if k == candidate.count { return String(decoding: candidate.dropLast(), as: UTF8.self) }
        }
        return nil
    }

    /// Without XML_PARSE_NOENT libxml2 hands an attribute's `&` (written `&amp;` or `&#38;`) on as
    /// "&#38;", for a tree builder to re-parse; any `&` in a value it reports starts one of those.
    static func unescapeAmpersands(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
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
        return String(decoding: out, as: UTF8.self)
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
