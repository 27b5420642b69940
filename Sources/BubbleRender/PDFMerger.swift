import BubbleCore
import BubbleText
import CCairo
import Foundation

/// Joins PDF files that Cairo wrote (pages painted in parts on several threads) into one PDF,
/// the parts' pages in order.
///
/// It understands what Cairo 1.16 writes: PDF 1.5 with one classic cross-reference table, every
/// object `N 0 obj … endobj`, stream lengths given directly or as an indirect integer object, one
/// flat `/Type /Pages` node under a catalog that holds nothing but `/Pages`, and an `/Info`
/// dictionary. Part k's objects are renumbered by an offset (references `N G R` are rewritten by
/// a tokenizer that skips strings, comments and stream data, which are copied byte for byte);
/// each part's pages node, catalog and info are dropped; one new pages node lists every part's
/// pages, and the first part's info is kept. Object numbers a part never wrote (Cairo 1.16
/// reserves a few for structure trees it does not write) are free in the new table.
///
/// Anything else (cross-reference streams, object streams, incremental updates, encryption, a
/// catalog with more than `/Pages`, inheritable attributes on the pages node, a nested page tree,
/// a stream without `endstream` at its `/Length`) is refused with `RenderError.pdfMerge`: the
/// merger never writes a PDF it is not sure of. The output is written through a temporary file
/// and appears only when complete; parts are read in chunks, one at a time.
enum PDFMerger {
    /// True with the Cairo this merger was written and tested against (1.16.x). Later versions
    /// write object streams (refused), so the renderer paints one part there.
    static var understandsCairoOutput: Bool {
        (11600..<11700).contains(Int(cairo_version()))
    }

    /// Merges `parts` (in order) into `path`; returns the number of pages. `chunk`: bytes read
    /// at a time (tests make it tiny, so objects and tokens straddle reads).
    @discardableResult
    /// `pageBoxes`: keys written into every page's dictionary ("/TrimBox [...] /BleedBox [...]":
    /// Cairo sets only the MediaBox).
    static func merge(_ parts: [String], into path: String, chunk: Int = 1 << 20, pageBoxes: String? = nil) throws(RenderError) -> Int {
        guard !parts.isEmpty else { throw .pdfMerge(path: path, reason: "no parts to merge") }
        var summaries: [PartSummary] = []
        for (k, part) in parts.enumerated() {
            do {
                let input = try PDFInput(path: part)
                summaries.append(try PartSummary(input))
            } catch let failure as MergeFailure {
                throw .pdfMerge(path: path, reason: "part \(k + 1) of \(parts.count): \(failure.reason)")
            } catch {
                throw .pdfMerge(path: path, reason: "part \(k + 1) of \(parts.count): \(error)")
            }
        }
        var pageCount = 0
        try AtomicFile.write(to: path) { (tmp: String) throws(RenderError) in
            do {
                pageCount = try write(parts, summaries, to: tmp, chunk: chunk, pageBoxes: pageBoxes)
            } catch let failure as MergeFailure {
                throw .pdfMerge(path: path, reason: failure.reason)
            } catch {
                throw .pdfMerge(path: path, reason: "\(error)")
            }
        }
        return pageCount
    }

