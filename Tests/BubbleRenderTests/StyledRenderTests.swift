import BubbleCore
import BubbleHTML
import BubbleMedia
@testable import BubbleRender
import BubbleTestSupport
@testable import BubbleText
import Foundation
import Testing

private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

/// "Look at this", bold; "italic"; "code_name()" as code; "the butler did it" a spoiler.
private func styled() -> Conversation {
    let text = "Look at this: italic and code_name() — the butler did it"
    func range(_ s: String) -> Range<Int> {
        let b = Array(text.utf8), n = Array(s.utf8)
        let i = (0...(b.count - n.count)).first { Array(b[$0..<($0 + n.count)]) == n }!
        return i..<(i + n.count)
    }
    let spans = [
        TextSpan(.bold, range("this")), TextSpan(.italic, range("italic")), TextSpan(.code, range("code_name()")),
        TextSpan(.spoiler, range("the butler did it"))
    ]
    return Conversation(
        participants: [Participant(id: "ann", name: "Ann"), Participant(id: "me", name: "Me")],
        messages: [Message(sender: "ann", direction: .incoming, date: t0, text: text, spans: spans)])
}

@Suite("Styled text drawn by Cairo and written as HTML", .serialized)
struct StyledRenderTests {
    func render(_ c: Conversation, _ format: OutputFormat, reveal: Bool = false, engine: TextEngineKind = .fast) throws -> (String, URL) {
        TestFonts.pin()
        let (theme, folder) = try ThemeLibrary.load("imessage")
        let r = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/", textEngine: engine)
        var options = RenderOptions(format: format)
        options.timeZone = utc
        options.revealSpoilers = reveal
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-styled-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent(format == .pdf ? "s.pdf" : format == .svg ? "s.svg" : "s.png").path
        try r.render(c, to: path, options: options)
        return (path, dir)
    }

