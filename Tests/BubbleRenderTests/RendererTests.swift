import BubbleCore
import BubbleMedia
@testable import BubbleRender
import BubbleTestSupport
@testable import BubbleText
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

private func tempFolder() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-render-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

private func renderer(_ theme: String, photos: String = "/") throws -> ConversationRenderer {
    TestFonts.pin()
    let (t, folder) = try ThemeLibrary.load(theme)
    return ConversationRenderer(theme: t, themeFolder: folder, photosFolder: photos)
}

private func conversation(_ texts: [(String, Direction)], spacing: Double = 20) -> Conversation {
    Conversation(
        title: "Test", participants: [Participant(id: "me", name: "Me"), Participant(id: "them", name: "Them")],
        messages: texts.enumerated().map { i, m in
            Message(
                sender: m.1 == .outgoing ? "me" : "them", direction: m.1,
                date: t0.addingTimeInterval(Double(i) * spacing), text: m.0)
        })
}

/// Where pixels of `color` (±tolerance per channel) lie in `rows`: count and horizontal extent.
private func colourExtent(_ image: RGBAImage, _ color: Color, rows: Range<Int>, tolerance: Int = 3) -> (count: Int, minX: Int, maxX: Int) {
    let target = [color.red, color.green, color.blue].map { Int(($0 * 255).rounded()) }
    var count = 0, minX = Int.max, maxX = Int.min
    for y in rows where y < image.height {
        for x in 0..<image.width {
            let p = image.pixel(x: x, y: y)
            if abs(Int(p.0) - target[0]) <= tolerance && abs(Int(p.1) - target[1]) <= tolerance && abs(Int(p.2) - target[2]) <= tolerance {
                count += 1; minX = min(minX, x); maxX = max(maxX, x)
            }
        }
    }
    return (count, minX, maxX)
}

@Suite("Rendering conversations", .serialized)
struct RendererTests {
    @Test("PNG: outgoing bubbles on the right in the outgoing colour, incoming on the left", arguments: ["imessage", "sms", "whatsapp"])
    func sides(themeName: String) throws {
        let r = try renderer(themeName)
        var options = RenderOptions(format: .png)
        options.timeZone = utc
        options.scale = 1
        let conv = conversation([("Hello there, how are you?", .incoming), ("Fine, thanks! And you?", .outgoing)], spacing: 600)
        let pages = try r.scene(for: conv, options: options)
        #expect(pages.count == 1)
        let painter = ScenePainter(theme: r.theme, themeFolder: r.themeFolder, engine: r.engine, photos: r.photos)
        let image = try r.rasterize(pages[0], painter: painter, scale: 1).rgbaImage()
        // Find the rows of each bubble from the layout.
        let layout = try ConversationLayouter(style: r.theme.layoutStyle, engine: r.engine, timeZone: utc)
            .layout(conv, width: 375)
        let bubbles = layout.rows.compactMap { row in row.bubble.map { (row.frame.minY + 10 + $0.bubble.minY, $0) } }
        #expect(bubbles.count == 2)
        for (top, bubble) in bubbles {
            let rows = Int(top + 3)..<Int(top + bubble.bubble.height - 3)
            let fill = r.theme.bubble(bubble.direction).fill
            let found = colourExtent(image, fill, rows: rows)
            // The body sits inside the tail strip on the tail side.
            let margin = r.theme.layout.sideMargin + BubbleShape.tailWidth
            #expect(found.count > 1000, "\(themeName) \(bubble.direction): \(found.count) pixels of \(fill)")
            if bubble.direction == .outgoing {
                // Touches the right margin, starts well right of the left one.
                #expect(found.maxX >= Int(375 - margin) - 2 && found.minX > Int(margin) + 60, "\(themeName) outgoing: \(found)")
            } else {
                #expect(found.minX <= Int(margin) + 2 && found.maxX < Int(375 - margin) - 60, "\(themeName) incoming: \(found)")
            }
            // The other side's colour is not in this bubble.
            let other = r.theme.bubble(bubble.direction == .incoming ? .outgoing : .incoming).fill
            #expect(colourExtent(image, other, rows: rows).count == 0)
        }
        // The outgoing colour differs from the incoming one and the background.
        #expect(r.theme.outgoing.fill != r.theme.incoming.fill)
    }

