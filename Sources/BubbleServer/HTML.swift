import BubbleHTML

/// Markup that is safe to put in a page as it is. The pages are built only from values of this
/// type, and it escapes by default:
///
/// - a string literal in the source is markup (`"<main class=\"pane\">"`);
/// - a `String` interpolated into it is text, escaped (`&`, `<`, `>`, `"`, `'`), so it is safe
///   between tags and inside a quoted attribute: `"<h1>\(title)</h1>"`;
/// - numbers and booleans are written as they are; `HTML` interpolated is kept;
/// - markup made elsewhere and known to be safe (the rows `HTMLRowWriter` wrote, which escapes
///   the messages itself) is marked with `HTML(trusted:)`, the one way in for a `String`.
///
/// A `String` cannot become `HTML` by accident: `body += name` does not compile, `body +=
/// "\(name)"` escapes it.
struct HTML: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    private(set) var text: String

    init() { text = "" }
    init(stringLiteral value: String) { text = value }
    init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }
    /// Markup made by code that escapes what it writes (not text from a user or a file).
    init(trusted markup: String) { text = markup }
    /// Text, escaped.
    init(escaping text: String) { self.text = HTMLEscape.text(text) }

    var description: String { text }
    var isEmpty: Bool { text.isEmpty }

    struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + 16 * interpolationCount) }
        mutating func appendLiteral(_ literal: String) { text += literal }
        /// Text: escaped.
        mutating func appendInterpolation(_ value: String) { text += HTMLEscape.text(value) }
        mutating func appendInterpolation(_ value: Substring) { text += HTMLEscape.text(String(value)) }
        /// Markup: kept.
        mutating func appendInterpolation(_ value: HTML) { text += value.text }
        mutating func appendInterpolation(_ value: some BinaryInteger) { text += String(value) }
        mutating func appendInterpolation(_ value: Bool) { text += value ? "true" : "false" }
    }

    static func + (a: HTML, b: HTML) -> HTML { HTML(trusted: a.text + b.text) }
    static func += (a: inout HTML, b: HTML) { a.text += b.text }
}

extension Sequence<HTML> {
    /// The parts one after the other, `separator` between them.
    func joined(separator: HTML = "") -> HTML {
        var out = HTML()
        for (k, part) in enumerated() {
            if k > 0 { out += separator }
            out += part
        }
        return out
    }
}