    private static func write(_ parts: [String], _ summaries: [PartSummary], to tmp: String, chunk: Int, pageBoxes: String?) throws -> Int {
        let output = try PDFOutput(path: tmp)
        // Part k's object n becomes bases[k] + n; the new pages node, catalog and info follow.
        var bases: [Int] = []
        var total = 0
        for s in summaries { bases.append(total); total += s.size - 1 }
        let pagesNumber = total + 1, catalogNumber = total + 2, infoNumber = total + 3
        var offsets = [Int](repeating: -1, count: total + 4)
        let minor = summaries.map(\.minorVersion).max() ?? 5
        output.write(Array("%PDF-1.\(minor)\n%".utf8) + [0xB5, 0xED, 0xAE, 0xFB] + [0x0A])
        var kids: [Int] = []
        for (k, part) in parts.enumerated() {
            do {
                let input = try PDFInput(path: part)
                let copier = PartCopier(
                    input: input, summary: summaries[k], base: bases[k], pagesNumber: pagesNumber,
                    output: output, chunk: chunk)
                copier.pageBoxes = pageBoxes
                try copier.copy(into: &offsets)
                kids += summaries[k].kids.map { bases[k] + $0 }
            } catch let failure as MergeFailure {
                throw MergeFailure("part \(k + 1) of \(parts.count): \(failure.reason)")
            }
        }
        offsets[pagesNumber] = output.offset
        output.write("\(pagesNumber) 0 obj\n<< /Type /Pages\n   /Kids [")
        for (i, kid) in kids.enumerated() {
            output.write(i % 8 == 0 ? "\n     " : " ")
            output.write(kid); output.write(" 0 R")
        }
        output.write(" ]\n   /Count "); output.write(kids.count); output.write("\n>>\nendobj\n")
        offsets[catalogNumber] = output.offset
        output.write("\(catalogNumber) 0 obj\n<< /Type /Catalog\n   /Pages \(pagesNumber) 0 R\n>>\nendobj\n")
        let info = summaries[0].info
        if let info {
            offsets[infoNumber] = output.offset
            output.write("\(infoNumber) 0 obj\n")
            output.write(info)
            output.write("\nendobj\n")
        }
        // The cross-reference table: numbers nothing was written under are free, chained from 0.
        let xref = output.offset
        guard xref < 10_000_000_000 else {
            throw MergeFailure("the joined file passes 10 GB, more than a cross-reference table's 10 digits address")
        }
        output.write("xref\n0 \(offsets.count)\n")
        var free = offsets.indices.filter { $0 > 0 && offsets[$0] < 0 }
        free.append(0)
        var nextFree = 0
        // Each entry is 20 bytes: 10-digit offset (or next free number), generation, n or f.
        var line = Array("0000000000 00000 n \n".utf8)
        let freeGeneration = Array("65535".utf8), usedGeneration = Array("00000".utf8)
        for (n, offset) in offsets.enumerated() {
            let isFree = n == 0 || offset < 0
            var value = isFree ? free[nextFree] : offset
            if isFree { nextFree += 1 }
            for i in stride(from: 9, through: 0, by: -1) { line[i] = UInt8(48 + value % 10); value /= 10 }
            line.replaceSubrange(11..<16, with: isFree ? freeGeneration : usedGeneration)
            line[17] = isFree ? UInt8(ascii: "f") : UInt8(ascii: "n")
            output.write(line)
        }
        output.write("trailer\n<< /Size \(offsets.count)\n   /Root \(catalogNumber) 0 R\n")
        if info != nil { output.write("   /Info \(infoNumber) 0 R\n") }
        output.write(">>\nstartxref\n\(xref)\n%%EOF\n")
        try output.close()
        return kids.count
    }
}

/// Why a part could not be merged (turned into `RenderError.pdfMerge`).
struct MergeFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The lexer ran out of bytes before the unit it was reading ended: read more and start again.
struct Incomplete: Error {}

// MARK: one part

/// What the merge needs to know about a part before copying it: from the trailer, the catalog,
/// the pages node and the info dictionary.
struct PartSummary {
    let size: Int
    let minorVersion: Int
    /// File offset of each object by number; −1 when not in use.
    let offsets: [Int]
    let xrefOffset: Int
    let catalog: Int
    let pages: Int
    let infoNumber: Int?
    /// The info dictionary as it will be written (no references in it).
    let info: [UInt8]?
    let kids: [Int]

    init(_ input: PDFInput) throws {
        minorVersion = try Self.minorVersion(input)
        xrefOffset = try Self.startXref(input)
        let table = try Self.crossReferences(input, at: xrefOffset)
        (offsets, size, catalog, infoNumber) = (table.offsets, table.size, table.catalog, table.info)
        let offsets = self.offsets
        func offset(_ n: Int, _ what: String) throws -> Int {
            guard n > 0, n < offsets.count, offsets[n] > 0 else { throw MergeFailure("the \(what) (object \(n)) is not in the cross-reference table") }
            return offsets[n]
        }
        pages = try Self.pagesNode(input, catalog: catalog, at: offset(catalog, "catalog"))
        kids = try Self.kids(input, pages: pages, at: offset(pages, "pages node"), size: size)
        if let infoNumber {
            let value = try input.object(infoNumber, at: offset(infoNumber, "info dictionary"))
            guard case .dictionary = value, !value.hasReferences else {
                throw MergeFailure("the info dictionary is not a dictionary of plain values")
            }
            var bytes: [UInt8] = []
            value.serialize(into: &bytes)
            info = bytes
        } else {
            info = nil
        }
    }

    /// x of the `%PDF-1.x` header.
    private static func minorVersion(_ input: PDFInput) throws -> Int {
        let head = try input.bytes(at: 0, count: 16)
        let prefix = Array("%PDF-1.".utf8)
        guard head.count > prefix.count, Array(head[0..<prefix.count]) == prefix,
            let digit = head.dropFirst(prefix.count).first, (0x30...0x39).contains(digit)
        else {
            throw MergeFailure("not a PDF file (no %PDF-1.x header)")
        }
        return Int(digit - 0x30)
    }

