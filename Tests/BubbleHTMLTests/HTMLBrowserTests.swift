import BubbleCore
import Foundation
import BubbleTestSupport
@testable import BubbleHTML
import Testing
@testable import BubbleRender
@testable import BubbleText

private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)  // Tuesday, 14 November 2023, 22:13 UTC

/// The conversation both renderers draw: short and wrapped messages, a group, a system line, a
/// new day, hard newlines, an over-long word, a photo with a caption, emoji, Arabic, a link.
private func agreementConversation() -> Conversation {
    let photo = BundledSamples.folder.appendingPathComponent("demo-photo.png").path
    var messages: [Message] = []
    var t = t0
    func add(_ direction: Direction, _ text: String?, after seconds: Double, image: ImageAttachment? = nil) {
        t = t.addingTimeInterval(seconds)
        messages.append(Message(sender: direction == .outgoing ? "me" : "ana", direction: direction, date: t, text: text, image: image))
    }
    add(.incoming, "Hello there, how are you?", after: 0)
    add(.outgoing, "Fine, thanks! And you?", after: 60)
    add(.outgoing, "Did you see the game last night? It was absolutely incredible from start to finish.", after: 10)
    add(.incoming, "Yes!", after: 400)
    t = t.addingTimeInterval(5)
    messages.append(.system("Ana changed the group name", date: t))
    add(.incoming, "Bubbles respect\nnewlines\nin the source", after: 7200)
    add(.outgoing, "Andnormallyaddlinebreaksonlyinbetween words, unless a really long word forces them", after: 60)
    add(.incoming, "Look at this sunset", after: 600, image: ImageAttachment(path: photo, width: 0, height: 0))
    add(.outgoing, "👍🎉 😀", after: 30)
    add(.incoming, "مرحبا! كيف حالك؟", after: 600)
    add(.outgoing, "ok", after: 600)
    add(.outgoing, "see https://example.com/a/path?q=1", after: 20)
    add(.incoming, "今日は良い天気ですね", after: 600)
    add(.incoming, "東京の天気は晴れ時々曇り、明日は雨が降るでしょう。傘を忘れないでね！", after: 20)
    add(.outgoing, "ok 今日は\nsee you at eight", after: 600)
    return Conversation(
        title: "Agreement", participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")],
        messages: messages)
}

@Suite("HTML export seen by Chromium", .serialized)
struct HTMLBrowserTests {
    /// Exports `conversation` to HTML and to a Cairo PNG at 1×, screenshots the HTML in Chromium,
    /// and returns the bubbles found by colour in both pictures plus the layout's rows.
    func bothRenderings(
        _ themeName: String, _ conversation: Conversation, width: Double = 375,
        configure: (inout HTMLOptions) -> Void = { _ in }
    ) throws
        -> (html: [(ColourBlob, Direction)], cairo: [(ColourBlob, Direction)], layout: ConversationLayout, theme: Theme)
    {
        TestFonts.pin()
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (theme, folder) = try ThemeLibrary.load(themeName)
        var options = HTMLOptions()
        options.timeZone = utc
        options.header = false
        options.width = width
        options.dark = false
        configure(&options)
        let html = dir.appendingPathComponent("chat.html").path
        try HTMLExporter(theme: theme, themeFolder: folder, photosFolder: "/", options: options, pictures: PhotoDecoder()).export(conversation, to: html)

        let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/")
        var ro = RenderOptions(format: .png)
        ro.scale = 1
        ro.width = width
        ro.timeZone = utc
        let png = dir.appendingPathComponent("chat.png").path
        try renderer.render(conversation, to: png, options: ro)
        let cairo = try ImageSurface(pngFile: png).rgbaImage()
        let shot = try Chromium.screenshot(html, width: Int(width), height: cairo.height + 120)

        let layout = try ConversationLayouter(style: theme.layoutStyle, engine: renderer.engine, timeZone: utc)
            .layout(try renderer.resolvePhotos(conversation), width: width)
        func blobs(_ image: RGBAImage) -> [(ColourBlob, Direction)] {
            (colourBlobs(image, theme.incoming.fill).map { ($0, Direction.incoming) }
                + colourBlobs(image, theme.outgoing.fill).map { ($0, Direction.outgoing) })
                .filter { $0.0.height >= 20 }
                .sorted { $0.0.minY < $1.0.minY }
        }
        return (blobs(shot), blobs(cairo), layout, theme)
    }

