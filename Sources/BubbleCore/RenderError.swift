/// A failure at the C edge (Cairo, Pango, files), with the file or operation it concerns.
public enum RenderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Cairo refused an operation; `status` is Cairo's own words.
    case cairo(operation: String, status: String)
    /// A file could not be read or decoded as PNG.
    case unreadableImage(path: String, reason: String)
    /// An output file could not be written (nothing is left behind).
    case unwritable(path: String, reason: String)
    /// An image too large (or empty) for Cairo: at most 32,767 pixels either way.
    case invalidSize(width: Int, height: Int)
    /// Bubble art of a size other than the theme says.
    case artSizeMismatch(expected: String, actual: String)
    /// A theme's bubble art refused by the nine-slice engine, with its file.
    case nineSlice(path: String?, NineSliceError)
    /// PDF parts painted on several threads could not be joined into `path` (nothing is written).
    case pdfMerge(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cairo(op, status): return "\(op) failed: \(status)"
        case let .unreadableImage(path, reason): return "\(path): cannot read image: \(reason)"
        case let .unwritable(path, reason): return "\(path): cannot write: \(reason)"
        case let .invalidSize(w, h): return "surface size \(w)×\(h) is not usable; expected 1…32767 pixels each way"
        case let .artSizeMismatch(e, a): return "art is \(a) but its slices describe \(e)"
        case let .nineSlice(path, error): return (path.map { "\($0): " } ?? "") + error.description
        case let .pdfMerge(path, reason): return "\(path): cannot join the PDF parts painted in parallel: \(reason)"
        }
    }
}
