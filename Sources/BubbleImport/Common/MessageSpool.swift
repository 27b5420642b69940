import BubbleCore
import BubbleMedia
import Foundation

/// One conversation's messages on disk while a whole export is read (`Importer.loadEach`):
/// records written through a buffer, read back once and removed. A record holds the common
/// fields in binary (date, sender, side, kind, text, status, id, wall time, source ids) and the
/// rare ones (photos, attachment, reactions, reply) as JSON only when the message has them.
final class MessageSpool {
    let path: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private(set) var count = 0
    private var failure: String?
    private let encoder = JSONEncoder()

    init(path: String) throws(ImportError) {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
            throw ImportError(path: path, reason: "cannot be created (a conversation being read is kept there)")
        }
        handle = h
        buffer.reserveCapacity(256 << 10)
    }

    deinit {
        try? handle.close()
        unlink(path)
    }

    /// The fields no binary slot holds.
    private struct Rare: Codable {
        var images: [ImageAttachment]?
        var attachment: MediaAttachment?
        var reactions: [Reaction]?
        var reply: ReplyReference?
        var edited: Date?
        var spans: [TextSpan]?
        var forwardedFrom: String?
        var app: String?
    }

    private static let statuses: [MessageStatus] = [.sending, .sent, .delivered, .read, .failed]

    private func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { buffer.append(contentsOf: $0) } }
    private func put(_ s: String) {
        var s = s
        s.withUTF8 {
            put(UInt32($0.count)); buffer.append(contentsOf: $0)
        }
    }

    func append(_ m: Message, sourceID: Int64?, replyTo: Int64?) {
        guard failure == nil else { return }
        var flags: UInt16 = 0
        if m.sender != nil { flags |= 1 }
        if m.direction == .outgoing { flags |= 2 }
        if m.kind == .system { flags |= 4 }
        if m.text != nil { flags |= 8 }
        if m.status != nil { flags |= 16 }
        if m.statusDate != nil { flags |= 32 }
        if m.id != nil { flags |= 64 }
        if m.wallTime != nil { flags |= 128 }
        if sourceID != nil { flags |= 256 }
        if replyTo != nil { flags |= 512 }
        let rare = Rare(
            images: m.images.isEmpty ? nil : m.images, attachment: m.attachment,
            reactions: m.reactions.isEmpty ? nil : m.reactions, reply: m.reply, edited: m.edited,
            spans: m.spans.isEmpty ? nil : m.spans, forwardedFrom: m.forwardedFrom, app: m.app)
        let hasRare =
            rare.images != nil || rare.attachment != nil || rare.reactions != nil || rare.reply != nil
            || rare.edited != nil || rare.spans != nil || rare.forwardedFrom != nil || rare.app != nil
        if hasRare { flags |= 1024 }
        put(flags)
        put(m.date.timeIntervalSince1970.bitPattern)
        if let v = m.sender { put(v) }
        if let v = m.text { put(v) }
        if let v = m.status { put(UInt8(Self.statuses.firstIndex(of: v)!)) }
        if let v = m.statusDate { put(v.timeIntervalSince1970.bitPattern) }
        if let v = m.id { put(v) }
        if let v = m.wallTime { put(Int64(v.localSeconds)) }
        if let v = sourceID { put(v) }
        if let v = replyTo { put(v) }
        if hasRare {
            do {
                let json = try encoder.encode(rare)
                put(UInt32(json.count))
                buffer.append(contentsOf: json)
            } catch {
                failure = "\(error)"
            }
        }
        count += 1
        if buffer.count >= 256 << 10 {
            do { try flush() } catch { failure = "\(error)" }
        }
    }

    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    func readAll() throws(ImportError) -> [SpooledMessage] {
        do {
            try flush()
            try handle.close()
        } catch {
            failure = failure ?? "\(error)"
        }
        if let failure { throw ImportError(path: path, reason: "cannot keep a conversation being read: \(failure)") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ImportError(path: path, reason: "cannot be read back")
        }
        unlink(path)
        let decoder = JSONDecoder()
        let utc = TimeZone(secondsFromGMT: 0)!
        var out: [SpooledMessage] = []
        out.reserveCapacity(count)
        let parsed: Bool = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Bool in
            var at = 0
            func take<T: FixedWidthInteger>(_: T.Type) -> T? {
                guard at + MemoryLayout<T>.size <= raw.count else { return nil }
                var v: T = 0
                withUnsafeMutableBytes(of: &v) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[at..<(at + MemoryLayout<T>.size)])) }
                at += MemoryLayout<T>.size
                return T(littleEndian: v)
            }
            func string() -> String? {
                guard let n = take(UInt32.self), at + Int(n) <= raw.count else { return nil }
                defer { at += Int(n) }
                return String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<(at + Int(n))]), as: UTF8.self)
            }
            while at < raw.count {
                guard let flags = take(UInt16.self), let bits = take(UInt64.self) else { return false }
                var m = Message(
                    kind: flags & 4 != 0 ? .system : .message, sender: nil,
                    direction: flags & 2 != 0 ? .outgoing : .incoming,
                    date: Date(timeIntervalSince1970: Double(bitPattern: bits)), text: nil)
                if flags & 1 != 0 { guard let v = string() else { return false }; m.sender = v }
                if flags & 8 != 0 { guard let v = string() else { return false }; m.text = v }
                if flags & 16 != 0 {
                    guard let v = take(UInt8.self), Int(v) < Self.statuses.count else { return false }
                    m.status = Self.statuses[Int(v)]
                }
                if flags & 32 != 0 { guard let v = take(UInt64.self) else { return false }; m.statusDate = Date(timeIntervalSince1970: Double(bitPattern: v)) }
                if flags & 64 != 0 { guard let v = string() else { return false }; m.id = v }
                if flags & 128 != 0 {
                    guard let v = take(Int64.self) else { return false }
                    m.wallTime = WallTime(Date(timeIntervalSince1970: Double(v)), in: utc)
                }
                var sourceID: Int64?, replyTo: Int64?
                if flags & 256 != 0 { guard let v = take(Int64.self) else { return false }; sourceID = v }
                if flags & 512 != 0 { guard let v = take(Int64.self) else { return false }; replyTo = v }
                if flags & 1024 != 0 {
                    guard let n = take(UInt32.self), at + Int(n) <= raw.count,
                        let rare = try? decoder.decode(Rare.self, from: Data(raw[at..<(at + Int(n))]))
                    else { return false }
                    at += Int(n)
                    m.images = rare.images ?? []
                    m.attachment = rare.attachment
                    m.reactions = rare.reactions ?? []
                    m.reply = rare.reply
                    m.edited = rare.edited
                    m.spans = rare.spans ?? []
                    m.forwardedFrom = rare.forwardedFrom
                    m.app = rare.app
                }
                out.append(SpooledMessage(message: m, sourceID: sourceID, replyTo: replyTo))
            }
            return true
        }
        guard parsed else { throw ImportError(path: path, reason: "cannot be read back (damaged)") }
        return out
    }
}