    /// The offset `startxref` near the end gives.
    private static func startXref(_ input: PDFInput) throws -> Int {
        let tailStart = max(0, input.size - 1024)
        let tail = try input.bytes(at: tailStart, count: input.size - tailStart)
        let marker = Array("startxref".utf8)
        guard let at = lastIndex(of: marker, in: tail) else { throw MergeFailure("no startxref at the end (truncated?)") }
        let number = Array(tail[(at + marker.count)...])
        let x = number.withUnsafeBufferPointer { b -> PDFToken? in
            var lexer = PDFLexer(b, atEnd: true)
            return try? lexer.next()
        }
        guard let x, x.kind == .integer, x.value > 0, x.value < input.size else {
            throw MergeFailure("startxref is not followed by an offset inside the file")
        }
        return x.value
    }

    /// The cross-reference table at `xrefOffset` and its trailer: each object's offset, the
    /// trailer's /Size, /Root and /Info.
    private static func crossReferences(_ input: PDFInput, at xrefOffset: Int) throws -> (offsets: [Int], size: Int, catalog: Int, info: Int?) {
        let table = try input.read(at: xrefOffset, count: input.size - xrefOffset)
        defer { withExtendedLifetime(table) {} }
        var xref = PDFLexer(table.view, atEnd: true)
        var offsets: [Int] = []
        var catalog = 0
        var info: Int?
        do {
            guard let first = try xref.next(), xref.is(first, "xref") else {
                throw MergeFailure("no cross-reference table at \(xrefOffset) (cross-reference streams are not supported)")
            }
            while true {
                guard let t = try xref.next() else { throw MergeFailure("the cross-reference table has no trailer") }
                if xref.is(t, "trailer") { break }
                guard t.kind == .integer, let c = try xref.next(), c.kind == .integer, t.value >= 0, c.value >= 0,
                    t.value + c.value <= 1 << 26
                else {
                    throw MergeFailure("malformed cross-reference subsection")
                }
                if offsets.count < t.value + c.value { offsets += [Int](repeating: -1, count: t.value + c.value - offsets.count) }
                for n in t.value..<(t.value + c.value) {
                    guard let o = try xref.next(), o.kind == .integer, let g = try xref.next(), g.kind == .integer,
                        let k = try xref.next(), k.kind == .keyword
                    else {
                        throw MergeFailure("malformed cross-reference entry for object \(n)")
                    }
                    if xref.is(k, "n") {
                        guard o.value > 0, o.value < xrefOffset, g.value == 0 else {
                            throw MergeFailure("cross-reference entry for object \(n) (\(o.value) \(g.value) n) is not usable")
                        }
                        offsets[n] = o.value
                    } else if !xref.is(k, "f") {
                        throw MergeFailure("malformed cross-reference entry for object \(n)")
                    }
                }
            }
            guard case let .dictionary(trailer) = try xref.value() else { throw MergeFailure("the trailer is not a dictionary") }
            for (key, _) in trailer where !["Size", "Root", "Info", "ID"].contains(key) {
                throw MergeFailure("the trailer has /\(key), which is not supported (incremental update or encryption)")
            }
            guard case let .integer(size)? = trailer.first(where: { $0.key == "Size" })?.value, size >= offsets.count, size > 1 else {
                throw MergeFailure("the trailer's /Size is missing or smaller than the table")
            }
            if offsets.count < size { offsets += [Int](repeating: -1, count: size - offsets.count) }
            guard case let .reference(root, _)? = trailer.first(where: { $0.key == "Root" })?.value else {
                throw MergeFailure("the trailer has no /Root")
            }
            catalog = root
            if case let .reference(n, _)? = trailer.first(where: { $0.key == "Info" })?.value { info = n }
            return (offsets, size, catalog, info)
        } catch is Incomplete {
            throw MergeFailure("the file ends inside the cross-reference table or trailer")
        }
    }

    /// The catalog holds nothing but /Type and /Pages (anything else would be lost): its pages node.
    private static func pagesNode(_ input: PDFInput, catalog: Int, at position: Int) throws -> Int {
        guard case let .dictionary(cat) = try input.object(catalog, at: position) else {
            throw MergeFailure("the catalog is not a dictionary")
        }
        for (key, value) in cat {
            switch (key, value) {
            case ("Type", .name("Catalog")): continue
            case ("Pages", .reference): continue
            default: throw MergeFailure("the catalog has /\(key), which merging would lose")
            }
        }
        guard case let .reference(pagesNumber, _)? = cat.first(where: { $0.key == "Pages" })?.value else {
            throw MergeFailure("the catalog has no /Pages")
        }
        return pagesNumber
    }

