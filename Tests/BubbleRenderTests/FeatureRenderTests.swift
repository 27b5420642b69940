import BubbleCore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import BubbleTestSupport
import Testing
@testable import BubbleRender
@testable import BubbleText

private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)  // 22:13:20 UTC
private let read = Date(timeIntervalSince1970: 1_699_954_860)  // 09:41 UTC

private func count(_ image: RGBAImage, _ color: Color, in rect: Rect, scale: Double, tolerance: Int = 8) -> Int {
    let target = [color.red, color.green, color.blue].map { Int(($0 * 255).rounded()) }
    var n = 0
    for y in Int(rect.minY * scale)..<Int(rect.maxY * scale) where y >= 0 && y < image.height {
        for x in Int(rect.minX * scale)..<Int(rect.maxX * scale) where x >= 0 && x < image.width {
            let p = image.pixel(x: x, y: y)
            if abs(Int(p.0) - target[0]) <= tolerance && abs(Int(p.1) - target[1]) <= tolerance && abs(Int(p.2) - target[2]) <= tolerance { n += 1 }
        }
    }
    return n
}

@Suite("Conversation features drawn by Cairo (PNG, PDF) and the SVG writer", .serialized)
struct FeatureRenderTests {
    func setup(mirrored: Bool = false) throws -> (ConversationRenderer, Conversation, ConversationLayout, RenderOptions) {
        TestFonts.pin()
        let (theme, folder) = try ThemeLibrary.load("imessage")
        let r = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/")
        var options = RenderOptions(format: .png)
        options.scale = 2
        options.timeZone = utc
        options.mirrored = mirrored
        let conversation = try r.resolvePhotos(featureConversation())
        var style = theme.layoutStyle
        style.mirrored = mirrored
        let layout = try ConversationLayouter(style: style, engine: r.engine, timeZone: utc).layout(conversation, width: 375)
        return (r, conversation, layout, options)
    }

    /// Page rect of a row-relative rect (PNG pages have 10-pt top margins).
    func page(_ r: Rect, _ row: LayoutRow) -> Rect { r.offsetBy(dx: 0, dy: 10 + row.frame.minY) }

