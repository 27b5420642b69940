import BubbleCore
import BubbleHTML
import BubbleRender
import BubbleTestSupport
import Foundation
import Testing

private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

/// Ana and me, alternating in runs of three (so groups cross any cut), a day break at 40, a
/// system line at 25 and text that must be escaped.
private func chat(_ count: Int = 60) -> Conversation {
    var messages: [Message] = []
    for i in 0..<count {
        let outgoing = (i / 3) % 2 == 0
        let date = t0.addingTimeInterval(Double(i) * 30 + (i >= 40 ? 86_400 : 0))
        if i == 25 {
            messages.append(Message(kind: .system, sender: nil, direction: .incoming, date: date, text: "Ana renamed the group"))
            continue
        }
        messages.append(
            Message(
                sender: outgoing ? "me" : "ana", direction: outgoing ? .outgoing : .incoming, date: date,
                text: i == 7 ? "<script>alert(\(i))</script> & \"q\"" : "message \(i)", status: outgoing ? .delivered : nil))
    }
    return Conversation(
        title: "Fragments", participants: [Participant(id: "me", name: "Me"), Participant(id: "ana", name: "Ana")],
        messages: messages)
}

private func writer(_ c: Conversation, theme: String = "imessage") throws -> HTMLRowWriter {
    TestFonts.pin()
    let (t, folder) = try ThemeLibrary.load(theme)
    var options = HTMLOptions()
    options.timeZone = utc
    let style = try HTMLPageStyle(theme: t, themeFolder: folder, options: options, pictures: PhotoDecoder())
    return try HTMLRowWriter(conversation: c, style: style, photosFolder: "/", pictures: PhotoDecoder())
}

/// The rows of `range` as they sit inside the conversation (not a page of their own).
private func inside(_ c: Conversation, _ range: Range<Int>, _ w: HTMLRowWriter) throws -> HTMLFragment {
    var context = HTMLRowContext(in: c, range: range)
    context.startsPage = range.lowerBound == 0
    context.next = range.upperBound < c.messages.count ? c.messages[range.upperBound] : nil
    return try w.rows(c.messages[range], context: context)
}

@Suite("HTML fragments: rows on their own, the pieces pages are built from")
struct HTMLFragmentTests {
    @Test(
        "rows written in windows join into exactly the rows written at once, wherever the cuts fall",
        arguments: [
            [0, 60], [0, 30, 60], [0, 1, 2, 3, 4, 60], [0, 4, 5, 24, 25, 26, 39, 40, 41, 59, 60], [0, 17, 43, 60]
        ])
    func windowsJoin(cuts: [Int]) throws {
        let c = chat()
        let whole = try inside(c, 0..<60, try writer(c))
        let w = try writer(c)
        var joined: [UInt8] = []
        for (a, b) in zip(cuts, cuts.dropFirst()) { joined += try inside(c, a..<b, w).bytes }
        #expect(String(decoding: joined, as: UTF8.self) == whole.html)
        // What is in it: one bubble per message, one system line, two day separators, tails on
        // the last bubble of each run of three (a group) only.
        let html = whole.html
        #expect(html.components(separatedBy: "<div class=\"b ").count - 1 == 59)
        #expect(html.components(separatedBy: "<div class=\"s\">").count - 1 == 1)
        #expect(html.components(separatedBy: "<div class=\"d\">").count - 1 == 2)
        #expect(whole.firstDay != nil && whole.lastDay == whole.firstDay! + 1)
    }

    @Test("the message after the rows decides the last bubble's tail; a page's rows keep it")
    func nextDecidesTail() throws {
        let c = chat()
        let w = try writer(c)
        // Messages 0–2 are one group (me); a window 0..<1 followed by 1 continues it.
        let continued = try w.rows(c.messages[0..<1], context: HTMLRowContext(next: c.messages[1])).html
        let alone = try w.rows(c.messages[0..<1], context: HTMLRowContext(next: nil)).html
        #expect(continued.contains("<div class=\"b o\"") && !continued.contains(" t\""))
        #expect(alone.contains("<div class=\"b o t\""))
        // Not the start of a page: message 1 continues message 0's group (class g, no separator).
        let middle = try w.rows(c.messages[1..<2], context: HTMLRowContext(previous: c.messages[0], startsPage: false)).html
        #expect(middle.contains(" g\"") && !middle.contains("class=\"d\""))
        // A page's first row starts a group under a day separator whatever came before.
        let page = try w.rows(c.messages[1..<2], context: HTMLRowContext(previous: c.messages[0], startsPage: true)).html
        #expect(page.hasPrefix("<div class=\"d\">") && !page.contains(" g\""))
    }

    @Test("a fragment escapes what it echoes and names the fonts it used")
    func escapesAndFonts() throws {
        let c = chat()
        let (t, folder) = try ThemeLibrary.load("imessage")
        TestFonts.pin()
        var options = HTMLOptions()
        options.timeZone = utc
        let style = try HTMLPageStyle(theme: t, themeFolder: folder, options: options, pictures: PhotoDecoder())
        let w = try HTMLRowWriter(conversation: c, style: style, photosFolder: "/", pictures: PhotoDecoder())
        let f = try w.rows(c.messages[7..<8])
        #expect(f.html.contains("&lt;script&gt;alert(7)&lt;/script&gt; &amp; \"q\""))
        #expect(!f.html.contains("<script"))
        #expect(f.regularFaces != 0)
        let faces = try style.fontFaces(for: [f])
        #expect(faces.hasPrefix("@font-face{font-family:\"bk0\";font-weight:400"))
        #expect(faces.contains("url(data:font/"))
        // The sheet is the exporter's.
        let exported = HTMLExporter(theme: t, themeFolder: folder, photosFolder: "/", options: options, pictures: PhotoDecoder())
        #expect(try exported.styleSheet() == style.css)  // the theme has no background picture
        #expect(style.css.contains("--bk-o-fill:var(--ob)") && style.css.contains(".o::before{background:var(--bk-o-fill)"))
    }

    @Test("an exported page's body is its fragment: pages are built from the same pieces")
    func pagesAreFragments() throws {
        TestFonts.pin()
        let c = chat()
        let (t, folder) = try ThemeLibrary.load("imessage")
        var options = HTMLOptions()
        options.timeZone = utc
        options.pageSize = .messages(20)
        let dir = try htmlTempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = try HTMLExporter(theme: t, themeFolder: folder, photosFolder: "/", options: options, pictures: PhotoDecoder())
            .export(c, to: dir.appendingPathComponent("chat.html").path)
        #expect(files.count == 4)  // index + 3 pages
        let w = try writer(c)
        for (k, start) in [0, 20, 40].enumerated() {
            let page = try String(contentsOfFile: files[k + 1], encoding: .utf8)
            let rows = try w.rows(c.messages[start..<(start + 20)], context: HTMLRowContext(in: c, range: start..<(start + 20))).html
            #expect(page.contains("<main class=\"c\">\n" + rows + "</main>"), "page \(k + 1)")
        }
    }

    @Test("typing indicators, with the sender's name in a group")
    func typing() throws {
        var c = chat(3)
        c.participants.append(Participant(id: "bo", name: "Bo <b>"))
        let w = try writer(c)
        let html = try w.typing(["bo"]).html
        #expect(html.contains("aria-label=\"typing\""))
        #expect(html.contains("Bo &lt;b&gt;"))
    }
}