    /// The pages node's kids (plain page references, each once, as many as its /Count).
    private static func kids(_ input: PDFInput, pages: Int, at position: Int, size: Int) throws -> [Int] {
        guard case let .dictionary(node) = try input.object(pages, at: position) else {
            throw MergeFailure("the pages node is not a dictionary")
        }
        var kids: [Int] = []
        var count = -1
        for (key, value) in node {
            switch (key, value) {
            case ("Type", .name("Pages")): continue
            case let ("Kids", .array(items)):
                for item in items {
                    guard case let .reference(n, 0) = item, n > 0, n < size else {
                        throw MergeFailure("the pages node's /Kids holds something other than page references")
                    }
                    kids.append(n)
                }
            case let ("Count", .integer(n)): count = n
            default: throw MergeFailure("the pages node has /\(key), which is not supported (inherited attributes)")
            }
        }
        guard count == kids.count, !kids.isEmpty else {
            throw MergeFailure("the pages node's /Count (\(count)) is not its number of kids (\(kids.count))")
        }
        guard Set(kids).count == kids.count else { throw MergeFailure("the pages node lists a page twice") }
        return kids
    }
}

private func lastIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    var i = haystack.count - needle.count
    while i >= 0 {
        if haystack[i] == needle[0], Array(haystack[i..<(i + needle.count)]) == needle { return i }
        i -= 1
    }
    return nil
}

/// Copies one part's objects to the output in file order, renumbered, skipping its pages node,
/// catalog and info.
final class PartCopier {
    /// Written into every page dictionary (`PDFMerger.merge`'s `pageBoxes`).
    var pageBoxes: String?
    let input: PDFInput
    let summary: PartSummary
    let base: Int
    let pagesNumber: Int
    let output: PDFOutput
    /// Bytes from the file, starting at file offset `bufferBase`; `position` indexes into it.
    private let buffer: ByteBuffer
    @exclusivity(unchecked) private var bufferBase = 0
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var tokens: [PDFToken] = []
    /// Bytes read at a time.
    private let chunk: Int

    init(input: PDFInput, summary: PartSummary, base: Int, pagesNumber: Int, output: PDFOutput, chunk: Int) {
        self.input = input; self.summary = summary; self.base = base; self.pagesNumber = pagesNumber; self.output = output
        self.chunk = max(1, chunk)
        buffer = ByteBuffer(capacity: 2 * self.chunk)
    }

    private var atEnd: Bool { bufferBase + buffer.count >= input.size }

    /// Reads the next chunk; false at the end of the file.
    private func readMore() throws -> Bool {
        if position > 0 {
            buffer.removeFirst(position)
            bufferBase += position
            position = 0
        }
        guard !atEnd else { return false }
        try input.read(at: bufferBase + buffer.count, count: chunk, into: buffer)
        return true
    }

    /// Copies bytes `range` of the buffer to the output.
    private func emit(_ range: Range<Int>) {
        output.write(buffer.slice(range))
    }

    /// The new number of this part's object `n`.
    private func renumber(_ n: Int, in object: Int) throws -> Int {
        if n == summary.pages { return pagesNumber }
        guard n > 0, n < summary.size else {
            throw MergeFailure("object \(object) refers to object \(n), outside the part's /Size \(summary.size)")
        }
        guard n != summary.catalog, n != summary.infoNumber else {
            throw MergeFailure("object \(object) refers to the catalog or the info dictionary")
        }
        return base + n
    }

