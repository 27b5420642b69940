import BubbleCore
import BubbleRender
import Foundation
import Testing
import ZIPFoundation

/// `bubbles book`: the PDF read back with poppler's tools — page boxes, fonts, where words are,
/// which images at which size, the cover's pixels.
@Suite("bubbles book", .serialized)
struct BookCLITests {
    /// A word pdftotext -bbox found: its page (1-based) and box in points (y down).
    struct Word { var page: Int; var text: String; var xMin, yMin, xMax, yMax: Double }

    static func words(_ pdf: String) throws -> (pages: [(width: Double, height: Double)], words: [Word]) {
        let html = dir(pdf).appendingPathComponent("bbox.html").path
        _ = try poppler("pdftotext", ["-bbox", pdf, html])
        let text = try String(contentsOfFile: html, encoding: .utf8)
        var pages: [(Double, Double)] = []
        var words: [Word] = []
        let pageRE = try NSRegularExpression(pattern: #"<page width="([0-9.]+)" height="([0-9.]+)">"#)
        let wordRE = try NSRegularExpression(pattern: #"<word xMin="([0-9.]+)" yMin="([0-9.]+)" xMax="([0-9.]+)" yMax="([0-9.]+)">([^<]*)</word>"#)
        for chunk in text.components(separatedBy: "</page>") {
            let ns = chunk as NSString
            guard let m = pageRE.firstMatch(in: chunk, range: NSRange(location: 0, length: ns.length)) else { continue }
            pages.append((Double(ns.substring(with: m.range(at: 1)))!, Double(ns.substring(with: m.range(at: 2)))!))
            for w in wordRE.matches(in: chunk, range: NSRange(location: 0, length: ns.length)) {
                func d(_ i: Int) -> Double { Double(ns.substring(with: w.range(at: i)))! }
                let raw = ns.substring(with: w.range(at: 5))
                let word = raw.replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(
                    of: "&gt;", with: ">")
                words.append(Word(page: pages.count, text: word, xMin: d(1), yMin: d(2), xMax: d(3), yMax: d(4)))
            }
        }
        return (pages, words)
    }

    static func dir(_ path: String) -> URL { URL(fileURLWithPath: path).deletingLastPathComponent() }

    /// A photo of `width` × `height` pixels: left half red, right half blue.
    static func photo(_ path: String, width: Int, height: Int) throws {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let red = x < width / 2
                bytes[i] = red ? 220 : 30; bytes[i + 1] = 40; bytes[i + 2] = red ? 40 : 200
            }
        }
        try ImageSurface(rgba: RGBAImage(width: width, height: height, bytes: bytes)).writePNG(to: path)
    }