    @Test(
        "bubble positions and sizes agree with the Cairo layout; outgoing on the right in the outgoing colour",
        arguments: ["imessage", "sms", "whatsapp"], [false, true])
    func agreement(themeName: String, shrinkWrap: Bool) throws {
        let conversation = agreementConversation()
        let (html, cairo, layout, theme) = try bothRenderings(themeName, conversation) { $0.shrinkWrap = shrinkWrap }
        // Emoji-only messages are drawn without a bubble.
        let bubbles = layout.rows.compactMap { row in row.bubble.flatMap { $0.emojiOnly ? nil : (row, $0) } }
        try #require(cairo.count == bubbles.count, "Cairo: \(cairo.count) bubbles found, layout has \(bubbles.count)")
        try #require(html.count == bubbles.count, "Chromium: \(html.count) bubbles found, layout has \(bubbles.count): \(html.map(\.0))")
        var worst = (edge: 0, top: 0, height: 0, width: 0, wrappedWidth: 0)
        var report = ["\(themeName)\(shrinkWrap ? " (shrinkWrap)" : ""): bubble  Cairo → Chromium (px)"]
        let style = theme.layoutStyle
        for k in bubbles.indices {
            let (row, bubble) = bubbles[k], (c, cd) = cairo[k], (h, hd) = html[k]
            let message = conversation.messages[row.messageIndex!]
            #expect(cd == bubble.direction && hd == bubble.direction, "bubble \(k): colour of the wrong side")
            // Outgoing bubbles end at the right margin, incoming ones start at the left margin.
            if bubble.direction == .outgoing {
                #expect(h.maxX >= Int(375 - style.sideMargin) - 8 && h.minX > 60, "bubble \(k) outgoing not on the right: \(h)")
            } else {
                #expect(h.minX <= Int(style.sideMargin) + 8 && h.maxX < 315, "bubble \(k) incoming not on the left: \(h)")
            }
            let paragraphs = (message.text ?? "").split(separator: "\n", omittingEmptySubsequences: false).count
            let wrapped = bubble.text.lines.count > paragraphs
            let edge = bubble.direction == .outgoing ? abs(h.maxX - c.maxX) : abs(h.minX - c.minX)
            let top = abs(h.minY - c.minY), height = abs(h.height - c.height), width = abs(h.width - c.width)
            worst.edge = max(worst.edge, edge); worst.top = max(worst.top, top); worst.height = max(worst.height, height)
            if wrapped { worst.wrappedWidth = max(worst.wrappedWidth, width) } else { worst.width = max(worst.width, width) }
            report.append("  \(k) \(bubble.direction == .outgoing ? "out" : "in ") \(wrapped ? "wrapped" : "       ") \(c) → \(h)")
            #expect(
                edge <= 2 && height <= 2 && (wrapped && !shrinkWrap || width <= 2),
                "bubble \(k) \(String(reflecting: message.text ?? "")): Cairo \(c), Chromium \(h)")
            if wrapped && !shrinkWrap {
                // CSS `fit-content` makes a wrapped bubble as wide as it may be; Cairo hugs the widest line.
                let maxBubble = style.maxBubbleWidth(rowWidth: 375)
                #expect(h.width <= Int(maxBubble.rounded(.up)) + 1 && h.width >= c.width - 2, "bubble \(k) wrapped: \(h) vs max \(maxBubble)")
            }
        }
        // Tops accumulate every height above them: the last bubble shows the total drift.
        #expect(worst.top <= 3, "\(report.joined(separator: "\n"))")
        report.append("  max |Δ| anchored edge \(worst.edge), top \(worst.top), height \(worst.height), width \(worst.width) (wrapped: \(worst.wrappedWidth))")
        print(report.joined(separator: "\n"))
    }
}

