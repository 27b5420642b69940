import BubbleCore
import Foundation
import BubbleTestSupport
@testable import BubbleHTML
import Testing
@testable import BubbleRender
@testable import BubbleText

@Suite("Conversation features in the HTML export", .serialized)
struct FeatureHTMLTests {
    func export(_ conversation: Conversation, theme: String = "imessage", mirrored: Bool = false) throws -> String {
        TestFonts.pin()
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (t, folder) = try ThemeLibrary.load(theme)
        var options = HTMLOptions()
        options.timeZone = TimeZone(identifier: "UTC")!
        options.mirrored = mirrored
        let path = dir.appendingPathComponent("chat.html").path
        try HTMLExporter(theme: t, themeFolder: folder, photosFolder: "/", options: options, pictures: PhotoDecoder()).export(conversation, to: path)
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test("markup for names, avatars, reply, reactions, grid, links, emoji, status, failed badge, typing")
    func markup() throws {
        let html = try export(featureConversation())
        let body = String(html[html.range(of: "<main class=\"c w\">")!.upperBound...])
        #expect(body.contains("<div class=\"n\"><bdi>Alice Liddell</bdi></div>"))
        #expect(body.contains("<div class=\"n\"><bdi>Bob</bdi></div>"))
        // Alice's initials avatar on the last bubble of her group (and the typing bubble), Bob's picture.
        #expect(body.components(separatedBy: ">AL</span>").count - 1 == 2)
        #expect(body.contains("<img class=\"av\" src=\"data:image/png;base64,"))
        #expect(body.contains("<blockquote class=\"r o\"><bdi>Alice Liddell: Look at these</bdi></blockquote>"))
        #expect(body.contains("<span class=\"rx\">❤️ 2</span>"))
        // The grid comes with the layout engine's width for it (at the export's 375 pt).
        let grid = try #require(body.range(of: "<div class=\"gr\" style=\"width:"))
        let gridWidth = try #require(Double(body[grid.upperBound...].prefix { $0 != "p" }))
        #expect(gridWidth > 100 && gridWidth < 375 && body[grid.upperBound...].prefix(60).contains(";--wa:"), "\(gridWidth)")
        #expect(body[grid.upperBound...].prefix(while: { _ in true }).components(separatedBy: "<img ").count - 1 >= 3)
        #expect(body.contains("<a href=\"https://example.com\" rel=\"noopener noreferrer\">"))
        #expect(body.contains("<a href=\"tel:+15551234567\" rel=\"noopener noreferrer\">+1 555 123 4567</a>"))
        #expect(body.contains("<div class=\"b i e"))
        #expect(body.contains("<div class=\"st f\">Failed</div>"))
        #expect(body.contains("<div class=\"st\">Read 09:41</div>"))
        #expect(body.contains("<span class=\"fb\" title=\"Failed\">!</span>"))
        #expect(body.contains("<div class=\"b i t ty\" aria-label=\"typing\">"))
        #expect(body.contains("<i></i><i></i><i></i></div>"))
        // Only the last outgoing message shows a delivery status.
        #expect(body.components(separatedBy: "<div class=\"st").count - 1 == 2)
    }

    @Test("times in day separators only: the day and the first time, a time-only separator after a pause, as the layout has them")
    func timeInSeparators() throws {
        TestFonts.pin()
        let t0 = Date(timeIntervalSince1970: 1_763_629_200)  // 2025-11-20 09:00 UTC
        let c = Conversation(
            participants: [Participant(id: "a", name: "A"), Participant(id: "me", name: "Me")],
            messages: [
                Message(sender: "a", direction: .incoming, date: t0, text: "one"),
                Message(sender: "me", direction: .outgoing, date: t0 + 600, text: "two"),
                Message(sender: "a", direction: .incoming, date: t0 + 600 + 7200, text: "three")
            ])
        let (theme, folder) = try ThemeLibrary.load("sms")
        var style = theme
        style.timestamps = .daySeparator
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = HTMLOptions()
        options.timeZone = TimeZone(identifier: "UTC")!
        let path = dir.appendingPathComponent("chat.html").path
        try HTMLExporter(theme: style, themeFolder: folder, photosFolder: "/", options: options, pictures: PhotoDecoder()).export(c, to: path)
        let html = try String(contentsOfFile: path, encoding: .utf8)
        let separators = html.components(separatedBy: "<div class=\"d\">").dropFirst().map { String($0.prefix { $0 != "<" }) }
        let layout = try ConversationLayouter(style: style.layoutStyle, engine: MonospaceTextEngine(), timeZone: options.timeZone)
            .layout(c, width: 375)
        let expected = layout.rows.compactMap { row -> String? in
            if case .daySeparator(let label) = row.content { return label.string } else { return nil }
        }
        #expect(separators == ["Thursday, 20 November 2025, 09:00", "11:10"])
        #expect(separators == expected)
        #expect(!html.contains("<time>"))
    }

    @Test("no link but http, https, mailto and tel")
    func hostileLinks() throws {
        let c = Conversation(
            participants: [Participant(id: "a", name: "A"), Participant(id: "me", name: "Me")],
            messages: [
                Message(
                    sender: "a", direction: .incoming, date: Date(timeIntervalSince1970: 0),
                    text: "javascript:alert(1) data:text/html,<b>x</b> mail ann@example.org \"><script>")
            ])
        let html = try export(c)
        #expect(!html.contains("href=\"javascript"))
        #expect(!html.contains("href=\"data"))
        #expect(!html.contains("<script>"))
        #expect(html.contains("<a href=\"mailto:ann@example.org\" rel=\"noopener noreferrer\">ann@example.org</a>"))
    }

    @Test("--rtl: incoming bubbles pushed to the right, tails flipped")
    func mirrored() throws {
        let css = try export(featureConversation(), mirrored: true)
        #expect(css.contains(".i{margin-left:auto"))
        #expect(css.contains(".o{margin-right:auto"))
        #expect(css.contains("--bk-tail-flip:scaleX(-1)") && css.contains(".t::after{transform:var(--bk-tail-flip)}"))
        // The mirrored sections swap sides; the rest of theme.css does not (a quote's bar stays on the left).
        #expect(css.contains("right:var(--bk-i-near)") && css.contains(".qt{border-left:2.5px solid"))
        let normal = try export(featureConversation())
        #expect(normal.contains(".i{margin-right:auto"))
    }
}
