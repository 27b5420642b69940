import BubbleCore
import BubbleText
import Foundation

/// Line metrics of one text style as Pango lays it out (points = CSS px).
struct LineMetrics: Hashable, Sendable {
    /// Distance between the tops of two lines (ascent + descent + line gap of the font):
    /// the CSS `line-height`.
    var lineHeight: Double
    /// Height of a paragraph's last line (ascent + descent, no gap). A text of n lines is
    /// `(n − 1) × lineHeight + lastLine` tall in Pango, so CSS boxes take `lineHeight − lastLine`
    /// off their bottom padding.
    var lastLine: Double
    var trim: Double { lineHeight - lastLine }

    /// Measured with the engine the Cairo renderer uses: one two-line layout per style. `sample`
    /// is a line of what the style shows (emoji-only messages hold only emoji, whose font has
    /// taller lines than the text font).
    static func measure(_ style: TextStyle, engine: PangoTextEngine, sample: String = "Hg") throws(LayoutError) -> LineMetrics {
        do {
            let layout = try engine.layout(engine.prepare(sample + "\n" + sample, style: style), maxWidth: 10_000, maxLines: nil)
            guard layout.lines.count == 2 else { return LineMetrics(lineHeight: layout.height, lastLine: layout.height) }
            return LineMetrics(lineHeight: layout.lines[1].top - layout.lines[0].top, lastLine: layout.lines[1].height)
        } catch {
            throw .text(error)
        }
    }
}

/// Everything the CSS needs that Pango measures: line heights of the four text styles and the
/// width of a time label (WhatsApp's time inside the bubble reserves it on the last line).
struct HTMLMetrics: Hashable, Sendable {
    var body: LineMetrics
    var separator: LineMetrics
    var system: LineMetrics
    var time: LineMetrics
    var emoji: LineMetrics
    /// Widest "HH:mm" in the time style.
    var timeWidth: Double
    /// Widest "edited HH:mm" (an edited message's time inside its bubble).
    var editedTimeWidth: Double = 0
    /// Fallback face → Pango's distance between lines that use it, as a multiple of the font
    /// size (CJK lines are 1.448 em apart where Latin ones are 1.15 em).
    var faceLineHeights: [Int: Double] = [:]

    /// Measures each fallback face of `fonts` on a line of Latin and one of its characters.
    mutating func measureFaces(_ fonts: HTMLFontStack, style: TextStyle, engine: PangoTextEngine) throws(LayoutError) {
        for face in fonts.regular.indices.dropFirst() {
            guard let c = fonts.coverage.sample(of: face), let scalar = Unicode.Scalar(c) else { continue }
            let line = "Hg" + String(Character(scalar))
            do {
                let t = try engine.layout(engine.prepare(line + "\n" + line, style: style), maxWidth: 10_000, maxLines: nil)
                if t.lines.count == 2, t.lines[1].top > 0 { faceLineHeights[face] = t.lines[1].top / style.size }
            } catch {
                throw .text(error)
            }
        }
    }

    static func measure(_ style: LayoutStyle, engine: PangoTextEngine) throws(LayoutError) -> HTMLMetrics {
        var width = 0.0, edited = 0.0
        // Digits are tabular in the pinned fonts; measure a few anyway and keep the widest.
        for sample in ["00:00", "12:34", "23:59", "11:11", "20:48"] {
            do {
                let t = try engine.layout(engine.prepare(sample, style: style.timeLabelText), maxWidth: 10_000, maxLines: nil)
                width = max(width, t.width)
                let e = try engine.layout(engine.prepare("edited " + sample, style: style.timeLabelText), maxWidth: 10_000, maxLines: nil)
                edited = max(edited, e.width)
            } catch {
                throw .text(error)
            }
        }
        var metrics = HTMLMetrics(
            body: try .measure(style.text, engine: engine),
            separator: try .measure(style.separatorText, engine: engine),
            system: try .measure(style.systemText, engine: engine),
            time: try .measure(style.timeLabelText, engine: engine),
            emoji: try .measure(style.emojiText, engine: engine, sample: "\u{1F600}"),
            timeWidth: width)
        metrics.editedTimeWidth = edited
        return metrics
    }
}