    func copy(into offsets: inout [Int]) throws {
        var pagesSeen = Set<Int>()
        let kids = Set(summary.kids)
        var written = Set<Int>()
        while true {
            // One object up to `endobj` or the end of `stream`'s line.
            guard let headEnd = try lexNextObject() else {
                // `xref`: the body is over.
                let at = bufferBase + tokens[0].start
                guard at == summary.xrefOffset else {
                    throw MergeFailure("a cross-reference table at \(at) is not the last one (incremental update)")
                }
                for kid in summary.kids where !pagesSeen.contains(kid) {
                    throw MergeFailure("page object \(kid) is missing or not a /Type /Page dictionary")
                }
                return
            }
            let number = tokens[0].value
            guard tokens[1].value == 0 else { throw MergeFailure("object \(number) has generation \(tokens[1].value); only 0 is supported") }
            guard number > 0, number < summary.size else { throw MergeFailure("object \(number) is outside the part's /Size \(summary.size)") }
            guard written.insert(number).inserted else { throw MergeFailure("object \(number) is written twice (incremental update)") }
            let last = tokens[tokens.count - 1]
            let isStream = matches(last, "stream")
            // The top-level dictionary's /Type and /Length.
            var type: PDFToken?
            var length: (value: Int, indirect: Bool)?
            if tokens.count > 4, tokens[3].kind == .dictionaryOpen {
                var i = 4
                while i < tokens.count, tokens[i].kind != .dictionaryClose {
                    guard tokens[i].kind == .name else { throw MergeFailure("object \(number): a dictionary key is not a name") }
                    let key = i
                    i = try skipValue(i + 1, in: number)
                    if matches(tokens[key], "/Type"), i == key + 2, tokens[key + 1].kind == .name { type = tokens[key + 1] }
                    if matches(tokens[key], "/Length") {
                        if i == key + 2, tokens[key + 1].kind == .integer { length = (tokens[key + 1].value, false) }
                        if i == key + 4, tokens[key + 1].kind == .integer { length = (tokens[key + 1].value, true) }
                    }
                }
            }
            if let type {
                if matches(type, "/Page") {
                    guard kids.contains(number) else { throw MergeFailure("page object \(number) is not in the pages node") }
                    pagesSeen.insert(number)
                } else if matches(type, "/Pages"), number != summary.pages {
                    throw MergeFailure("object \(number) is a second pages node (nested page trees are not supported)")
                } else if matches(type, "/ObjStm") || matches(type, "/XRef") {
                    throw MergeFailure("object \(number) is an object or cross-reference stream, which is not supported")
                } else if matches(type, "/Catalog"), number != summary.catalog {
                    throw MergeFailure("object \(number) is a second catalog")
                }
            }
            let dropped = number == summary.pages || number == summary.catalog || number == summary.infoNumber
            if dropped && isStream { throw MergeFailure("object \(number) (pages node, catalog or info) is a stream") }
            if !dropped {
                offsets[base + number] = output.offset
                output.write(base + number)
                // Everything after the number is copied as written, in spans broken only where a
                // reference's object number is replaced.
                var copied = tokens[0].end
                if let pageBoxes, let type, matches(type, "/Page"), tokens[3].kind == .dictionaryOpen {
                    emit(copied..<tokens[3].end)
                    output.write(" " + pageBoxes + " ")
                    copied = tokens[3].end
                }
                var t = 3
                while t < tokens.count {
                    let token = tokens[t]
                    if token.kind == .integer, t + 2 < tokens.count, tokens[t + 1].kind == .integer,
                        tokens[t + 2].kind == .keyword, matches(tokens[t + 2], "R")
                    {
                        guard tokens[t + 1].value == 0 else {
                            throw MergeFailure("object \(number) refers to \(token.value) \(tokens[t + 1].value) R; only generation 0 is supported")
                        }
                        emit(copied..<token.start)
                        output.write(try renumber(token.value, in: number))
                        copied = token.end
                        t += 3
                        continue
                    }
                    if token.kind == .keyword, matches(token, "R") {
                        throw MergeFailure("object \(number) has an R that does not follow two integers")
                    }
                    t += 1
                }
                // Up to `endobj`, or the end-of-line after `stream`.
                emit(copied..<headEnd)
            }
            position = headEnd
            if isStream {
                guard let length else { throw MergeFailure("stream object \(number) has no /Length") }
                let count = length.indirect ? try resolveLength(length.value, of: number) : length.value
                guard count >= 0, bufferBase + position + count <= input.size else {
                    throw MergeFailure("stream object \(number)'s /Length \(count) runs past the end of the file")
                }
                try copyStreamData(count)
                // `endstream` and `endobj`, whitespace between as written.
                let end = try lexStreamEnd(of: number, length: count)
                if !dropped { emit(position..<end) }
                position = end
            }
            if !dropped { output.write([0x0A]) }
            if position > chunk {
                buffer.removeFirst(position)
                bufferBase += position
                position = 0
            }
        }
    }

    private func matches(_ token: PDFToken, _ text: StaticString) -> Bool {
        PDFLexer.matches(buffer.view, token, text)
    }

    /// Lexes the next object into `tokens` (reading more of the file as needed) and returns the
    /// buffer index after its `endobj` or after `stream`'s end of line; nil when the next token
    /// is `xref` (`tokens[0]`) instead. The lexer lives only inside, so the buffer is never
    /// shared while it changes.
    private func lexNextObject() throws -> Int? {
        while true {
            do {
                var lexer = PDFLexer(buffer.view, from: position, atEnd: atEnd)
                tokens.removeAll(keepingCapacity: true)
                return try lexObjectHead(&lexer) ? lexer.position : nil
            } catch is Incomplete {}
            guard try readMore() else { throw MergeFailure("the file ends inside an object (truncated?)") }
        }
    }