    @Test(
        "PDF: the bold, italic and monospace faces are embedded; the spoiler's text is not in it unless revealed",
        arguments: [TextEngineKind.fast, .pango])
    func pdfFacesAndSpoiler(_ engine: TextEngineKind) throws {
        let (pdf, dir) = try render(styled(), .pdf, engine: engine)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fonts = try run("/usr/bin/pdffonts", [pdf])
        #expect(fonts.contains("LiberationSans-Bold"))
        #expect(fonts.contains("LiberationSans-Italic"))
        #expect(fonts.contains("LiberationMono"))
        let text = try run("/usr/bin/pdftotext", [pdf, "-"])
        #expect(text.contains("Look at this"))
        #expect(text.contains("code_name()"))
        #expect(!text.contains("butler"))
        let (revealed, dir2) = try render(styled(), .pdf, reveal: true, engine: engine)
        defer { try? FileManager.default.removeItem(at: dir2) }
        let words = try run("/usr/bin/pdftotext", [revealed, "-"]).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("the butler did it"))
    }

    @Test("SVG: faces as tspans, a box in place of the spoiler, whose text is left out unless revealed")
    func svg() throws {
        let (hidden, dir) = try render(styled(), .svg)
        defer { try? FileManager.default.removeItem(at: dir) }
        let svg = try String(contentsOfFile: hidden, encoding: .utf8)
        #expect(!svg.contains("butler"))
        #expect(svg.contains("<tspan font-weight=\"700\">this</tspan>"))
        #expect(svg.contains("<tspan font-style=\"italic\">italic</tspan>"))
        #expect(svg.contains("font-family=\"BubbleKit Mono, monospace\">code_name()</tspan>"))
        #expect(svg.contains("rx=\"3\""))  // the code's and the spoiler's boxes
        let (shown, dir2) = try render(styled(), .svg, reveal: true)
        defer { try? FileManager.default.removeItem(at: dir2) }
        #expect(try String(contentsOfFile: shown, encoding: .utf8).contains("the butler did it"))
    }

    @Test("PNG pixels: a tinted box behind the code, a hatched box where the spoiler is, no box without styles")
    func pixels() throws {
        TestFonts.pin()
        let (theme, _) = try ThemeLibrary.load("imessage")
        let engine = FastTextEngine()
        let layout = try ConversationLayouter(style: theme.layoutStyle, engine: engine, timeZone: utc).layout(styled(), width: 375)
        guard let row = layout.rows.first(where: { $0.bubble != nil }), let bubble = row.bubble, let frame = bubble.textFrame else {
            Issue.record("no bubble"); return
        }
        let text = styled().messages[0].text!
        let bytes = Array(text.utf8)
        func box(_ s: String) -> Rect? {
            let n = Array(s.utf8)
            guard let i = (0...(bytes.count - n.count)).first(where: { Array(bytes[$0..<($0 + n.count)]) == n }) else { return nil }
            guard let line = bubble.text.lines.first(where: { $0.range.contains(i) }),
                let x0 = engine.advance(
                    of: line.range.lowerBound..<i, in: try! engine.prepare(text, style: theme.layoutStyle.text, spans: styled().messages[0].spans)),
                let w = engine.advance(
                    of: i..<min(i + n.count, line.range.upperBound),
                    in: try! engine.prepare(text, style: theme.layoutStyle.text, spans: styled().messages[0].spans))
            else { return nil }
            return Rect(x: frame.minX + x0, y: 10 + row.frame.minY + frame.minY + line.top, width: w, height: line.height)
        }
        let (png, dir) = try render(styled(), .png)
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = try ImageSurface(pngFile: png).rgbaImage()
        let s = 2.0
        let fill = image.pixel(x: Int((frame.minX - 4) * s), y: Int((10 + row.frame.minY + frame.minY + 4) * s))
        func differing(_ r: Rect, between: Bool = false) -> Int {
            var n = 0
            // The vertical band just above the glyphs' x-height and just inside the box edges:
            // the code tint covers it, the bubble's plain fill does not.
            for y in Int((r.minY + 2) * s)..<Int((r.minY + 5) * s) {
                for x in Int((r.minX + 1) * s)..<Int((r.maxX - 1) * s) {
                    let p = image.pixel(x: x, y: y)
                    if abs(Int(p.0) - Int(fill.0)) + abs(Int(p.1) - Int(fill.1)) + abs(Int(p.2) - Int(fill.2)) > 12 { n += 1 }
                }
            }
            return n
        }
        let code = try #require(box("code_name()"))
        let plain = try #require(box("Look"))
        let spoiler = try #require(box("butler"))
        let codeArea = Int((code.width - 2) * s * 3 * s)
        #expect(differing(code) > codeArea * 8 / 10, "the code background tints the box")
        #expect(differing(plain) < Int((plain.width - 2) * s * 3 * s) / 3, "plain text has no background")
        #expect(differing(spoiler) > Int((spoiler.width - 2) * s * 3 * s) * 8 / 10, "the spoiler box covers its place")
    }

    @Test("HTML: the runs as elements, text escaped inside them, the spoiler revealed on focus, unsafe links plain")
    func html() throws {
        TestFonts.pin()
        var c = styled()
        let text = "<b>not markup</b> bold & link evil"
        c.messages.append(
            Message(
                sender: "me", direction: .outgoing, date: t0.addingTimeInterval(60), text: text,
                spans: [
                    TextSpan(.bold, 18..<22), TextSpan(.link, 25..<29, url: "https://example.com/?a=1&b=\"2\""),
                    TextSpan(.link, 30..<34, url: "javascript:alert(1)")
                ]))
        c.messages[1].edited = t0.addingTimeInterval(600)
        let (theme, folder) = try ThemeLibrary.load("imessage")
        var options = HTMLOptions()
        options.timeZone = utc
        let exporter = HTMLExporter(theme: theme, themeFolder: folder, photosFolder: "/", options: options, pictures: PhotoDecoder())
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-styled-html-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var report = MediaReport()
        let files = try exporter.export(c, to: dir.appendingPathComponent("s.html").path, media: &report)
        let html = try String(contentsOfFile: files[0], encoding: .utf8)
        #expect(html.contains("Look at <strong>this</strong>: <em>italic</em> and <code>code_name()</code>"))
        #expect(html.contains("<span class=\"sp\" tabindex=\"0\" title=\"Spoiler\">the butler did it</span>"))
        #expect(
            html.contains(
                "&lt;b&gt;not markup&lt;/b&gt; <strong>bold</strong> &amp; <a href=\"https://example.com/?a=1&amp;b=&quot;2&quot;\" rel=\"noopener noreferrer\">link</a> evil"
            ))
        #expect(!html.contains("javascript:"))
        #expect(html.contains("title=\"Edited "))
        #expect(html.contains(".sp:focus"))
    }
}
