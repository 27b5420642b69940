/// One step of a vector outline. Both renderers (Cairo and SVG) draw the same steps, so a
/// vector bubble has one geometry everywhere.
public enum PathElement: Hashable, Sendable {
    /// Start a new outline at the point.
    case move(Point)
    /// A straight line to the point.
    case line(Point)
    /// A cubic Bézier curve through two control points to the third point.
    case curve(Point, Point, Point)
    /// Close the outline back to its start.
    case close
}

/// Vector bubble outlines: a rounded rectangle, with a tail at the bottom corner of its side.
public enum BubbleShape {
    /// Width of the strip on the tail side that the tail occupies. Bubbles of a tailed style
    /// keep the strip even without a tail, so grouped bubbles line up.
    public static let tailWidth = 6.0

    /// The outline of a bubble in `rect`. With `tailSide` the body is inset by `tailWidth` on
    /// that side and (when `drawsTail`) a tail curls out of its bottom corner to the rect's edge.
    public static func path(in rect: Rect, radius: Double, tailSide: Direction?, drawsTail: Bool) -> [PathElement] {
        var body = rect
        if let tailSide {
            body.size.width = max(0, body.width - tailWidth)
            if tailSide == .incoming { body.origin.x += tailWidth }
        }
        let r = max(0, min(radius, body.width / 2, body.height / 2))
        let k = 0.5523 * r  // cubic Bézier handle for a quarter circle
        let (x0, y0, x1, y1) = (body.minX, body.minY, body.maxX, body.maxY)
        var p: [PathElement] = [
            .move(Point(x: x0 + r, y: y0)), .line(Point(x: x1 - r, y: y0)),
            .curve(Point(x: x1 - r + k, y: y0), Point(x: x1, y: y0 + r - k), Point(x: x1, y: y0 + r))
        ]
        let tail = drawsTail ? tailSide : nil
        if tail == .outgoing {
            // Right edge down into the tail, out to the rect's bottom-right, back along the bottom.
            p += [
                .line(Point(x: x1, y: y1 - min(r, 10))),
                .curve(Point(x: x1, y: y1 - 3), Point(x: x1 + 2, y: y1 - 0.5), Point(x: rect.maxX, y: y1)),
                .curve(Point(x: x1 + 1, y: y1 + 0.5), Point(x: x1 - 3, y: y1), Point(x: x1 - min(r, 9), y: y1 - 1.2)),
                .curve(Point(x: x1 - r * 0.9, y: y1), Point(x: x1 - r, y: y1), Point(x: x1 - r - 0.01, y: y1))
            ]
        } else {
            p += [
                .line(Point(x: x1, y: y1 - r)),
                .curve(Point(x: x1, y: y1 - r + k), Point(x: x1 - r + k, y: y1), Point(x: x1 - r, y: y1))
            ]
        }
        if tail == .incoming {
            p += [
                .line(Point(x: x0 + r + 0.01, y: y1)),
                .curve(Point(x: x0 + r * 0.9, y: y1), Point(x: x0 + min(r, 9) + 0.5, y: y1), Point(x: x0 + min(r, 9), y: y1 - 1.2)),
                .curve(Point(x: x0 + 3, y: y1), Point(x: x0 - 1, y: y1 + 0.5), Point(x: rect.minX, y: y1)),
                .curve(Point(x: x0 - 2, y: y1 - 0.5), Point(x: x0, y: y1 - 3), Point(x: x0, y: y1 - min(r, 10)))
            ]
        } else {
            p += [
                .line(Point(x: x0 + r, y: y1)),
                .curve(Point(x: x0 + r - k, y: y1), Point(x: x0, y: y1 - r + k), Point(x: x0, y: y1 - r))
            ]
        }
        p += [
            .line(Point(x: x0, y: y0 + r)),
            .curve(Point(x: x0, y: y0 + r - k), Point(x: x0 + r - k, y: y0), Point(x: x0 + r, y: y0)),
            .close
        ]
        return p
    }

    /// A rounded rectangle (photos inside bubbles, seed 002's corner radius 5).
    public static func roundedRect(_ rect: Rect, radius: Double) -> [PathElement] {
        path(in: rect, radius: radius, tailSide: nil, drawsTail: false)
    }
}

extension BubbleShape {
    /// The box of a path's points (control points included).
    public static func bounds(_ elements: [PathElement]) -> Rect {
        var xs: [Double] = [], ys: [Double] = []
        for e in elements {
            switch e {
            case .move(let p), .line(let p): xs.append(p.x); ys.append(p.y)
            case let .curve(a, b, c): xs += [a.x, b.x, c.x]; ys += [a.y, b.y, c.y]
            case .close: break
            }
        }
        guard let x0 = xs.min(), let x1 = xs.max(), let y0 = ys.min(), let y1 = ys.max() else { return .zero }
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}
