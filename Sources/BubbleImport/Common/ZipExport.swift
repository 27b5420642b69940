// zlib through ZIPFoundation's own module map: a deflate stream is checked whole before
// ZIPFoundation inflates it (its inflate loops forever on a stream that never ends).
import BubbleCore
import BubbleMedia
import CZlib
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
    private let directory: ZipDirectory?
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

    init(path: String, displayPath: String, limits: ImportLimits, expected: String = "the .zip WhatsApp exports") throws(ImportError) {
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw ImportError(path: displayPath, reason: "is not a readable zip archive (\(Self.plain(error))); expected \(expected)")
        }
        self.displayPath = displayPath
        self.limits = limits
        directory = ZipDirectory(path: path)
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
            throw Refusal(
                reason: "compression ratio \(Int(Double(declared) / Double(compressed))):1 is over the "
                    + "\(Int(limits.maxZipRatio)):1 limit (zip bomb?)")
        }
        if let problem = directory?.problem(with: entry.path(using: .isoLatin1), declaredSize: min(declared, cap)) {
            throw Refusal(reason: problem)
        }
        guard FileManager.default.createFile(atPath: destination, contents: nil),
            let output = FileHandle(forWritingAtPath: destination)
        else {
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
            throw Refusal(reason: "cannot be extracted: \(Self.plain(error))")
        }
        extractedBytes += Int64(written)
    }

    /// What went wrong with the archive in words, not ZIPFoundation's case names.
    static func plain(_ error: any Error) -> String {
        if let e = error as? Archive.ArchiveError {
            switch e {
            case .missingEndOfCentralDirectoryRecord: return "its end-of-directory record is missing: cut short or not a zip; copy or download it again"
            case .invalidCentralDirectoryOffset, .invalidCentralDirectorySize, .invalidCentralDirectoryEntryCount:
                return "its directory is damaged"
            case .invalidLocalHeaderDataOffset, .invalidLocalHeaderSize: return "an entry's header is damaged"
            case .invalidCRC32: return "an entry's checksum does not match (damaged)"
            case .invalidCompressionMethod: return "an entry uses a compression method other than stored or deflate"
            case .invalidEntrySize: return "an entry's size is wrong (damaged)"
            case .invalidEntryPath: return "an entry's path is not valid"
            case .uncontainedSymlink: return "an entry is a link leading out of the archive"
            case .unreadableArchive: return "the file cannot be read (permissions?)"
            default: return "damaged"
            }
        }
        if let cocoa = error as? CocoaError, let path = cocoa.filePath { return "\(path): \(cocoa.localizedDescription)" }
        return (error as NSError).localizedDescription
    }
}

/// The archive's own central directory, read by BubbleKit: each entry's compression method,
/// sizes and local header, so an entry can be checked before ZIPFoundation touches it. An entry
/// that ZIPFoundation would inflate must be one complete deflate stream (a damaged one makes its
/// inflate loop forever) in an archive whose headers agree.
struct ZipDirectory {
    struct Record { var method: UInt16; var compressedSize: UInt64; var localHeader: UInt64 }
    private(set) var records: [String: Record] = [:]
    let fileSize: UInt64
    private let file: ProbeFile

    init?(path: String) {
        guard let file = ProbeFile(path: path) else { return nil }
        self.file = file
        fileSize = UInt64(file.size)
        // End of central directory: the last "PK\u{5}\u{6}" in the final 64 KiB + 22 bytes.
        let tailStart = max(0, file.size - 65_557)
        let tail = file.read(at: tailStart, count: file.size - tailStart)
        guard tail.count >= 22,
            let eocd = stride(from: tail.count - 22, through: 0, by: -1).first(where: {
                tail[$0] == 0x50 && tail[$0 + 1] == 0x4B && tail[$0 + 2] == 0x05 && tail[$0 + 3] == 0x06
            })
        else { return nil }
        func u16(_ b: [UInt8], _ i: Int) -> Int { i + 2 <= b.count ? Int(b[i]) | Int(b[i + 1]) << 8 : 0 }
        func u32(_ b: [UInt8], _ i: Int) -> UInt64 { i + 4 <= b.count ? UInt64(u16(b, i)) | UInt64(u16(b, i + 2)) << 16 : 0 }
        let count = u16(tail, eocd + 10)
        // A ZIP64 archive (over 65,535 entries or 4 GiB) keeps its directory's place elsewhere:
        // left to ZIPFoundation's own reading, unchecked here.
        guard count != 0xFFFF, u32(tail, eocd + 16) != 0xFFFF_FFFF, u32(tail, eocd + 12) != 0xFFFF_FFFF else { return nil }
        let directory = file.read(at: Int(u32(tail, eocd + 16)), count: Int(min(u32(tail, eocd + 12), UInt64(file.size))))
        var i = 0
        for _ in 0..<count {
            guard i + 46 <= directory.count, directory[i] == 0x50, directory[i + 1] == 0x4B, directory[i + 2] == 0x01,
                directory[i + 3] == 0x02
            else { break }
            let nameLength = u16(directory, i + 28), extra = u16(directory, i + 30), comment = u16(directory, i + 32)
            guard i + 46 + nameLength <= directory.count else { break }
            // Keyed by the name's raw bytes (as Latin-1, which maps every byte): names need not be
            // UTF-8, and ZIPFoundation decodes them as CP437 or UTF-8 by a flag.
            let name = String(bytes: directory[i + 46..<i + 46 + nameLength], encoding: .isoLatin1) ?? ""
            records[name] = Record(
                method: UInt16(u16(directory, i + 10)), compressedSize: u32(directory, i + 20),
                localHeader: u32(directory, i + 42))
            i += 46 + nameLength + extra + comment
        }
    }

