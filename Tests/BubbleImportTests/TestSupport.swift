import BubbleCore
import Foundation
@testable import BubbleImport

/// The committed fixtures (Tests/BubbleImportTests/Fixtures).
enum Fixtures {
    static let folder = Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.path
    static func path(_ relative: String) -> String { (folder as NSString).appendingPathComponent(relative) }
}

/// A fresh folder under the temporary directory, removed when the test's value goes away.
final class ScratchFolder {
    let path: String
    init() {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("bubbleimport-test-" + UUID().uuidString)
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }
    @discardableResult
    func write(_ name: String, _ text: String) -> String { write(name, Data(text.utf8)) }
    @discardableResult
    func write(_ name: String, _ data: Data) -> String {
        let full = file(name)
        try! FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        try! data.write(to: URL(fileURLWithPath: full))
        return full
    }
}

/// "2019-12-25T04:23:00Z" → Date.
func instant(_ iso: String) -> Date {
    let f = ISO8601DateFormatter()
    return f.date(from: iso)!
}

func zone(_ id: String) -> TimeZone { TimeZone(identifier: id)! }

/// The messages without their wall-clock times (compared apart, with `wallTimes`).
func instantsOnly(_ messages: [Message]) -> [Message] {
    messages.map {
        var m = $0; m.wallTime = nil; return m
    }
}

/// "2019-12-24T23:23:00" for each message with a wall-clock time, "-" for one without.
func wallTimes(_ messages: [Message]) -> [String] { messages.map { $0.wallTime?.description ?? "-" } }

/// The ImportError `body` throws (nil if it throws none).
func importError(_ body: () throws(ImportError) -> ImportResult) -> ImportError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
