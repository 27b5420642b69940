import BubbleCore
import Foundation
import BubbleTestSupport
import Testing
@testable import BubbleRender
@testable import BubbleText

private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

/// Pictures compared with committed ones (Tests/BubbleRenderTests/Golden), pixel by pixel
/// within a tolerance: a channel may differ by 24 on at most 0.5 % of the pixels (anti-aliasing
/// of another FreeType or Cairo build), no more. The fonts are pinned (TestFonts).
///
/// Regenerate after an intended change of the drawing:
///
///     BUBBLEKIT_UPDATE_GOLDEN=1 swift test --filter GoldenImageTests
///
/// and look at the new files before committing them.
enum Golden {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static func check(_ image: ImageSurface, _ name: String) throws {
        let url = folder.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["BUBBLEKIT_UPDATE_GOLDEN"] == "1" {
            try image.writePNG(to: url.path)
            return
        }
        let expected = try ImageSurface(pngFile: url.path).rgbaImage()
        let actual = image.rgbaImage()
        try #require(
            expected.width == actual.width && expected.height == actual.height,
            "\(name): \(actual.width)×\(actual.height), golden \(expected.width)×\(expected.height)")
        var off = 0
        for i in stride(from: 0, to: actual.bytes.count, by: 4) {
            for c in 0..<4 where abs(Int(actual.bytes[i + c]) - Int(expected.bytes[i + c])) > 24 { off += 1; break }
        }
        let share = Double(off) / Double(actual.width * actual.height)
        #expect(
            share <= 0.005, "\(name): \(off) pixels differ (\(String(format: "%.2f", share * 100)) %); regenerate with BUBBLEKIT_UPDATE_GOLDEN=1 if intended")
    }
}

@Suite("Golden images", .serialized)
struct GoldenImageTests {
    /// Replies on both sides, to left-to-right and right-to-left text.
    static let replies = Conversation(
        participants: [
            Participant(id: "me", name: "Me"), Participant(id: "ann", name: "Ann"),
            Participant(id: "dana", name: "דנה")
        ],
        messages: [
            Message(sender: "ann", direction: .incoming, date: t0, text: "Lunch at noon?", id: "1"),
            Message(
                sender: "me", direction: .outgoing, date: t0 + 60, text: "Yes, see you there",
                reply: ReplyReference(id: "1", sender: "ann", text: "Lunch at noon?")),
            Message(
                sender: "ann", direction: .incoming, date: t0 + 120, text: "Great",
                reply: ReplyReference(id: "2", sender: "me", text: "Yes, see you there")),
            Message(
                sender: "me", direction: .outgoing, date: t0 + 180, text: "!מעולה",
                reply: ReplyReference(id: "9", sender: "dana", text: "נתראה בצהריים"))
        ])

    @Test(
        "reply snippets: the quote bar on the leading edge on both sides (the right only for right-to-left text), imessage and whatsapp",
        arguments: ["imessage", "whatsapp"])
    func replySnippets(_ themeName: String) throws {
        TestFonts.pin()
        let (theme, folder) = try ThemeLibrary.load(themeName)
        let r = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/", textEngine: .pango)
        var options = RenderOptions(format: .png)
        options.scale = 1
        options.timeZone = utc
        let (builder, plan) = try r.scenePlan(for: Self.replies, options: options)
        let page = try builder.page(0, of: plan)
        let painter = ScenePainter(theme: theme, themeFolder: folder, engine: r.engine, photos: r.photos)
        let image = try r.rasterize(page, painter: painter, scale: 1)

        // Numerically first: each snippet's bar is 5 pt inside its box's left edge, or 8 pt inside
        // its right edge for the Hebrew one.
        let replies = plan.layout.rows.compactMap { row in row.bubble?.reply.map { ($0.frame.offsetBy(dx: 0, dy: 10 + row.frame.minY), row) } }
        try #require(replies.count == 3)
        let pixels = image.rgbaImage()
        func isBar(_ x: Double, _ frame: Rect) -> Bool {
            let p = pixels.pixel(x: Int(x), y: Int(frame.midY))
            let bar = theme.replyBar
            return abs(Int(p.0) - Int(bar.red * 255)) < 30 && abs(Int(p.1) - Int(bar.green * 255)) < 30 && abs(Int(p.2) - Int(bar.blue * 255)) < 30
        }
        for (k, (frame, _)) in replies.enumerated() {
            let rightToLeft = k == 2
            #expect(isBar(rightToLeft ? frame.maxX - 6.5 : frame.minX + 6.5, frame), "\(themeName) reply \(k): bar on its leading edge")
            #expect(!isBar(rightToLeft ? frame.minX + 6.5 : frame.maxX - 6.5, frame), "\(themeName) reply \(k): no bar on its trailing edge")
        }
        try Golden.check(image, "replies-\(themeName).png")
    }

    @Test("photo grids of 2, 3, 4, 5 and 7: no empty cell", arguments: [2, 3, 4, 5, 7])
    func grids(_ count: Int) throws {
        TestFonts.pin()
        let (theme, folder) = try ThemeLibrary.load("imessage")
        let r = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: BundledSamples.folder.path, textEngine: .pango)
        let photos = (0..<count).map { _ in ImageAttachment(path: "demo-photo.png", width: 0, height: 0) }
        let conversation = Conversation(messages: [Message(sender: "ann", direction: .incoming, date: t0, images: photos)])
        var options = RenderOptions(format: .png)
        options.scale = 1
        options.timeZone = utc
        let (resolved, _) = r.resolveMedia(conversation)
        let (builder, plan) = try r.scenePlan(for: resolved, options: options)
        let page = try builder.page(0, of: plan)
        let painter = ScenePainter(theme: theme, themeFolder: folder, engine: r.engine, photos: r.photos)
        let image = try r.rasterize(page, painter: painter, scale: 1)
        try Golden.check(image, "grid-\(count).png")
    }
}
