import BubbleCore
import Foundation

extension JSONScanner {
    /// Captures the value that starts here (at most `limit` bytes) and reads it with `read`; a
    /// value of the wrong shape is an `ImportError` naming its full JSON path, bytes that are not
    /// UTF-8 a `Failure` at their offset.
    func readElement<T>(limit: Int, _ read: (inout JSONElementReader) throws(JSONElementReader.Failure) -> T) throws -> T {
        try withCaptured(limit: limit) { bytes, start in
            var reader = JSONElementReader(bytes)
            do {
                return try read(&reader)
            } catch let error as JSONElementReader.Failure {
                switch error.kind {
                case .notUTF8:
                    throw JSONScanner.Failure(kind: .notUTF8, offset: start + Int64(error.offset), path: pathString)
                case .wrongType(let expected):
                    throw ImportError(
                        path: displayPath, location: JSONScanner.string(path + error.path),
                        reason: "has the wrong type; expected \(expected)")
                }
            }
        }
    }

    /// A failure as the error a user reads: the file, where (line and column, or JSON path), and
    /// what was expected. `writer` names the program that writes such files ("Telegram Desktop"),
    /// `element` what one element of its big array is ("one message of a Telegram export"),
    /// `export` the whole ("a Telegram export").
    func describe(_ f: Failure, writer: String, element: String, export: String) -> ImportError {
        switch f.kind {
        case .truncated(let expected):
            return ImportError(
                path: displayPath, location: position(ofOffset: f.offset),
                reason: "unexpected end of file (cut short?), expected \(expected)")
        case .syntax:
            return ImportError(path: displayPath, location: position(ofOffset: f.offset), reason: "is not valid JSON (damaged?)")
        case .wrongType(let expected):
            return ImportError(path: displayPath, location: f.path, reason: "has the wrong type; expected \(expected)")
        case .oversize(let limit):
            return ImportError(
                path: displayPath, location: "\(f.path), \(position(ofOffset: f.offset)) (byte \(f.offset))",
                reason: "is longer than \(limit) bytes (ImportLimits.maxJSONValueBytes); expected \(element), "
                    + "which is a few hundred bytes (damaged file?)")
        case .tooDeep:
            return ImportError(
                path: displayPath, location: "\(f.path), \(position(ofOffset: f.offset))",
                reason: "nests arrays and objects more than \(JSONScanner.maxDepth) deep; expected \(export)")
        case .notUTF8:
            return ImportError(
                path: displayPath, location: "\(f.path), \(position(ofOffset: f.offset)) (byte \(f.offset))",
                reason: "has bytes that are not UTF-8; \(writer) writes UTF-8 (wrong encoding?)")
        case .unreadable(let why):
            return ImportError(path: displayPath, location: "byte \(f.offset)", reason: "cannot be read: \(why)")
        }
    }

    /// Opens `path` and runs `body` over it, every failure turned into an `ImportError` (see
    /// `describe`); a UTF-16 file is refused up front, a UTF-8 byte-order mark skipped.
    static func reading<T>(
        path: String, displayPath: String, writer: String, element: String, export: String,
        _ body: (JSONScanner) throws -> T
    ) throws(ImportError) -> T {
        let head = try FormatDetector.readHead(path, count: 4)
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) || (head.count >= 2 && head.prefix(2).contains(0)) {
            throw ImportError(
                path: displayPath, location: "line 1, column 1",
                reason: "is UTF-16; \(writer) writes UTF-8 (convert the file to UTF-8)")
        }
        let scanner = try JSONScanner(path: path, displayPath: displayPath)
        do {
            if head.starts(with: [0xEF, 0xBB, 0xBF]) { try scanner.seek(to: 3, path: []) }
            return try body(scanner)
        } catch let error as ImportError {
            throw error
        } catch let failure as Failure {
            throw scanner.describe(failure, writer: writer, element: element, export: export)
        } catch {
            throw ImportError(path: displayPath, reason: "\(error)")
        }
    }
}

/// Elements of a JSON array as `JSONScanner.elements` hands them from its scanning thread to the
/// reading one: their bytes one after another, with where each starts in the file.
private struct ElementBatch {
    var bytes: [UInt8] = []
    var ends: [Int] = []
    var offsets: [Int64] = []
    var firstIndex = 0
    /// Set on the last batch: the array's end, or the failure that ended the scan.
    var finished = false
    var failure: (any Error)?
}

