import BubbleCore
import BubbleRender
import BubbleTestSupport
import Foundation
import Testing

/// The Gallery and Stats tabs of `bubbles serve`: the API, the thumbnails the server makes and
/// keeps, and the pages in Chromium (WebDriver).
@Suite("bubbles serve: gallery and statistics", .serialized)
struct InsightBrowserTests {
    /// A conversation of 3,000 photos (40 pictures: 30 made here, the media fixtures' eight
    /// turned JPEGs, a GIF and a corrupt one), a video, a voice note and a PDF, a photo every
    /// 50 minutes from 2024-01-01 (about 104 days).
    static func photoChat(in dir: URL) throws -> URL {
        let media = MediaCLITests.media
        var pictures: [(path: String, width: Int, height: Int)] = []
        for k in 0..<30 {
            let w = 64 + k, h = 48
            var bytes = [UInt8](repeating: 255, count: w * h * 4)
            for i in 0..<(w * h) { bytes[i * 4] = UInt8(k * 8); bytes[i * 4 + 1] = UInt8(255 - k * 8); bytes[i * 4 + 2] = UInt8(i % 256) }
            let path = dir.appendingPathComponent("made-\(k).png").path
            try ImageSurface(rgba: RGBAImage(width: w, height: h, bytes: bytes)).writePNG(to: path)
            pictures.append((path, w, h))
        }
        for n in 1...8 { pictures.append((media.appendingPathComponent("orientation-\(n).jpg").path, n >= 5 ? 40 : 60, n >= 5 ? 60 : 40)) }
        pictures.append((media.appendingPathComponent("photo.gif").path, 60, 40))
        pictures.append((media.appendingPathComponent("corrupt.jpg").path, 60, 40))
        let f = ISO8601DateFormatter()
        var messages: [[String: Any]] = []
        for seq in 1...3_000 {
            let p = pictures[seq % pictures.count]
            var m: [String: Any] = [
                "from": seq % 2 == 0 ? "me" : (seq % 3 == 0 ? "ben" : "ann"),
                "date": f.string(from: Date(timeIntervalSince1970: 1_704_067_200 + Double(seq) * 3_000)),
                "images": [["path": p.path, "width": p.width, "height": p.height]]
            ]
            if seq % 10 == 0 { m["text"] = "photo \(seq)" }
            messages.append(m)
        }
        let end = 1_704_067_200 + 3_001 * 3_000.0
        messages.append([
            "from": "ann", "date": f.string(from: Date(timeIntervalSince1970: end)),
            "attachment": ["kind": "video", "path": media.appendingPathComponent("clip.webm").path, "duration": 3]
        ])
        messages.append([
            "from": "ben", "date": f.string(from: Date(timeIntervalSince1970: end + 60)),
            "attachment": ["kind": "voice", "path": media.appendingPathComponent("voice.amr").path, "duration": 2]
        ])
        messages.append([
            "from": "me", "date": f.string(from: Date(timeIntervalSince1970: end + 120)),
            "attachment": ["kind": "document", "path": media.appendingPathComponent("Trip plan.pdf").path, "fileName": "Trip plan.pdf", "pageCount": 2]
        ])
        let doc: [String: Any] = [
            "format": "bubblekit-conversation", "version": 1, "title": "Photo album", "me": "me",
            "participants": [["id": "me", "name": "Me"], ["id": "ann", "name": "Ann Lee"], ["id": "ben", "name": "Ben Ode"]],
            "messages": messages
        ]
        let url = dir.appendingPathComponent("album.json")
        try JSONSerialization.data(withJSONObject: doc).write(to: url)
        return url
    }

    static func temp() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-insight-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test(
        "media and thumbnails: newest first; a thumbnail is made once and then read from disk, turned by its EXIF orientation; a corrupt photo gets a placeholder; bad sizes and ids are 400s"
    )
    func thumbnails() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ServedStore(exports: [try Self.photoChat(in: dir).path])
        defer { server.stop() }
        let list = try #require(try server.get("/api/v1/conversations/1/media").json() as? [String: Any])
        let items = try #require(list["items"] as? [[String: Any]])
        #expect(items.count == 3_003)
        #expect(items.prefix(3).map { $0["kind"] as? String } == ["document", "voice", "video"])
        #expect(items.first?["pages"] as? Int == 2 && items.first?["name"] as? String == "Trip plan.pdf")
        let seqs = items.compactMap { $0["seq"] as? Int }
        #expect(seqs == seqs.sorted(by: >), "newest first")
        #expect(list["people"] as? [String] == ["Ann Lee", "Ben Ode", "Me"])

