import BubbleCore
import BubbleMedia
@testable import BubbleRender
import BubbleTestSupport
@testable import BubbleText
import Foundation
import Testing

private func tempFolder() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-pdfmerge-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

private func makeRenderer(_ engine: TextEngineKind = .fast) throws -> ConversationRenderer {
    TestFonts.pin()
    let (theme, folder) = try ThemeLibrary.load("imessage")
    return ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/", textEngine: engine)
}

/// The synthetic conversation with its photos pointed at the demo photo, and a few texts the
/// fast engine hands to Pango (tabs), right-to-left and emoji.
private func sampleConversation(count: Int = 400) -> Conversation {
    var c = SyntheticConversation.make(count: count, seed: 7)
    let photo = BundledSamples.folder.appendingPathComponent("demo-photo.png").path
    for i in c.messages.indices where c.messages[i].image != nil {
        c.messages[i].image = ImageAttachment(path: photo, width: 0, height: 0)
    }
    for i in stride(from: 5, to: c.messages.count, by: 37) where c.messages[i].text != nil {
        c.messages[i].text = ["Tab\tseparated\tcolumns", "שלום עולם, מה שלומך?", "Party 🎉🥳 at 8, see https://example.org/rsvp?id=\(i)"][i % 3]
    }
    return c
}

private func render(_ renderer: ConversationRenderer, _ conversation: Conversation, to path: String, parts: Int) throws {
    var options = RenderOptions(format: .pdf)
    options.timeZone = TimeZone(identifier: "UTC")!
    options.pdfParts = parts
    try renderer.render(conversation, to: path, options: options)
}

/// `pdfinfo`'s page count and every page's size line.
private func pageSizes(_ path: String) throws -> (count: Int, sizes: [String]) {
    let info = try run("/usr/bin/pdfinfo", [path])
    let count = try #require(info.split(separator: "\n").first { $0.hasPrefix("Pages:") }.flatMap { Int($0.split(separator: " ").last!) })
    let sizes = try run("/usr/bin/pdfinfo", ["-f", "1", "-l", String(count), path]).split(separator: "\n")
        .filter { $0.hasPrefix("Page ") && $0.contains(" size:") }.map(String.init)
    return (count, sizes)
}

/// The link targets (`/URI (…)`) in file order.
private func linkTargets(_ path: String) throws -> [String] {
    let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    var targets: [String] = []
    var rest = text[...]
    while let r = rest.range(of: "/URI (") {
        guard let close = rest[r.upperBound...].firstIndex(of: ")") else { break }
        targets.append(String(rest[r.upperBound..<close]))
        rest = rest[close...]
    }
    return targets
}

private func occurrences(of needle: String, in path: String) throws -> Int {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let n = Array(needle.utf8)
    var count = 0
    data.withUnsafeBytes { (b: UnsafeRawBufferPointer) in
        guard b.count >= n.count else { return }
        var i = 0
        while i <= b.count - n.count {
            if b[i] == n[0], (0..<n.count).allSatisfy({ b[i + $0] == n[$0] }) { count += 1; i += n.count } else { i += 1 }
        }
    }
    return count
}