/// A queue of at most `capacity` batches between the two threads; either side can stop the other.
private final class BatchQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var batches: [ElementBatch] = []
    private let capacity = 3
    private var stopped = false
    private var producerDone = false

    /// Adds a batch, waiting for room; false when the reader stopped.
    func put(_ batch: ElementBatch) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= capacity && !stopped { condition.wait() }
        if stopped { return false }
        batches.append(batch)
        condition.broadcast()
        return true
    }

    func take() -> ElementBatch {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty { condition.wait() }
        let batch = batches.removeFirst()
        condition.broadcast()
        return batch
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    func producerFinished() {
        condition.lock()
        producerDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the scanning thread has let go of the scanner.
    func waitForProducer() {
        condition.lock()
        while !producerDone { condition.wait() }
        condition.unlock()
    }
}

/// The reading thread stopped: the scanning one ends.
private struct ScanStopped: Error {}

/// The scanner, handed to the scanning thread while the calling one waits for its batches.
private final class ScannerBox: @unchecked Sendable {
    let scanner: JSONScanner
    init(_ scanner: JSONScanner) { self.scanner = scanner }
}

extension JSONScanner {
    /// The array that starts here, read on two threads: a thread of its own checks the syntax and
    /// captures the elements (each at most `limit` bytes), 512 (or 4 MiB) at a time, while the calling thread
    /// reads each with `read` and hands it to `body` with its index — the exports' big arrays
    /// (messages) are read about as fast as the slower of the two halves rather than their sum.
    /// Memory: at most three batches in between (each ≤ 4 MiB + one element). Errors are the same as `readElement`'s, in the
    /// same order: the elements before a syntax error are read first. When `read` or `body`
    /// throws, the scanning thread is stopped before this returns (the scanner is then past the
    /// array only when it ended normally).
    func elements<T>(
        limit: Int, read: (inout JSONElementReader) throws(JSONElementReader.Failure) -> T,
        _ body: (Int, T) throws -> Void
    ) throws {
        let queue = BatchQueue()
        let box = ScannerBox(self)
        let basePath = path
        let thread = Thread {
            let scanner = box.scanner
            var batch = ElementBatch()
            do {
                try scanner.array { i in
                    if batch.ends.isEmpty { batch.firstIndex = i }
                    try scanner.withCaptured(limit: limit) { bytes, start in
                        batch.bytes.append(contentsOf: bytes)
                        batch.ends.append(batch.bytes.count)
                        batch.offsets.append(start)
                    }
                    // 512 elements, or 4 MiB: big elements do not make big batches.
                    if batch.ends.count == 512 || batch.bytes.count >= 4 << 20 {
                        guard queue.put(batch) else { throw ScanStopped() }
                        batch = ElementBatch()
                        batch.bytes.reserveCapacity(256 << 10)
                    }
                }
                batch.finished = true
                _ = queue.put(batch)
            } catch is ScanStopped {
            } catch {
                batch.finished = true
                batch.failure = error
                _ = queue.put(batch)
            }
            queue.producerFinished()
        }
        thread.stackSize = 1 << 20
        thread.start()
        defer {
            queue.stop()
            queue.waitForProducer()
        }
        while true {
            let batch = queue.take()
            var start = 0
            try batch.bytes.withUnsafeBufferPointer { all in
                for (k, end) in batch.ends.enumerated() {
                    var reader = JSONElementReader(UnsafeBufferPointer(rebasing: all[start..<end]))
                    start = end
                    let index = batch.firstIndex + k
                    let value: T
                    do {
                        value = try read(&reader)
                    } catch let error as JSONElementReader.Failure {
                        let here = basePath + [.index(index)]
                        switch error.kind {
                        case .notUTF8:
                            throw JSONScanner.Failure(kind: .notUTF8, offset: batch.offsets[k] + Int64(error.offset), path: JSONScanner.string(here))
                        case .wrongType(let expected):
                            throw ImportError(
                                path: displayPath, location: JSONScanner.string(here + error.path),
                                reason: "has the wrong type; expected \(expected)")
                        }
                    }
                    try body(index, value)
                }
            }
            if let failure = batch.failure { throw failure }
            if batch.finished { return }
        }
    }
}