        // The EXIF-6 photo (stored 60 × 40, shown 40 × 60): a thumbnail that stands upright.
        let six = try #require(items.first { ($0["seq"] as? Int).map { $0 % 40 == 35 } ?? false })
        let thumb = try #require(six["thumb"] as? String)
        let first = try server.get(thumb)
        #expect(first.status == 200 && first.headers["x-thumbnail"] == "made" && first.headers["content-type"] == "image/jpeg")
        let again = try server.get(thumb)
        #expect(again.headers["x-thumbnail"] == "disk" && again.body == first.body)
        let file = dir.appendingPathComponent("six.jpg")
        try first.body.write(to: file)
        let size = try #require(PhotoLoader.size(ofFile: file.path))
        #expect(size.width == 40 && size.height == 60, "\(size)")
        let id = (thumb as NSString).lastPathComponent
        let kept = try FileManager.default.subpathsOfDirectory(atPath: server.folder.path).filter { $0.hasSuffix(".thumbnails/256/" + id + ".jpg") }
        #expect(kept.count == 1, "kept on disk by content hash and size")

        let corrupt = try #require(items.first { ($0["seq"] as? Int).map { $0 % 40 == 39 } ?? false }?["thumb"] as? String)
        let placeholder = try server.get(corrupt)
        #expect(placeholder.status == 200 && placeholder.headers["x-thumbnail"] == "placeholder" && placeholder.headers["content-type"] == "image/svg+xml")
        #expect(try server.get(corrupt).headers["x-thumbnail"] == "placeholder", "remembered")