    /// After stream data: `endstream` and `endobj`; returns the buffer index after `endobj`.
    private func lexStreamEnd(of number: Int, length: Int) throws -> Int {
        while true {
            do {
                var lexer = PDFLexer(buffer.view, from: position, atEnd: atEnd)
                let e: PDFToken?
                do { e = try lexer.next() } catch let failure as MergeFailure {
                    throw MergeFailure("stream object \(number): no endstream after its /Length (\(length)) bytes (\(failure.reason))")
                }
                guard let e, lexer.is(e, "endstream") else {
                    throw MergeFailure("stream object \(number): no endstream after its /Length (\(length)) bytes")
                }
                guard let o = try lexer.next(), lexer.is(o, "endobj") else {
                    throw MergeFailure("stream object \(number): no endobj after endstream")
                }
                return o.end
            } catch is Incomplete {}
            guard try readMore() else { throw MergeFailure("the file ends inside stream object \(number)") }
        }
    }

    /// Lexes `N G obj` and the object's tokens up to `endobj`, or up to `stream` and its end of
    /// line, into `tokens`; false when the next token is `xref` instead.
    private func lexObjectHead(_ lexer: inout PDFLexer) throws -> Bool {
        guard let first = try lexer.next() else { throw Incomplete() }
        tokens.append(first)
        if lexer.is(first, "xref") { return false }
        guard first.kind == .integer, let g = try lexer.next(), g.kind == .integer,
            let obj = try lexer.next(), lexer.is(obj, "obj")
        else {
            throw MergeFailure("expected an object (N 0 obj) at byte \(bufferBase + first.start)")
        }
        tokens.append(g); tokens.append(obj)
        while true {
            guard let t = try lexer.next() else { throw Incomplete() }
            tokens.append(t)
            if t.kind == .keyword {
                if lexer.is(t, "endobj") { return true }
                if lexer.is(t, "stream") {
                    try lexer.streamLineEnd()
                    return true
                }
                if lexer.is(t, "obj") || lexer.is(t, "endstream") || lexer.is(t, "xref") || lexer.is(t, "trailer") {
                    throw MergeFailure("object \(first.value) has no endobj")
                }
            }
        }
    }

    /// Index after the value starting at `tokens[i]` (a reference, a dictionary or array with
    /// everything inside it, or one token).
    private func skipValue(_ i: Int, in number: Int) throws -> Int {
        guard i < tokens.count else { throw MergeFailure("object \(number): a dictionary is not closed") }
        let t = tokens[i]
        switch t.kind {
        case .integer:
            if i + 2 < tokens.count, tokens[i + 1].kind == .integer, tokens[i + 2].kind == .keyword,
                matches(tokens[i + 2], "R")
            {
                return i + 3
            }
            return i + 1
        case .dictionaryOpen, .arrayOpen:
            var depth = 0
            var j = i
            while j < tokens.count {
                switch tokens[j].kind {
                case .dictionaryOpen, .arrayOpen: depth += 1
                case .dictionaryClose, .arrayClose:
                    depth -= 1
                    if depth == 0 { return j + 1 }
                default: break
                }
                j += 1
            }
            throw MergeFailure("object \(number): a dictionary or array is not closed")
        case .dictionaryClose, .arrayClose:
            throw MergeFailure("object \(number): a dictionary key has no value")
        default:
            return i + 1
        }
    }

    /// The value of the integer object `n` holding a stream's length.
    private func resolveLength(_ n: Int, of number: Int) throws -> Int {
        guard n > 0, n < summary.offsets.count, summary.offsets[n] > 0 else {
            throw MergeFailure("stream object \(number)'s /Length object \(n) is not in the cross-reference table")
        }
        guard case let .integer(value) = try input.object(n, at: summary.offsets[n], expectedBytes: 64) else {
            throw MergeFailure("stream object \(number)'s /Length object \(n) is not an integer")
        }
        return value
    }

    /// Copies `count` bytes of stream data from `position` (byte for byte) and moves past them.
    private func copyStreamData(_ count: Int) throws {
        let inBuffer = min(count, buffer.count - position)
        emit(position..<(position + inBuffer))
        if count == inBuffer {
            position += count
            return
        }
        var remaining = count - inBuffer
        var at = bufferBase + position + inBuffer
        buffer.count = 0
        position = 0
        while remaining > 0 {
            let n = try input.read(at: at, count: min(remaining, chunk), into: buffer)
            guard n > 0 else { throw MergeFailure("the file ends inside stream data") }
            emit(0..<n)
            buffer.count = 0
            remaining -= n
            at += n
        }
        bufferBase = at
    }
}

// MARK: lexing

struct PDFToken {
    enum Kind: UInt8 {
        case integer, real, name, string, hexString, dictionaryOpen, dictionaryClose, arrayOpen, arrayClose, brace, keyword
    }
    var kind: Kind
    var start: Int
    var end: Int
    /// The value of an integer.
    var value: Int
}

/// PDF tokens (ISO 32000-1 §7.2) over bytes: strings with escapes and nested parentheses, hex
/// strings, names, numbers, keywords and delimiters; whitespace and comments are skipped.
/// Running out of bytes mid-token (or before any token) throws `Incomplete` unless `atEnd`.
struct PDFLexer {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int
    let atEnd: Bool

