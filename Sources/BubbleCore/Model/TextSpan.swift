/// A styled range of a message's text: bold, italic, underline, strike, monospace (inline code or
/// a preformatted block), spoiler, quote, link (with its target) or mention. Every importer fills
/// them (Telegram entities, WhatsApp markup, iMessage attributes); the text engines measure the
/// faces they change (bold, italic, monospace), the renderers draw all of them.
///
/// `range` counts UTF-8 bytes of `Message.text` (of the text alone, not of an attachment's label
/// shown above it). Spans may overlap (bold inside a link) and are kept sorted by start.
///
///     // "Look at this" with "this" bold:
///     TextSpan(.bold, 8..<12)
public struct TextSpan: Hashable, Sendable {
    /// How a span's text is set or drawn.
    public enum Style: String, Hashable, Sendable, Codable, CaseIterable {
        /// Bold: measured in the bold face.
        case bold
        /// Italic: measured in the italic face.
        case italic
        /// Underlined (drawn; does not change the measure).
        case underline
        /// Struck through (drawn; does not change the measure).
        case strike
        /// Inline code (monospace with a background).
        case code
        /// A preformatted block (monospace with a background, on its own lines).
        case pre
        /// Hidden until revealed: a hatched box in PNG/PDF (its text left out), click-to-reveal in HTML.
        case spoiler
        /// A quoted paragraph (a bar beside it).
        case quote
        /// A link; `url` is its target (the text itself when nil).
        case link
        /// "@name"; `url` may hold the person's id.
        case mention

        /// Styles that change the font (and so the text's measure).
        public var changesFace: Bool { self == .bold || self == .italic || self == .code || self == .pre }
    }

    /// How the range is set or drawn.
    public var style: Style
    /// UTF-8 byte offsets into the message's text.
    public var range: Range<Int>
    /// A link's target or a mention's person id; nil otherwise.
    public var url: String?

    /// A span of `style` over `range` (UTF-8 bytes).
    public init(_ style: Style, _ range: Range<Int>, url: String? = nil) {
        self.style = style; self.range = range; self.url = url
    }
}

extension TextSpan: Codable {
    enum CodingKeys: String, CodingKey { case style, start, end, url }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        style = try c.decode(Style.self, forKey: .style)
        let start = try c.decode(Int.self, forKey: .start), end = try c.decode(Int.self, forKey: .end)
        guard start >= 0, end >= start else {
            throw DecodingError.dataCorruptedError(
                forKey: .end, in: c,
                debugDescription: "start \(start), end \(end): expected 0 ≤ start ≤ end")
        }
        range = start..<end
        url = try c.decodeIfPresent(String.self, forKey: .url)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(style, forKey: .style)
        try c.encode(range.lowerBound, forKey: .start)
        try c.encode(range.upperBound, forKey: .end)
        try c.encodeIfPresent(url, forKey: .url)
    }
}

/// The face a run of text is set in: what the text engines measure.
public struct TextFace: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The bold face.
    public static let bold = TextFace(rawValue: 1)
    /// The italic face.
    public static let italic = TextFace(rawValue: 2)
    /// The family's monospace companion (`TextStyle.monospaceFamily`).
    public static let monospace = TextFace(rawValue: 4)
}

/// A run of text in one face: bytes `range` of a prepared text.
package struct FaceRun: Hashable, Sendable {
    package var range: Range<Int>
    package var face: TextFace
    package init(_ range: Range<Int>, _ face: TextFace) { self.range = range; self.face = face }
}

extension TextSpan {
    /// The text of `spans` in faces: consecutive runs covering `0..<count` that are not the
    /// regular face (empty when all is regular). Ranges are clamped to `count` and moved to
    /// UTF-8 scalar boundaries of `bytes`; `offset` shifts every span first (a label shown
    /// before the text).
    package static func faceRuns(_ spans: [TextSpan], in bytes: some Collection<UInt8>, offset: Int = 0) -> [FaceRun] {
        guard spans.contains(where: { $0.style.changesFace && !$0.range.isEmpty }) else { return [] }
        return Array(bytes).withUnsafeBufferPointer { faceRuns(spans, in: $0, offset: offset) }
    }