    @Test("a translucent theme over a gradient keeps the gradient visible")
    func translucentOverGradient() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        var theme = try ThemeLibrary.load("imessage").theme
        theme.background = .gradient(Color(red: 1, green: 0, blue: 0), Color(red: 0, green: 0, blue: 1))
        theme.incoming.fill = Color(red: 1, green: 1, blue: 1, alpha: 0.5)
        TestFonts.pin()
        let r = ConversationRenderer(theme: theme, themeFolder: dir.path, photosFolder: dir.path)
        var options = RenderOptions(format: .png)
        options.scale = 1
        options.timeZone = utc
        let long = String(repeating: "translucent bubbles over a gradient ", count: 12)
        let path = dir.appendingPathComponent("t.png").path
        try r.render(conversation([(long, .incoming)]), to: path, options: options)
        let image = try ImageSurface(pngFile: path).rgbaImage()
        let layout = try ConversationLayouter(style: theme.layoutStyle, engine: r.engine, timeZone: utc)
            .layout(conversation([(long, .incoming)]), width: 375)
        let bubble = try #require(layout.rows.compactMap(\.bubble).first)
        // Sample the bubble's left padding column (no text there) from top to bottom.
        let x = Int(bubble.bubble.minX + 10)
        let top = Int(10 + layout.rows[1].frame.minY + bubble.bubble.minY + 8)
        let bottom = Int(10 + layout.rows[1].frame.minY + bubble.bubble.maxY - 8)
        let upper = image.pixel(x: x, y: top), lower = image.pixel(x: x, y: bottom)
        // Half white over the gradient: red fades and blue grows down the bubble, both lifted by white.
        #expect(upper.0 > lower.0 + 20, "red \(upper.0) → \(lower.0)")
        #expect(lower.2 > upper.2 + 20, "blue \(upper.2) → \(lower.2)")
        #expect(upper.1 >= 120 && upper.1 <= 135, "white at 50 % lifts green to ~128, got \(upper.1)")
    }

    @Test("PDF: every message's text is extractable and no bubble crosses a page edge")
    func pdf() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer("imessage")
        var texts: [(String, Direction)] = []
        for i in 0..<120 { texts.append(("Message number \(i) says hello", i % 3 == 0 ? .outgoing : .incoming)) }
        // One message taller than a page: it must be split between lines.
        texts.append((Array(repeating: "A very long message line", count: 140).joined(separator: "\n"), .incoming))
        let conv = conversation(texts)
        var options = RenderOptions(format: .pdf)
        options.timeZone = utc
        let path = dir.appendingPathComponent("chat.pdf").path
        try r.render(conv, to: path, options: options)
        let text = try run("/usr/bin/pdftotext", [path, "-"])
        for i in 0..<120 { #expect(text.contains("Message number \(i) says hello"), "message \(i) missing from the PDF text") }
        #expect(text.contains("A very long message line"))
        let info = try run("/usr/bin/pdfinfo", [path])
        let pageCount = try #require(info.split(separator: "\n").first { $0.hasPrefix("Pages:") }.flatMap { Int($0.split(separator: " ").last!) })
        // Pages from the scene: every row either sits inside one page's band or is taller than a page.
        let pages = try r.scene(for: conv, options: options)
        #expect(pages.count == pageCount)
        let setup = r.pageSetup(options)
        let layout = try ConversationLayouter(style: r.theme.layoutStyle, engine: r.engine, timeZone: utc)
            .layout(conv, width: setup.contentWidth)
        let content = options.paper.height - setup.margins.vertical - 24
        let slices = Paginator.paginate(layout, pageHeight: content, firstPageHeight: content - 60)
        for row in layout.rows {
            let holders = slices.filter { $0.top <= row.frame.minY + 1e-6 && row.frame.maxY <= $0.top + $0.height + 1e-6 }
            if row.frame.height <= content { #expect(holders.count == 1, "row at \(row.frame) crosses a page edge") }
        }
        #expect(layout.rows.last!.frame.height > content)
        // The split happens between lines: each cut is at a line's top.
        let tall = layout.rows.last!
        let bubble = try #require(tall.bubble)
        let lineTops = Set(bubble.text.lines.map { tall.frame.minY + bubble.textFrame!.minY + $0.top })
        for slice in slices where slice.top > tall.frame.minY { #expect(lineTops.contains(slice.top)) }
    }

    @Test("SVG parses, has the messages as <text>, and bubble art as nine-slice patches")
    func svg() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        for theme in ["imessage", "classic"] {
            let r = try renderer(theme)
            var options = RenderOptions(format: .svg)
            options.timeZone = utc
            let path = dir.appendingPathComponent("\(theme).svg").path
            let conv = conversation([("Hello <there> & \"you\"", .incoming), ("Fine, thanks!", .outgoing), ("مرحبا", .outgoing)])
            try r.render(conv, to: path, options: options)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let parser = SVGProbe(data: data)
            #expect(parser.parsed, "\(theme): \(parser.error ?? "")")
            #expect(parser.texts.contains("Hello <there> & \"you\""))
            #expect(parser.texts.contains("Fine, thanks!"))
            #expect(parser.texts.contains("مرحبا"))
            if theme == "classic" { #expect(parser.nestedSVGs >= 18) } else { #expect(parser.paths >= 3) }
        }
    }

    @Test("a missing photo: a labelled placeholder and a problem naming the file; strict: one clear error and nothing written")
    func missingPhoto() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer("imessage", photos: dir.path)
        var conv = conversation([("look", .incoming)])
        conv.messages.append(Message(sender: "them", direction: .incoming, date: t0, image: ImageAttachment(path: "gone.jpg", width: 0, height: 0)))
        let out = dir.appendingPathComponent("x.png").path
        var options = RenderOptions(format: .png)
        options.strictMedia = true
        #expect(throws: RenderError.unreadableImage(path: dir.path + "/gone.jpg", reason: "no such file (--strict)")) {
            try r.render(conv, to: out, options: options)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)

        try r.render(conv, to: out, options: RenderOptions(format: .png))
        #expect(r.mediaReport.problems == [MediaProblem(file: dir.path + "/gone.jpg", reason: "no such file")])
        #expect(r.mediaReport.summary == "1 of 1 attachment could not be read")
        let (resolved, _) = r.resolveMedia(conv)
        #expect(resolved.messages[1].images.isEmpty)
        #expect(resolved.messages[1].shownText == "📷 Photo: gone.jpg (could not be read)")
        #expect(FileManager.default.fileExists(atPath: out))
    }

    @Test("photos take their size from the file and are drawn inside the bubble")
    func photo() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let photo = try ImageSurface(width: 200, height: 100)
        try Canvas(surface: photo).fill(Rect(x: 0, y: 0, width: 200, height: 100), color: Color(red: 1, green: 0, blue: 0))
        try photo.writePNG(to: dir.appendingPathComponent("red.png").path)
        let r = try renderer("imessage", photos: dir.path)
        let conv = Conversation(messages: [
            Message(
                sender: "them", direction: .incoming, date: t0,
                image: ImageAttachment(path: "red.png", width: 0, height: 0))
        ])
        var options = RenderOptions(format: .png)
        options.scale = 1
        options.timeZone = utc
        let out = dir.appendingPathComponent("p.png").path
        try r.render(conv, to: out, options: options)
        let image = try ImageSurface(pngFile: out).rgbaImage()
        let resolved = try r.resolvePhotos(conv)
        #expect(resolved.messages[0].image?.width == 200)
        let layout = try ConversationLayouter(style: r.theme.layoutStyle, engine: r.engine, timeZone: utc).layout(resolved, width: 375)
        let frame = try #require(layout.rows[1].bubble?.imageFrame)
        let y = Int(10 + layout.rows[1].frame.minY + frame.midY), x = Int(frame.midX)
        #expect(image.pixel(x: x, y: y) == (255, 0, 0, 255))
        #expect(frame.size == Size(width: 200, height: 100))
    }

    @Test("PNG pages are numbered files; one tall image otherwise")
    func pngPages() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try renderer("sms")
        var texts: [(String, Direction)] = []
        for i in 0..<60 { texts.append(("Message \(i)", i % 2 == 0 ? .outgoing : .incoming)) }
        var options = RenderOptions(format: .png)
        options.scale = 1
        options.pageHeight = 400
        options.timeZone = utc
        let files = try r.render(conversation(texts), to: dir.appendingPathComponent("c.png").path, options: options)
        #expect(files.count > 3)
        #expect(files.first!.hasSuffix("c-001.png"))
        for f in files {
            let s = try ImageSurface(pngFile: f)
            #expect(s.width == 375 && s.height == 400)
        }
    }
}