    init(_ bytes: UnsafeBufferPointer<UInt8>, from position: Int = 0, atEnd: Bool) {
        self.bytes = bytes; self.position = position; self.atEnd = atEnd
    }

    static func isWhitespace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 || b == 0x0C || b == 0x00 }
    static func isDelimiter(_ b: UInt8) -> Bool {
        switch b {
        case 0x28, 0x29, 0x3C, 0x3E, 0x5B, 0x5D, 0x7B, 0x7D, 0x2F, 0x25: return true
        default: return false
        }
    }

    func `is`(_ token: PDFToken, _ text: StaticString) -> Bool { Self.matches(bytes, token, text) }

    /// True when `token` in `bytes` is exactly `text`.
    static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ token: PDFToken, _ text: StaticString) -> Bool {
        let n = text.utf8CodeUnitCount
        guard token.end - token.start == n else { return false }
        return text.withUTF8Buffer { t in
            for k in 0..<n where bytes[token.start + k] != t[k] { return false }
            return true
        }
    }

    /// The next token; nil at the end of the bytes when `atEnd`.
    mutating func next() throws -> PDFToken? {
        // Whitespace and comments.
        while true {
            guard position < bytes.count else {
                if atEnd { return nil }
                throw Incomplete()
            }
            let b = bytes[position]
            if Self.isWhitespace(b) { position += 1; continue }
            if b == 0x25 {
                while position < bytes.count, bytes[position] != 0x0A, bytes[position] != 0x0D { position += 1 }
                if position == bytes.count, !atEnd { throw Incomplete() }
                continue
            }
            break
        }
        let start = position
        let b = bytes[position]
        switch b {
        case 0x28:  // ( string )
            var depth = 0
            while true {
                guard position < bytes.count else { throw atEnd ? MergeFailure("a string is not closed") : Incomplete() }
                let c = bytes[position]
                if c == 0x5C { position += 2; continue }
                if c == 0x28 { depth += 1 }
                if c == 0x29 {
                    depth -= 1
                    if depth == 0 { position += 1; break }
                }
                position += 1
            }
            guard position <= bytes.count else { throw atEnd ? MergeFailure("a string is not closed") : Incomplete() }
            return PDFToken(kind: .string, start: start, end: position, value: 0)
        case 0x3C:  // << or <hex>
            guard position + 1 < bytes.count else { throw atEnd ? MergeFailure("the file ends after <") : Incomplete() }
            if bytes[position + 1] == 0x3C {
                position += 2
                return PDFToken(kind: .dictionaryOpen, start: start, end: position, value: 0)
            }
            while true {
                position += 1
                guard position < bytes.count else { throw atEnd ? MergeFailure("a hex string is not closed") : Incomplete() }
                let c = bytes[position]
                if c == 0x3E { position += 1; break }
                guard Self.isWhitespace(c) || (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c) else {
                    throw MergeFailure("a hex string holds \(String(format: "0x%02X", c))")
                }
            }
            return PDFToken(kind: .hexString, start: start, end: position, value: 0)
        case 0x3E:
            guard position + 1 < bytes.count else { throw atEnd ? MergeFailure("the file ends after >") : Incomplete() }
            guard bytes[position + 1] == 0x3E else { throw MergeFailure("a lone > at byte \(position)") }
            position += 2
            return PDFToken(kind: .dictionaryClose, start: start, end: position, value: 0)
        case 0x5B: position += 1; return PDFToken(kind: .arrayOpen, start: start, end: position, value: 0)
        case 0x5D: position += 1; return PDFToken(kind: .arrayClose, start: start, end: position, value: 0)
        case 0x7B, 0x7D: position += 1; return PDFToken(kind: .brace, start: start, end: position, value: 0)
        case 0x29: throw MergeFailure("a lone ) at byte \(position)")
        default:
            // A name (`/` and regular characters) or a number or keyword (regular characters).
            position += 1
            while true {
                guard position < bytes.count else {
                    if atEnd { break }
                    throw Incomplete()
                }
                let c = bytes[position]
                if Self.isWhitespace(c) || Self.isDelimiter(c) { break }
                position += 1
            }
            if b == 0x2F { return PDFToken(kind: .name, start: start, end: position, value: 0) }
            return number(start, position)
        }
    }

    private func number(_ start: Int, _ end: Int) -> PDFToken {
        var i = start
        var negative = false
        if bytes[i] == 0x2B || bytes[i] == 0x2D { negative = bytes[i] == 0x2D; i += 1 }
        var value = 0
        var digits = 0
        var dot = false
        while i < end {
            let c = bytes[i]
            if c >= 0x30 && c <= 0x39 {
                if !dot && digits < 18 { value = value * 10 + Int(c - 0x30) }
                digits += 1
            } else if c == 0x2E && !dot {
                dot = true
            } else {
                return PDFToken(kind: .keyword, start: start, end: end, value: 0)
            }
            i += 1
        }
        guard digits > 0 else { return PDFToken(kind: .keyword, start: start, end: end, value: 0) }
        if dot || digits >= 18 { return PDFToken(kind: .real, start: start, end: end, value: 0) }
        return PDFToken(kind: .integer, start: start, end: end, value: negative ? -value : value)
    }

    /// After the `stream` keyword: CR LF or LF (ISO 32000-1 §7.3.8.1).
    mutating func streamLineEnd() throws {
        guard position < bytes.count else { throw atEnd ? MergeFailure("the file ends after stream") : Incomplete() }
        if bytes[position] == 0x0A { position += 1; return }
        guard bytes[position] == 0x0D else { throw MergeFailure("stream is not followed by an end of line") }
        guard position + 1 < bytes.count else { throw atEnd ? MergeFailure("the file ends after stream") : Incomplete() }
        guard bytes[position + 1] == 0x0A else { throw MergeFailure("stream is followed by a lone carriage return") }
        position += 2
    }

    /// A whole value: `N G R`, a dictionary, an array or one token.
    mutating func value() throws -> PDFValue {
        guard let t = try next() else { throw MergeFailure("a value is missing") }
        return try value(startingWith: t)
    }

    private mutating func value(startingWith t: PDFToken) throws -> PDFValue {
        switch t.kind {
        case .integer:
            // `N G R` or a plain integer: look two tokens ahead.
            let saved = position
            if let g = try next(), g.kind == .integer, let r = try next(), self.is(r, "R") {
                return .reference(t.value, g.value)
            }
            position = saved
            return .integer(t.value)
        case .name:
            return .name(String(decoding: bytes[(t.start + 1)..<t.end], as: UTF8.self))
        case .dictionaryOpen:
            var entries: [(key: String, value: PDFValue)] = []
            while true {
                guard let k = try next() else { throw MergeFailure("a dictionary is not closed") }
                if k.kind == .dictionaryClose { return .dictionary(entries) }
                guard k.kind == .name else { throw MergeFailure("a dictionary key is not a name") }
                entries.append((String(decoding: bytes[(k.start + 1)..<k.end], as: UTF8.self), try value()))
            }
        case .arrayOpen:
            var items: [PDFValue] = []
            while true {
                guard let i = try next() else { throw MergeFailure("an array is not closed") }
                if i.kind == .arrayClose { return .array(items) }
                items.append(try value(startingWith: i))
            }
        case .dictionaryClose, .arrayClose, .brace:
            throw MergeFailure("unexpected \(String(decoding: bytes[t.start..<t.end], as: UTF8.self))")
        case .keyword where self.is(t, "R") || self.is(t, "obj") || self.is(t, "endobj") || self.is(t, "stream"):
            throw MergeFailure("unexpected keyword \(String(decoding: bytes[t.start..<t.end], as: UTF8.self))")
        default:
            return .other(Array(bytes[t.start..<t.end]))
        }
    }
}