extension HTMLBrowserTests {
    /// The maximum bubble width lives in `LayoutStyle.maxBubbleWidthBounds` and the grouping rule
    /// in `LayoutStyle.joining`; the CSS is written from them. At three widths: a bubble that
    /// wraps is exactly the maximum in Chromium (CSS `fit-content` fills it) and no wider in Cairo;
    /// every other bubble is as wide in both (±2 px). (Heights are not compared here: at 320 px
    /// Chromium does not break a URL after "/" where the layout engine does — a line-breaking
    /// difference, not a width rule.)
    @Test(
        "one width rule: at 320, 500 and 760 px every bubble is as wide in Chromium as in Cairo (±2 px); a wrapped one is LayoutStyle's maximum",
        arguments: [320.0, 500.0, 760.0])
    func widthRule(width: Double) throws {
        let conversation = agreementConversation()
        let (html, cairo, layout, theme) = try bothRenderings("imessage", conversation, width: width)
        let bubbles = layout.rows.compactMap { row in row.bubble.flatMap { $0.emojiOnly ? nil : (row, $0) } }
        try #require(
            cairo.count == bubbles.count && html.count == bubbles.count,
            "bubbles: Cairo \(cairo.count), Chromium \(html.count), layout \(bubbles.count)")
        let maxBubble = theme.layoutStyle.maxBubbleWidth(rowWidth: width)
        var wrappedSeen = 0
        for k in bubbles.indices {
            let (row, bubble) = bubbles[k], c = cairo[k].0, h = html[k].0
            let message = conversation.messages[row.messageIndex!]
            let paragraphs = (message.text ?? "").split(separator: "\n", omittingEmptySubsequences: false).count
            // A bubble found by colour is a few px narrower than its frame (rounded corners, soft
            // edges): the same bubble's offset in Cairo carries over to Chromium.
            let edges = bubble.bubble.width - Double(c.width)
            #expect(Double(c.width) <= maxBubble + 1 && Double(h.width) <= maxBubble + 1, "bubble \(k) at \(width) wider than \(maxBubble)")
            if bubble.text.lines.count > paragraphs && message.images.isEmpty {
                wrappedSeen += 1
                #expect(
                    abs(Double(h.width) + edges - maxBubble) <= 2,
                    "bubble \(k) wraps at \(width): Chromium \(h.width) px + \(edges) edges, the rule says \(maxBubble)")
            } else {
                #expect(abs(c.width - h.width) <= 2, "bubble \(k) at \(width): Cairo \(c), Chromium \(h)")
            }
        }
        #expect(wrappedSeen > 0, "no bubble wraps at \(width): the maximum was not compared")
    }
}

/// Texts that try to run script or break out of the markup.
private let hostileTexts: [String] = [
    "<script>document.title='pwned'</script>",
    "</div></main><script>document.body.appendChild(document.createElement('pwned'))</script>",
    "<img src=x onerror=\"document.title='pwned'\">",
    "<svg onload=\"document.title='pwned'\"><circle r=9></svg>",
    "<iframe srcdoc=\"<script>parent.document.title='pwned'</script>\"></iframe>",
    "<a href=\"javascript:document.title='pwned'\">click</a> javascript:document.title='pwned'",
    "https://x.example/\"onmouseover=\"document.title='pwned' https://x.example/'><script>alert(1)</script>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:document.title='pwned'\">",
    "<style>body{display:none}</style><base href=\"https://evil.example/\">",
    "&lt;script&gt;alert(1)&lt;/script&gt; &#60;script&#62; &#x3C;b&#x3E; &amp &; &#; &#xZZ;",
    "<!-- unclosed comment <![CDATA[ ]]> <? pi ?>",
    "\u{202E}gpj.exe\u{202C} and \u{202B}rtl embedding \u{2067}isolate",
    "nul\u{0}bell\u{7}esc\u{1B}[31m c1\u{9B}",
    String(repeating: "A", count: 100_000),
    String(repeating: "<b>x</b>&", count: 11_200)
]

