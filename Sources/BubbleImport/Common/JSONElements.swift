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
                    throw ImportError(path: displayPath, location: JSONScanner.string(path + error.path),
                                      reason: "has the wrong type; expected \(expected)")
                }
            }
        }
    }

    /// A failure as the error a user reads: the file, where (line and column, or JSON path), and
    /// what was expected. `writer` names the program that writes such files ("Telegram Desktop"),
    /// `element` what one element of its big array is ("one message of a Telegram export").
    func describe(_ f: Failure, writer: String, element: String) -> ImportError {
        switch f.kind {
        case .truncated(let expected):
            return ImportError(path: displayPath, location: position(ofOffset: f.offset),
                               reason: "unexpected end of file (cut short?), expected \(expected)")
        case .syntax:
            return ImportError(path: displayPath, location: position(ofOffset: f.offset), reason: "is not valid JSON (damaged?)")
        case .wrongType(let expected):
            return ImportError(path: displayPath, location: f.path, reason: "has the wrong type; expected \(expected)")
        case .oversize(let limit):
            return ImportError(path: displayPath, location: "\(f.path), \(position(ofOffset: f.offset)) (byte \(f.offset))",
                               reason: "is longer than \(limit) bytes (ImportLimits.maxJSONValueBytes); expected \(element), "
                                   + "which is a few hundred bytes (damaged file?)")
        case .tooDeep:
            return ImportError(path: displayPath, location: "\(f.path), \(position(ofOffset: f.offset))",
                               reason: "nests arrays and objects more than \(JSONScanner.maxDepth) deep; expected \(element)")
        case .notUTF8:
            return ImportError(path: displayPath, location: "\(f.path), \(position(ofOffset: f.offset)) (byte \(f.offset))",
                               reason: "has bytes that are not UTF-8; \(writer) writes UTF-8 (wrong encoding?)")
        case .unreadable(let why):
            return ImportError(path: displayPath, location: "byte \(f.offset)", reason: "cannot be read: \(why)")
        }
    }

    /// Opens `path` and runs `body` over it, every failure turned into an `ImportError` (see
    /// `describe`); a UTF-16 file is refused up front, a UTF-8 byte-order mark skipped.
    static func reading<T>(path: String, displayPath: String, writer: String, element: String,
                           _ body: (JSONScanner) throws -> T) throws(ImportError) -> T {
        let head = try FormatDetector.readHead(path, count: 4)
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) || (head.count >= 2 && head.prefix(2).contains(0)) {
            throw ImportError(path: displayPath, location: "line 1, column 1",
                              reason: "is UTF-16; \(writer) writes UTF-8 (convert the file to UTF-8)")
        }
        let scanner = try JSONScanner(path: path, displayPath: displayPath)
        do {
            if head.starts(with: [0xEF, 0xBB, 0xBF]) { try scanner.seek(to: 3, path: []) }
            return try body(scanner)
        } catch let error as ImportError {
            throw error
        } catch let failure as Failure {
            throw scanner.describe(failure, writer: writer, element: element)
        } catch {
            throw ImportError(path: displayPath, reason: "\(error)")
        }
    }
}