        #expect(try server.get(thumb + "?size=999").status == 400)
        #expect(try server.get("/api/v1/thumbnails/..%2f..%2fetc%2fpasswd").status == 400)
        #expect(try server.get("/api/v1/thumbnails/" + String(repeating: "0", count: 64) + ".jpg").status == 404)
        #expect(try server.get("/api/v1/conversations/1/stats?tz=Nowhere/City").status == 400)
    }

    @Test(
        "the gallery of 3,000 photos in Chromium: at most 200 cells in the page wherever it is scrolled, thumbnails load, filters, the lightbox with ← →, and 'show in conversation' opens the viewer at the message"
    )
    func gallery() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ServedStore(exports: [try Self.photoChat(in: dir).path])
        defer { server.stop() }
        let b = try WebDriver(width: 1000, height: 760)
        defer { b.quit() }
        let base = "http://127.0.0.1:\(server.port)"
        try b.open(base + "/c/1/gallery")
        _ = try b.wait(for: "the gallery's items", timeout: 30, "return document.getElementById('gallery').dataset.loaded === '3003';")
        func cells() throws -> Int { try b.run("return document.querySelectorAll('#gallery .gc').length") as? Int ?? -1 }
        let atTop = try cells()
        #expect(atTop > 20 && atTop <= 200, "cells at the top: \(atTop)")
        _ = try b.wait(
            for: "the first thumbnails", timeout: 60,
            """
            const imgs = [...document.querySelectorAll('#gallery .gc img')].slice(0, 12);
            return imgs.length === 12 && imgs.every(i => i.complete && i.naturalWidth > 0);
            """)
        // Scrolled to the middle and to the end: still at most 200 cells, of messages from there.
        for (fraction, range) in [(0.5, 1_000...2_000), (1.0, 1...200)] {
            try b.run("const g = document.getElementById('gallery'); g.scrollTop = (g.scrollHeight - g.clientHeight) * arguments[0];", [fraction])
            _ = try b.wait(
                for: "cells at \(fraction)", timeout: 15,
                """
                const g = document.getElementById('gallery'), r = g.getBoundingClientRect();
                return [...g.querySelectorAll('.gc')].some(c => { const b = c.getBoundingClientRect(); return b.top >= r.top && b.bottom <= r.bottom; });
                """)
            let n = try cells()
            #expect(n > 20 && n <= 200, "cells at \(fraction): \(n)")
            let visible = try #require(
                try b.run(
                    """
                    const g = document.getElementById('gallery'), r = g.getBoundingClientRect();
                    return [...g.querySelectorAll('.gc')].filter(c => { const b = c.getBoundingClientRect(); return b.top >= r.top && b.bottom <= r.bottom; })
                        .map(c => +c.dataset.seq);
                    """) as? [Int])
            #expect(!visible.isEmpty && visible.allSatisfy { range.contains($0) }, "on screen at \(fraction): \(visible.prefix(5))…")
        }
        // Filters: Ben's photos only (every sixth message but the even ones: seq % 6 == 3).
        try b.run("const s = document.getElementById('gsender'); s.value = 'Ben Ode'; s.dispatchEvent(new Event('change'));")
        let count = try #require(try b.run("return document.getElementById('gcount').textContent") as? String)
        let bens = (1...3_000).filter { $0 % 2 != 0 && $0 % 3 == 0 }.count + 1
        #expect(count == "\(bens) items", "\(count)")
        try b.run("const s = document.getElementById('gkind'); s.value = 'voice'; s.dispatchEvent(new Event('change'));")
        #expect(try b.run("return document.getElementById('gcount').textContent") as? String == "1 item")
        try b.run("for (const id of ['gsender', 'gkind']) { const s = document.getElementById(id); s.value = ''; s.dispatchEvent(new Event('change')); }")

        // The lightbox: the newest photo large, → the one before it, Esc closes.
        try b.run("document.querySelector('#gallery .gc.gk-photo').click()")
        _ = try b.wait(for: "the lightbox", timeout: 10, "return !document.getElementById('lightbox').hidden && !!document.querySelector('#lbmedia img');")
        let firstLink = try #require(try b.run("return document.getElementById('lbopen').getAttribute('href')") as? String)
        #expect(firstLink == "/c/1?at=3000", "\(firstLink)")
        _ = try b.wait(for: "the large photo", timeout: 30, "const i = document.querySelector('#lbmedia img'); return i.complete && i.naturalWidth > 0;")
        try b.press("\u{E014}")  // →
        let next = try #require(try b.run("return document.getElementById('lbopen').getAttribute('href')") as? String)
        #expect(next == "/c/1?at=2999", "\(next)")
        try b.press("\u{E012}")  // ←
        #expect(try b.run("return document.getElementById('lbopen').getAttribute('href')") as? String == "/c/1?at=3000")
        try b.press("\u{E00C}")  // Esc
        #expect(try b.run("return document.getElementById('lightbox').hidden") as? Bool == true)

        // "Show in conversation": the viewer, at that message.
        try b.run("document.querySelector('#gallery .gc.gk-photo').click()")
        try b.press("\u{E014}")
        try b.click("#lbopen")
        try ViewerBrowserTests.settle(b, "the viewer at message 2999")
        #expect((try b.run("return location.pathname + location.search") as? String) == "/c/1?at=2999")
        let top = try #require(try ViewerBrowserTests.rowTop(b, 2999))
        #expect(top >= 0 && top < 760, "message 2999 is on screen: \(top)")
    }

    @Test("the Stats tab shows the charts (an SVG the server drew) and the numbers")
    func statsTab() throws {
        let dir = try Self.temp()
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try ServedStore(exports: [try Self.photoChat(in: dir).path])
        defer { server.stop() }
        let stats = try #require(try server.get("/api/v1/conversations/1/stats?tz=Europe/Berlin").json() as? [String: Any])
        #expect(stats["messages"] as? Int == 3_003 && stats["timeZone"] as? String == "Europe/Berlin")
        #expect((stats["media"] as? [String: Any])?["photos"] as? Int == 3_000)
        #expect((stats["media"] as? [String: Any])?["videos"] as? Int == 1 && (stats["media"] as? [String: Any])?["documents"] as? Int == 1)
        let svg = try server.get("/api/v1/conversations/1/stats.svg?locale=de_DE")
        #expect(svg.headers["content-type"]?.hasPrefix("image/svg+xml") == true)
        #expect(String(decoding: svg.body, as: UTF8.self).contains("Messages per month"))
        let b = try WebDriver(width: 1000, height: 760)
        defer { b.quit() }
        try b.open("http://127.0.0.1:\(server.port)/c/1/stats")
        // Drawn at the column's width (the window less the list), not shrunk from 720.
        let drawn = try #require(
            try b.wait(
                for: "the charts", timeout: 30,
                """
                const i = document.getElementById('chart'); const m = /[?&]width=(\\d+)/.exec(i.src);
                return i.complete && i.naturalWidth > 0 && m ? [Number(m[1]), i.naturalWidth, i.getBoundingClientRect().width] : null;
                """) as? [Double])
        #expect(drawn[0] >= 300 && drawn[0] < 720 && abs(drawn[0] - drawn[2]) < 40, "chart drawn at \(drawn[0]) for a column of \(drawn[2])")
        let table = try #require(try b.run("return document.querySelector('main.stats table').innerText") as? String)
        #expect(table.contains("Me") && table.contains("Ann Lee") && table.contains("Ben Ode"))
        #expect(try b.run("return document.querySelector('.tabs a[aria-current=page]').textContent") as? String == "Stats")
    }
}