    /// Why the entry whose raw name is `rawName` (as Latin-1) cannot be inflated safely, or nil
    /// when it can. An entry the directory does not list as read here is refused: nothing
    /// unchecked reaches ZIPFoundation's inflate.
    func problem(with rawName: String, declaredSize: UInt64) -> String? {
        guard let r = records[rawName] else { return "is not in the archive's central directory as BubbleKit reads it (damaged archive?)" }
        guard r.method == 0 || r.method == 8 else { return "uses compression method \(r.method); expected stored (0) or deflate (8)" }
        // A ZIP64 local header offset (0xFFFFFFFF here) is left to ZIPFoundation's own checks.
        guard r.localHeader != 0xFFFF_FFFF else { return nil }
        // ZIP64 sizes: the stream is checked up to the end of the file.
        let zip64 = r.compressedSize == 0xFFFF_FFFF
        let local = file.read(at: Int(r.localHeader), count: 30)
        guard local.count == 30, local[0] == 0x50, local[1] == 0x4B, local[2] == 0x03, local[3] == 0x04 else {
            return "has no local header where the directory says"
        }
        let localMethod = UInt16(local[8]) | UInt16(local[9]) << 8
        guard localMethod == r.method else { return "its headers disagree on its compression method (\(localMethod), \(r.method))" }
        let dataStart = r.localHeader + 30 + UInt64(Int(local[26]) | Int(local[27]) << 8) + UInt64(Int(local[28]) | Int(local[29]) << 8)
        guard dataStart <= fileSize else { return "its data runs past the end of the archive (cut short?)" }
        let length = zip64 ? fileSize - dataStart : r.compressedSize
        guard dataStart + length <= fileSize else { return "its data runs past the end of the archive (cut short?)" }
        guard r.method == 8 else { return zip64 || r.compressedSize == declaredSize ? nil : "its stored size disagrees with the archive's" }
        guard let inflated = ZipDirectory.inflatedSize(file, from: Int(dataStart), count: Int(length), limit: declaredSize) else {
            return "its compressed data is damaged or cut short (the deflate stream does not end where it should)"
        }
        return inflated == declaredSize
            ? nil
            : "its compressed data is damaged: it inflates to \(inflated) bytes, the archive says \(declaredSize)"
    }

    /// How many bytes the `count` bytes at `offset` of `file` inflate to, when they hold one raw
    /// deflate stream that ends inside them and inflates to at most `limit` bytes; nil otherwise.
    /// Read 1 MiB at a time.
    fileprivate static func inflatedSize(_ file: ProbeFile, from offset: Int, count: Int, limit: UInt64) -> UInt64? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: 1 << 16)
        var position = offset
        let end = offset + count
        while position < end {
            var input = file.read(at: position, count: min(1 << 20, end - position))
            if input.isEmpty { return nil }
            position += input.count
            let result: UInt64?? = input.withUnsafeMutableBufferPointer { inp -> UInt64?? in
                stream.next_in = inp.baseAddress
                stream.avail_in = uInt(inp.count)
                return output.withUnsafeMutableBufferPointer { out -> UInt64?? in
                    while stream.avail_in > 0 {
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        let status = inflate(&stream, Z_NO_FLUSH)
                        if UInt64(stream.total_out) > limit { return .some(nil) }
                        if status == Z_STREAM_END { return .some(UInt64(stream.total_out)) }
                        if status != Z_OK && status != Z_BUF_ERROR { return .some(nil) }
                        if status == Z_BUF_ERROR && stream.avail_out != 0 { break }
                    }
                    return nil  // this chunk used up: read on
                }
            }
            if let done = result { return done }
        }
        return nil  // out of input before the stream's end
    }
}