    /// `faceRuns` over a text's UTF-8 bytes in place.
    package static func faceRuns(_ spans: [TextSpan], in b: UnsafeBufferPointer<UInt8>, offset: Int = 0) -> [FaceRun] {
        guard spans.contains(where: { $0.style.changesFace && !$0.range.isEmpty }) else { return [] }
        let faced = spans.lazy.filter { $0.style.changesFace && !$0.range.isEmpty }
        let count = b.count
        func boundary(_ i: Int) -> Int {
            var j = min(max(0, i), count)
            while j < count, b[j] & 0xC0 == 0x80 { j += 1 }
            return j
        }
        var points: [Int] = []
        points.reserveCapacity(2 * spans.count)
        for s in faced { points.append(boundary(s.range.lowerBound + offset)); points.append(boundary(s.range.upperBound + offset)) }
        points.sort()
        var runs: [FaceRun] = []
        for (a, z) in zip(points, points.dropFirst()) where z > a {
            var face: TextFace = []
            for s in faced where boundary(s.range.lowerBound + offset) <= a && boundary(s.range.upperBound + offset) >= z {
                switch s.style {
                case .bold: face.insert(.bold)
                case .italic: face.insert(.italic)
                case .code, .pre: face.insert(.monospace)
                default: break
                }
            }
            guard !face.isEmpty else { continue }
            if let last = runs.last, last.face == face, last.range.upperBound == a {
                runs[runs.count - 1].range = last.range.lowerBound..<z
            } else {
                runs.append(FaceRun(a..<z, face))
            }
        }
        return runs
    }

    /// Checks `spans` against `text`: inside it and on character boundaries. The first problem,
    /// or nil.
    public static func problem(_ spans: [TextSpan], text: String?) -> (index: Int, reason: String)? {
        let bytes = Array((text ?? "").utf8)
        for (i, s) in spans.enumerated() {
            if s.range.upperBound > bytes.count {
                return (i, "ends at byte \(s.range.upperBound), past the text's \(bytes.count) UTF-8 bytes")
            }
            for edge in [s.range.lowerBound, s.range.upperBound] where edge < bytes.count && bytes[edge] & 0xC0 == 0x80 {
                return (i, "byte \(edge) is inside a character; expected offsets of whole UTF-8 characters")
            }
        }
        return nil
    }
}

/// A poll's answer: its text, its votes and whether the exporting person chose it.
public struct PollAnswer: Hashable, Sendable, Codable {
    /// The answer's text.
    public var text: String
    /// How many votes it has.
    public var votes: Int
    /// True when the owner voted for it.
    public var chosen: Bool
    /// An answer with its votes.
    public init(text: String, votes: Int = 0, chosen: Bool = false) { self.text = text; self.votes = votes; self.chosen = chosen }

    enum CodingKeys: String, CodingKey { case text, votes, chosen }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        text = try c.decode(String.self, forKey: .text)
        votes = try c.decodeIfPresent(Int.self, forKey: .votes) ?? 0
        chosen = try c.decodeIfPresent(Bool.self, forKey: .chosen) ?? false
    }
}

extension TextSpan {
    /// What stands for a spoiler's text wherever a message's text is repeated without its spans
    /// (reply quotes, search snippets, CSV): one per character, at most 12, so a quote says
    /// "something is hidden here" without its length to the letter.
    public static let spoilerMask: Character = "░"

    /// `text` with the characters of every spoiler in `spans` replaced by `spoilerMask`s (runs
    /// that touch or overlap become one). The text itself when it has no spoiler. Ranges past the
    /// end or inside a character are widened to whole characters, so nothing of a hidden word
    /// shows.
    public static func hidingSpoilers(_ text: String, spans: [TextSpan]) -> String {
        var hidden = spans.filter { $0.style == .spoiler && !$0.range.isEmpty }.map(\.range)
        guard !hidden.isEmpty else { return text }
        hidden.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for r in hidden {
            if let last = merged.last, r.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, r.upperBound)
            } else {
                merged.append(r)
            }
        }
        var out = ""
        var k = 0
        var offset = 0
        var masked = 0
        for ch in text {
            let start = offset
            offset += ch.utf8.count
            while k < merged.count, merged[k].upperBound <= start { k += 1 }
            if k < merged.count, merged[k].lowerBound < offset {
                // Inside a spoiler: one mask per character, at most 12 for the run.
                if masked < 12 { out.append(spoilerMask) }
                masked += 1
            } else {
                masked = 0
                out.append(ch)
            }
        }
        return out
    }
}