/// Writes the CSS that lays a page out like `BubbleMeasurer` and `ConversationLayouter`: the
/// same margins, paddings, widths, spacing and line heights, bubbles drawn like `ScenePainter`.
struct HTMLStyleSheet {
    let theme: Theme
    let style: LayoutStyle
    let metrics: HTMLMetrics
    let fonts: HTMLFontStack
    /// Maximum content width (the Cairo renderer's page width).
    let width: Double
    let dark: Bool?
    /// Bubble art as PNG bytes per side (art themes only), and its slices.
    let art: [Direction: HTMLArt]
    /// Bubbles get their measured widths (no `text-wrap: balance` then).
    var shrinkWrap = false
    /// Right-to-left interface: every left and right of the bubble rules swapped (and paddings
    /// mirrored), the tail shape flipped; the art comes mirrored from `HTMLArt.load`.
    var mirrored = false

    /// Swaps `left` and `right` in property names and values (never inside data URIs: the
    /// patterns contain a colon, which base64 has not).
    static func swapSides(_ css: String) -> String {
        var out = css.replacingOccurrences(of: "left:", with: "\u{1}:")
        out = out.replacingOccurrences(of: "right:", with: "left:")
        out = out.replacingOccurrences(of: "\u{1}:", with: "right:")
        for end in [";", "}"] {
            out = out.replacingOccurrences(of: ":left" + end, with: ":\u{1}" + end)
            out = out.replacingOccurrences(of: ":right" + end, with: ":left" + end)
            out = out.replacingOccurrences(of: ":\u{1}" + end, with: ":right" + end)
        }
        return out
    }

    /// A side's padding, mirrored in a mirrored layout (the tail strip moves across).
    func padding(_ direction: Direction) -> EdgeInsets {
        let p = style.padding(for: direction)
        return mirrored ? EdgeInsets(top: p.top, left: p.right, bottom: p.bottom, right: p.left) : p
    }

    /// CSS for the smallest of `bounds` (each `share × 100% + points`), a bubble's `max-width`.
    static func maxWidth(_ bounds: [LayoutStyle.WidthBound]) -> String {
        let terms = bounds.map { b -> String in
            if b.points == 0 { return "\(num(b.share * 100))%" }
            if b.share == 0 { return px(b.points) }
            return "calc(\(num(b.share * 100))% \(b.points < 0 ? "-" : "+") \(px(abs(b.points))))"
        }
        return "min(\(terms.joined(separator: ",")))"
    }

    /// `12.5px`, `0`, `-0.523px`: three decimals, no trailing zeros.
    static func px(_ v: Double) -> String { num(v) + (v == 0 ? "" : "px") }

    static func num(_ v: Double) -> String {
        let r = (v * 1000).rounded() / 1000
        if r == r.rounded(), abs(r) < 1e12 { return String(Int(r)) }
        var s = String(format: "%.3f", r)
        while s.hasSuffix("0") { s.removeLast() }
        return s
    }

    /// The colours of one appearance as CSS custom properties.
    func variables(_ t: Theme) -> String {
        var v = ""
        func add(_ name: String, _ c: Color) { v += "--\(name):\(c.hex);" }
        add("ib", t.incoming.fill); add("it", t.incoming.textColor)
        add("ob", t.outgoing.fill); add("ot", t.outgoing.textColor)
        add("sep", t.labels.separator); add("sys", t.labels.system); add("tm", t.labels.time)
        add("itm", t.incoming.timeColor ?? t.incoming.textColor.withAlpha(0.6 * t.incoming.textColor.alpha))
        add("otm", t.outgoing.timeColor ?? t.outgoing.textColor.withAlpha(0.6 * t.outgoing.textColor.alpha))
        // Replies, reactions, the failed mark and typing dots: each appearance's own (a dark
        // page's reply box is the dark fill, not the light one at half strength).
        add("rf", t.replyFill); add("rt", t.replyTextColor); add("rb", t.replyBar)
        add("xf", t.reactionFill); add("xb", t.reactionBorder); add("xt", t.incoming.textColor)
        add("fl", t.failedColor); add("td", t.typingDotsColor)
        return v
    }

    func background(_ b: Theme.Background, images: [String: String]) -> String {
        switch b {
        // `--pg`: the same, for a pane of a page that is not all conversation (the server's app).
        case .color(let c): return "--pg:\(c.hex);background:\(c.hex)"
        case let .gradient(top, bottom):
            return "--pg:linear-gradient(\(top.hex),\(bottom.hex));background:linear-gradient(\(top.hex),\(bottom.hex)) no-repeat;min-height:100%"
        case .image(let path): return "--pg:url(\(images[path] ?? "")) repeat;background:url(\(images[path] ?? "")) repeat"
        }
    }

