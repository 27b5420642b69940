import Foundation
import ZIPFoundation

/// A .zip export opened for reading, with zip-bomb guards: an entry is refused before extraction
/// when its declared size would pass the total cap or its compression ratio is implausible, and
/// the extraction itself stops as soon as the bytes written pass the declared size or the cap
/// (headers can lie). Files are written only where the caller says, never at the entry's own path,
/// so entry names like "../../etc/passwd" cannot place files anywhere.
final class ZipExport {
    let displayPath: String
    private let archive: Archive
    private let limits: ImportLimits
    private(set) var extractedBytes: Int64 = 0
    private lazy var byName: [String: Entry] = {
        var index: [String: Entry] = [:]
        for entry in archive where entry.type == .file {
            let name = (entry.path as NSString).lastPathComponent
            if index[name] == nil { index[name] = entry }
        }
        return index
    }()

    struct Refusal: Error { var reason: String }

    init(path: String, displayPath: String, limits: ImportLimits) throws(ImportError) {
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw ImportError(path: displayPath, reason: "is not a readable zip archive (\(error)); expected the .zip WhatsApp exports")
        }
        self.displayPath = displayPath
        self.limits = limits
    }

    /// Paths of the regular files inside, in archive order.
    var filePaths: [String] { archive.filter { $0.type == .file }.map(\.path) }

    /// The file entry whose last path component is `name`.
    func entry(named name: String) -> Entry? { byName[name] }

    func entry(path: String) -> Entry? { archive[path] }

    /// Writes `entry` to `destination`, enforcing the limits; a refused or failed file is removed.
    func extract(_ entry: Entry, to destination: String) throws(Refusal) {
        let declared = entry.uncompressedSize
        let compressed = entry.compressedSize
        let cap = UInt64(max(0, limits.maxZipTotalBytes - extractedBytes))
        if declared > cap {
            throw Refusal(reason: "\(declared) bytes uncompressed would pass the \(limits.maxZipTotalBytes)-byte limit for one archive (zip bomb?)")
        }
        if declared > 1 << 20, compressed > 0, Double(declared) / Double(compressed) > limits.maxZipRatio {
            throw Refusal(reason: "compression ratio \(Int(Double(declared) / Double(compressed))):1 is over the "
                              + "\(Int(limits.maxZipRatio)):1 limit (zip bomb?)")
        }
        guard FileManager.default.createFile(atPath: destination, contents: nil),
              let output = FileHandle(forWritingAtPath: destination) else {
            throw Refusal(reason: "cannot write \(destination)")
        }
        var written: UInt64 = 0
        do {
            defer { try? output.close() }
            _ = try archive.extract(entry, skipCRC32: false) { data in
                written += UInt64(data.count)
                if written > declared || written > cap { throw Refusal(reason: "inflates past its declared \(declared) bytes (zip bomb?)") }
                try output.write(contentsOf: data)
            }
        } catch let refusal as Refusal {
            try? FileManager.default.removeItem(atPath: destination)
            throw refusal
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw Refusal(reason: "cannot be extracted: \(error)")
        }
        extractedBytes += Int64(written)
    }
}
