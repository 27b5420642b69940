import BubbleCore
import BubblePeople
import Foundation

/// What a media file's own headers say, read without a decoder: a video's or a voice note's
/// duration, a video's size, a PDF's page count, a vCard's name, a JPEG's EXIF orientation.
/// Reads only the parts it needs (a few KB at the start and end of the file; an MP4's `moov` box
/// wherever it is); a file it cannot read gives nil fields, never an error.
///
///     MediaProbe.probe(path: "PTT-20211014-WA0004.opus").duration   // 7.4
///
/// Containers: MP4, 3GP, M4A, MOV (`moov/mvhd` timescale and duration, `trak/tkhd` size); Ogg
/// Opus (last granule position minus the `OpusHead` pre-skip, ÷ 48,000) and Ogg Vorbis (÷ the
/// sample rate); AMR-NB and AMR-WB (20 ms frames, each frame's size from its header); WebM and
/// Matroska (`Segment/Info` Duration × TimecodeScale); MP3 (Xing/Info or VBRI frame count, else
/// the bit rate of the first frame).
package enum MediaProbe {
    package struct Facts: Hashable, Sendable {
        package var byteSize: Int?
        package var mimeType: String?
        /// Seconds.
        package var duration: Double?
        /// Pixels (video).
        package var width: Double?
        package var height: Double?
        package var pageCount: Int?
        /// A vCard's `FN`.
        package var contactName: String?
    }

    package static func probe(path: String) -> Facts {
        var facts = Facts()
        guard let file = ProbeFile(path: path) else { return facts }
        facts.byteSize = file.size
        let head = file.read(at: 0, count: 64)
        facts.mimeType = mimeType(head)
        switch facts.mimeType {
        case "video/mp4", "video/3gpp", "audio/mp4", "video/quicktime":
            let mp4 = isoMedia(file)
            facts.duration = mp4.duration
            facts.width = mp4.width
            facts.height = mp4.height
        case "audio/ogg": facts.duration = ogg(file)
        case "audio/amr", "audio/amr-wb": facts.duration = amr(file, wideband: facts.mimeType == "audio/amr-wb")
        case "video/webm": facts.duration = matroska(file)
        case "audio/mpeg": facts.duration = mp3(file)
        case "application/pdf": facts.pageCount = pdfPages(file)
        case "text/vcard": facts.contactName = vcardName(file)
        default: break
        }
        return facts
    }

    /// The browser-native image type of a file's first bytes, or nil.
    package static func browserImageType(_ head: [UInt8]) -> String? {
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if head.starts(with: Array("GIF87a".utf8)) || head.starts(with: Array("GIF89a".utf8)) { return "image/gif" }
        if head.count >= 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        return nil
    }

    /// The type a file's first bytes say.
    package static func mimeType(_ h: [UInt8]) -> String? {
        func at(_ offset: Int, _ s: String) -> Bool {
            let b = Array(s.utf8)
            return h.count >= offset + b.count && Array(h[offset..<offset + b.count]) == b
        }
        if at(4, "ftyp") {
            if at(8, "3g") { return "video/3gpp" }
            if at(8, "M4A") || at(8, "M4B") { return "audio/mp4" }
            if at(8, "qt  ") { return "video/quicktime" }
            if at(8, "heic") || at(8, "heix") || at(8, "mif1") || at(8, "msf1") || at(8, "heif") { return "image/heic" }
            if at(8, "avif") { return "image/avif" }
            return "video/mp4"
        }
        if at(0, "OggS") { return "audio/ogg" }
        if at(0, "#!AMR-WB\n") { return "audio/amr-wb" }
        if at(0, "#!AMR\n") { return "audio/amr" }
        if h.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return "video/webm" }
        if at(0, "ID3") || (h.count > 1 && h[0] == 0xFF && h[1] & 0xE0 == 0xE0 && h[1] & 0x06 != 0) { return "audio/mpeg" }
        if at(0, "%PDF-") { return "application/pdf" }
        if at(0, "BEGIN:VCARD") || at(3, "BEGIN:VCARD") { return "text/vcard" }
        if h.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if h.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if at(0, "GIF8") { return "image/gif" }
        if at(0, "RIFF") && at(8, "WEBP") { return "image/webp" }
        if at(0, "II*\u{0}") || h.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return "image/tiff" }
        return nil
    }

    // MARK: JPEG

    /// The EXIF orientation (1–8) of a JPEG, or nil (not a JPEG, no tag).
    package static func jpegOrientation(path: String) -> Int? {
        guard let file = ProbeFile(path: path) else { return nil }
        var offset = 2
        guard file.read(at: 0, count: 2) == [0xFF, 0xD8] else { return nil }
        // Markers up to the first scan; APP1 "Exif" holds a TIFF block.
        for _ in 0..<64 {
            let m = file.read(at: offset, count: 4)
            guard m.count == 4, m[0] == 0xFF else { return nil }
            let marker = m[1], length = Int(m[2]) << 8 | Int(m[3])
            if marker == 0xDA || marker == 0xD9 { return nil }
            if marker == 0xE1, length > 8 {
                let body = file.read(at: offset + 4, count: min(length - 2, 65_536))
                if body.starts(with: Array("Exif".utf8) + [0, 0]) { return tiffOrientation(Array(body[6...])) }
            }
            offset += 2 + length
        }
        return nil
    }

    // MARK: complete pictures

    /// Why the picture at `path` is not whole — "cut short: no end-of-image marker" — or nil
    /// when its structure is complete (or it is a format not checked here). Decoders draw what
    /// they got of a truncated PNG or JPEG and fill the rest with grey, silently; this finds it
    /// first, from the file's structure, without decoding: a PNG's chunks walked to `IEND`; a
    /// JPEG's segments walked to its first scan and an end-of-image marker after it (looked for
    /// in the last 64 KB, then, for files with data appended after the image, such as motion
    /// photos, through the rest); a GIF's trailer byte at its end; a WebP's RIFF size.
    package static func incompleteness(path: String) -> String? {
        guard let file = ProbeFile(path: path) else { return nil }
        let head = file.read(at: 0, count: 16)
        switch browserImageType(head) {
        case "image/png": return pngIncompleteness(file)
        case "image/jpeg": return jpegIncompleteness(file)
        case "image/gif":
            // The trailer byte ends the file (zero padding after it is tolerated).
            let tail = file.read(at: max(0, file.size - 16), count: 16)
            return tail.reversed().first(where: { $0 != 0 }) == 0x3B ? nil : "cut short: no GIF trailer"
        case "image/webp":
            guard head.count >= 8 else { return "cut short" }
            let declared = Int(head[4]) | Int(head[5]) << 8 | Int(head[6]) << 16 | Int(head[7]) << 24
            return declared + 8 > file.size ? "cut short: \(file.size) of \(declared + 8) bytes" : nil
        default: return nil
        }
    }

    static func pngIncompleteness(_ file: ProbeFile) -> String? {
        var offset = 8
        // Chunk after chunk: length, type, data, CRC.
        while offset + 12 <= file.size {
            let h = file.read(at: offset, count: 8)
            guard h.count == 8 else { break }
            let length = Int(h[0]) << 24 | Int(h[1]) << 16 | Int(h[2]) << 8 | Int(h[3])
            if Array(h[4..<8]) == Array("IEND".utf8) { return nil }
            offset += 12 + length
        }
        return offset > file.size ? "cut short: \(file.size) bytes, its chunks need \(offset)" : "cut short: no IEND chunk"
    }

    static func jpegIncompleteness(_ file: ProbeFile) -> String? {
        var offset = 2
        var scan: Int?
        for _ in 0..<256 {
            let m = file.read(at: offset, count: 4)
            guard m.count == 4 else { return "cut short before its image data" }
            guard m[0] == 0xFF else { return nil }  // an odd layout: left to the decoder
            if m[1] == 0xFF { offset += 1; continue }  // fill byte
            if m[1] == 0xDA { scan = offset; break }
            if m[1] == 0xD9 { return "no image data before its end marker" }
            offset += 2 + (Int(m[2]) << 8 | Int(m[3]))
        }
        guard let scan else { return nil }
        func hasEnd(_ bytes: [UInt8]) -> Bool {
            var i = bytes.startIndex
            while i + 1 < bytes.endIndex {
                if bytes[i] == 0xFF, bytes[i + 1] == 0xD9 { return true }
                i += 1
            }
            return false
        }
        let tail = max(scan + 2, file.size - 65_536)
        if hasEnd(file.read(at: tail, count: file.size - tail)) { return nil }
        var at = scan + 2
        while at < tail {
            // Overlapping by a byte, so a marker across two reads is found.
            let chunk = file.read(at: at, count: min(1 << 20, tail - at + 1))
            if chunk.isEmpty { break }
            if hasEnd(chunk) { return nil }
            at += max(1, chunk.count - 1)
        }
        return "cut short: no end-of-image marker"
    }

    static func tiffOrientation(_ t: [UInt8]) -> Int? {
        guard t.count >= 8 else { return nil }
        let little = t[0] == 0x49
        func u16(_ i: Int) -> Int? { i + 2 <= t.count ? (little ? Int(t[i]) | Int(t[i + 1]) << 8 : Int(t[i]) << 8 | Int(t[i + 1])) : nil }
        func u32(_ i: Int) -> Int? {
            guard i + 4 <= t.count else { return nil }
            let b = t[i..<i + 4].map(Int.init)
            return little ? b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24 : b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
        }
        guard let ifd = u32(4), let count = u16(ifd) else { return nil }
        for k in 0..<min(count, 512) {
            let e = ifd + 2 + k * 12
            guard let tag = u16(e) else { return nil }
            if tag == 0x0112, let value = u16(e + 8), (1...8).contains(value) { return value }
        }
        return nil
    }

    // MARK: ISO media (MP4, 3GP, M4A, MOV)

    static func isoMedia(_ file: ProbeFile) -> (duration: Double?, width: Double?, height: Double?) {
        var result: (duration: Double?, width: Double?, height: Double?) = (nil, nil, nil)
        func boxes(_ start: Int, _ end: Int, _ visit: (String, Int, Int) -> Void) {
            var offset = start
            var guardCount = 0
            while offset + 8 <= end, guardCount < 10_000 {
                guardCount += 1
                let h = file.read(at: offset, count: 16)
                guard h.count >= 8 else { return }
                var size = Int(h[0]) << 24 | Int(h[1]) << 16 | Int(h[2]) << 8 | Int(h[3])
                let type = String(decoding: h[4..<8], as: UTF8.self)
                var header = 8
                if size == 1, h.count == 16 {
                    size = h[8..<16].reduce(0) { $0 << 8 | Int($1) }
                    header = 16
                } else if size == 0 {
                    size = end - offset
                }
                guard size >= header, offset + size <= end else { return }
                visit(type, offset + header, offset + size)
                offset += size
            }
        }
        boxes(0, file.size) { type, start, end in
            guard type == "moov" else { return }
            boxes(start, end) { type, start, end in
                if type == "mvhd" {
                    let b = file.read(at: start, count: 32)
                    guard b.count >= 20 else { return }
                    func u(_ i: Int, _ n: Int) -> Int { b[i..<i + n].reduce(0) { $0 << 8 | Int($1) } }
                    let (scale, duration) = b[0] == 1 && b.count >= 32 ? (u(20, 4), u(24, 8)) : (u(12, 4), u(16, 4))
                    if scale > 0 { result.duration = Double(duration) / Double(scale) }
                } else if type == "trak", result.width == nil {
                    boxes(start, end) { type, start, end in
                        guard type == "tkhd", end - start >= 8 else { return }
                        let b = file.read(at: end - 8, count: 8)
                        guard b.count == 8 else { return }
                        let w = Double(b[0..<4].reduce(0) { $0 << 8 | Int($1) }) / 65536
                        let h = Double(b[4..<8].reduce(0) { $0 << 8 | Int($1) }) / 65536
                        if w > 0, h > 0 { result.width = w; result.height = h }
                    }
                }
            }
        }
        return result
    }

    // MARK: Ogg

    static func ogg(_ file: ProbeFile) -> Double? {
        let first = file.read(at: 0, count: 512)
        guard first.count > 28 else { return nil }
        let headerSize = 27 + Int(first[26])
        guard first.count > headerSize + 16 else { return nil }
        let packet = Array(first[headerSize...])
        let rate: Double, preSkip: Int
        if packet.starts(with: Array("OpusHead".utf8)) {
            rate = 48_000
            preSkip = Int(packet[10]) | Int(packet[11]) << 8
        } else if packet.starts(with: [0x01] + Array("vorbis".utf8)) {
            rate = Double(Int(packet[12]) | Int(packet[13]) << 8 | Int(packet[14]) << 16 | Int(packet[15]) << 24)
            preSkip = 0
        } else {
            return nil
        }
        guard rate > 0 else { return nil }
        // The last page's granule position: the last "OggS" of the file's tail.
        let tailStart = max(0, file.size - 65_536)
        let tail = file.read(at: tailStart, count: file.size - tailStart)
        var i = tail.count - 27
        while i >= 0 {
            if tail[i] == 0x4F, tail[i + 1] == 0x67, tail[i + 2] == 0x67, tail[i + 3] == 0x53 {
                let granule = tail[i + 6..<i + 14].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard granule != UInt64.max else { i -= 1; continue }
                return max(0, Double(Int64(bitPattern: granule) - Int64(preSkip)) / rate)
            }
            i -= 1
        }
        return nil
    }

    // MARK: AMR

    static func amr(_ file: ProbeFile, wideband: Bool) -> Double? {
        let sizes =
            wideband
            ? [18, 24, 33, 37, 41, 47, 51, 59, 61, 6, 1, 1, 1, 1, 1, 1]
            : [13, 14, 16, 18, 20, 21, 27, 32, 6, 1, 1, 1, 1, 1, 1, 1]
        var offset = wideband ? 9 : 6
        var frames = 0
        let chunk = 1 << 16
        var buffer: [UInt8] = []
        var bufferStart = offset
        while offset < file.size {
            if offset - bufferStart >= buffer.count {
                bufferStart = offset
                buffer = file.read(at: offset, count: chunk)
                if buffer.isEmpty { break }
            }
            let header = buffer[offset - bufferStart]
            offset += sizes[Int(header >> 3) & 0x0F]
            frames += 1
        }
        return frames > 0 ? Double(frames) * 0.02 : nil
    }

    // MARK: Matroska / WebM

    static func matroska(_ file: ProbeFile) -> Double? {
        let b = file.read(at: 0, count: 1 << 20)
        var scale = 1_000_000.0
        var duration: Double?
        func vint(_ i: inout Int, keepMarker: Bool) -> Int? {
            guard i < b.count, b[i] != 0 else { return nil }
            let length = b[i].leadingZeroBitCount + 1
            guard length <= 8, i + length <= b.count else { return nil }
            var value = keepMarker ? Int(b[i]) : Int(b[i]) & (0xFF >> length)
            for k in 1..<length { value = value << 8 | Int(b[i + k]) }
            i += length
            if !keepMarker, value == (1 << (7 * length)) - 1 { return -1 }  // unknown size
            return value
        }
        func walk(_ start: Int, _ end: Int, depth: Int) {
            var i = start
            while i < end, depth < 4 {
                guard let id = vint(&i, keepMarker: true), let size = vint(&i, keepMarker: false) else { return }
                let stop = size < 0 ? end : min(end, i + size)
                switch id {
                case 0x18538067, 0x1549A966: walk(i, stop, depth: depth + 1)  // Segment, Info
                case 0x2AD7B1: scale = Double(b[i..<stop].reduce(0) { $0 << 8 | Int($1) })
                case 0x4489:
                    let bytes = Array(b[i..<stop])
                    if bytes.count == 8 {
                        duration = Double(bitPattern: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                    } else if bytes.count == 4 {
                        duration = Double(Float(bitPattern: bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
                    }
                default: break
                }
                if duration != nil && id == 0x1549A966 { return }
                i = stop
            }
        }
        walk(0, b.count, depth: 0)
        return duration.map { $0 * scale / 1e9 }
    }

    // MARK: MP3

    static func mp3(_ file: ProbeFile) -> Double? {
        var start = 0
        let id3 = file.read(at: 0, count: 10)
        if id3.count == 10, id3.starts(with: Array("ID3".utf8)) {
            start = 10 + (Int(id3[6]) << 21 | Int(id3[7]) << 14 | Int(id3[8]) << 7 | Int(id3[9]))
        }
        let b = file.read(at: start, count: 4096)
        guard let h = (0..<max(0, b.count - 4)).first(where: { b[$0] == 0xFF && b[$0 + 1] & 0xE0 == 0xE0 }) else { return nil }
        let version = (b[h + 1] >> 3) & 3  // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
        let layer = (b[h + 1] >> 1) & 3  // 1: layer III
        let bitrateIndex = Int(b[h + 2] >> 4), rateIndex = Int((b[h + 2] >> 2) & 3)
        let mono = (b[h + 3] >> 6) == 3
        guard layer == 1, version != 1, bitrateIndex > 0, bitrateIndex < 15, rateIndex < 3 else { return nil }
        let rates = version == 3 ? [44100, 48000, 32000] : version == 2 ? [22050, 24000, 16000] : [11025, 12000, 8000]
        let sampleRate = Double(rates[rateIndex])
        let samples = version == 3 ? 1152.0 : 576.0
        let xing = h + 4 + (version == 3 ? (mono ? 17 : 32) : (mono ? 9 : 17))
        if xing + 12 <= b.count, b[xing..<xing + 4].elementsEqual(Array("Xing".utf8)) || b[xing..<xing + 4].elementsEqual(Array("Info".utf8)),
            b[xing + 7] & 1 == 1
        {
            let frames = b[xing + 8..<xing + 12].reduce(0) { $0 << 8 | Int($1) }
            return Double(frames) * samples / sampleRate
        }
        let vbri = h + 36
        if vbri + 18 <= b.count, b[vbri..<vbri + 4].elementsEqual(Array("VBRI".utf8)) {
            let frames = b[vbri + 14..<vbri + 18].reduce(0) { $0 << 8 | Int($1) }
            return Double(frames) * samples / sampleRate
        }
        let v1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        let v2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        let kbps = (version == 3 ? v1 : v2)[bitrateIndex]
        return Double(file.size - start - h) * 8 / Double(kbps * 1000)
    }

    // MARK: PDF and vCard

    /// The root page tree's `/Count` (the largest), else the number of `/Type /Page` objects.
    static func pdfPages(_ file: ProbeFile) -> Int? {
        let text = String(decoding: file.read(at: 0, count: min(file.size, 32 << 20)), as: UTF8.self)
        var best = 0
        for match in text.matches(of: #/\/Type\s*\/Pages\b[^>]*?\/Count\s+(\d+)|\/Count\s+(\d+)[^>]*?\/Type\s*\/Pages\b/#) {
            if let n = Int(match.1 ?? match.2 ?? "") { best = max(best, n) }
        }
        if best > 0 { return best }
        let pages = text.matches(of: #/\/Type\s*\/Page\b(?!s)/#).count
        return pages > 0 ? pages : nil
    }

    static func vcardName(_ file: ProbeFile) -> String? {
        VCardText.name(ofCard: String(decoding: file.read(at: 0, count: 65_536), as: UTF8.self))
    }
}

/// A file opened for reading at offsets; closed with the value. A read past the end, or one that
/// fails, gives what there is (possibly nothing), never an error: for readers of headers (media
/// files here, zip directories in BubbleImport).
package final class ProbeFile {
    let handle: FileHandle
    package let size: Int

    package init?(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        self.handle = handle
        guard let end = try? handle.seekToEnd() else { return nil }
        size = Int(end)
    }

    deinit { try? handle.close() }

    package func read(at offset: Int, count: Int) -> [UInt8] {
        guard offset >= 0, offset < size, count > 0 else { return [] }
        do {
            try handle.seek(toOffset: UInt64(offset))
            return [UInt8](try handle.read(upToCount: min(count, size - offset)) ?? Data())
        } catch {
            return []
        }
    }
}

extension MediaAttachment {
    /// Fills in what is not known yet from what the file's headers say (a contact's name only for
    /// a contact card).
    package mutating func fill(from facts: MediaProbe.Facts) {
        byteSize = byteSize ?? facts.byteSize
        mimeType = mimeType ?? facts.mimeType
        duration = duration ?? facts.duration
        pageCount = pageCount ?? facts.pageCount
        if kind == .contact { title = title ?? facts.contactName }
        if width == nil, let w = facts.width, let h = facts.height { width = w; height = h }
    }
}
