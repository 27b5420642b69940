import BubbleCore
import BubbleMedia
import BubbleText
import Foundation

/// Writes scene pages as one SVG document, with text as `<text>` (selectable, searchable),
/// vector bubbles as `<path>`, bubble art as nine-slice patches of one embedded image, and
/// photos embedded as data URIs. Pages are stacked top to bottom.
package struct SVGWriter {
    package let theme: Theme
    package let themeFolder: String
    package let photos: PhotoLoader

    package init(theme: Theme, themeFolder: String, photos: PhotoLoader) throws(RenderError) {
        self.theme = theme; self.themeFolder = themeFolder; self.photos = photos
    }

    final class State {
        var defs: [String] = []
        var nextID = 0
        var embedded: [String: String] = [:]
        var arts: [Direction: (id: String, art: NineSliceArt, mode: NineSliceMode)] = [:]
        func id(_ prefix: String) -> String { nextID += 1; return "\(prefix)\(nextID)" }
    }

    package func document(_ pages: [ScenePage]) throws(RenderError) -> String {
        let state = State()
        let width = pages.map(\.size.width).max() ?? 0
        let height = pages.reduce(0) { $0 + $1.size.height }
        var body = ""
        var y = 0.0
        for page in pages {
            body += "<g transform=\"translate(0 \(n(y)))\">\n"
            for item in page.items { body += try write(item, state) }
            body += "</g>\n"
            y += page.size.height
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" \
            width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))">
            <defs>
            \(state.defs.joined(separator: "\n"))
            </defs>
            \(body)</svg>

            """
    }

    func write(_ item: SceneItem, _ state: State) throws(RenderError) -> String {
        switch item {
        case let .fill(r, c):
            return "<rect x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\"\(paint("fill", c))/>\n"
        case let .gradient(r, top, bottom):
            let id = state.id("g")
            state.defs.append(
                "<linearGradient id=\"\(id)\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\"><stop offset=\"0\"\(paint("stop-color", top, opacity: "stop-opacity"))/><stop offset=\"1\"\(paint("stop-color", bottom, opacity: "stop-opacity"))/></linearGradient>"
            )
            return "<rect x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" fill=\"url(#\(id))\"/>\n"
        case let .tiledImage(path, r):
            let full = path.hasPrefix("/") ? path : themeFolder + "/" + path
            let surface = try photos.surface(for: full)
            let id = state.id("p")
            state.defs.append(
                "<pattern id=\"\(id)\" patternUnits=\"userSpaceOnUse\" width=\"\(surface.width)\" height=\"\(surface.height)\"><image width=\"\(surface.width)\" height=\"\(surface.height)\" href=\"\(try dataURI(full, state))\"/></pattern>"
            )
            return "<rect x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" fill=\"url(#\(id))\"/>\n"
        case let .path(elements, fill, stroke, lineWidth):
            var attrs = fill.map { paint("fill", $0) } ?? " fill=\"none\""
            if let stroke { attrs += paint("stroke", stroke, opacity: "stroke-opacity") + " stroke-width=\"\(n(lineWidth))\"" }
            return "<path d=\"\(pathData(elements))\"\(attrs)/>\n"
        case let .art(direction, rect, mirrored, tint):
            return try art(direction, rect, mirrored: mirrored, tint: tint, state)
        case let .photo(path, rect, radius):
            let clip = state.id("c")
            state.defs.append("<clipPath id=\"\(clip)\"><path d=\"\(pathData(BubbleShape.roundedRect(rect, radius: radius)))\"/></clipPath>")
            guard let path, let uri = try? dataURI(photos.resolve(path), state) else {
                return
                    "<rect x=\"\(n(rect.minX))\" y=\"\(n(rect.minY))\" width=\"\(n(rect.width))\" height=\"\(n(rect.height))\" fill=\"#ccccd1\" clip-path=\"url(#\(clip))\"/>\n"
            }
            return
                "<image x=\"\(n(rect.minX))\" y=\"\(n(rect.minY))\" width=\"\(n(rect.width))\" height=\"\(n(rect.height))\" preserveAspectRatio=\"xMidYMid slice\" clip-path=\"url(#\(clip))\" href=\"\(uri)\"/>\n"
        case let .text(text):
            return self.text(text)
        case let .link(url, rects, color):
            // Underlines, and an <a> over the text's area (SVG viewers open it).
            guard let target = ScenePainter.linkTarget(url) else { return "" }
            var out = "<a href=\"\(escape(target))\" target=\"_blank\" rel=\"noopener noreferrer\">"
            for r in rects {
                out += "<rect x=\"\(n(r.minX))\" y=\"\(n(r.minY))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\" fill=\"#000\" fill-opacity=\"0\"/>"
                out += "<rect x=\"\(n(r.minX))\" y=\"\(n(r.maxY - max(1.5, r.height * 0.12)))\" width=\"\(n(r.width))\" height=\"1\"\(paint("fill", color))/>"
            }
            return out + "</a>\n"
        case let .scaled(origin, factor, items):
            var out = "<g transform=\"translate(\(n(origin.x)) \(n(origin.y))) scale(\(n(factor)))\">\n"
            for inner in items { out += try write(inner, state) }
            return out + "</g>\n"
        case let .clipped(rect, items):
            let clip = state.id("c")
            state.defs.append(
                "<clipPath id=\"\(clip)\"><rect x=\"\(n(rect.minX))\" y=\"\(n(rect.minY))\" width=\"\(n(rect.width))\" height=\"\(n(rect.height))\"/></clipPath>"
            )
            var out = "<g clip-path=\"url(#\(clip))\">\n"
            for inner in items { out += try write(inner, state) }
            return out + "</g>\n"
        }
    }

    /// One `<text>` with a `<tspan>` per line, at the baselines the layout measured.
    func text(_ t: SceneText) -> String {
        let sanitized = PangoTextEngine.pangoText(t.string, style: t.style)
        let bytes = Array(sanitized.utf8)
        let spans = PangoTextEngine.usableSpans(t.spans, text: t.string, sanitized: sanitized)
        if !spans.isEmpty { return styledText(t, bytes: bytes, spans: spans) }
        var out = "<text font-family=\"\(escape(t.style.family)), sans-serif\" font-size=\"\(n(t.style.size))\""
        if t.style.weight != .regular { out += " font-weight=\"\(t.style.weight.value)\"" }
        out += paint("fill", t.color) + " xml:space=\"preserve\">"
        for line in t.layout.lines {
            let lo = max(0, min(line.range.lowerBound, bytes.count)), hi = max(lo, min(line.range.upperBound, bytes.count))
            var s = String(decoding: bytes[lo..<hi], as: UTF8.self)
            while s.last?.isNewline == true { s.removeLast() }
            if line == t.layout.lines.last, t.layout.isTruncated { s += "…" }
            let y = t.origin.y + line.baseline
            if line.isRightToLeft {
                out +=
                    "<tspan x=\"\(n(t.origin.x + t.boxWidth))\" y=\"\(n(y))\" direction=\"rtl\" unicode-bidi=\"embed\" text-anchor=\"start\">\(escape(s))</tspan>"
            } else {
                out += "<tspan x=\"\(n(t.origin.x))\" y=\"\(n(y))\">\(escape(s))</tspan>"
            }
        }
        return out + "</text>\n"
    }

    /// A styled text: each line cut at the spans' edges into `<tspan>`s with the faces and
    /// decorations of the spans over them; code on a tinted box, and for a spoiler a hatched box
    /// in place of its text, which is left out (the text after it starts where the box ends).
    func styledText(_ t: SceneText, bytes: [UInt8], spans: [TextSpan]) -> String {
        var boxes = ""
        for area in t.areas {
            for r in area.rects {
                let box = "x=\"\(n(r.minX))\" y=\"\(n(r.minY + 1))\" width=\"\(n(r.width))\" height=\"\(n(max(1, r.height - 2)))\" rx=\"3\""
                if area.style == .spoiler {
                    boxes += "<rect \(box)\(paint("fill", t.color.withAlpha(t.color.alpha * 0.35)))/>"
                    var hatch = ""
                    var x = r.minX - r.height
                    while x < r.maxX {
                        let x0 = max(x, r.minX), x1 = min(x + r.height, r.maxX)
                        hatch += "M\(n(x0)) \(n(r.maxY - (x0 - x)))L\(n(x1)) \(n(r.maxY - (x1 - x)))"
                        x += 4
                    }
                    boxes +=
                        "<path d=\"\(hatch)\" fill=\"none\"\(paint("stroke", t.color.withAlpha(t.color.alpha * 0.5), opacity: "stroke-opacity")) stroke-width=\"1\"/>"
                } else {
                    boxes += "<rect \(box)\(paint("fill", t.color.withAlpha(t.color.alpha * 0.14)))/>"
                }
            }
            boxes += "\n"
        }
        var out = boxes + "<text font-family=\"\(escape(t.style.family)), sans-serif\" font-size=\"\(n(t.style.size))\""
        if t.style.weight != .regular { out += " font-weight=\"\(t.style.weight.value)\"" }
        out += paint("fill", t.color) + " xml:space=\"preserve\">"
        for line in t.layout.lines {
            let lo = max(0, min(line.range.lowerBound, bytes.count)), hi = max(lo, min(line.range.upperBound, bytes.count))
            let y = t.origin.y + line.baseline
            var cuts = Set([lo, hi])
            for s in spans { for e in [s.range.lowerBound, s.range.upperBound] where e > lo && e < hi { cuts.insert(e) } }
            let points = cuts.sorted()
            if line.isRightToLeft {
                out += "<tspan x=\"\(n(t.origin.x + t.boxWidth))\" y=\"\(n(y))\" direction=\"rtl\" unicode-bidi=\"embed\" text-anchor=\"start\">"
            } else {
                out += "<tspan x=\"\(n(t.origin.x))\" y=\"\(n(y))\">"
            }
            var resumeAt: Double?
            for (a, z) in zip(points, points.dropFirst()) where z > a {
                let covering = spans.filter { $0.range.lowerBound <= a && $0.range.upperBound >= z }
                if covering.contains(where: { $0.style == .spoiler }) {
                    // Left out; the next piece starts after the box on this line.
                    let box = t.areas.first { $0.style == .spoiler && $0.range.lowerBound <= a && $0.range.upperBound >= z }?
                        .rects.first { abs($0.minY - (t.origin.y + line.top)) < 0.5 }
                    resumeAt = box?.maxX
                    continue
                }
                var piece = String(decoding: bytes[a..<z], as: UTF8.self)
                while piece.last?.isNewline == true { piece.removeLast() }
                guard !piece.isEmpty else { continue }
                var attrs = ""
                if let x = resumeAt, !line.isRightToLeft { attrs += " x=\"\(n(x))\"" }
                resumeAt = nil
                let styles = Set(covering.map(\.style))
                if styles.contains(.bold) { attrs += " font-weight=\"\(t.style.face(.bold).weight.value)\"" }
                if styles.contains(.italic) { attrs += " font-style=\"italic\"" }
                if styles.contains(.code) || styles.contains(.pre) { attrs += " font-family=\"\(escape(TextStyle.monospaceFamily)), monospace\"" }
                var decorations: [String] = []
                if styles.contains(.underline) { decorations.append("underline") }
                if styles.contains(.strike) { decorations.append("line-through") }
                if !decorations.isEmpty { attrs += " text-decoration=\"\(decorations.joined(separator: " "))\"" }
                out += attrs.isEmpty ? escape(piece) : "<tspan\(attrs)>\(escape(piece))</tspan>"
            }
            if line == t.layout.lines.last, t.layout.isTruncated { out += "…" }
            out += "</tspan>"
        }
        return out + "</text>\n"
    }

    /// Nine-slice art: the image once in <defs>, each patch a nested <svg> whose viewBox is the
    /// patch's source pixels and whose viewport is its (clipped) destination.
    func art(_ direction: Direction, _ rect: Rect, mirrored: Bool, tint: Color?, _ state: State) throws(RenderError) -> String {
        if state.arts[direction] == nil {
            let painter = ScenePainter(theme: theme, themeFolder: themeFolder, engine: PangoTextEngine(), photos: photos)
            let image = try painter.art(direction, outputScale: 2)
            let id = state.id("art")
            let png = try PNGEncoder.fast.encode(image.pixels)
            state.defs.append(
                "<image id=\"\(id)\" width=\"\(image.art.pixelWidth)\" height=\"\(image.art.pixelHeight)\" href=\"data:image/png;base64,\(Data(png).base64EncodedString())\"/>"
            )
            var mode = NineSliceMode.uikitStretch
            if case .art(let spec) = theme.bubble(direction).shape, let rule = spec.mode, rule != .stretch {
                mode = rule == .tile ? .uikitTile : .css(rule, fill: true)
            }
            state.arts[direction] = (id, image.art, mode)
        }
        let (id, art, mode) = state.arts[direction]!
        let patches: [NineSlicePatch]
        do { patches = try art.patches(for: rect.size, mode: mode) } catch { throw .nineSlice(path: nil, error) }
        var group = "<g"
        if mirrored { group += " transform=\"translate(\(n(rect.minX + rect.maxX)) 0) scale(-1 1)\"" }
        if let tint {
            let filter = state.id("t")
            state.defs.append(
                "<filter id=\"\(filter)\"><feFlood flood-color=\"\(tint.opaqueHex)\" flood-opacity=\"\(n(tint.alpha))\"/><feComposite in2=\"SourceAlpha\" operator=\"in\"/></filter>"
            )
            group += " filter=\"url(#\(filter))\""
        }
        var out = group + ">"
        for p in patches {
            // The visible part of the tile and the source pixels that land there.
            let fx = Double(p.source.width) / p.destination.width, fy = Double(p.source.height) / p.destination.height
            let sx = Double(p.source.x) + (p.clip.minX - p.destination.minX) * fx
            let sy = Double(p.source.y) + (p.clip.minY - p.destination.minY) * fy
            out +=
                "<svg x=\"\(n(rect.minX + p.clip.minX))\" y=\"\(n(rect.minY + p.clip.minY))\" width=\"\(n(p.clip.width))\" height=\"\(n(p.clip.height))\" viewBox=\"\(n(sx)) \(n(sy)) \(n(p.clip.width * fx)) \(n(p.clip.height * fy))\" preserveAspectRatio=\"none\"><use href=\"#\(id)\"/></svg>"
        }
        return out + "</g>\n"
    }

    func dataURI(_ path: String, _ state: State) throws(RenderError) -> String {
        if let hit = state.embedded[path] { return hit }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadableImage(path: path, reason: "cannot be read")
        }
        // By the bytes, not the name. HEIC, TIFF, BMP and JPEGs turned by EXIF (which SVG
        // viewers may ignore) are embedded decoded and turned: as JPEG, or PNG with transparency.
        var mime = MediaProbe.browserImageType([UInt8](data.prefix(16))) ?? ""
        var bytes = data
        if mime.isEmpty || (mime == "image/jpeg" && (MediaProbe.jpegOrientation(path: path) ?? 1) != 1) {
            let converted = try PhotoLoader.transcoded(path)
            (mime, bytes) = (converted.mime, Data(converted.bytes))
        }
        let uri = "data:\(mime);base64,\(bytes.base64EncodedString())"
        state.embedded[path] = uri
        return uri
    }

    func pathData(_ elements: [PathElement]) -> String {
        elements.map { e -> String in
            switch e {
            case .move(let p): return "M\(n(p.x)) \(n(p.y))"
            case .line(let p): return "L\(n(p.x)) \(n(p.y))"
            case let .curve(a, b, c): return "C\(n(a.x)) \(n(a.y)) \(n(b.x)) \(n(b.y)) \(n(c.x)) \(n(c.y))"
            case .close: return "Z"
            }
        }.joined()
    }

    func paint(_ attribute: String, _ c: Color, opacity: String? = nil) -> String {
        var s = " \(attribute)=\"\(c.opaqueHex)\""
        if c.alpha < 1 { s += " \(opacity ?? attribute + "-opacity")=\"\(n(c.alpha))\"" }
        return s
    }

    func n(_ v: Double) -> String {
        let r = (v * 1000).rounded() / 1000
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default:
                // XML 1.0 forbids most C0 controls even escaped.
                if ch.value < 0x20 && ch != "\t" && ch != "\n" { out += "\u{FFFD}" } else { out.unicodeScalars.append(ch) }
            }
        }
        return out
    }
}

extension Color {
    /// `#rrggbb` without alpha (SVG takes opacity separately).
    var opaqueHex: String { Color(red: red, green: green, blue: blue).hex }
}