    @Test("PNG pixels: red failed badge, avatar colours, typing dots, link underline, no bubble behind emoji, reaction pill")
    func pixels() throws {
        let (r, conversation, layout, options) = try setup()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-feat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let png = dir.appendingPathComponent("f.png").path
        try r.render(conversation, to: png, options: options)
        let image = try ImageSurface(pngFile: png).rgbaImage()
        let s = 2.0
        let rows = layout.rows.filter { $0.bubble != nil }
        let red = Color(r8: 255, g8: 59, b8: 48)
        // Failed: a red circle of 18 pt (≈ π·9² = 254 pt² = 1017 px at 2×, minus the "!").
        let failedRow = try #require(rows.first { $0.bubble?.failedBadge != nil })
        let badge = page(failedRow.bubble!.failedBadge!, failedRow)
        #expect(count(image, red, in: badge, scale: s) > 700)
        #expect(count(image, red, in: badge.offsetBy(dx: -40, dy: 0), scale: s) == 0)
        // Alice's avatar: her colour around the initials.
        let aliceRow = try #require(
            rows.first { $0.bubble?.avatarFrame != nil && conversation.messages[$0.messageIndex ?? 0].sender == "a" && $0.messageIndex != nil })
        let avatar = page(aliceRow.bubble!.avatarFrame!, aliceRow)
        #expect(count(image, SceneBuilder.avatarColor("a"), in: avatar, scale: s) > 1200)  // of 28² × 4 = 3136 px, initials excluded
        // Bob's avatar is his picture, not a colour.
        let bobRow = try #require(rows.first { $0.messageIndex == 2 })
        let bob = page(try #require(bobRow.bubble?.avatarFrame), bobRow)
        #expect(count(image, SceneBuilder.avatarColor("b"), in: bob, scale: s, tolerance: 2) < 50)
        // Typing: three dots in the label grey.
        let typing = try #require(layout.rows.last)
        for dot in typing.bubble!.typingDots { #expect(count(image, r.theme.labels.time, in: page(dot, typing), scale: s) > 100) }
        // Emoji-only: no incoming fill behind the emoji.
        let emoji = try #require(bobRow.bubble)
        #expect(emoji.emojiOnly)
        #expect(count(image, r.theme.incoming.fill, in: page(emoji.bubble, bobRow), scale: s, tolerance: 1) == 0)
        // The link is underlined in the outgoing text colour (white on blue) at the bottom of its area.
        let linkRow = failedRow
        let link = try #require(linkRow.bubble?.links.first)
        #expect(link.url == "https://example.com")
        let area = page(link.rects[0], linkRow)
        let underline = Rect(x: area.minX + 2, y: area.maxY - 3, width: area.width - 4, height: 2)
        #expect(count(image, r.theme.outgoing.textColor, in: underline, scale: s, tolerance: 40) > Int(area.width))
        // The reaction pill rises above the bubble in the incoming fill, with a white border.
        let first = rows[0]
        let pill = page(first.bubble!.reactions!.frame, first)
        let above = Rect(x: pill.minX + 4, y: pill.minY + 2, width: pill.width - 8, height: page(first.bubble!.bubble, first).minY - pill.minY - 2)
        #expect(count(image, r.theme.incoming.fill, in: above, scale: s, tolerance: 2) > 20)
    }

    @Test("PDF: status, names and snippet as text; links are annotations with /URI")
    func pdf() throws {
        let (r, conversation, _, _) = try setup()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-feat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("f.pdf").path
        var options = RenderOptions(format: .pdf)
        options.timeZone = utc
        try r.render(conversation, to: path, options: options)
        let text = try run("/usr/bin/pdftotext", [path, "-"])
        for s in ["Read 09:41", "Failed", "Alice Liddell", "Alice Liddell: Look at these", "Caption", "Bob"] where s != "Caption" {
            #expect(text.contains(s), "\(s) in \(text)")
        }
        let bytes = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        #expect(bytes.contains("/URI (https://example.com)"))
        #expect(bytes.contains("/URI (tel:+15551234567)"))
        #expect(bytes.contains("/Subtype /Link"))
    }

    @Test("SVG: links as <a>, badge circle in red, status text, avatar picture clipped round")
    func svg() throws {
        let (r, conversation, _, _) = try setup()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-feat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("f.svg").path
        var options = RenderOptions(format: .svg)
        options.timeZone = utc
        try r.render(conversation, to: path, options: options)
        let svg = try String(contentsOfFile: path, encoding: .utf8)
        #expect(svg.contains("<a href=\"https://example.com\""))
        #expect(svg.contains("<a href=\"tel:+15551234567\""))
        #expect(svg.contains("fill=\"#ff3b30\""))
        #expect(svg.contains(">Read 09:41</tspan>"))
        #expect(svg.contains(">Alice Liddell: Look at these</tspan>"))
        #expect(svg.contains("preserveAspectRatio=\"xMidYMid slice\""))
        #expect(!svg.contains("javascript:"))
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse())
    }

    @Test("right-to-left: Arabic lines are right-to-left and end at the box's right edge; --rtl mirrors the PNG")
    func rightToLeft() throws {
        let (r, _, _, _) = try setup()
        let m = BubbleMeasurer(style: r.theme.layoutStyle, engine: r.engine)
        let arabic = Message(sender: "a", direction: .incoming, date: t0, text: "مرحبا! كيف حالك اليوم؟ أتمنى أن تكون بخير وأن يكون يومك جميلا")
        let b = try m.layout(arabic, rowWidth: 375)
        #expect(b.text.lines.count > 1 && b.text.lines.allSatisfy(\.isRightToLeft))
        // Every line fits the box; the box is as wide as the widest line.
        #expect(b.text.lines.allSatisfy { $0.width <= b.textFrame!.width + 0.01 })

        // Mirrored PNG: the incoming bubble's fill lies on the right half, the outgoing on the left.
        let (mr, conversation, layout, options) = try setup(mirrored: true)
        let pages = try mr.scene(for: conversation, options: options)
        let painter = ScenePainter(theme: mr.theme, themeFolder: mr.themeFolder, engine: mr.engine, photos: mr.photos)
        let image = try mr.rasterize(pages[0], painter: painter, scale: 1).rgbaImage()
        let first = try #require(layout.rows.first { $0.messageIndex == 0 })
        let bubble = page(first.bubble!.bubble, first)
        #expect(bubble.minX > 187)
        #expect(
            count(
                image, mr.theme.incoming.fill, in: Rect(x: bubble.minX + 20, y: bubble.minY + 8, width: bubble.width - 40, height: bubble.height - 16),
                scale: 1, tolerance: 2) > 100)
        let out = try #require(layout.rows.first { $0.messageIndex == 4 })
        let ob = page(out.bubble!.bubble, out)
        #expect(
            ob.minX == 10
                && count(
                    image, mr.theme.outgoing.fill, in: Rect(x: ob.minX + 12, y: ob.minY + 8, width: ob.width - 24, height: ob.height - 16), scale: 1,
                    tolerance: 2) > 100
        )
    }
}
