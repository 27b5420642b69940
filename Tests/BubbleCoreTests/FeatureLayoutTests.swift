import BubbleTestSupport
import Foundation
import Testing
@testable import BubbleCore

/// 16 pt monospace: every character half its size wide (8 pt body, 5.5 pt at 11, 6 pt at 12),
/// lines 1.25 × the size high (20 pt body, 13.75 pt at 11, 15 pt at 12).
private let engine = MonospaceTextEngine()
private let utc = TimeZone(identifier: "UTC")!
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14 22:13:20 UTC
private let people = [Participant(id: "me", name: "Me"), Participant(id: "a", name: "Alice Liddell"), Participant(id: "b", name: "Bob")]

private func msg(
    _ text: String?, _ sender: String = "a", at seconds: Double = 0, images: [ImageAttachment] = [],
    reactions: [Reaction] = [], reply: ReplyReference? = nil, status: MessageStatus? = nil, statusDate: Date? = nil
) -> Message {
    Message(
        sender: sender, direction: sender == "me" ? .outgoing : .incoming, date: t0.addingTimeInterval(seconds),
        text: text, images: images, reactions: reactions, reply: reply, status: status, statusDate: statusDate)
}

private func bubbles(_ layout: ConversationLayout) -> [BubbleLayout] {
    layout.rows.compactMap { if case .message(_, let b) = $0.content { return b } else { return nil } }
}

@Suite("Conversation features: layout")
struct FeatureLayoutTests {
    func layouter(_ configure: (inout LayoutStyle) -> Void = { _ in }) -> ConversationLayouter {
        var style = LayoutStyle()
        configure(&style)
        return ConversationLayouter(style: style, engine: engine, timeZone: utc)
    }

    @Test("time inside the bubble: after the last line when it fits, else on a line of its own")
    func timeInside() throws {
        var style = LayoutStyle()
        style.timeInsideBubble = true
        let m = BubbleMeasurer(style: style, engine: engine)
        // "22:13" at 11 pt: 27.5 × 13.75. Max text width 280 − 38 = 242.
        let short = try m.layout(msg("Hi"), rowWidth: 400, time: "22:13")
        let t = try #require(short.labels.first { $0.kind == .timeInside })
        // 16 + 6 + 27.5 = 49.5 ≤ 242: same line; the text box widens to hold it.
        #expect(short.bubble == Rect(x: 10, y: 0, width: 87.5, height: 31))  // 49.5 + 38
        let inside = Rect(x: 54, y: 10.25, width: 27.5, height: 13.75)  // 32 + 49.5 − 27.5; 4 + 20 − 13.75
        #expect(t.frame == inside)
        // 30 characters = 240 pt: 240 + 6 + 27.5 > 242, so the time drops below the line.
        let long = try m.layout(msg(String(repeating: "x", count: 30)), rowWidth: 400, time: "22:13")
        let u = try #require(long.labels.first { $0.kind == .timeInside })
        #expect(long.text.lines.count == 1)
        #expect(long.bubble.height == 44.75)  // 4 + 20 + 13.75 + 7
        let expected = Rect(x: 244.5, y: 24, width: 27.5, height: 13.75)  // 32 + 240 − 27.5; 4 + 20
        #expect(u.frame == expected)
    }

    @Test("time beside the bubble, on its open side")
    func timeBeside() throws {
        let layout = try layouter { $0.timeBeside = true }.layout(
            Conversation(
                participants: Array(people.prefix(2)),
                messages: [msg("Hi"), msg("Yo", "me", at: 60)]), width: 400)
        let b = bubbles(layout)
        let a = try #require(b[0].labels.first { $0.kind == .timeBeside })
        #expect(a.frame == Rect(x: b[0].bubble.maxX + 6, y: b[0].bubble.maxY - 13.75, width: 27.5, height: 13.75))
        let o = try #require(b[1].labels.first { $0.kind == .timeBeside })
        #expect(o.frame == Rect(x: b[1].bubble.minX - 6 - 27.5, y: b[1].bubble.maxY - 13.75, width: 27.5, height: 13.75))
    }