    /// The whole style sheet except `@font-face` rules (which depend on each page's characters):
    /// the appearances' colours, the fallback faces' rules and the layout's `--bk-*` values, then
    /// `theme.css` (its mirrored sections swapped, its optional ones kept or dropped).
    /// `images`: background image path → URL (data URI or relative).
    func css(images: [String: String]) -> String {
        appearances(images: images) + faceRules() + ":root{" + layoutVariables().map { "--bk-\($0.0):\($0.1);" }.joined() + "}"
            + Self.rules(Self.template, mirrored: mirrored, timeInside: style.timeInsideBubble)
    }

    /// Each appearance's colours (`variables`) and page background: the light one, the dark one
    /// under `prefers-color-scheme: dark`, and either when the page chooses (`<html data-scheme>`).
    func appearances(images: [String: String]) -> String {
        let light = theme.appearance(dark: false)
        let darkTheme = theme.dark == nil ? nil : theme.appearance(dark: true)
        func block(_ selector: String, _ scheme: String?, _ t: Theme) -> String {
            selector + "{" + (scheme.map { "color-scheme:\($0);" } ?? "") + variables(t) + background(t.background, images: images) + "}"
        }
        switch dark {
        case .some(true): return block(":root", darkTheme == nil ? "light" : "dark", darkTheme ?? light)
        case .some(false): return block(":root", "light", light)
        case .none:
            guard let darkTheme else { return block(":root", "light", light) }
            return block(":root", "light dark", light) + "@media (prefers-color-scheme:dark){" + block(":root", nil, darkTheme) + "}"
                + block("html[data-scheme=dark]", "dark", darkTheme) + block("html[data-scheme=light]", "light", light)
        }
    }

    /// Runs in a fallback face (appendText's spans): that face first, its own line height.
    func faceRules() -> String {
        metrics.faceLineHeights.sorted { $0.key < $1.key }.map { face, ratio in
            ".f\(face){font-family:\"bk\(face)\",\(fonts.cssFamilyList);line-height:\(String(format: "%.4f", ratio))}"
        }.joined()
    }

    /// `theme.css` (Sources/BubbleHTML/Web), read once.
    static let template: String = {
        guard let url = Bundle.module.url(forResource: "theme", withExtension: "css", subdirectory: "Web"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            fatalError("BubbleHTML's resources lack Web/theme.css")
        }
        return text
    }()

    /// `template`'s rules: comments and line breaks dropped, `@mirror` sections swapped when
    /// `mirrored`, the `@if time-inside` section kept only with `timeInside`.
    static func rules(_ template: String, mirrored: Bool, timeInside: Bool) -> String {
        var out = "", section = ""
        var stack: [String] = []
        var rest = Substring(template)
        func flush() {
            if stack.contains("if time-inside") && !timeInside { section = ""; return }
            out += stack.contains("mirror") && mirrored ? swapSides(section) : section
            section = ""
        }
        while let open = rest.range(of: "/*") {
            section += rest[..<open.lowerBound].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined()
            guard let close = rest[open.upperBound...].range(of: "*/") else { rest = ""; break }
            let comment = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            if comment.hasPrefix("@") {
                flush()
                if comment == "@end" { _ = stack.popLast() } else { stack.append(String(comment.dropFirst())) }
            }
            rest = rest[close.upperBound...]
        }
        section += rest.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined()
        flush()
        return out
    }