    /// Three months of messages, a big photo, a small one, a message taller than a page.
    static func conversation(in folder: URL) throws -> String {
        try photo(folder.appendingPathComponent("big.png").path, width: 2400, height: 1600)
        try photo(folder.appendingPathComponent("small.png").path, width: 120, height: 90)
        var messages: [[String: Any]] = []
        var t = 1_704_103_200.0  // 2024-01-01 10:00 UTC
        let words = ["lake", "trail", "coffee", "train", "summit", "rain", "picnic", "bridge", "sunset", "map"]
        for i in 0..<150 {
            var m: [String: Any] = [
                "from": i % 2 == 0 ? "ann" : "me", "date": ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: t)),
                "text": "Message \(i) about the \(words[i % 10]) " + String(repeating: "and more ", count: i % 7)
            ]
            // February opens with the big photo.
            if i == 50 { m["image"] = ["path": "big.png"]; m["text"] = "The view from the top" }
            if i == 51 { m["image"] = ["path": "small.png"] }
            if i == 90 {
                m["text"] = (1...160).map { "Line \($0) of the longest message." }.joined(separator: "\n") + " THE-END"
            }
            messages.append(m)
            t += i == 49 || i == 99 ? 32 * 86_400 : 3_600
        }
        let json: [String: Any] = [
            "format": "bubblekit-conversation", "version": 2, "title": "Hiking with Ann", "me": "me",
            "participants": [["id": "ann", "name": "Ann Lee"], ["id": "me", "name": "Zoë"]], "messages": messages
        ]
        let path = folder.appendingPathComponent("chat.json").path
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "an A5 book with 3 mm bleed: boxes, embedded fonts, mirrored margins, contents, chapters on odd pages, folios outside, nothing cut, cover to the bleed, photos at ≤ 300 dpi"
    )
    func a5Book() throws {
        let folder = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.conversation(in: folder)
        try Self.photo(folder.appendingPathComponent("cover.png").path, width: 500, height: 700)
        let pdf = folder.appendingPathComponent("book.pdf").path
        let r = try Tool.run([
            "book", input, "-o", pdf, "--trim", "a5", "--bleed", "3mm", "--gutter", "8mm", "--tz", "UTC",
            "--cover-photo", folder.appendingPathComponent("cover.png").path
        ])
        #expect(r.status == 0, "\(r.stderr)")
        // The small photo prints below 150 dpi: named.
        #expect(r.stderr.contains("small.png prints at"), "\(r.stderr)")
        #expect(!r.stderr.contains("big.png prints at"))

        // Page size = trim + 2 × bleed; TrimBox inset by the bleed, BleedBox = MediaBox, on every page.
        let mm = 72 / 25.4
        let (sheetW, sheetH) = ((148 + 6) * mm, (210 + 6) * mm)
        let info = try poppler("pdfinfo", ["-box", "-f", "1", "-l", "999", pdf])
        let pageCount = Int(info.split(separator: "\n").first { $0.hasPrefix("Pages:") }!.split(separator: " ").last!)!
        let boxes = info.split(separator: "\n").filter { $0.contains("TrimBox:") || $0.contains("BleedBox:") || $0.contains("MediaBox:") }
        #expect(boxes.count == 3 * pageCount)
        for line in boxes {
            let n = Array(line.split(separator: " ").compactMap { Double($0) }.suffix(4))
            if line.contains("TrimBox") {
                #expect(
                    abs(n[0] - 3 * mm) < 0.05 && abs(n[1] - 3 * mm) < 0.05 && abs(n[2] - (sheetW - 3 * mm)) < 0.05 && abs(n[3] - (sheetH - 3 * mm)) < 0.05,
                    "\(line)")
            } else {
                #expect(abs(n[0]) < 0.05 && abs(n[2] - sheetW) < 0.05 && abs(n[3] - sheetH) < 0.05, "\(line)")
            }
        }
        // Every font embedded (and subset).
        let fonts = try poppler("pdffonts", [pdf]).split(separator: "\n").dropFirst(2)
        #expect(!fonts.isEmpty)
        for f in fonts { #expect(f.contains(" yes yes "), "not embedded and subset: \(f)") }

        let (pages, words) = try Self.words(pdf)
        #expect(pages.count == pageCount)
        for p in pages { #expect(abs(p.width - sheetW) < 0.1 && abs(p.height - sheetH) < 0.1) }
        // Contents (page 5): three months, each with the page its heading is on — odd, and there.
        let contents = words.filter { $0.page == 5 }
        let entries = ["January", "February", "March"].map { month -> Int in
            let w = contents.first { $0.text == month }!
            let number = contents.filter { abs($0.yMin - w.yMin) < 1 && Int($0.text) != nil && $0.xMin > w.xMax }.last!
            return Int(number.text)!
        }
        #expect(entries == entries.sorted() && Set(entries).count == 3)
        for (month, page) in zip(["January", "February", "March"], entries) {
            #expect(page % 2 == 1, "\(month) starts on page \(page)")
            let heading = words.first { $0.page == page && $0.text == month }
            #expect(heading != nil, "\(month)'s heading is not on page \(page)")
            #expect((heading?.yMax ?? 0) - (heading?.yMin ?? 0) > 15, "the heading is large")
        }
        // Mirrored margins: odd pages leave the gutter (12 + 8 mm) on the left, even pages on the right.
        let inner = (12.0 + 8) * mm + 3 * mm, outer = 14 * mm + 3 * mm
        let body = words.filter { $0.page >= entries[0] && $0.text.hasPrefix("Message") }
        #expect(body.count > 100)
        for w in body {
            if w.page % 2 == 1 {
                #expect(w.xMin >= inner - 1 && w.xMax <= sheetW - outer + 1, "odd page \(w.page): \(w)")
            } else {
                #expect(w.xMin >= outer - 1 && w.xMax <= sheetW - inner + 1, "even page \(w.page): \(w)")
            }
            // Inside the text block: nothing runs into the margins or off the page.
            #expect(w.yMin >= 3 * mm + 17 * mm - 1 && w.yMax <= sheetH - 3 * mm - 19 * mm + 1, "page \(w.page): \(w)")
        }
        // Folios at the foot's outer corner; running heads (the chapter) at the top's outer side.
        for page in entries[0]...pageCount {
            guard let folio = words.last(where: { $0.page == page && $0.text == String(page) && $0.yMin > sheetH * 0.9 }) else { continue }
            if page % 2 == 1 {
                #expect(folio.xMax > sheetW - outer - 2 && folio.xMax < sheetW - outer + 2, "page \(page): \(folio)")
            } else {
                #expect(abs(folio.xMin - outer) < 2, "page \(page): \(folio)")
            }
        }
        let withMessages = Set(body.map(\.page))
        let numbered = withMessages.filter { p in words.contains { $0.page == p && $0.text == String(p) && $0.yMin > sheetH * 0.9 } }
        #expect(numbered == withMessages, "pages with messages but no folio: \(withMessages.subtracting(numbered).sorted())")
        let heads = words.filter { $0.page > entries[0] && $0.yMax < 3 * mm + 17 * mm && ["January", "February", "March"].contains($0.text) }
        #expect(!heads.isEmpty)
        for h in heads {
            if h.page % 2 == 1 { #expect(h.xMin > sheetW / 2, "\(h)") } else { #expect(h.xMax < sheetW / 2, "\(h)") }
        }
        // Every message's words are there: none cut away at a page's edge. The longest message
        // runs over pages, cut between lines, marked "continued", and ends.
        let all = words.map(\.text)
        #expect(all.filter { $0 == "Message" }.count == 148)
        #expect(all.contains("THE-END"))
        #expect(all.filter { $0 == "continued" }.count >= 2)
        // No day's date alone at a page's foot: the lowest line in each text block is a message's.
        let weekdays = ["Monday,", "Tuesday,", "Wednesday,", "Thursday,", "Friday,", "Saturday,", "Sunday,"]
        #expect(words.contains { weekdays.contains($0.text) })
        for page in withMessages {
            let inBlock = words.filter { $0.page == page && $0.yMax <= sheetH - 3 * mm - 19 * mm + 1 && $0.yMin >= 3 * mm + 17 * mm - 1 }
            guard let bottom = inBlock.map(\.yMax).max() else { continue }
            let last = inBlock.filter { abs($0.yMax - bottom) < 2 }.map(\.text)
            #expect(!last.contains { weekdays.contains($0) }, "page \(page) ends with a date: \(last)")
        }
        let lines = words.filter { $0.text == "Line" }
        #expect(Set(lines.map(\.page)).count >= 3)

        // The big photo: printed at no more than 300 dpi at its size (a block across the text), the small one as it is.
        let images = try poppler("pdfimages", ["-list", pdf]).split(separator: "\n").dropFirst(2).map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        let widths = images.map { Int($0[3])! }
        // Across the text block (114 mm): 300 dpi is 1,346 px of the 2,400; the cover (cropped
        // to fill the sheet) and the small photo keep theirs.
        let blockWidthPx = ((148 - 14 - 12 - 8) * mm) * 300 / 72
        #expect(widths.contains { abs(Double($0) - blockWidthPx) <= 2 }, "\(widths)")
        #expect(!widths.contains(2400), "the big photo is downscaled: \(widths)")
        #expect(widths.contains(120) && widths.contains(500), "\(widths)")

        // The cover photo fills the sheet, bleed included: the corner pixels are the photo's.
        let png = folder.appendingPathComponent("cover").path
        _ = try poppler("pdftoppm", ["-f", "1", "-l", "1", "-r", "30", "-singlefile", "-png", pdf, png])
        let cover = try PNGPixels(URL(fileURLWithPath: png + ".png"))
        func pixel(_ x: Int, _ y: Int) -> (Int, Int, Int) {
            let i = (y * cover.width + x) * 4
            return (Int(cover.pixels[i]), Int(cover.pixels[i + 1]), Int(cover.pixels[i + 2]))
        }
        // (The last row and column of pixels hang past the page's 436.5 × 612.3 pt: white.)
        let (r0, _, b0) = pixel(0, 0), (r1, _, b1) = pixel(cover.width - 2, cover.height - 2)
        #expect(r0 > 150 && b0 < 100, "top-left is the photo's red: \(pixel(0, 0))")
        #expect(b1 > 150 && r1 < 100, "bottom-right is the photo's blue: \(pixel(cover.width - 2, cover.height - 2))")
    }

    /// A WhatsApp (Android) export as a zip, as a phone shares it: 237 messages over two and a
    /// half months after the encryption notice (a system line), big photos alone and with a
    /// caption, a small photo, emoji.
    static func whatsAppExport(in folder: URL) throws -> (zip: String, photos: Int) {
        let export = folder.appendingPathComponent("export")
        try FileManager.default.createDirectory(at: export, withIntermediateDirectories: true)
        var lines = [
            "05/01/25, 9:00 AM - Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them. Tap to learn more."
        ]
        let words = ["lake", "trail", "coffee", "train", "summit", "rain", "picnic", "bridge", "sunset", "map", "beach", "dinner", "weekend"]
        var t = 1_746_090_000.0  // 2025-05-01 09:00 UTC
        var photos = 0
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "MM/dd/yy, h:mm a"
        for i in 0..<237 {
            t += Double(1_200 + (i * 7_919) % 50_000)
            let who = i % 2 == 0 ? "Ann Lee" : "Ben Ode"
            let stamp = f.string(from: Date(timeIntervalSince1970: t))
            if i % 29 == 7 || i == 100 {
                photos += i == 100 ? 0 : 1
                let name = "IMG-2025\(String(format: "%02d%02d", 5 + i / 90, 1 + i % 28))-WA\(String(format: "%04d", i)).jpg"
                if i == 100 {
                    try photo(export.appendingPathComponent(name).path, width: 160, height: 120)
                }  // prints soft
                else {
                    try photo(export.appendingPathComponent(name).path, width: 2400, height: 1600)
                }
                lines.append("\(stamp) - \(who): \(name) (file attached)")
                if i % 2 == 1 { lines.append("At the beach 🏖️") }
            } else {
                let text = (0..<(2 + i % 23)).map { words[($0 * 7 + i) % words.count] }.joined(separator: " ") + (i % 5 == 0 ? " 👍🏽" : "")
                lines.append("\(stamp) - \(who): \(text)")
            }
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: export.appendingPathComponent("WhatsApp Chat with Ann Lee.txt"))
        let zip = folder.appendingPathComponent("WhatsApp Chat with Ann Lee.zip")
        try FileManager.default.zipItem(at: export, to: zip, shouldKeepParent: false)
        return (zip.path, photos)
    }

    @Test(
        "a book of a WhatsApp zip: no page ends in a day's date, each photo's caption once, the count of `stats`, every word in German with --locale de_DE, \"no chapters\" said so, soft photos named as in the export"
    )
    func whatsAppBook() throws {
        let folder = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (zip, photos) = try Self.whatsAppExport(in: folder)
        try Self.photo(folder.appendingPathComponent("beach.png").path, width: 1200, height: 1800)
        let pdf = folder.appendingPathComponent("book.pdf").path
        let r = try Tool.run([
            "book", zip, "-o", pdf, "--trim", "a5", "--bleed", "3mm", "--chapters", "month", "--cover-photo",
            folder.appendingPathComponent("beach.png").path, "--tz", "UTC"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let stats = try Tool.run(["stats", zip, "--json", "--tz", "UTC"])
        let counted = try #require((try JSONSerialization.jsonObject(with: stats.stdout) as? [String: Any])?["messages"] as? Int)
        #expect(counted == 237)
        let (pages, words) = try Self.words(pdf)
        let title = words.filter { $0.page == 3 }.map(\.text).joined(separator: " ")
        #expect(title.contains("\(counted) messages"), "\(title)")
        // The last line of every page of messages is not a day's date.
        let weekdays = ["Monday,", "Tuesday,", "Wednesday,", "Thursday,", "Friday,", "Saturday,", "Sunday,"]
        var flowPages = 0
        for page in 5...pages.count {
            let height = pages[page - 1].height
            // The text block: below the running head, above the folio.
            let body = words.filter { $0.page == page && $0.yMin > 60 && $0.yMax < height - 45 }
            guard let bottom = body.map(\.yMax).max() else { continue }
            flowPages += 1
            let lastLine = body.filter { abs($0.yMax - bottom) < 2 }.sorted { $0.xMin < $1.xMin }.map(\.text)
            #expect(!(weekdays.contains(lastLine.first ?? "") && lastLine.count == 4), "page \(page) ends with the date \(lastLine.joined(separator: " "))")
        }
        #expect(flowPages > 20)
        // Each big photo's caption ("Ann Lee · Wednesday, 18 June 2025, 17:03") once.
        #expect(words.filter { $0.text == "·" }.count == photos, "\(words.filter { $0.text == "·" }.count) captions for \(photos) photos")
        // The soft photo is named as the export names it.
        // Emoji as pictures at print resolution (Cairo alone made them 13 × 13 pixels at 72 ppi),
        // their text still in the PDF's text.
        let images = try poppler("pdfimages", ["-list", pdf]).split(separator: "\n").dropFirst(2).map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        let small = images.filter { $0.count > 12 && $0[2] == "image" && (Int($0[3]) ?? 0) < 120 }  // (the soft photo is 160 wide)
        #expect(!small.isEmpty, "the emoji's pictures")
        #expect(small.allSatisfy { (Int($0[12]) ?? 0) >= 300 && (Int($0[13]) ?? 0) >= 300 }, "\(small.map { $0.joined(separator: " ") })")
        #expect(try poppler("pdftotext", [pdf, "-"]).contains("👍🏽"))
        let note = r.stderr.split(separator: "\n").first { $0.contains("prints at") }.map(String.init) ?? ""
        #expect(note.contains(": IMG-20250617-WA0100.jpg prints at") && !note.contains("bubblekit-attachments"), "\(r.stderr)")

        // In German: every word of the front matter; without chapters, said so.
        let de = folder.appendingPathComponent("buch.pdf").path
        let g = try Tool.run(["book", zip, "-o", de, "--trim", "a5", "--locale", "de_DE", "--tz", "UTC"])
        #expect(g.status == 0, "\(g.stderr)")
        let german = try poppler("pdftotext", ["-f", "3", "-l", "5", de, "-"])
        for word in ["237 Nachrichten", "Erstellt mit BubbleKit", "Inhalt", "Mai 2025"] { #expect(german.contains(word), "\(word): \(german)") }
        for word in ["messages", "Made with", "Contents", "May"] { #expect(!german.contains(word), "\(word) in German: \(german)") }
        let none = try Tool.run(["book", zip, "-o", folder.appendingPathComponent("none.pdf").path, "--chapters", "none", "--tz", "UTC"])
        #expect(none.status == 0 && none.stderr.contains("no chapters") && !none.stderr.contains("1 chapter"), "\(none.stderr)")
        let missing = try Tool.run(["book", zip, "-o", folder.appendingPathComponent("x.pdf").path, "--cover-photo", "nope.jpg"])
        #expect(missing.status != 0 && missing.stderr.contains("--cover-photo nope.jpg: no such file"), "\(missing.stderr)")
    }

    @Test("8×8 square without bleed, chapters by year, big photos on pages of their own; bad options are one clear error")
    func squareBook() throws {
        let folder = try ImportCLITests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try Self.conversation(in: folder)
        let pdf = folder.appendingPathComponent("square.pdf").path
        let r = try Tool.run(["book", input, "-o", pdf, "--trim", "8x8", "--chapters", "year", "--photo-pages", "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        let info = try poppler("pdfinfo", ["-box", pdf])
        #expect(info.contains("Page size:       576 x 576 pts"), "\(info)")
        #expect(info.contains("TrimBox:             0.00     0.00   576.00   576.00"), "\(info)")
        let (_, words) = try Self.words(pdf)
        // One chapter (2024) from page 7 (5: contents); the photo's page holds its caption, no message.
        let contents = words.filter { $0.page == 5 }.map(\.text)
        #expect(contents.contains("2024") && contents.contains("7"))
        let dotPages = Set(words.filter { $0.text == "·" }.map(\.page))
        let captionPage = try #require(words.first { $0.text == "Ann" && dotPages.contains($0.page) }?.page)
        #expect(!words.contains { $0.page == captionPage && $0.text == "Message" }, "the photo's page has no messages")

        // Chapters by month: February opens with the photo — its heading keeps a page of its own
        // (the one the contents name), the photo's page follows.
        let monthly = folder.appendingPathComponent("monthly.pdf").path
        let m = try Tool.run(["book", input, "-o", monthly, "--trim", "8x8", "--photo-pages", "--tz", "UTC"])
        #expect(m.status == 0, "\(m.stderr)")
        let (_, monthWords) = try Self.words(monthly)
        let toc = monthWords.filter { $0.page == 5 }
        let february = try #require(toc.first { $0.text == "February" })
        let februaryPage = try #require(Int(toc.filter { abs($0.yMin - february.yMin) < 1 && Int($0.text) != nil }.last?.text ?? ""))
        #expect(monthWords.contains { $0.page == februaryPage && $0.text == "February" && $0.yMax - $0.yMin > 15 })
        #expect(monthWords.contains { $0.page == februaryPage + 1 && $0.text == "Ann" })
        #expect(!monthWords.contains { $0.page == februaryPage + 1 && $0.text == "Message" })

        for (args, message) in [
            (["--trim", "a3"], "--trim 'a3' is not a trim size"),
            (["--bleed", "3 furlongs"], "--bleed '3 furlongs' is not a length"),
            (["--chapters", "week"], "--chapters 'week' is not a chapter mode"),
            (["--cover-photo", input], "cannot be read as a picture")
        ] {
            let bad = try Tool.run(["book", input, "-o", folder.appendingPathComponent("bad.pdf").path] + args)
            #expect(bad.status != 0)
            #expect(bad.stderr.contains(message), "\(bad.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("bad.pdf").path))
        }
        let txt = try Tool.run(["book", input, "-o", folder.appendingPathComponent("book.txt").path])
        #expect(txt.status != 0 && txt.stderr.contains("a book is a PDF"))
    }
}
