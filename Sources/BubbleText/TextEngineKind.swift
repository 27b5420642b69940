import BubbleCore

/// Which text engine measures (BubbleRender's `makeDrawingEngine()` also draws).
public enum TextEngineKind: String, Sendable, CaseIterable {
    /// `PangoTextEngine`: a Pango layout per text (the reference).
    case pango
    /// `FastTextEngine`: cached segments, arithmetic layout, cached glyph runs.
    case fast

    /// The engine used when none is named.
    public static let standard: TextEngineKind = .fast

    /// A new engine of this kind.
    public func makeEngine() -> any TextEngine {
        switch self {
        case .pango: return PangoTextEngine()
        case .fast: return FastTextEngine()
        }
    }
}