    /// The layout's values, named as `theme.css` uses them (`--bk-NAME`).
    func layoutVariables() -> [(String, String)] {
        let px = Self.px, sm = style.sideMargin, body = metrics.body
        var v: [(String, String)] = [
            ("font", fonts.cssFamilyList), ("size", px(style.text.size)), ("lh", px(body.lineHeight)), ("width", px(width)),
            ("row", px(style.rowSpacing)), ("side", px(sm)), ("grouped", px(style.groupedSpacing)), ("time-gap", px(style.timeLabelSpacing)),
            ("min-w", px(style.minimumBubbleSize.width)), ("min-h", px(style.minimumBubbleSize.height)),
            ("max-w", Self.maxWidth(style.maxBubbleWidthBounds())),
            ("wrap", style.widthMode == .balanced && !shrinkWrap ? "balance" : "wrap"),
            ("tail-flip", mirrored ? "scaleX(-1)" : "none")
        ]
        for direction in [Direction.incoming, .outgoing] {
            let c = direction == .incoming ? "i" : "o", p = padding(direction)
            v.append(("\(c)-pad", "\(px(p.top)) \(px(p.right)) \(px(p.bottom - body.trim)) \(px(p.left))"))
            v += shape(direction).map { ("\(c)-\($0.0)", $0.1) }
        }
        // Photos, placeholders, the text under a photo.
        let inset = style.imageInset, ph = style.placeholderImageSize
        v += [
            ("img-pad", "\(px(inset.top)) \(px(inset.right)) \(px(inset.bottom)) \(px(inset.left))"),
            ("img-max-h", px(style.maxImageHeight)), ("img-r", px(theme.layout.imageCornerRadius ?? 5)),
            ("ph-w", px(ph.width)), ("ph-ratio", "\(Self.num(ph.width))/\(Self.num(ph.height))")
        ]
        for direction in [Direction.incoming, .outgoing] {
            let p = padding(direction)
            v.append(
                (
                    "\(direction == .incoming ? "i" : "o")-under",
                    "\(px(style.imageTextSpacing)) \(px(p.right - inset.right)) \(px(p.bottom - body.trim - inset.bottom)) \(px(p.left - inset.left))"
                ))
        }
        // Day separators, system lines, times.
        let pad = style.separatorPadding, t = style.timeLabelText
        v += [
            ("share", "\(Self.num(style.maxWidthShare * 100))%"),
            ("d-pad", "\(px(pad)) 0 \(px(pad - metrics.separator.trim))"), ("d-size", px(style.separatorText.size)), ("d-lh", px(metrics.separator.lineHeight)),
            ("s-pad", "\(px(pad)) 0 \(px(pad - metrics.system.trim))"), ("s-size", px(style.systemText.size)), ("s-lh", px(metrics.system.lineHeight)),
            ("t-size", px(t.size)), ("t-last", px(metrics.time.lastLine)), ("t-w", px(metrics.timeWidth)), ("t-edited-w", px(metrics.editedTimeWidth)),
            ("t-gap", px(style.timeInsideGap))
        ]
        for direction in [Direction.incoming, .outgoing] {
            let c = direction == .incoming ? "i" : "o", p = style.padding(for: direction)
            v += [("\(c)-time-right", px(p.right)), ("\(c)-time-bottom", px(p.bottom))]
        }
        v += [("q-time-right", px(inset.right + 6)), ("q-time-bottom", px(inset.bottom + 4))]
        // Emoji-only messages, names, status lines, avatars, the failed badge, times beside.
        let indent = style.avatarSize + style.besideGap, fb = style.failedBadgeSize
        v += [
            ("e-size", px(style.emojiText.size)), ("e-last", px(metrics.emoji.lastLine)), ("status-gap", px(style.statusSpacing)),
            ("status-size", px(style.statusText.size)), ("n-left", px(sm + style.senderNameInset)), ("n-gap", px(style.senderNameSpacing)),
            ("avatar-margin", px(sm + indent)), ("avatar-max-w", Self.maxWidth(style.maxBubbleWidthBounds(indent: indent))),
            ("avatar-name-margin", px(sm + indent + style.senderNameInset)), ("avatar-left", px(-indent)), ("avatar", px(style.avatarSize)),
            ("avatar-font", px((style.avatarSize * 0.4).rounded())),
            ("fb", px(fb)), ("fb-top", "calc(50% - \(px(fb / 2)))"), ("fb-left", px(-fb - style.besideGap)), ("fb-font", px(fb * 0.7)),
            ("beside", "calc(100% + \(px(style.besideGap)))"), ("beside-failed", "calc(100% + \(px(2 * style.besideGap + fb)))")
        ]
        // Reactions, replies, photo grids, typing, the header.
        let rp = style.reactionPadding, pill = metrics.time.lastLine + rp.vertical
        let rise = (pill * style.reactionRise).rounded(.up), qp = style.replyPadding, d = style.typingDotSize
        v += [
            ("k-top", px(style.rowSpacing + rise)), ("rx-top", px(-rise)),
            ("rx-pad", "\(px(rp.top)) \(px(rp.right)) \(px(rp.bottom)) \(px(rp.left))"), ("rx-size", px(style.reactionText.size)),
            ("rx-r", px(pill)),
            ("r-pad", "\(px(qp.top)) \(px(qp.right)) \(px(qp.bottom)) \(px(qp.left))"), ("r-size", px(style.replyText.size)),
            ("r-lines", "\(style.replyMaxLines)"), ("r-gap", px(style.replySpacing)),
            ("grid-gap", px(style.gridSpacing)), ("grid-w", px(2 * 129 + style.gridSpacing)), ("grid-ratio", "\(Self.num(2 * 129 + style.gridSpacing))/129"),
            ("ty-w", px(style.typingBubbleSize.width)), ("ty-h", px(style.typingBubbleSize.height)), ("ty-gap", px(d * 0.6)), ("ty-dot", px(d)),
            ("h1-size", px(style.text.size * 1.25))
        ]
        return v
    }