/// Runs a command, returns its standard output; fails on a non-zero exit.
func run(_ tool: String, _ arguments: [String]) throws -> String {
    try Command.output(tool, arguments)
}

/// Parses an SVG with Foundation's XML parser and collects what the tests look for.
final class SVGProbe: NSObject, XMLParserDelegate {
    var texts: [String] = []
    var paths = 0
    var nestedSVGs = 0
    var parsed = false
    var error: String?
    private var current: String?

    init(data: Data) {
        super.init()
        let parser = XMLParser(data: data)
        parser.delegate = self
        parsed = parser.parse()
        error = parser.parserError.map { "\($0)" }
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        switch name {
        case "text": current = ""
        case "tspan": if let c = current, !c.isEmpty { current = c + "\n" }
        case "path": paths += 1
        case "svg": nestedSVGs += 1
        default: break
        }
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) { current? += string }
    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text", let c = current { texts.append(c); current = nil }
    }
}

@Suite("Art bubbles: mirrored and tinted", .serialized)
struct ArtBubbleTests {
    func render(_ theme: Theme, folder: String, _ direction: Direction) throws -> (RGBAImage, BubbleLayout, Double) {
        TestFonts.pin()
        let r = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: folder)
        var options = RenderOptions(format: .png)
        options.scale = 2
        options.timeZone = utc
        let conv = conversation([("Mirrored art for the other side", direction)])
        let page = try r.scene(for: conv, options: options)[0]
        let painter = ScenePainter(theme: theme, themeFolder: folder, engine: r.engine, photos: r.photos)
        let image = try r.rasterize(page, painter: painter, scale: 2).rgbaImage()
        let layout = try ConversationLayouter(style: theme.layoutStyle, engine: r.engine, timeZone: utc).layout(conv, width: 375)
        return (image, try #require(layout.rows[1].bubble), 10 + layout.rows[1].frame.minY)
    }