extension HTMLBrowserTests {
    @Test("hostile text: no script runs, every payload shows as text")
    func hostile() throws {
        TestFonts.pin()
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let evilName = "\"><script>document.title='pwned'</script>\u{202E}"
        let title = "</title><script>document.title='pwned'</script>"
        let conversation = Conversation(
            title: title,
            participants: [Participant(id: "me", name: "Me"), Participant(id: "x", name: evilName)],
            messages: hostileTexts.enumerated().map { i, text in
                Message(
                    sender: i % 2 == 0 ? "x" : "me", direction: i % 2 == 0 ? .incoming : .outgoing,
                    date: t0.addingTimeInterval(Double(i) * 400), text: text)
            } + [.system("<script>document.title='pwned'</script>", date: t0.addingTimeInterval(9000))])
        let (theme, folder) = try ThemeLibrary.load("whatsapp")
        var options = HTMLOptions()
        options.timeZone = utc
        let path = dir.appendingPathComponent("hostile.html").path
        try HTMLExporter(theme: theme, themeFolder: folder, photosFolder: dir.path, options: options, pictures: PhotoDecoder()).export(conversation, to: path)

        let dom = try Chromium.dom(path)
        // The title is the literal text; no payload changed it or added elements.
        #expect(dom.contains("<title>&lt;/title&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;</title>"))
        #expect(!dom.contains("<title>pwned"))
        // Real tags: in the serialised DOM text never has a raw "<" (it comes out as &lt;), so
        // every "<" starts an element the parser made.
        let tags = dom.split(separator: "<").dropFirst().map { String($0.prefix { $0 != ">" }) }
        let names = Set(tags.map { $0.prefix { !$0.isWhitespace && $0 != "/" }.lowercased() }.filter { !$0.isEmpty })
        #expect(
            names.isSubset(of: [
                "!doctype", "html", "head", "meta", "title", "style", "body", "header", "h1", "p", "bdi",
                "main", "div", "span", "a", "time"
            ]), "unexpected elements: \(names.sorted())")
        for tag in tags {
            #expect(tag.range(of: #"\son[a-z]+\s*="#, options: [.regularExpression, .caseInsensitive]) == nil, "event handler in <\(tag.prefix(200))>")
            #expect(!tag.lowercased().contains("javascript:"), "javascript: URL in <\(tag.prefix(200))>")
        }
        #expect(!dom.contains("<pwned"))
        // Bubbles: one per message, the last one the system line.
        #expect(dom.components(separatedBy: "<div class=\"b ").count - 1 == hostileTexts.count)
        #expect(dom.contains("<div class=\"s\">&lt;script&gt;document.title='pwned'&lt;/script&gt;<time class=\"tt\" datetime=\""))
        // Each payload is in the DOM as text, re-serialised (escaped) by the browser.
        for text in hostileTexts where text.count < 1000 && !text.hasPrefix("https://") {
            let sanitised = TextSanitizer.sanitize(text)
            let serialised = sanitised.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\u{A0}", with: "&nbsp;")
            let plain = serialised.components(separatedBy: "https://").first!
            #expect(dom.contains(plain), "payload missing: \(String(reflecting: text))")
        }
        #expect(dom.contains(String(repeating: "A", count: 100_000)))
        #expect(dom.contains(String(repeating: "&lt;b&gt;x&lt;/b&gt;&amp;", count: 11_200)))
        // Links: only the https ones, with the quote outside the href.
        #expect(dom.contains("<a href=\"https://x.example/\" rel=\"noopener noreferrer\">https://x.example/</a>\"onmouseover=\"document.title='pwned'"))
        #expect(dom.contains("<bdi>\"&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;\u{202E}</bdi>"))
    }

    @Test("the Content-Security-Policy stops a script even if one were injected into the file")
    func contentSecurityPolicy() throws {
        TestFonts.pin()
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("csp.html").path
        let (theme, folder) = try ThemeLibrary.load("imessage")
        var options = HTMLOptions()
        options.timeZone = utc
        try HTMLExporter(theme: theme, themeFolder: folder, photosFolder: dir.path, options: options, pictures: PhotoDecoder())
            .export(Conversation(title: "Safe", messages: [Message(sender: "a", direction: .incoming, date: t0, text: "hi")]), to: path)
        // Tamper with the page the way a hostile editor of the file would.
        var html = try String(contentsOfFile: path, encoding: .utf8)
        html = html.replacingOccurrences(of: "</main>", with: "</main><script>document.title='ran'</script><img src=x onerror=\"document.title='ran2'\">")
        try html.write(toFile: path, atomically: true, encoding: .utf8)
        let dom = try Chromium.dom(path)
        #expect(dom.contains("<title>Safe</title>"), "\(dom.prefix(2000))")
        // The same page without the policy does run it (the check above is not vacuous).
        try html.replacingOccurrences(of: "http-equiv=\"Content-Security-Policy\"", with: "name=\"x\"").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Chromium.dom(path).contains("<title>ran"))
    }

    @Test("dark appearance: prefers-color-scheme: dark gives the dark bubble colours")
    func darkAppearance() throws {
        TestFonts.pin()
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (theme, folder) = try ThemeLibrary.load("imessage")
        var options = HTMLOptions()
        options.timeZone = utc
        options.header = false
        let path = dir.appendingPathComponent("dark.html").path
        try HTMLExporter(theme: theme, themeFolder: folder, photosFolder: dir.path, options: options, pictures: PhotoDecoder()).export(
            agreementConversation(), to: path)
        let light = try Chromium.screenshot(path, width: 375, height: 400)
        let dark = try Chromium.screenshot(path, width: 375, height: 400, dark: true)
        let palette = try #require(theme.dark)
        #expect(colourBlobs(light, theme.incoming.fill).count >= 2)
        #expect(colourBlobs(dark, theme.incoming.fill).isEmpty)
        #expect(colourBlobs(dark, palette.incomingFill, tolerance: 4).count >= 2)
        #expect(dark.pixel(x: 2, y: 2) == (0, 0, 0, 255))
        #expect(light.pixel(x: 2, y: 2) == (255, 255, 255, 255))
    }
}