    @Test("time in day separators only: day and time, and a separator after a long pause")
    func timeInSeparator() throws {
        let layout = try layouter { $0.timeInDaySeparator = true }.layout(
            Conversation(
                participants: Array(people.prefix(2)),
                messages: [msg("Hi"), msg("later", at: 60), msg("much later", at: 60 + 3601)]), width: 400)
        let separators = layout.rows.compactMap { if case .daySeparator(let l) = $0.content { return l.string } else { return nil } }
        #expect(separators == ["Tuesday, 14 November 2023, 22:13", "23:14"])
        #expect(bubbles(layout).allSatisfy { $0.labels.isEmpty })
    }

    @Test("sender names above the first bubble of an incoming group, avatars beside the last, in group chats only")
    func namesAndAvatars() throws {
        let conversation = Conversation(
            participants: people,
            messages: [
                msg("one"), msg("two", at: 10), msg("three", at: 20), msg("hey", "b", at: 30), msg("mine", "me", at: 40)
            ])
        let b = bubbles(try layouter().layout(conversation, width: 400))
        #expect(b.map { $0.labels.first { $0.kind == .sender }?.string } == ["Alice Liddell", nil, nil, "Bob", nil])
        #expect(b.map { $0.avatarFrame != nil } == [false, false, true, true, false])
        // Incoming bubbles leave a 28 + 6 column for avatars; the avatar is bottom-aligned.
        #expect(b.prefix(4).allSatisfy { $0.bubble.minX == 10 + 28 + 6 })
        #expect(b[2].avatarFrame == Rect(x: 10, y: b[2].bubble.maxY - 28, width: 28, height: 28))
        // The name: 11 pt over the bubble, 12 pt in from its edge; the bubble 2 pt below it.
        let name = try #require(b[0].labels.first)
        #expect(name.frame == Rect(x: 44 + 12, y: 0, width: 13 * 5.5, height: 13.75))
        #expect(b[0].bubble.minY == 13.75 + 2)
        #expect(b[1].bubble.minY == 0)
        #expect(b[4].bubble.maxX == 390)

        // A chat of two: neither names nor avatars.
        let two = bubbles(try layouter().layout(Conversation(participants: Array(people.prefix(2)), messages: conversation.messages), width: 400))
        #expect(two.allSatisfy { $0.avatarFrame == nil && $0.labels.isEmpty && ($0.direction == .outgoing || $0.bubble.minX == 10) })
    }

    @Test("delivery status under the last outgoing message only; Failed with a badge under each failed one")
    func status() throws {
        let read = Date(timeIntervalSince1970: 1_699_954_860)  // 09:41 UTC
        let conversation = Conversation(
            participants: Array(people.prefix(2)),
            messages: [
                msg("first", "me", status: .delivered), msg("oops", "me", at: 5, status: .failed),
                msg("second", "me", at: 10, status: .read, statusDate: read), msg("ok", at: 20)
            ])
        let full = try layouter().layout(conversation, width: 400)
        let b = bubbles(full)
        #expect(b.map { $0.labels.first { [.status, .failedStatus].contains($0.kind) }?.string } == [nil, "Failed", "Read 09:41", nil])
        let s = try #require(b[2].labels.first { $0.kind == .status })
        // "Read 09:41" at 11 pt: 55 wide, right-aligned under the bubble, 2 pt below it.
        #expect(s.frame == Rect(x: b[2].bubble.maxX - 55, y: b[2].bubble.maxY + 2, width: 55, height: 13.75))
        #expect(b[1].labels.first { $0.kind == .failedStatus }?.frame.minY == b[1].bubble.maxY + 2)
        #expect(b[1].failedBadge == Rect(x: b[1].bubble.minX - 6 - 18, y: b[1].bubble.midY - 9, width: 18, height: 18))
        #expect(b[0].failedBadge == nil && b[2].failedBadge == nil)
        // The first row lost its "Delivered" when the later message came: it is as tall as its bubble.
        #expect(full.rows[1].frame.height == b[0].bubble.height)
        // Appending one by one gives the same rows (the label taken off, later rows moved up).
        var incremental = try layouter().layout(Conversation(participants: conversation.participants), width: 400)
        for m in conversation.messages { try layouter().append(m, to: &incremental) }
        #expect(incremental == full)
    }

