import BubbleCore
import BubbleMedia
import Foundation
import Testing

/// `MediaProbe` on real files made by ffmpeg, ImageMagick, cwebp and heif-enc
/// (scripts/make-media-fixtures.sh): durations from the container headers, a PDF's pages, a
/// vCard's name, a JPEG's EXIF orientation.
@Suite("Media probe")
struct MediaProbeTests {
    static func media(_ name: String) -> String { Fixtures.path("media/" + name) }

    @Test(
        "durations read from the headers: MP4 mvhd, 3GP, WebM, Ogg Opus granule minus pre-skip, AMR frames, MP3",
        arguments: [
            ("VID-20211014-WA0003.mp4", "video/mp4", 2.5), ("video.3gp", "video/3gpp", 1.5), ("clip.webm", "video/webm", 1.8),
            ("PTT-20211014-WA0004.opus", "audio/ogg", 3.2), ("voice.amr", "audio/amr", 2.0), ("song.mp3", "audio/mpeg", 4.0)
        ])
    func durations(_ name: String, _ mime: String, _ seconds: Double) throws {
        let facts = MediaProbe.probe(path: Self.media(name))
        #expect(facts.mimeType == mime)
        let d = try #require(facts.duration, "\(name): no duration")
        #expect(abs(d - seconds) < 0.1, "\(name): \(d) s, expected \(seconds)")
        #expect(facts.byteSize == (try FileManager.default.attributesOfItem(atPath: Self.media(name))[.size] as? Int))
    }

    @Test("an MP4's picture size comes from its track header")
    func videoSize() {
        let facts = MediaProbe.probe(path: Self.media("VID-20211014-WA0003.mp4"))
        #expect(facts.width == 64 && facts.height == 36)
    }

    @Test("a PDF's page count, a vCard's name")
    func documents() {
        #expect(MediaProbe.probe(path: Self.media("Trip plan.pdf")).pageCount == 2)
        #expect(MediaProbe.probe(path: Self.media("Ann Lee.vcf")).contactName == "Ann Lee")
    }

    @Test("EXIF orientation 1–8 of a JPEG; none for other files", arguments: 1...8)
    func orientation(_ o: Int) {
        #expect(MediaProbe.jpegOrientation(path: Self.media("orientation-\(o).jpg")) == o)
    }

    @Test("files that are not media give no facts, never an error")
    func notMedia() {
        #expect(MediaProbe.jpegOrientation(path: Self.media("photo.gif")) == nil)
        #expect(MediaProbe.jpegOrientation(path: Self.media("corrupt.jpg")) == nil)
        let garbage = MediaProbe.probe(path: Self.media("corrupt.jpg"))
        #expect(garbage.duration == nil && garbage.pageCount == nil)
        #expect(MediaProbe.probe(path: "/no/such/file").byteSize == nil)
        #expect(MediaProbe.mimeType(Array("ID3".utf8)) == "audio/mpeg")
    }
    @Test(
        "a picture cut short is found from its structure (PNG chunks to IEND, JPEG end marker after the scan, GIF trailer, WebP size); whole ones, and a JPEG with data after its end (motion photos), are not"
    )
    func incompleteness() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-cut-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func file(_ name: String, _ bytes: Data) throws -> String {
            let path = dir.appendingPathComponent(name).path
            try bytes.write(to: URL(fileURLWithPath: path))
            return path
        }
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: Self.media("orientation-6.jpg")))
        let gif = try Data(contentsOf: URL(fileURLWithPath: Self.media("photo.gif")))
        let webp = try Data(contentsOf: URL(fileURLWithPath: Self.media("STK-20211014-WA0005.webp")))
        // A PNG: signature, IHDR, two IDAT chunks, IEND (the structure is what is checked).
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let n = UInt32(data.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)] + Array(type.utf8) + data + [0, 0, 0, 0]
        }
        let png = Data(
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", Array(repeating: 1, count: 13))
                + chunk("IDAT", Array(repeating: 7, count: 400)) + chunk("IDAT", Array(repeating: 9, count: 400)) + chunk("IEND", []))

        for (name, whole) in [("a.jpg", jpeg), ("a.gif", gif), ("a.webp", webp), ("a.png", png)] {
            #expect(MediaProbe.incompleteness(path: try file(name, whole)) == nil, "\(name) is whole")
            let cut = try file("cut-" + name, whole.prefix(whole.count * 2 / 3))
            #expect(MediaProbe.incompleteness(path: cut)?.hasPrefix("cut short") == true, "\(name) cut: \(MediaProbe.incompleteness(path: cut) ?? "nil")")
        }
        // Data after the end marker (a motion photo's video, 200 KB) keeps a JPEG whole.
        let motion = try file("motion.jpg", jpeg + Data(repeating: 0x42, count: 200_000))
        #expect(MediaProbe.incompleteness(path: motion) == nil)
        // Not pictures, or formats not checked: nil.
        #expect(MediaProbe.incompleteness(path: Self.media("Trip plan.pdf")) == nil)
        #expect(MediaProbe.incompleteness(path: dir.appendingPathComponent("none.png").path) == nil)
    }
}