    /// A side's bubble body (`::before`) and tail (`::after`), as `theme.css`'s `--bk-i-*` /
    /// `--bk-o-*` values. Vector bubbles: the body a rounded rectangle inset by the tail strip on
    /// the tail side (`near`), filled or outlined (Cairo strokes on the path: half the line lies
    /// outside), the tail `BubbleShape`'s curves as a `clip-path`. Art bubbles: `border-image` with
    /// the art's slices, or the art as a mask filled with the bubble colour (a tinted theme).
    func shape(_ direction: Direction) -> [(String, String)] {
        let c = direction == .incoming ? "i" : "o", px = Self.px
        var fill = "none", border = "0 none", width = "0", radius = "0", image = "none", mask = "none"
        var top = "0", near = "0", far = "0", tail: (width: Double, height: Double, path: String)?
        switch theme.bubble(direction).shape {
        case let .vector(r, hasTail, outline, lineWidth):
            let strip = hasTail ? BubbleShape.tailWidth : 0
            if outline {
                let h = lineWidth / 2
                border = "\(px(lineWidth)) solid var(--\(c)b)"; width = px(lineWidth); radius = px(r + h)
                top = px(-h); near = px(strip - h); far = px(-h)
            } else {
                fill = "var(--\(c)b)"; radius = px(r); near = px(strip)
                if hasTail { tail = Self.tail(direction, radius: min(r, style.minimumBubbleSize.height / 2)) }
            }
        case .art:
            if let art = art[direction] {
                let w = art.caps
                let slice = "\(Self.num(w.top)) \(Self.num(w.right)) \(Self.num(w.bottom)) \(Self.num(w.left))"
                let widths = "\(px(w.top)) \(px(w.right)) \(px(w.bottom)) \(px(w.left))"
                border = "0 solid transparent"; width = widths
                if art.tint {
                    fill = "var(--\(c)b)"; mask = "\(art.source) \(slice) / \(widths) \(art.repeatMode)"
                } else {
                    image = "\(art.source) \(slice) fill / \(widths) \(art.repeatMode)"
                }
            }
        }
        return [
            ("fill", fill), ("border", border), ("border-width", width), ("radius", radius), ("image", image), ("mask", mask),
            ("top", top), ("bottom", top), ("near", near), ("far", far),
            ("tail", tail == nil ? "none" : "\"\""), ("tail-w", tail.map { px($0.width) } ?? "0"), ("tail-h", tail.map { px($0.height) } ?? "0"),
            ("tail-path", tail.map { "path(\"\($0.path)\")" } ?? "none")
        ]
    }