/// A parsed PDF value (only for the few objects the merger reads whole).
indirect enum PDFValue {
    case integer(Int)
    case reference(Int, Int)
    /// Without the slash, as written (no #-escapes decoded).
    case name(String)
    case array([PDFValue])
    case dictionary([(key: String, value: PDFValue)])
    /// Strings, reals, booleans, null: their bytes as written.
    case other([UInt8])

    var hasReferences: Bool {
        switch self {
        case .reference: return true
        case let .array(items): return items.contains { $0.hasReferences }
        case let .dictionary(entries): return entries.contains { $0.value.hasReferences }
        default: return false
        }
    }

    /// Writes the value back as PDF (references are not expected: see `hasReferences`).
    func serialize(into out: inout [UInt8]) {
        switch self {
        case let .integer(n): out += Array(String(n).utf8)
        case let .reference(n, g): out += Array("\(n) \(g) R".utf8)
        case let .name(s): out.append(0x2F); out += Array(s.utf8)
        case let .array(items):
            out += Array("[ ".utf8)
            for item in items { item.serialize(into: &out); out.append(0x20) }
            out.append(0x5D)
        case let .dictionary(entries):
            out += Array("<< ".utf8)
            for (k, v) in entries {
                out.append(0x2F); out += Array(k.utf8); out.append(0x20)
                v.serialize(into: &out)
                out += Array("\n   ".utf8)
            }
            out += Array(">>".utf8)
        case let .other(bytes): out += bytes
        }
    }
}
