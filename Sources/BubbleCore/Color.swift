/// A colour with straight (not premultiplied) alpha, each channel 0…1.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    /// Red, 0…1.
    public var red: Double
    /// Green, 0…1.
    public var green: Double
    /// Blue, 0…1.
    public var blue: Double
    /// Opacity, 0 (transparent) … 1 (opaque).
    public var alpha: Double
    /// A colour from its components, each 0…1 (opaque unless `alpha` says otherwise).
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red; self.green = green; self.blue = blue; self.alpha = alpha
    }
    /// From 8-bit channels: `Color(r8: 219, g8: 226, b8: 237)` is seed 001's background.
    public init(r8: Int, g8: Int, b8: Int, a8: Int = 255) {
        self.init(red: Double(r8) / 255, green: Double(g8) / 255, blue: Double(b8) / 255, alpha: Double(a8) / 255)
    }
    /// Parses `#rgb`, `#rrggbb` or `#rrggbbaa`; nil for anything else.
    public init?(hex: String) {
        var s = Substring(hex)
        guard s.first == "#" else { return nil }
        s = s.dropFirst()
        if s.count == 3 { s = Substring(s.flatMap { [$0, $0] }) }
        guard s.count == 6 || s.count == 8, let v = UInt64(s, radix: 16) else { return nil }
        let a = s.count == 8 ? Int(v & 0xFF) : 255
        let rgb = s.count == 8 ? v >> 8 : v
        self.init(r8: Int((rgb >> 16) & 0xFF), g8: Int((rgb >> 8) & 0xFF), b8: Int(rgb & 0xFF), a8: a)
    }
    /// The colour as CSS writes it: `#rrggbb`, or `rgba(r, g, b, a)` when it is not opaque.
    public var hex: String {
        func h(_ c: Double) -> String {
            let v = Int((c * 255).rounded())
            return (v < 16 ? "0" : "") + String(v, radix: 16)
        }
        return "#" + h(red) + h(green) + h(blue) + (alpha < 1 ? h(alpha) : "")
    }
    public var description: String { hex }
}