private let qpdf = ["/usr/bin/qpdf", "/usr/local/bin/qpdf"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// `qpdf --check`: exit status and output. Cairo 1.16's own files draw warnings about duplicated
/// `/x…` keys in resource dictionaries; those are the only warnings a merged file may draw.
private func qpdfCheck(_ path: String) throws -> (status: Int32, output: String) {
    let r = try Command.run(qpdf!, ["--check", path])
    return (r.status, r.stdoutText + r.stderrText)
}

private func expectQpdfClean(_ path: String) throws {
    guard qpdf != nil else { return }
    let (status, output) = try qpdfCheck(path)
    #expect(status == 0 || status == 3, "qpdf --check exited \(status):\n\(output)")
    #expect(output.contains(status == 0 ? "No syntax or stream encoding errors found" : "operation succeeded with warnings"), "\(output)")
    let warnings = output.split(separator: "\n").filter { $0.hasPrefix("WARNING") }
    for w in warnings { #expect(w.contains("dictionary has duplicated key"), "\(w)") }
}

@Suite("PDF painted in parts on several threads, then merged", .serialized)
struct PDFMergeTests {
    @Test("Split into 2 or 3 parts: same pages, page sizes, text, links and pixels as one part", arguments: [2, 3])
    func sameAsSerial(parts: Int) throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try makeRenderer()
        let conversation = sampleConversation()
        let serial = dir.appendingPathComponent("serial.pdf").path, split = dir.appendingPathComponent("split.pdf").path
        try render(r, conversation, to: serial, parts: 1)
        try render(r, conversation, to: split, parts: parts)
        let a = try pageSizes(serial), b = try pageSizes(split)
        #expect(a.count > 20)
        #expect(a.count == b.count)
        #expect(a.sizes == b.sizes)
        #expect(b.sizes.count == b.count)
        let textA = try run("/usr/bin/pdftotext", [serial, "-"]), textB = try run("/usr/bin/pdftotext", [split, "-"])
        #expect(textA.count > 10_000)
        #expect(textA == textB)
        #expect(textB.contains("separated"), "a tab text (drawn by Pango) is in the text")
        let linksA = try linkTargets(serial), linksB = try linkTargets(split)
        #expect(linksA.count > 10)
        #expect(linksA == linksB)
        #expect(try occurrences(of: "/Subtype /Link", in: serial) == occurrences(of: "/Subtype /Link", in: split))
        // Metadata of the first part; one catalog, one pages node.
        let info = try run("/usr/bin/pdfinfo", [split])
        #expect(info.contains("Creator:         BubbleKit"))
        #expect(try occurrences(of: "/Type /Catalog", in: split) == 1)
        #expect(try occurrences(of: "/Type /Pages", in: split) == 1)
        try expectQpdfClean(split)
        // The same pixels: the first and last page, and each part's first and last page.
        var probes: Set<Int> = [1, a.count]
        for k in 1..<parts { probes.insert(a.count * k / parts); probes.insert(a.count * k / parts + 1) }
        let shots = dir.appendingPathComponent("shots")
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        for page in probes.sorted() {
            var images: [Data] = []
            for (file, name) in [(serial, "a"), (split, "b")] {
                let prefix = shots.appendingPathComponent("\(name)\(page)").path
                _ = try run("/usr/bin/pdftoppm", ["-r", "50", "-f", String(page), "-l", String(page), "-singlefile", file, prefix])
                images.append(try Data(contentsOf: URL(fileURLWithPath: prefix + ".ppm")))
            }
            #expect(images[0].count > 10_000)
            #expect(images[0] == images[1], "page \(page) differs")
        }
        try FileManager.default.removeItem(at: shots)
        // No part files left beside the output.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["serial.pdf", "split.pdf"])
    }

    @Test("Reading in tiny chunks (objects, tokens and streams straddle reads) gives the same file")
    func tinyChunks() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try makeRenderer()
        let a = dir.appendingPathComponent("a.pdf").path, b = dir.appendingPathComponent("b.pdf").path
        try render(r, sampleConversation(count: 60), to: a, parts: 1)
        try render(r, sampleConversation(count: 90), to: b, parts: 1)
        let big = dir.appendingPathComponent("big.pdf").path, small = dir.appendingPathComponent("small.pdf").path
        let pages = try PDFMerger.merge([a, b], into: big)
        #expect(pages == (try pageSizes(a).count) + (try pageSizes(b).count))
        for chunk in [1, 7, 97, 4096] {
            #expect(try PDFMerger.merge([a, b], into: small, chunk: chunk) == pages)
            #expect(try Data(contentsOf: URL(fileURLWithPath: small)) == Data(contentsOf: URL(fileURLWithPath: big)), "chunk \(chunk)")
        }
        let text = try run("/usr/bin/pdftotext", [big, "-"])
        #expect(text == (try run("/usr/bin/pdftotext", [a, "-"])) + (try run("/usr/bin/pdftotext", [b, "-"])))
        try expectQpdfClean(big)
    }

    @Test("One part paints serially; few pages are not split unless asked")
    func partCounts() throws {
        let r = try makeRenderer()
        var options = RenderOptions(format: .pdf)
        #expect(r.pdfPartCount(pages: 3, options: options) == 1)
        #expect(r.pdfPartCount(pages: 100, options: options) == min(UsableCores.count, 25))
        options.pdfParts = 3
        #expect(r.pdfPartCount(pages: 100, options: options) == 3)
        #expect(r.pdfPartCount(pages: 2, options: options) == 2)
        options.pdfParts = 1
        #expect(r.pdfPartCount(pages: 100, options: options) == 1)
        // The Pango engine draws on one thread.
        let pango = try makeRenderer(.pango)
        options.pdfParts = 3
        #expect(pango.pdfPartCount(pages: 100, options: options) == 1)
    }

    @Test("Progress: reported on the calling thread, increasing, ending at all pages")
    func progress() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try makeRenderer()
        let caller = pthread_self()
        var calls: [(Int, Int)] = []
        var otherThread = false
        r.progress = { done, total in
            calls.append((done, total))
            if pthread_equal(pthread_self(), caller) == 0 { otherThread = true }
        }
        let path = dir.appendingPathComponent("chat.pdf").path
        try render(r, sampleConversation(count: 200), to: path, parts: 3)
        let pages = try pageSizes(path).count
        #expect(!otherThread)
        #expect(!calls.isEmpty)
        #expect(calls.allSatisfy { $0.1 == pages })
        #expect(zip(calls, calls.dropFirst()).allSatisfy { $0.0 < $1.0 })
        #expect(calls.last?.0 == pages)
    }

    @Test("A part that fails: an error, no output and no part files left")
    func workerFailure() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A theme background cut short (its header reads, its chunks end early): every part's
        // painting fails. (A photo like it does not fail a render: it draws a placeholder.)
        let good = try Data(contentsOf: BundledSamples.folder.appendingPathComponent("demo-photo.png"))
        let broken = dir.appendingPathComponent("broken.png")
        try good.prefix(200).write(to: broken)
        #expect(MediaProbe.incompleteness(path: broken.path)?.hasPrefix("cut short") == true)
        #expect(PhotoLoader.size(ofFile: broken.path) == nil)
        let conversation = sampleConversation(count: 200)
        TestFonts.pin()
        var (theme, folder) = try ThemeLibrary.load("imessage")
        theme.background = .image(broken.path)
        let r = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: "/", textEngine: .fast)
        let path = dir.appendingPathComponent("chat.pdf").path
        #expect(throws: RenderError.self) { try render(r, conversation, to: path, parts: 2) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["broken.png"])
    }

    @Test("A folder where no file can be created: the error names the output, not a part")
    func unwritableFolder() throws {
        // /proc exists, and nobody (root included) can create a file in it.
        let path = "/proc/bubblekit-\(UUID().uuidString).pdf"
        do {
            try render(try makeRenderer(), sampleConversation(count: 200), to: path, parts: 2)
            Issue.record("rendering into /proc succeeded")
        } catch {
            guard case let .unwritable(named, _)? = error as? RenderError else { Issue.record("unexpected \(error)"); return }
            #expect(named == path)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("Merging a truncated or garbage part throws and leaves no file", arguments: ["truncated", "garbage", "empty"])
    func badPart(kind: String) throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try makeRenderer()
        let good = dir.appendingPathComponent("good.pdf").path
        try render(r, sampleConversation(count: 30), to: good, parts: 1)
        let bad = dir.appendingPathComponent("bad.pdf").path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        switch kind {
        case "truncated": try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: bad))
        case "garbage": try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: URL(fileURLWithPath: bad))
        default: try Data().write(to: URL(fileURLWithPath: bad))
        }
        let out = dir.appendingPathComponent("out.pdf").path
        do {
            try PDFMerger.merge([good, bad], into: out)
            Issue.record("merging a \(kind) part succeeded")
        } catch {
            guard case let .pdfMerge(path, reason) = error else { Issue.record("unexpected \(error)"); return }
            #expect(path == out)
            #expect(reason.contains("part 2 of 2"), "\(reason)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["bad.pdf", "good.pdf"])
    }

    /// Merging `parts` into `out` throws `RenderError.pdfMerge` with a reason that contains
    /// `because`, and leaves no `out`.
    func expectRefused(
        _ parts: [String], into out: String, because: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(sourceLocation: sourceLocation) {
            try PDFMerger.merge(parts, into: out)
        } throws: { error in
            guard case let RenderError.pdfMerge(_, reason) = error else { return false }
            return reason.contains(because)
        }
        #expect(!FileManager.default.fileExists(atPath: out), sourceLocation: sourceLocation)
    }

    @Test("A stream whose /Length does not end at endstream is refused")
    func wrongLength() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a.pdf").path, b = dir.appendingPathComponent("b.pdf").path
        try HandmadePDF.write(to: a, label: "A")
        try HandmadePDF.write(to: b, label: "B", lengthDelta: -3)
        let out = dir.appendingPathComponent("out.pdf").path
        expectRefused([a, b], into: out, because: "endstream")
    }

    @Test("A catalog with more than /Pages is refused (it would be lost)")
    func richCatalog() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a.pdf").path
        try HandmadePDF.write(to: a, label: "A", catalogExtra: "/PageMode /UseOutlines")
        let out = dir.appendingPathComponent("out.pdf").path
        expectRefused([a, a], into: out, because: "catalog has /PageMode")
    }

    @Test("References are renumbered; strings, hex strings, comments and stream data are copied as they are")
    func tokenizer() throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a.pdf").path, b = dir.appendingPathComponent("b.pdf").path
        try HandmadePDF.write(to: a, label: "A")
        try HandmadePDF.write(to: b, label: "B")
        let out = dir.appendingPathComponent("out.pdf").path
        #expect(try PDFMerger.merge([a, b], into: out) == 2)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: out)), as: UTF8.self)
        // Part A keeps its numbers (base 0); part B's are moved by A's /Size − 1 (9).
        #expect(text.contains("/Contents 4 0 R"))
        #expect(text.contains("/Contents 13 0 R"))
        #expect(text.contains("/Length 14 0 R"))
        #expect(text.contains("/Private 17 0 R"))
        #expect(text.contains("/Length 18 0 R"))
        // Inside strings, hex strings and comments nothing is rewritten.
        #expect(text.components(separatedBy: "(see 4 0 R \\) and (nested 1 0 R) here)").count == 3)
        #expect(text.components(separatedBy: "<34 20 30 20 52>").count == 3)
        #expect(text.components(separatedBy: "% not a reference: 4 0 R").count == 3)
        // The stream bytes (binary, with "4 0 R" and "endobj" inside) survive.
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(data.ranges(of: HandmadePDF.streamData("A")).count == 1)
        #expect(data.ranges(of: HandmadePDF.streamData("B")).count == 1)
        // The first part's info; both pages under one pages node.
        #expect(text.contains("/Title (Part A)"))
        #expect(!text.contains("/Title (Part B)"))
        let info = try run("/usr/bin/pdfinfo", [out])
        #expect(info.contains("Pages:           2"))
        let pdftext = try run("/usr/bin/pdftotext", [out, "-"])
        #expect(pdftext.contains("Page A") && pdftext.contains("Page B"))
        #expect(pdftext.range(of: "Page A")!.lowerBound < pdftext.range(of: "Page B")!.lowerBound)
        if qpdf != nil {
            let (status, output) = try qpdfCheck(out)
            #expect(status == 0, "\(output)")
        }
    }
}

