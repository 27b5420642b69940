import BubbleCore
import Foundation
import BubbleTestSupport
import BubbleHTML
import Testing
@testable import BubbleRender
@testable import BubbleText

private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

/// The media fixtures (scripts/make-media-fixtures.sh), shared with the importer tests.
private let media = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("BubbleImportTests/Fixtures/media")

private func renderer(_ theme: String = "imessage") throws -> ConversationRenderer {
    TestFonts.pin()
    let (t, folder) = try ThemeLibrary.load(theme)
    return ConversationRenderer(theme: t, themeFolder: folder, photosFolder: media.path)
}

private func one(_ image: ImageAttachment? = nil, attachment: MediaAttachment? = nil, text: String? = nil) -> Conversation {
    Conversation(
        participants: [Participant(id: "ann", name: "Ann")],
        messages: [Message(sender: "ann", direction: .incoming, date: t0, text: text, image: image, attachment: attachment)])
}

/// Which of the test picture's four colours a pixel is: red, green (lime), blue, yellow; nil for
/// anything else.
private func quadrant(_ p: (UInt8, UInt8, UInt8, UInt8)) -> String? {
    // Strict: anti-aliased text (sub-pixel coloured) must not count.
    let (r, g, b) = (Int(p.0), Int(p.1), Int(p.2))
    switch (r > 190 ? 1 : r < 70 ? 0 : -1, g > 190 ? 1 : g < 70 ? 0 : -1, b > 190 ? 1 : b < 70 ? 0 : -1) {
    case (1, 0, 0): return "red"
    case (0, 1, 0): return "green"
    case (0, 0, 1): return "blue"
    case (1, 1, 0): return "yellow"
    default: return nil
    }
}

/// Renders `conversation` to a 1× PNG and lays it out again: the picture and the first
/// message's bubble layout, both in the PNG's pixels (content starts 10 pt down).
private func rendered(_ conversation: Conversation, _ r: ConversationRenderer, in dir: URL) throws -> (RGBAImage, BubbleLayout, Double) {
    var options = RenderOptions(format: .png)
    options.scale = 1
    options.timeZone = utc
    let out = dir.appendingPathComponent("m-\(UUID().uuidString).png").path
    try r.render(conversation, to: out, options: options)
    let image = try ImageSurface(pngFile: out).rgbaImage()
    let (resolved, _) = r.resolveMedia(conversation)
    let layout = try ConversationLayouter(style: r.theme.layoutStyle, engine: r.engine, timeZone: utc).layout(resolved, width: 375)
    let row = try #require(layout.rows.first { $0.bubble != nil })
    return (image, row.bubble!, 10 + row.frame.minY)
}

