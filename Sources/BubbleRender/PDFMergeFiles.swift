import BubbleCore
import BubbleText
import CCairo
import Foundation

// The files under PDFMerger: parts read with pread, owned byte buffers, buffered output.

/// A part, read with `pread` (random access for the cross-reference table and the few objects
/// read by number; chunks for the sequential copy).
final class PDFInput {
    let path: String
    let fd: Int32
    let size: Int

    init(path: String) throws {
        self.path = path
        fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw MergeFailure("cannot open \(path): \(String(cString: strerror(errno)))") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            close(fd)
            throw MergeFailure("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        size = Int(st.st_size)
    }

    deinit { close(fd) }

    /// Appends up to `count` bytes from `offset` to `buffer` (fewer at the end of the file);
    /// returns how many.
    @discardableResult
    func read(at offset: Int, count: Int, into buffer: ByteBuffer) throws -> Int {
        let wanted = max(0, min(count, size - offset))
        buffer.reserve(buffer.count + wanted)
        var done = 0
        while done < wanted {
            let n = pread(fd, buffer.base + buffer.count, wanted - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw MergeFailure("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            done += n
            buffer.count += n
        }
        return done
    }

    /// Up to `count` bytes from `offset` (fewer at the end of the file).
    func read(at offset: Int, count: Int) throws -> ByteBuffer {
        let buffer = ByteBuffer(capacity: max(1, min(count, size - offset)))
        try read(at: offset, count: count, into: buffer)
        return buffer
    }

    /// Up to `count` bytes from `offset`, as an array.
    func bytes(at offset: Int, count: Int) throws -> [UInt8] {
        let buffer = try read(at: offset, count: count)
        return withExtendedLifetime(buffer) { Array(buffer.view) }
    }

    /// The value of the object at `offset`, which must be object `number`.
    func object(_ number: Int, at offset: Int, expectedBytes: Int = 4096) throws -> PDFValue {
        var count = expectedBytes
        while true {
            let bytes = try read(at: offset, count: count)
            defer { withExtendedLifetime(bytes) {} }
            let atEnd = offset + bytes.count >= size
            var lexer = PDFLexer(bytes.view, atEnd: atEnd)
            do {
                guard let n = try lexer.next(), n.kind == .integer, n.value == number,
                    let g = try lexer.next(), g.kind == .integer,
                    let obj = try lexer.next(), lexer.is(obj, "obj")
                else {
                    throw MergeFailure("object \(number) is not at the offset the cross-reference table gives (\(offset))")
                }
                let value = try lexer.value()
                guard let end = try lexer.next(), lexer.is(end, "endobj") || lexer.is(end, "stream") else {
                    throw MergeFailure("object \(number) does not end with endobj")
                }
                return value
            } catch is Incomplete {
                guard !atEnd else { throw MergeFailure("the file ends inside object \(number)") }
                count *= 4
            }
        }
    }
}

/// Bytes in memory the merger owns (no copy-on-write, no reference counting per access): lexers
/// read `view`, which stays valid until the buffer changes.
final class ByteBuffer {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private(set) var capacity: Int
    @exclusivity(unchecked) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var view: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)
    }

    /// Room for `total` bytes.
    func reserve(_ total: Int) {
        guard total > capacity else { return }
        let grown = max(total, capacity * 2)
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        new.update(from: base, count: count)
        base.deallocate()
        base = new
        capacity = grown
    }

    /// Drops the first `n` bytes.
    func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count)
        if n < count { (base).update(from: base + n, count: count - n) }
        count -= n
    }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(count + bytes.count)
        if let start = bytes.baseAddress { (base + count).update(from: start, count: bytes.count) }
        count += bytes.count
    }
}

/// Buffered output that knows its byte offset.
final class PDFOutput {
    let fd: Int32
    let path: String
    private let buffer = ByteBuffer(capacity: 1 << 20)
    @exclusivity(unchecked) private(set) var offset = 0
    private var failure: String?
    private var isOpen = true

    init(path: String) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw MergeFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { if isOpen { Glibc.close(fd) } }

    func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        offset += bytes.count
        if buffer.count + bytes.count > buffer.capacity {
            flush()
            if bytes.count >= buffer.capacity / 2 {
                drain(UnsafeRawBufferPointer(bytes))
                return
            }
        }
        buffer.append(bytes)
    }

    func write(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { write($0) } }

    func write(_ text: String) {
        var text = text
        text.withUTF8 { write($0) }
    }

    func write(_ number: Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var n = number, i = 24
            repeat { i -= 1; digits[i] = UInt8(48 + n % 10); n /= 10 } while n > 0 && i > 0
            write(UnsafeBufferPointer(rebasing: digits[i...]))
        }
    }

    func flush() {
        drain(UnsafeRawBufferPointer(buffer.view))
        buffer.count = 0
    }

    private func drain(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
                return
            }
            done += n
        }
    }

    func close() throws {
        flush()
        isOpen = false
        let closed = Glibc.close(fd)
        if let failure { throw MergeFailure("cannot write \(path): \(failure)") }
        guard closed == 0 else { throw MergeFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
    }
}
