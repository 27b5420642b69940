import BubbleCore
import BubbleText
import CPango
import Foundation

/// One font file fontconfig picks for a family, as the Cairo renderer's Pango draws with it.
struct FontFace: Hashable, Sendable {
    /// Fontconfig's family name ("Liberation Sans").
    var family: String
    var file: String
    /// Face index inside a collection (`.ttc`); 0 for single-face files.
    var index: Int
    var fullName: String?
    var postscriptName: String?
    /// CSS weight: 400 or 700.
    var weight: Int
    /// File size in bytes.
    var size: Int
    /// A colour font (Noto Color Emoji).
    var isColor: Bool = false

    /// The CSS `format()` hint and MIME type when browsers can load the file through
    /// `@font-face src: url(…)`; nil for collections and unknown formats.
    var webFormat: (format: String, mime: String)? {
        guard index == 0 else { return nil }
        switch PathText.fileExtension(file).lowercased() {
        case "ttf": return ("truetype", "font/ttf")
        case "otf": return ("opentype", "font/otf")
        case "woff": return ("woff", "font/woff")
        case "woff2": return ("woff2", "font/woff2")
        default: return nil
        }
    }
}

/// Which face (by fallback position) draws each character: the first face whose character set
/// has it, as fontconfig's sorted font list and Pango's fallback choose. A byte per Unicode
/// scalar, so the HTML escaper can note the faces a page needs at a table lookup per character.
final class FontCoverage: @unchecked Sendable {
    /// Scalar → face index, or 0xFF when no face has it.
    private let table: [UInt8]
    /// Faces that draw printable ASCII.
    let asciiFaces: UInt32

    init(table: [UInt8]) {
        self.table = table
        var ascii: UInt32 = 0
        for c in 0x20..<0x7F where table[c] != 0xFF { ascii |= 1 << UInt32(table[c]) }
        asciiFaces = ascii
    }

    /// A coverage where face 0 has everything (no fontconfig answer).
    static let empty = FontCoverage(table: [UInt8](repeating: 0xFF, count: 0x80))

    /// The face drawing `scalar`, or nil.
    func face(_ scalar: UInt32) -> Int? {
        guard Int(scalar) < table.count, table[Int(scalar)] != 0xFF else { return nil }
        return Int(table[Int(scalar)])
    }

    /// A character the face draws (to measure it with): a usual one of its script when it has
    /// one, else its first character beyond ASCII.
    func sample(of face: Int) -> UInt32? {
        for c in [0x4ECA, 0x0627, 0x1F600, 0x05D0, 0x03A9, 0x0416, 0x2211, 0xAC00] as [UInt32] where self.face(c) == face { return c }
        guard table.count > 0x80 else { return nil }
        return (0x80..<table.count).first { Int(table[$0]) == face }.map { UInt32($0) }
    }

    @inline(__always) func faceBit(_ scalar: UInt32) -> UInt32 {
        guard Int(scalar) < table.count else { return 0 }
        let face = table[Int(scalar)]
        return face == 0xFF ? 0 : 1 << UInt32(face)
    }
}

/// The fonts a theme's family resolves to, in fallback order, for regular and bold text —
/// found through fontconfig's C API with the same configuration Pango uses (`FONTCONFIG_FILE`),
/// so the browser gets the very files the Cairo renderer measured and drew with.
struct HTMLFontStack: Sendable {
    /// Fallback order; at most `maxFaces`.
    var regular: [FontFace]
    /// The bold face of `regular[i]`'s family, when fontconfig has one.
    var bold: [FontFace?]
    var coverage: FontCoverage
    /// Index of the colour emoji face, when the stack has one. Pango sets emoji runs (UTS #51
    /// presentation) with the language `und-zsye`, which makes fontconfig put the colour font
    /// first for them; a browser walks the family list instead, and would draw 🐱 in DejaVu
    /// Sans' black-and-white glyph. So the emoji face comes second in the CSS list, limited to
    /// emoji by `unicode-range`.
    var emojiFace: Int?

    static let maxFaces = 8

    static let none = HTMLFontStack(regular: [], bold: [], coverage: .empty, emojiFace: nil)

    /// `unicode-range` of the emoji face: emoji characters beyond Latin-1 and the characters
    /// that build emoji sequences (variation selector 16, ZWJ, keycap, skin tones, tags).
    static let emojiRanges: [ClosedRange<UInt32>] = {
        var ranges: [ClosedRange<UInt32>] = []
        func add(_ v: UInt32) {
            if let last = ranges.last, last.upperBound + 1 == v { ranges[ranges.count - 1] = last.lowerBound...v } else { ranges.append(v...v) }
        }
        for v in UInt32(0x2000)...0x1FFFF {
            guard let s = Unicode.Scalar(v) else { continue }
            let p = s.properties
            if p.isEmoji || p.isEmojiPresentation || p.isEmojiModifier || v == 0x200D || v == 0x20E3 || v == 0xFE0F {
                add(v)
            }
        }
        ranges.append(0xE0020...0xE007F)
        return ranges
    }()