@Suite("Real media in the renderers", .serialized)
struct MediaRenderTests {
    @Test(
        "a JPEG with EXIF orientation 1–8: laid out portrait (40×60) and drawn the right way up — red, green / blue, yellow at its corners",
        arguments: 1...8)
    func orientation(_ o: Int) throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer()
        let (image, bubble, top) = try rendered(one(ImageAttachment(path: "orientation-\(o).jpg", width: 0, height: 0)), r, in: dir)
        let frame = try #require(bubble.imageFrames.first)
        #expect(frame.size == Size(width: 40, height: 60), "orientation \(o): \(frame.size)")
        func at(_ fx: Double, _ fy: Double) -> String? {
            quadrant(image.pixel(x: Int(frame.minX + frame.width * fx), y: Int(top + frame.minY + frame.height * fy)))
        }
        #expect([at(0.25, 0.25), at(0.75, 0.25), at(0.25, 0.75), at(0.75, 0.75)] == ["red", "green", "blue", "yellow"], "orientation \(o)")
        #expect(PhotoLoader.size(ofFile: media.appendingPathComponent("orientation-\(o).jpg").path)! == (40, 60))
    }

    @Test("the HTML export shows a turned photo in the same box as the PNG (Chromium screenshot, within 2 px), once turned")
    func orientationInHTML() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer()
        let conversation = one(ImageAttachment(path: "orientation-6.jpg", width: 0, height: 0))
        let (png, _, _) = try rendered(conversation, r, in: dir)
        var options = HTMLOptions()
        options.timeZone = utc
        let path = dir.appendingPathComponent("o.html").path
        try HTMLExporter(theme: r.theme, themeFolder: r.themeFolder, photosFolder: media.path, options: options, pictures: PhotoDecoder()).export(
            conversation, to: path)
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(html.contains("width=\"40\" height=\"60\""), "the displayed size, not the stored 60×40")
        let shot = try Chromium.screenshot(path, width: 375, height: 300)
        /// The box of the picture's four colours, and the colour at each quarter point.
        func box(_ image: RGBAImage) -> (Rect, [String?]) {
            var minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
            for y in 0..<image.height {
                for x in 0..<image.width where quadrant(image.pixel(x: x, y: y)) != nil {
                    minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                }
            }
            let w = Double(maxX - minX + 1), h = Double(maxY - minY + 1)
            let corners = [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)].map {
                quadrant(image.pixel(x: minX + Int(w * $0.0), y: minY + Int(h * $0.1)))
            }
            return (Rect(x: Double(minX), y: Double(minY), width: w, height: h), corners)
        }
        let (a, ca) = box(png), (b, cb) = box(shot)
        #expect(abs(a.width - b.width) <= 2 && abs(a.height - b.height) <= 2, "PNG \(a) vs HTML \(b)")
        #expect(abs(a.minX - b.minX) <= 2, "PNG \(a) vs HTML \(b)")
        #expect(ca == ["red", "green", "blue", "yellow"] && cb == ca, "PNG \(ca), HTML \(cb)")
    }

    @Test("a sticker: no bubble, transparency kept (the page shows between the disc and its box), at sticker size; animated WebP: its first frame")
    func stickers() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer()
        for (file, colour) in [("STK-20211014-WA0005.webp", (0xff, 0x33, 0x66)), ("animated-sticker.webp", (0xff, 0x33, 0x66))] {
            let (image, bubble, top) = try rendered(one(attachment: MediaAttachment(kind: .sticker, fileName: file, path: file)), r, in: dir)
            let frame = try #require(bubble.imageFrames.first)
            #expect(frame.size == Size(width: 140, height: 140), "\(file): \(frame.size)")
            #expect(bubble.emojiOnly, "no bubble")
            let centre = image.pixel(x: Int(frame.midX), y: Int(top + frame.midY))
            #expect(
                abs(Int(centre.0) - colour.0) < 8 && abs(Int(centre.1) - colour.1) < 8 && abs(Int(centre.2) - colour.2) < 8,
                "\(file): centre \(centre)")
            // The box's corner is outside the disc: the white page, not a bubble colour.
            let corner = image.pixel(x: Int(frame.minX + 3), y: Int(top + frame.minY + 3))
            #expect(corner == (255, 255, 255, 255), "\(file): corner \(corner)")
        }
    }

    @Test("HEIC and GIF photos are decoded and drawn; the HTML export carries HEIC as JPEG")
    func otherFormats() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer()
        let (image, bubble, top) = try rendered(one(ImageAttachment(path: "photo.heic", width: 0, height: 0)), r, in: dir)
        let frame = try #require(bubble.imageFrames.first)
        #expect(frame.size == Size(width: 160, height: 240))
        #expect(quadrant(image.pixel(x: Int(frame.minX + 40), y: Int(top + frame.minY + 60))) == "red")
        #expect(quadrant(image.pixel(x: Int(frame.maxX - 40), y: Int(top + frame.maxY - 60))) == "yellow")
        let (gif, gifBubble, gifTop) = try rendered(one(ImageAttachment(path: "photo.gif", width: 0, height: 0)), r, in: dir)
        let g = try #require(gifBubble.imageFrames.first)
        let orange = gif.pixel(x: Int(g.minX + 3), y: Int(gifTop + g.minY + g.height / 2))
        #expect(orange.0 > 240 && orange.1 > 150 && orange.1 < 180 && orange.2 < 20, "\(orange)")

        var options = HTMLOptions()
        options.timeZone = utc
        let path = dir.appendingPathComponent("h.html").path
        try HTMLExporter(theme: r.theme, themeFolder: r.themeFolder, photosFolder: media.path, options: options, pictures: PhotoDecoder())
            .export(one(ImageAttachment(path: "photo.heic", width: 0, height: 0)), to: path)
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(html.contains("<img src=\"data:image/jpeg;base64,/9j/"), "HEIC transcoded to JPEG for the browser")
    }

    @Test("a video: a frame of its own aspect, dark without a poster, its poster when it has one, a play symbol in the middle; the duration under it")
    func video() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer()
        let video = MediaAttachment(kind: .video, fileName: "VID-20211014-WA0003.mp4", path: "VID-20211014-WA0003.mp4")
        let (image, bubble, top) = try rendered(one(attachment: video), r, in: dir)
        let frame = try #require(bubble.imageFrames.first)
        #expect(abs(frame.width / frame.height - 64.0 / 36.0) < 0.01, "the video's 64×36 aspect: \(frame.size)")
        let dark = image.pixel(x: Int(frame.minX + 8), y: Int(top + frame.minY + 8))
        #expect(dark.0 < 40 && dark.1 < 40 && dark.2 < 40, "dark frame: \(dark)")
        let play = image.pixel(x: Int(frame.midX), y: Int(top + frame.midY))
        #expect(play == (255, 255, 255, 255), "white triangle at the centre: \(play)")
        let (resolved, report) = r.resolveMedia(one(attachment: video))
        #expect(report.problems.isEmpty && report.checked == 1)
        #expect(resolved.messages[0].shownText == "🎬 Video · 0:02")

        // With a poster (Telegram's thumbnail): the poster fills the frame.
        var withPoster = video
        withPoster.poster = "orientation-1.jpg"
        let (p, pb, ptop) = try rendered(one(attachment: withPoster), r, in: dir)
        let pf = try #require(pb.imageFrames.first)
        #expect(quadrant(p.pixel(x: Int(pf.minX + 4), y: Int(ptop + pf.minY + 4))) == "red")
    }

    @Test("one unreadable picture among others never stops a render: the others are drawn, it is a labelled placeholder and one problem")
    func corrupt() throws {
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer()
        var conversation = one(ImageAttachment(path: "orientation-1.jpg", width: 0, height: 0))
        conversation.messages.append(
            Message(
                sender: "ann", direction: .incoming, date: t0.addingTimeInterval(60),
                image: ImageAttachment(path: "corrupt.jpg", width: 0, height: 0, name: "IMG-20211014-WA0009.jpg")))
        for format in [OutputFormat.png, .pdf, .svg] {
            let out = dir.appendingPathComponent("c.\(format.rawValue)").path
            try r.render(conversation, to: out, options: RenderOptions(format: format))
            #expect(FileManager.default.fileExists(atPath: out))
            #expect(r.mediaReport.problems.map(\.file) == ["IMG-20211014-WA0009.jpg"])
            #expect(r.mediaReport.summary == "1 of 2 attachments could not be read")
        }
        let svg = try String(contentsOfFile: dir.appendingPathComponent("c.svg").path, encoding: .utf8)
        #expect(svg.contains("(could not be read)") && svg.contains("WA0009.jpg"), "the placeholder's label (wrapped)")
        #expect(svg.components(separatedBy: "data:image/jpeg;base64,").count == 2, "the good photo is embedded once")
    }
}