    @Test("emoji-only messages: no bubble, no tail, the large emoji style")
    func emojiOnly() throws {
        let m = BubbleMeasurer(style: LayoutStyle(), engine: engine)
        let e = try m.layout(msg("👍🎉"), rowWidth: 400)
        #expect(e.emojiOnly && !e.hasTail)
        #expect(e.text.height == 50)  // 40 pt emoji style, 1.25 × 40
        #expect(e.textFrame == e.bubble)  // no padding: the "bubble" is the emoji's box
        #expect(e.bubble.minX == 10)
        for text in ["👍 hello", "👍👍👍👍", "1", "#", ""] {
            #expect(try !m.layout(msg(text), rowWidth: 400).emojiOnly, "\(text)")
        }
        #expect(EmojiText.isEmojiOnly("❤️ 👨‍👩‍👧‍👦 🇩🇪"))
        #expect(EmojiText.isEmojiOnly("1️⃣"))
    }

    @Test("emoji-only texts: the byte screen (letters, U+00C0–U+07FF, U+4000–U+EFFF) agrees with the grapheme rule on drawn texts")
    func emojiOnlyScreen() {
        // Emoji near the screened ranges (©️ ®️ ™️ 〰️ ㊗️, keycaps, a tag flag, skin tones), and
        // characters in and next to them.
        let pieces = [
            "©️", "®️", "©", "®", "™️", "‼️", "〰️", "㊗️", "#️⃣", "1️⃣", "🏴󠁧󠁢󠁥󠁮󠁧󠁿", "👍🏽", "🇩🇪", "👨‍👩‍👧‍👦", "😀", " ",
            "¡", "é", "ß", "п", "م", "ש", "߿", "ࠀ", "中", "한", "", "ﬀ", "〜", "a", "1", "#"
        ]
        var rng = SplitMix64(seed: 67)
        for _ in 0..<3_000 {
            let text = (0..<(1 + Int(rng.next() % 4))).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
            let marks = text.filter { $0 != " " }
            let expected = !marks.isEmpty && marks.count <= 3 && marks.allSatisfy(EmojiText.isEmoji)
            #expect(EmojiText.isEmojiOnly(text) == expected, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    @Test("three photos: one wide over two square ones, no empty cell; the caption goes under them")
    func grid() throws {
        let m = BubbleMeasurer(style: LayoutStyle(), engine: engine)
        let photo = ImageAttachment(path: "p.png", width: 800, height: 600)
        let b = try m.layout(msg("caption", images: [photo, photo, photo]), rowWidth: 400)
        // Max image width 280 − 20 = 260: two 129-pt cells and a 2-pt gap; the wide one spans both.
        #expect(
            b.imageFrames == [
                Rect(x: 20, y: 4, width: 260, height: 129),
                Rect(x: 20, y: 135, width: 129, height: 129), Rect(x: 151, y: 135, width: 129, height: 129)
            ])
        #expect(b.bubble.width == 280)
        #expect(abs(try #require(b.textFrame).minY - 268) < 1e-9)  // 4 + 260 + 4
    }

    @Test(
        "grids as messaging apps draw them: rows of two, three as one wide over two, an odd count ending with a row of three; every cell inside the grid, none overlapping, none empty",
        arguments: [(2, [2]), (3, [1, 2]), (4, [2, 2]), (5, [2, 3]), (6, [2, 2, 2]), (7, [2, 2, 3])])
    func grids(_ count: Int, _ rows: [Int]) throws {
        #expect(BubbleMeasurer.gridRows(count) == rows)
        let m = BubbleMeasurer(style: LayoutStyle(), engine: engine)
        let (size, cells) = m.gridLayout(count: count, maxWidth: 260)
        #expect(cells.count == count)
        // As wide as the bubble allows, unless the rows would be taller than 1.5 × the photo height.
        #expect(size.width == 260 || (abs(size.height - 360) < 1e-9 && size.width < 260), "\(size)")
        // Each row spans the whole width; rows follow each other 2 pt apart.
        var k = 0, y = 0.0
        for n in rows {
            let row = Array(cells[k..<k + n])
            #expect(row.allSatisfy { abs($0.minY - y) < 1e-9 && abs($0.height - row[0].height) < 1e-9 })
            #expect(abs(row.first!.minX) < 1e-9 && abs(row.last!.maxX - size.width) < 1e-9, "row of \(n) spans the grid")
            if n > 1 { #expect(row.allSatisfy { abs($0.width - $0.height) < 1e-9 }, "square cells in a row of \(n)") }
            y = row[0].maxY + 2
            k += n
        }
        #expect(abs(size.height - (y - 2)) < 1e-9)
        for (i, a) in cells.enumerated() { for b in cells[(i + 1)...] { #expect(a.intersection(b).map { $0.width * $0.height } ?? 0 < 1e-9) } }
    }

    @Test("a reply's quoted snippet sits above the bubble")
    func reply() throws {
        let conversation = Conversation(
            participants: Array(people.prefix(2)),
            messages: [
                msg("Agreed", "me", reply: ReplyReference(id: "1", sender: "a", text: "Shall we?\nAt eight"))
            ])
        let b = bubbles(try layouter().layout(conversation, width: 400))[0]
        let r = try #require(b.reply)
        // "Alice Liddell: Shall we? At eight" = 33 characters × 6 = 198 pt at 12 pt, padding 10/4/10/5.
        #expect(r.label.string == "Alice Liddell: Shall we? At eight")
        #expect(r.frame == Rect(x: 390 - 218, y: 0, width: 218, height: 24))
        #expect(b.bubble.minY == 24 + 2)
    }

    @Test("reaction badge on the bubble's outer top corner, rising above it")
    func reactions() throws {
        let m = BubbleMeasurer(style: LayoutStyle(), engine: engine)
        let b = try m.layout(msg("Hi", reactions: [Reaction(emoji: "❤️", count: 2), Reaction(emoji: "👍")]), rowWidth: 400)
        let r = try #require(b.reactions)
        #expect(r.label.string == "❤️ 2 👍")
        // 7 cells (emoji are double width) × 6 + 14 = 56 wide, 15 + 6 = 21 high; rises ceil(0.6 × 21) = 13.
        #expect(r.frame.size == Size(width: 56, height: 21))
        #expect(b.bubble.minY == 13 && r.frame.minY == 0)
        #expect(abs(r.frame.maxX - (b.bubble.maxX + 56 * 0.3)) < 1e-9)
        let o = try m.layout(msg("Hi", "me", reactions: [Reaction(emoji: "👍")]), rowWidth: 400)
        #expect(abs(try #require(o.reactions).frame.minX - (o.bubble.minX - o.reactions!.frame.width * 0.3)) < 1e-9)
    }

    @Test("links: areas over the link's text")
    func links() throws {
        let m = BubbleMeasurer(style: LayoutStyle(), engine: engine)
        let b = try m.layout(msg("see https://example.com now"), rowWidth: 400)
        #expect(b.links == [LinkLayout(url: "https://example.com", rects: [Rect(x: 32 + 32, y: 4, width: 19 * 8, height: 20)])])
        var off = LayoutStyle()
        off.detectsLinks = false
        #expect(try BubbleMeasurer(style: off, engine: engine).layout(msg("see https://example.com"), rowWidth: 400).links.isEmpty)
    }

    @Test("typing indicator: a bubble with three dots after the last message")
    func typing() throws {
        let layout = try layouter().layout(Conversation(participants: Array(people.prefix(2)), messages: [msg("Hi")], typing: ["a"]), width: 400)
        guard case let .typing(sender, b) = try #require(layout.rows.last).content else { Issue.record("no typing row"); return }
        #expect(sender == "a")
        #expect(b.bubble == Rect(x: 10, y: 0, width: 62, height: 34))
        #expect(b.typingDots.count == 3)
        // Centred in the body (padding 22 left, 16 right): 3 × 8 + 2 × 4.8 = 33.6 wide.
        #expect(abs(b.typingDots[0].minX - (10 + 22 + (62 - 38 - 33.6) / 2)) < 1e-9)
        #expect(b.typingDots.allSatisfy { $0.size == Size(width: 8, height: 8) && $0.minY == 4 + (34 - 11 - 8) / 2 })
    }

    @Test("system lines are centred, without a bubble")
    func system() throws {
        let layout = try layouter().layout(Conversation(messages: [.system("Alice left", date: t0)]), width: 400)
        guard case let .system(_, label) = layout.rows[1].content else { Issue.record("no system row"); return }
        #expect(label.frame.midX == 200)
    }

    @Test("mirrored layout: every frame is the mirror image of the normal one")
    func mirrored() throws {
        let photo = ImageAttachment(path: "p.png", width: 800, height: 600)
        let conversation = Conversation(
            participants: people,
            messages: [
                msg("one", reactions: [Reaction(emoji: "👍")]), msg("two", at: 10, images: [photo, photo]),
                msg("reply", "me", at: 20, reply: ReplyReference(sender: "a", text: "one"), status: .failed),
                msg("last", "me", at: 30, status: .delivered), msg("😀", "b", at: 40)
            ], typing: ["b"])
        let normal = try layouter { $0.timeBeside = true }.layout(conversation, width: 400)
        let mirror = try layouter {
            $0.timeBeside = true; $0.mirrored = true
        }.layout(conversation, width: 400)
        #expect(normal.rows.count == mirror.rows.count)
        func flip(_ r: Rect) -> Rect { Rect(x: 400 - r.maxX, y: r.minY, width: r.width, height: r.height) }
        for (n, m) in zip(normal.rows, mirror.rows) {
            #expect(n.frame == m.frame)
            guard let a = n.bubble, let b = m.bubble else { continue }
            #expect(b.mirrored && b.tailSide != a.tailSide)
            #expect(b.bubble == flip(a.bubble))
            #expect(b.textFrame == a.textFrame.map(flip))
            #expect(b.imageFrames == a.imageFrames.map(flip))
            #expect(b.avatarFrame == a.avatarFrame.map(flip))
            #expect(b.failedBadge == a.failedBadge.map(flip))
            #expect(b.reactions?.frame == a.reactions.map { flip($0.frame) })
            #expect(b.reply?.frame == a.reply.map { flip($0.frame) })
            #expect(b.typingDots == a.typingDots.map(flip))
            #expect(b.labels.map(\.frame) == a.labels.map { flip($0.frame) })
        }
        // Incoming now on the right, outgoing on the left.
        #expect(bubbles(mirror)[0].bubble.maxX == 400 - 10 - 34)
        #expect(bubbles(mirror)[3].bubble.minX == 10)
    }
}

@Suite("Link detection")
struct LinkDetectorTests {
    func urls(_ s: String) -> [String] { LinkDetector.links(in: s).map(\.url) }

    @Test("the quick check never hides a link the scan finds")
    func quickCheckKeepsEveryLink() {
        var texts = SyntheticConversation.make(count: 3000, seed: 9).messages.compactMap(\.text)
        texts += [
            "WWW.example.org", "x@y.io", "call 555 123 4567", "https://a.b", "12345678", "wwwx.com", "see www. no",
            "2023-11-14", "+1 (555) 010-9999", "a: b", "mailto:x@y.com", "1234 56"
        ]
        var withLinks = 0
        for t in texts {
            let scanned = LinkDetector.scan(t)
            if !scanned.isEmpty { withLinks += 1 }
            #expect(LinkDetector.links(in: t) == scanned, "\(t)")
            if !LinkDetector.mayHaveLinks(t) { #expect(scanned.isEmpty, "\(t)") }
        }
        #expect(withLinks > 50)
    }

    @Test func webEmailPhone() {
        #expect(urls("go to https://example.com/a?b=1. Now") == ["https://example.com/a?b=1"])
        #expect(urls("(see http://x.org/wiki/A_(b))") == ["http://x.org/wiki/A_(b)"])
        #expect(urls("www.example.com!") == ["https://www.example.com"])
        #expect(urls("mail ann@example.org, thanks") == ["mailto:ann@example.org"])
        #expect(urls("call +49 170 1234567 or (555) 123-4567") == ["tel:+491701234567", "tel:5551234567"])
    }

    @Test func notLinks() {
        #expect(urls("javascript:alert(1) data:text/html,x ftp://x.org") == [])
        #expect(urls("on 2023-11-14 at 09:41, room 12, 3 pm") == [])
        #expect(urls("abc123456789") == [])
        #expect(urls("ann@localhost") == [])
        // A bare 8-digit date (as in WhatsApp file names) is no phone number; 8 other digits are.
        #expect(urls("see you 20211014 or VID-20211014-WA0003") == [])
        #expect(urls("call 55512345") == ["tel:55512345"])
        #expect(urls("call 20211399") == ["tel:20211399"])
    }

    @Test func byteRanges() {
        let s = "é https://a.io"
        let link = LinkDetector.links(in: s)[0]
        #expect(link.range == 3..<15)  // é is two bytes
    }
}

@Suite("Conversation features: scene")
struct FeatureSceneTests {
    func items(_ conversation: Conversation, theme: Theme) throws -> [SceneItem] {
        let layout = try ConversationLayouter(style: theme.layoutStyle, engine: engine, timeZone: utc).layout(conversation, width: 375)
        let pages = try SceneBuilder(theme: theme, engine: engine, timeZone: utc).pages(for: conversation, layout: layout, setup: PageSetup(width: 375))
        guard case .clipped(_, let items) = pages[0].items.last! else { return [] }
        return items
    }
    var theme: Theme { vectorTestTheme(labelSize: 11, outgoingTail: true, outgoingOutline: false) }

    @Test("emoji-only draws text only; failed draws a red badge and a red label; avatars are coloured circles with initials")
    func drawn() throws {
        let conversation = Conversation(
            participants: people,
            messages: [
                msg("hello"), msg("🎉", "b", at: 400), msg("nope", "me", at: 800, status: .failed)
            ], typing: ["a"])
        let items = try self.items(conversation, theme: theme)
        let paths = items.compactMap { item -> (Rect, Color?)? in
            if case let .path(p, fill, _, _) = item { return (BubbleShape.bounds(p), fill) } else { return nil }
        }
        let texts = items.compactMap { if case .text(let t) = $0 { return t } else { return nil } }
        // The 🎉 message: text in the 40 pt emoji style, no bubble path around it.
        let emoji = try #require(texts.first { $0.string == "🎉" })
        #expect(emoji.style.size == 40)
        #expect(!paths.contains { $0.1 == theme.incoming.fill && $0.0.contains(Rect(x: emoji.origin.x + 1, y: emoji.origin.y + 1, width: 1, height: 1)) })
        // Failed: a red circle and "Failed" in red.
        let red = Color(r8: 255, g8: 59, b8: 48)
        #expect(paths.contains { $0.1 == red && $0.0.width == 18 })
        #expect(texts.first { $0.string == "Failed" }?.color == red)
        // Avatars: "AL" on Alice's colour (messages and typing), "B" on Bob's.
        #expect(texts.filter { $0.string == "AL" }.count == 2 && texts.contains { $0.string == "B" })
        #expect(paths.contains { $0.1 == SceneBuilder.avatarColor("a") && $0.0.width == 28 })
        #expect(SceneBuilder.initials("Alice Liddell") == "AL" && SceneBuilder.initials("bob") == "B" && SceneBuilder.initials("  ") == "?")
        // Typing: three dots.
        #expect(paths.filter { $0.1 == theme.labels.time && $0.0.width == 8 }.count == 3)
        // Sender names in the group chat.
        #expect(texts.contains { $0.string == "Alice Liddell" } && texts.contains { $0.string == "Bob" })
    }

    @Test("mirrored: tails on the other side")
    func mirroredTail() throws {
        var style = theme.layoutStyle
        style.mirrored = true
        let b = try BubbleMeasurer(style: style, engine: engine).layout(msg("hi"), rowWidth: 375)
        #expect(b.tailSide == .outgoing && b.bubble.maxX == 365)
    }
}