/// A small PDF written by hand in the shape Cairo writes (classic xref, indirect stream lengths,
/// object numbers not in file order), with strings, a hex string and a comment that look like
/// references, and binary stream data.
enum HandmadePDF {
    static func streamData(_ label: String) -> Data {
        var d = Data("Blob \(label)\n% 4 0 R endobj stream\n".utf8)
        d.append(contentsOf: (0..<256).map { UInt8($0) })
        d.append(Data("\nendstream endobj 4 0 R )(".utf8))
        return d
    }

    static func write(to path: String, label: String, lengthDelta: Int = 0, catalogExtra: String = "") throws {
        let data = streamData(label)
        var out = Data("%PDF-1.5\n%\u{B5}\u{ED}\n".utf8)
        var offsets: [Int: Int] = [:]
        func object(_ n: Int, _ body: Data) {
            offsets[n] = out.count
            out.append(Data("\(n) 0 obj\n".utf8)); out.append(body); out.append(Data("\nendobj\n".utf8))
        }
        let content = Data("q BT /F1 24 Tf 72 700 Td (Page \(label)) Tj ET Q\n".utf8)
        var stream = Data("<< /Length 5 0 R >>\nstream\n".utf8)
        stream.append(content)
        stream.append(Data("\nendstream".utf8))
        object(4, stream)
        object(5, Data("   \(content.count)".utf8))
        var blob = Data("<< /Length 9 0 R >>\nstream\n".utf8)
        blob.append(data)
        blob.append(Data("\nendstream".utf8))
        object(8, blob)
        object(9, Data("   \(data.count + lengthDelta)".utf8))
        object(6, Data("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".utf8))
        object(
            3,
            Data(
                """
                << /Type /Page % not a reference: 4 0 R
                   /Parent 1 0 R
                   /MediaBox [ 0 0 300 800 ]
                   /Contents 4 0 R
                   /PieceInfo << /BubbleKit << /Private 8 0 R >> >>
                   /Resources << /Font << /F1 6 0 R >> >>
                   /Note (see 4 0 R \\) and (nested 1 0 R) here)
                   /Hex <34 20 30 20 52>
                >>
                """.utf8))
        object(1, Data("<< /Type /Pages\n   /Kids [ 3 0 R ]\n   /Count 1\n>>".utf8))
        object(7, Data("<< /Producer (handmade) /Title (Part \(label)) >>".utf8))
        object(2, Data("<< /Type /Catalog\n   /Pages 1 0 R \(catalogExtra)\n>>".utf8))
        let xref = out.count
        var table = "xref\n0 10\n0000000000 65535 f \n"
        for n in 1...9 { table += String(format: "%010d 00000 n \n", offsets[n]!) }
        table += "trailer\n<< /Size 10\n   /Root 2 0 R\n   /Info 7 0 R\n>>\nstartxref\n\(xref)\n%%EOF\n"
        out.append(Data(table.utf8))
        try out.write(to: URL(fileURLWithPath: path))
    }
}