    @Test("classic: the outgoing art is the incoming template mirrored, tail on the right")
    func mirrored() throws {
        let (theme, folder) = try ThemeLibrary.load("classic")
        let (image, bubble, top) = try render(theme, folder: folder, .outgoing)
        // The tail hooks out of the bottom corner on the tail side: in the (unmirrored) art it is
        // at (6.5, 28.2) of 42×30 points, so it lands 6.5 pt in from the bubble's right edge.
        let y = Int((top + bubble.bubble.maxY - 1.8) * 2)
        let tailSide = image.pixel(x: Int((bubble.bubble.maxX - 6.5) * 2), y: y)
        let otherSide = image.pixel(x: Int((bubble.bubble.minX + 6.5) * 2), y: y)
        #expect(Int(tailSide.1) > Int(tailSide.0) + 40, "green tail expected on the right, got \(tailSide)")
        #expect(Int(otherSide.1) < Int(otherSide.0) + 20, "no green at the bottom-left corner, got \(otherSide)")
    }

    @Test("tint fills the art's shape with the bubble colour")
    func tinted() throws {
        var (theme, folder) = try ThemeLibrary.load("classic")
        guard case .art(var spec) = theme.outgoing.shape else { Issue.record("classic has no art"); return }
        spec.tint = true
        theme.outgoing.shape = .art(spec)
        theme.outgoing.fill = Color(r8: 200, g8: 30, b8: 160)
        let (image, bubble, top) = try render(theme, folder: folder, .outgoing)
        // Inside the bubble, away from the text: the tint colour exactly (the art is opaque there).
        let p = image.pixel(x: Int((bubble.bubble.minX + 6) * 2), y: Int((top + bubble.bubble.midY) * 2))
        #expect(p == (200, 30, 160, 255), "got \(p)")
    }
}