    static func isEmoji(_ v: UInt32) -> Bool {
        var lo = 0, hi = emojiRanges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if emojiRanges[mid].upperBound < v { lo = mid + 1 } else { hi = mid }
        }
        return lo < emojiRanges.count && emojiRanges[lo].contains(v)
    }

    /// `U+1F300-1F5FF,…` for the emoji face's `@font-face`.
    static var emojiUnicodeRange: String {
        emojiRanges.map { r in
            r.lowerBound == r.upperBound
                ? "U+" + String(r.lowerBound, radix: 16, uppercase: true)
                : "U+" + String(r.lowerBound, radix: 16, uppercase: true) + "-" + String(r.upperBound, radix: 16, uppercase: true)
        }.joined(separator: ",")
    }

    /// Looks `family` up. Never fails: without an answer the stack is empty and the page falls
    /// back to the browser's own fonts.
    static func resolve(family: String) -> HTMLFontStack {
        guard FcInit() != 0 else { return .none }
        let (regular, charsets) = sorted(family: family, bold: false)
        defer { charsets.forEach { FcCharSetDestroy($0) } }
        guard !regular.isEmpty else { return .none }
        let (boldFaces, boldSets) = sorted(family: family, bold: true)
        boldSets.forEach { FcCharSetDestroy($0) }
        let bold = regular.map { face in boldFaces.first { $0.family == face.family && $0.weight == 700 } }

        let emoji = regular.firstIndex { $0.isColor }
        var table = [UInt8](repeating: 0xFF, count: 0x110000)
        table.withUnsafeMutableBufferPointer { t in
            var map = [FcChar32](repeating: 0, count: 8)  // FC_CHARSET_MAP_SIZE: 256 bits
            for (faceIndex, charset) in charsets.enumerated() {
                var next: FcChar32 = 0
                var base = FcCharSetFirstPage(charset, &map, &next)
                while base != FcChar32.max {
                    for word in 0..<8 where map[word] != 0 {
                        var bits = map[word]
                        while bits != 0 {
                            let bit = bits.trailingZeroBitCount
                            bits &= bits - 1
                            let c = Int(base) + word * 32 + bit
                            if c < t.count, t[c] == 0xFF { t[c] = UInt8(faceIndex) }
                        }
                    }
                    base = FcCharSetNextPage(charset, &map, &next)
                }
            }
            // Emoji the first face lacks go to the emoji face, as the CSS list puts it second.
            if let emoji {
                for r in emojiRanges {
                    for c in r where Int(c) < t.count && t[Int(c)] != 0 { t[Int(c)] = UInt8(emoji) }
                }
            }
        }
        return HTMLFontStack(regular: regular, bold: bold, coverage: FontCoverage(table: table), emojiFace: emoji)
    }

    /// Fontconfig's sorted, trimmed list for the family (what Pango's fallback walks), the first
    /// `maxFaces` faces, and each face's character set (owned by the caller).
    private static func sorted(family: String, bold: Bool) -> ([FontFace], [OpaquePointer]) {
        guard let pattern = FcPatternCreate() else { return ([], []) }
        defer { FcPatternDestroy(pattern) }
        _ = family.withCString { FcPatternAddString(pattern, FC_FAMILY, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self)) }
        FcPatternAddInteger(pattern, FC_WEIGHT, bold ? Int32(FC_WEIGHT_BOLD) : Int32(FC_WEIGHT_REGULAR))
        FcPatternAddInteger(pattern, FC_SLANT, Int32(FC_SLANT_ROMAN))
        FcConfigSubstitute(nil, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        var result = FcResultMatch
        guard let set = FcFontSort(nil, pattern, FcTrue, nil, &result) else { return ([], []) }
        defer { FcFontSetDestroy(set) }
        var faces: [FontFace] = []
        var charsets: [OpaquePointer] = []
        let count = Int(set.pointee.nfont)
        for i in 0..<count where faces.count < maxFaces {
            guard let font = set.pointee.fonts[i] else { continue }
            func string(_ key: String) -> String? {
                var value: UnsafeMutablePointer<FcChar8>?
                guard FcPatternGetString(font, key, 0, &value) == FcResultMatch, let value else { return nil }
                return String(cString: value)
            }
            var index: Int32 = 0
            _ = FcPatternGetInteger(font, FC_INDEX, 0, &index)
            var weight: Int32 = Int32(FC_WEIGHT_REGULAR)
            _ = FcPatternGetInteger(font, FC_WEIGHT, 0, &weight)
            var color: FcBool = 0
            _ = FcPatternGetBool(font, FC_COLOR, 0, &color)
            guard let file = string(FC_FILE), let name = string(FC_FAMILY) else { continue }
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            var charset: OpaquePointer?
            guard FcPatternGetCharSet(font, FC_CHARSET, 0, &charset) == FcResultMatch, let charset,
                let copy = FcCharSetCopy(charset)
            else { continue }
            faces.append(
                FontFace(
                    family: name, file: file, index: Int(index), fullName: string(FC_FULLNAME),
                    postscriptName: string(FC_POSTSCRIPT_NAME),
                    weight: weight >= Int32(FC_WEIGHT_DEMIBOLD) ? 700 : 400, size: size, isColor: color != 0))
            charsets.append(copy)
        }
        return (faces, charsets)
    }

    /// CSS family names in fallback order: the page's own `@font-face` names first (`bk0`, `bk1`,
    /// …), then the real family names (for a face a page did not declare, and for readers who
    /// have the fonts installed), then `sans-serif`.
    var cssFamilyList: String {
        var order = Array(regular.indices)
        if let emojiFace, emojiFace > 1 { order.remove(at: emojiFace); order.insert(emojiFace, at: 1) }
        var names = order.map { "\"bk\($0)\"" }
        var seen = Set<String>()
        for face in regular where seen.insert(face.family).inserted {
            if let safe = Self.cssSafeName(face.family) { names.append("\"\(safe)\"") }
        }
        names.append("sans-serif")
        return names.joined(separator: ",")
    }

    /// A font name usable inside a CSS string, or nil when it has characters we would rather not
    /// put in a style sheet (names come from font files).
    static func cssSafeName(_ name: String) -> String? {
        guard !name.isEmpty, name.utf8.count < 200,
            name.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil || " -_.&+()".unicodeScalars.contains($0) })
        else { return nil }
        return name
    }
}
