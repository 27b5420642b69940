import BubbleCore
import Foundation
import Testing

/// `MediaProbe` on real files made by ffmpeg, ImageMagick, cwebp and heif-enc
/// (scripts/make-media-fixtures.sh): durations from the container headers, a PDF's pages, a
/// vCard's name, a JPEG's EXIF orientation.
@Suite("Media probe")
struct MediaProbeTests {
    static func media(_ name: String) -> String { Fixtures.path("media/" + name) }

    @Test("durations read from the headers: MP4 mvhd, 3GP, WebM, Ogg Opus granule minus pre-skip, AMR frames, MP3",
          arguments: [("VID-20211014-WA0003.mp4", "video/mp4", 2.5), ("video.3gp", "video/3gpp", 1.5), ("clip.webm", "video/webm", 1.8),
                      ("PTT-20211014-WA0004.opus", "audio/ogg", 3.2), ("voice.amr", "audio/amr", 2.0), ("song.mp3", "audio/mpeg", 4.0)])
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
}