/// A message back from the spool, with its source id and the source id it replies to.
struct SpooledMessage {
    var message: Message
    var sourceID: Int64?
    var replyTo: Int64?
}

/// Each message's source id (`Int64.min` for none), as compact as the ids allow: 4 bytes a
/// message while every id is within 4 billion above the first one (Telegram's and iMessage's
/// ids are), 8 bytes otherwise.
struct SourceIDColumn {
    private var base: Int64?
    private var offsets: [UInt32] = []
    private var wide: [Int64]?
    private static let none = UInt32.max

    var count: Int { wide?.count ?? offsets.count }
    var isEmpty: Bool { count == 0 }
    var last: Int64? { isEmpty ? nil : self[count - 1] }

    subscript(i: Int) -> Int64 {
        if let wide { return wide[i] }
        let o = offsets[i]
        return o == Self.none ? .min : base! + Int64(o)
    }

    mutating func appendNone(count: Int) {
        if wide != nil {
            wide!.append(contentsOf: repeatElement(.min, count: count))
        } else {
            offsets.append(contentsOf: repeatElement(Self.none, count: count))
        }
    }

    mutating func append(_ id: Int64) {
        if wide != nil { wide!.append(id); return }
        if id == .min { offsets.append(Self.none); return }
        if base == nil { base = id }
        let delta = id.subtractingReportingOverflow(base!)
        if !delta.overflow, delta.partialValue >= 0, delta.partialValue < Int64(Self.none) {
            offsets.append(UInt32(delta.partialValue))
        } else {
            wide = (0..<offsets.count).map { self[$0] } + [id]
            offsets = []
        }
    }

    func enumerated() -> [(offset: Int, element: Int64)] { (0..<count).map { ($0, self[$0]) } }
}