    /// The tail region of `BubbleShape.path` (the same curves, transcribed) as a path in the
    /// coordinates of a box at the bubble's bottom corner on the tail side: `r + 7` wide (the
    /// corner, the 6-pt strip and a point of slack), `r + 2` tall (reaching 1 pt below the bubble).
    /// Together with the rounded body it covers what the Cairo path fills.
    static func tail(_ direction: Direction, radius r: Double) -> (width: Double, height: Double, path: String) {
        let m10 = min(r, 10), m9 = min(r, 9), tw = BubbleShape.tailWidth
        let width = r + tw + 1, height = r + 2
        // (u, v) relative to the body's bottom corner on the tail side.
        func p(_ u: Double, _ v: Double) -> String {
            let x = direction == .outgoing ? u + r + 1 : u + tw
            return "\(num(x)) \(num(v + r + 1))"
        }
        let d: String
        if direction == .outgoing {
            d =
                "M\(p(-r, -r))L\(p(0, -r))L\(p(0, -m10))C\(p(0, -3)) \(p(2, -0.5)) \(p(tw, 0))"
                + "C\(p(1, 0.5)) \(p(-3, 0)) \(p(-m9, -1.2))C\(p(-r * 0.9, 0)) \(p(-r, 0)) \(p(-r - 0.01, 0))Z"
        } else {
            d =
                "M\(p(r + 0.01, 0))C\(p(r * 0.9, 0)) \(p(m9 + 0.5, 0)) \(p(m9, -1.2))C\(p(3, 0)) \(p(-1, 0.5)) \(p(-tw, 0))"
                + "C\(p(-2, -0.5)) \(p(0, -3)) \(p(0, -m10))L\(p(0, -r))L\(p(r, -r))Z"
        }
        return (width, height, d)
    }
}

/// Bubble art ready for CSS: the art at each resolution the theme ships (`@2x`, `@3x`) as one
/// `image-set()`, where to cut it (`border-image-slice`, in points because an image-set image's
/// natural size is in CSS px) and how wide the caps are (`border-width`, the same points).
///
/// Mirrored art is mirrored here, in its pixels (and its left and right caps swapped), rather
/// than with a CSS transform: a transformed layer is not snapped to device pixels, and its nine
/// pieces then show hairline seams at fractional positions.
struct HTMLArt: Sendable {
    /// `image-set(url(data:…) 1x, …)`.
    var source: String
    /// Cap insets in points, after mirroring.
    var caps: EdgeInsets
    var tint: Bool
    /// `border-image-repeat`.
    var repeatMode: String

    /// From the theme's art as the renderer loads it (`PictureDecoder.themeArt`: cap insets,
    /// legacy caps or 9-patch).
    /// A 9-patch with several stretchable runs on an axis is cut at its first and last fixed
    /// runs (CSS has one stretchable run per axis).
    static func load(
        _ direction: Direction, theme: Theme, themeFolder: String, mirrorLayout: Bool = false,
        pictures: any PictureDecoder
    ) throws(RenderError) -> HTMLArt? {
        guard case .art(let spec) = theme.bubble(direction).shape else { return nil }
        let mirrored = (spec.mirror ?? false) != mirrorLayout
        var candidates: [(resolution: Double, png: [UInt8])] = []
        var caps: EdgeInsets?
        for scale in [1.0, 2.0, 3.0] {
            guard
                let (art, png) = try pictures.themeArt(
                    direction, theme: theme, themeFolder: themeFolder,
                    outputScale: scale, mirrored: mirrored)
            else { return nil }
            guard !candidates.contains(where: { $0.resolution == art.scale }) else { continue }
            func runs(_ r: [SliceSegment]) -> (Double, Double) {
                let first = r.first.map { $0.stretches ? 0 : $0.length } ?? 0
                let last = r.count > 1 ? (r.last!.stretches ? 0 : r.last!.length) : 0
                return (Double(first) / art.scale, Double(last) / art.scale)
            }
            let (left, right) = runs(art.horizontal)
            let (top, bottom) = runs(art.vertical)
            if caps == nil {
                caps =
                    mirrored
                    ? EdgeInsets(top: top, left: right, bottom: bottom, right: left)
                    : EdgeInsets(top: top, left: left, bottom: bottom, right: right)
            }
            candidates.append((art.scale, png))
        }
        var b = HTMLBuffer()
        b.append("image-set(")
        for (k, c) in candidates.sorted(by: { $0.resolution < $1.resolution }).enumerated() {
            if k > 0 { b.append(",") }
            b.append("url(data:image/png;base64,")
            b.appendBase64(c.png)
            b.append(") "); b.append(raw: HTMLStyleSheet.num(c.resolution)); b.append("x")
        }
        b.append(")")
        let mode: String =
            switch spec.mode ?? .stretch {
            case .stretch: "stretch"
            case .tile, .repeat: "repeat"
            case .round: "round"
            case .space: "space"
            }
        return HTMLArt(
            source: String(decoding: b.bytes, as: UTF8.self), caps: caps ?? .zero,
            tint: spec.tint ?? false, repeatMode: mode)
    }
}
