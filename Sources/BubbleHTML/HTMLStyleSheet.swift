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
        var metrics = HTMLMetrics(body: try .measure(style.text, engine: engine),
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
        return v
    }

    func background(_ b: Theme.Background, images: [String: String]) -> String {
        switch b {
        case .color(let c): return "background:\(c.hex)"
        case let .gradient(top, bottom): return "background:linear-gradient(\(top.hex),\(bottom.hex)) no-repeat;min-height:100%"
        case .image(let path): return "background:url(\(images[path] ?? "")) repeat"
        }
    }

    /// The whole style sheet except `@font-face` rules (which depend on each page's characters).
    /// `images`: background image path → URL (data URI or relative).
    func css(images: [String: String]) -> String {
        let light = theme.appearance(dark: false)
        let darkTheme = theme.dark == nil ? nil : theme.appearance(dark: true)
        let sm = style.sideMargin
        var css = ""
        switch dark {
        case .some(true):
            let t = darkTheme ?? light
            css += ":root{color-scheme:\(darkTheme == nil ? "light" : "dark");\(variables(t))}html{\(background(t.background, images: images))}"
        case .some(false):
            css += ":root{color-scheme:light;\(variables(light))}html{\(background(light.background, images: images))}"
        case .none:
            css += ":root{color-scheme:\(darkTheme == nil ? "light" : "light dark");\(variables(light))}html{\(background(light.background, images: images))}"
            if let darkTheme {
                css += "@media (prefers-color-scheme:dark){:root{\(variables(darkTheme))}html{\(background(darkTheme.background, images: images))}}"
                // A page's own switch (`<html data-scheme>`) wins over the system's choice.
                css += "html[data-scheme=dark]{color-scheme:dark;\(variables(darkTheme));\(background(darkTheme.background, images: images))}"
                css += "html[data-scheme=light]{color-scheme:light;\(variables(light));\(background(light.background, images: images))}"
            }
        }
        let body = metrics.body
        css += "body{margin:0;font-family:\(fonts.cssFamilyList);font-size:\(Self.px(style.text.size));line-height:\(Self.px(body.lineHeight));"
        css += "font-kerning:normal;font-synthesis:none;text-rendering:geometricPrecision;-webkit-text-size-adjust:100%;text-size-adjust:100%;color:var(--it);"
        // Bubbles are backgrounds: print them.
        css += "-webkit-print-color-adjust:exact;print-color-adjust:exact}"
        // The conversation column: Cairo's page is `width` wide with 10-pt margins above and below.
        css += ".c{max-width:\(Self.px(width));margin:0 auto;padding:10px 0}"
        css += ".c>*{margin-top:\(Self.px(style.rowSpacing))}"

        // Bubbles: BubbleMeasurer's width rule is min(max(content, minimum), max(maxBubble, minimum))
        // with maxBubble from `LayoutStyle.maxBubbleWidthBounds` (the layout engine's own bounds).
        css += ".b{position:relative;z-index:0;display:flow-root;box-sizing:border-box;width:fit-content;"
        css += "min-width:\(Self.px(style.minimumBubbleSize.width));min-height:\(Self.px(style.minimumBubbleSize.height));"
        css += "max-width:\(Self.maxWidth(style.maxBubbleWidthBounds()));margin-left:\(Self.px(sm));margin-right:\(Self.px(sm));"
        css += "white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:plaintext;text-align:start"
        if style.widthMode == .balanced && !shrinkWrap { css += ";text-wrap:balance" }
        css += "}"
        for direction in [Direction.incoming, .outgoing] {
            let c = direction == .incoming ? "i" : "o"
            let p = padding(direction)
            css += ".\(c){margin-\((direction == .incoming) != mirrored ? "right" : "left"):auto;color:var(--\(c)t);"
            css += "padding:\(Self.px(p.top)) \(Self.px(p.right)) \(Self.px(p.bottom - body.trim)) \(Self.px(p.left))}"
        }
        css += ".c>.g{margin-top:\(Self.px(style.groupedSpacing))}.c>.a{margin-top:\(Self.px(style.timeLabelSpacing))}.c>:first-child{margin-top:0}"
        // Runs in a fallback face (appendText's spans): that face first, its own line height.
        for (face, ratio) in metrics.faceLineHeights.sorted(by: { $0.key < $1.key }) {
            css += ".f\(face){font-family:\"bk\(face)\",\(fonts.cssFamilyList);line-height:\(String(format: "%.4f", ratio))}"
        }
        css += mirrored ? Self.swapSides(shapes()) + ".t::after{transform:scaleX(-1)}" : shapes()
        css += links()
        css += mirrored ? Self.swapSides(photos()) : photos()
        css += labels()
        if style.timeInsideBubble { css += mirrored ? Self.swapSides(insideTimes()) : insideTimes() }
        css += features()
        css += chrome()
        return css
    }

    /// Vector bubbles: the body a rounded rectangle inset by the tail strip on the tail side
    /// (`::before`), the tail `BubbleShape`'s curves as a `clip-path` on `::after`. Art bubbles:
    /// `border-image` with the art's slices on `::before`, mirrored there so text is not.
    func shapes() -> String {
        var css = ".b::before{content:\"\";position:absolute;z-index:-1;top:0;bottom:0;left:0;right:0}"
        for direction in [Direction.incoming, .outgoing] {
            let c = direction == .incoming ? "i" : "o"
            let look = theme.bubble(direction)
            switch look.shape {
            case let .vector(radius, tail, outline, lineWidth):
                let side = direction == .incoming ? "left" : "right"
                let strip = tail ? BubbleShape.tailWidth : 0
                if outline {
                    // Cairo strokes the outline centred on the path: half the line lies outside.
                    let h = lineWidth / 2
                    css += ".\(c)::before{border:\(Self.px(lineWidth)) solid var(--\(c)b);border-radius:\(Self.px(radius + h));"
                    css += "top:\(Self.px(-h));bottom:\(Self.px(-h));left:\(Self.px(-h));right:\(Self.px(-h));\(side):\(Self.px(strip - h))}"
                } else {
                    css += ".\(c)::before{background:var(--\(c)b);border-radius:\(Self.px(radius));\(side):\(Self.px(strip))}"
                    if tail {
                        let r = min(radius, style.minimumBubbleSize.height / 2)
                        let t = Self.tail(direction, radius: r)
                        css += ".\(c).t::after{content:\"\";position:absolute;z-index:-1;bottom:-1px;\(side):0;"
                        css += "width:\(Self.px(t.width));height:\(Self.px(t.height));background:var(--\(c)b);clip-path:path(\"\(t.path)\")}"
                    }
                }
            case .art:
                guard let art = art[direction] else { continue }
                let w = art.caps
                let slice = "\(Self.num(w.top)) \(Self.num(w.right)) \(Self.num(w.bottom)) \(Self.num(w.left))"
                let widths = "\(Self.px(w.top)) \(Self.px(w.right)) \(Self.px(w.bottom)) \(Self.px(w.left))"
                css += ".\(c)::before{border-style:solid;border-color:transparent;border-width:\(widths);"
                if art.tint {
                    // The art's alpha filled with the bubble colour (JSQMessagesViewController's tint).
                    css += "background:var(--\(c)b);-webkit-mask-box-image:\(art.source) \(slice) / \(widths) \(art.repeatMode);"
                } else {
                    css += "border-image:\(art.source) \(slice) fill / \(widths) \(art.repeatMode);"
                }
                css += "}"
            }
        }
        return css
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
            d = "M\(p(-r, -r))L\(p(0, -r))L\(p(0, -m10))C\(p(0, -3)) \(p(2, -0.5)) \(p(tw, 0))"
                + "C\(p(1, 0.5)) \(p(-3, 0)) \(p(-m9, -1.2))C\(p(-r * 0.9, 0)) \(p(-r, 0)) \(p(-r - 0.01, 0))Z"
        } else {
            d = "M\(p(r + 0.01, 0))C\(p(r * 0.9, 0)) \(p(m9 + 0.5, 0)) \(p(m9, -1.2))C\(p(3, 0)) \(p(-1, 0.5)) \(p(-tw, 0))"
                + "C\(p(-2, -0.5)) \(p(0, -3)) \(p(0, -m10))L\(p(0, -r))L\(p(r, -r))Z"
        }
        return (width, height, d)
    }

    func links() -> String {
        "a{color:inherit;text-decoration:underline}"
    }

    /// Photos: scaled like BubbleMeasurer (never enlarged; at most the bubble's width less the
    /// insets and `maxImageHeight` tall), centred, rounded corners; the text under a photo keeps
    /// the bubble's text padding.
    func photos() -> String {
        let inset = style.imageInset
        let radius = Self.px(theme.layout.imageCornerRadius ?? 5)
        var css = ".c>.p{padding:\(Self.px(inset.top)) \(Self.px(inset.right)) \(Self.px(inset.bottom)) \(Self.px(inset.left))}"
        css += ".p img,.p .ph{display:block;margin:0 auto;max-width:100%;max-height:\(Self.px(style.maxImageHeight));height:auto;border-radius:\(radius)}"
        // Stickers: no bubble, the picture at its box's size, transparency kept. Video frames:
        // the poster (or a dark box) with a play symbol in the middle.
        css += ".st img{display:block;max-width:100%;height:auto;border-radius:0}"
        css += ".vf{position:relative;max-width:100%;margin:0 auto;background:#1c1c1e;border-radius:\(radius);overflow:hidden}"
        css += ".p .vf img{width:100%;height:100%;max-height:none;object-fit:cover;border-radius:0}"
        css += ".pl{position:absolute;left:50%;top:50%;width:44px;height:44px;margin:-22px 0 0 -22px;border-radius:50%;background:rgba(0,0,0,.55)}"
        css += ".pl::after{content:\"\";position:absolute;left:17px;top:13px;border-style:solid;border-width:9px 0 9px 15px;"
        css += "border-color:transparent transparent transparent #fff}"
        let ph = style.placeholderImageSize
        css += ".ph{width:\(Self.px(ph.width));aspect-ratio:\(Self.num(ph.width))/\(Self.num(ph.height));"
        css += "background:linear-gradient(to top right,transparent calc(50% - .75px),#8c8c99 calc(50% - .75px),#8c8c99 calc(50% + .75px),transparent calc(50% + .75px)),"
        css += "linear-gradient(to bottom right,transparent calc(50% - .75px),#8c8c99 calc(50% - .75px),#8c8c99 calc(50% + .75px),transparent calc(50% + .75px)),#ccccd1}"
        for direction in [Direction.incoming, .outgoing] {
            let c = direction == .incoming ? "i" : "o"
            let p = padding(direction)
            css += ".\(c)>.x{margin:\(Self.px(style.imageTextSpacing)) \(Self.px(p.right - inset.right)) "
            css += "\(Self.px(p.bottom - metrics.body.trim - inset.bottom)) \(Self.px(p.left - inset.left))}"
        }
        return css
    }

    /// Day separators, system lines and times above groups: centred rows, Pango's line heights.
    func labels() -> String {
        let pad = style.separatorPadding
        let share = "\(Self.num(style.maxWidthShare * 100))%"
        var css = ""
        for (cls, text, m, color, bold) in [("d", style.separatorText, metrics.separator, "sep", true),
                                            ("s", style.systemText, metrics.system, "sys", false)] {
            css += ".\(cls){width:fit-content;max-width:\(share);margin-left:auto;margin-right:auto;"
            css += "padding:\(Self.px(pad)) 0 \(Self.px(pad - m.trim));font-size:\(Self.px(text.size));line-height:\(Self.px(m.lineHeight));"
            css += "color:var(--\(color));white-space:pre-wrap;overflow-wrap:anywhere;unicode-bidi:plaintext"
            css += bold ? ";font-weight:700}" : "}"
        }
        let t = style.timeLabelText
        css += ".h{margin-left:\(Self.px(style.sideMargin));margin-right:\(Self.px(style.sideMargin));text-align:center;white-space:nowrap;"
        css += "font-size:\(Self.px(t.size));line-height:\(Self.px(metrics.time.lastLine));color:var(--tm)}"
        return css
    }

    /// WhatsApp: the time inside the bubble. An invisible float as wide as the time (plus the
    /// gap) ends the text: it stays on the last line when it fits there, else it drops below and
    /// makes the bubble one time-line taller — BubbleMeasurer's rule. The time itself sits in the
    /// bubble's bottom corner, where the layout puts it in both cases.
    func insideTimes() -> String {
        let t = style.timeLabelText
        var css = ".z{float:right;width:\(Self.px(metrics.timeWidth));height:\(Self.px(metrics.time.lastLine));margin-left:\(Self.px(style.timeInsideGap))}"
        css += ".z.y{float:none;display:block;margin-left:0}.z.e{width:\(Self.px(metrics.editedTimeWidth))}"
        css += ".b>time{position:absolute;white-space:nowrap;font-size:\(Self.px(t.size));line-height:\(Self.px(metrics.time.lastLine))}"
        for direction in [Direction.incoming, .outgoing] {
            let c = direction == .incoming ? "i" : "o"
            let p = style.padding(for: direction)
            css += ".\(c)>time{right:\(Self.px(p.right));bottom:\(Self.px(p.bottom));color:var(--\(c)tm)}"
        }
        let inset = style.imageInset
        css += ".c>.q>time{right:\(Self.px(inset.right + 6));bottom:\(Self.px(inset.bottom + 4))}"
        return css
    }

    /// Emoji-only messages (large, no bubble), and the conversation features.
    func features() -> String {
        let e = style.emojiText
        var css = ".c>.e{padding:0;min-width:0;min-height:0;font-size:\(Self.px(e.size));line-height:\(Self.px(metrics.emoji.lastLine))}"
        css += ".c>.e::before,.c>.e::after{display:none}.e>time{position:static;display:block;margin-top:\(Self.px(style.statusSpacing));color:var(--tm)}.o.e>time{text-align:right}"
        let sm = style.sideMargin, indent = style.avatarSize + style.besideGap
        let label = "font-size:\(Self.px(style.statusText.size));line-height:\(Self.px(metrics.time.lastLine))"
        let (near, far) = mirrored ? ("right", "left") : ("left", "right")
        // Sender names, status lines.
        css += ".n{margin:\(Self.px(style.rowSpacing)) \(Self.px(sm)) 0 \(Self.px(sm + style.senderNameInset));\(label);color:var(--tm)}"
        css += ".c>.n+.b{margin-top:\(Self.px(style.senderNameSpacing))}"
        css += ".st{margin:\(Self.px(style.statusSpacing)) \(Self.px(sm)) 0;text-align:\(far);\(label);color:var(--tm)}.st.f{color:\(theme.failedColor.hex)}.st.ei{text-align:\(near)}"
        css += ".c>.st{margin-top:\(Self.px(style.statusSpacing))}"
        // Styled text (TextSpan): monospace code on a tint, a spoiler hidden until clicked or
        // focused, a quote's bar in the bubble's padding (no width of its own), mentions.
        css += ".b code{font-family:\"Liberation Mono\",\"DejaVu Sans Mono\",monospace;background:rgba(127,127,127,.18);border-radius:3px}"
        css += ".b em{font-synthesis:style}.sp{background:currentColor;border-radius:3px;cursor:pointer}.sp:focus,.sp:active{background:rgba(127,127,127,.25)}"
        css += ".qt{border-left:2.5px solid;margin-left:-7px;padding-left:4.5px}.mn{text-decoration:underline dotted}"
        // Avatars: a column on the incoming side; the picture or initials at the bubble's bottom.
        css += ".w>.i,.w>.n,.w>.r.i{margin-\(near):\(Self.px(sm + indent))}"
        css += ".w>.b.i{max-width:\(Self.maxWidth(style.maxBubbleWidthBounds(indent: indent)))}"
        css += ".w>.n{margin-\(near):\(Self.px(sm + indent + style.senderNameInset))}"
        // `.b>.av` outranks `.p img` (a photo message's pictures), which must not size the avatar.
        css += ".b>.av{position:absolute;bottom:0;margin:0;max-width:none;max-height:none;\(near):\(Self.px(-indent));width:\(Self.px(style.avatarSize));height:\(Self.px(style.avatarSize));"
        css += "border-radius:50%;object-fit:cover;color:#fff;font-weight:700;font-size:\(Self.px((style.avatarSize * 0.4).rounded()));"
        css += "line-height:\(Self.px(style.avatarSize));text-align:center;overflow:hidden}"
        // Failed badge beside the bubble; time beside.
        let fb = style.failedBadgeSize
        css += ".fb{position:absolute;top:calc(50% - \(Self.px(fb / 2)));\(near):\(Self.px(-fb - style.besideGap));width:\(Self.px(fb));height:\(Self.px(fb));"
        css += "border-radius:50%;background:\(theme.failedColor.hex);color:#fff;font-weight:700;font-size:\(Self.px(fb * 0.7));line-height:\(Self.px(fb));text-align:center}"
        css += ".bs{position:absolute;bottom:0;white-space:nowrap;\(label);color:var(--tm)}.i>.bs{\(near):calc(100% + \(Self.px(style.besideGap)))}"
        css += ".o>.bs{\(far):calc(100% + \(Self.px(style.besideGap)))}.o.f>.bs{\(far):calc(100% + \(Self.px(2 * style.besideGap + fb)))}"
        // Reactions: a pill on the outer top corner; the bubble moves down by its rise.
        let rp = style.reactionPadding
        let pillHeight = metrics.time.lastLine + rp.vertical
        let rise = (pillHeight * style.reactionRise).rounded(.up)
        css += ".c>.k{margin-top:\(Self.px(style.rowSpacing + rise))}"
        css += ".rx{position:absolute;top:\(Self.px(-rise));white-space:nowrap;padding:\(Self.px(rp.top)) \(Self.px(rp.right)) \(Self.px(rp.bottom)) \(Self.px(rp.left));"
        css += "font-size:\(Self.px(style.reactionText.size));line-height:\(Self.px(metrics.time.lastLine));border-radius:\(Self.px(pillHeight));"
        css += "background:\(theme.reactionFill.hex);border:1.5px solid \(theme.reactionBorder.hex);color:\(theme.incoming.textColor.hex)}"
        css += ".i>.rx{\(far):-12px}.o>.rx{\(near):-12px}"
        // Reply snippets: a quoted box above the bubble, on its side.
        let qp = style.replyPadding
        css += ".r{width:fit-content;max-width:\(Self.num(style.maxWidthShare * 100))%;box-sizing:border-box;margin:\(Self.px(style.rowSpacing)) \(Self.px(sm)) 0;"
        css += "padding:\(Self.px(qp.top)) \(Self.px(qp.right)) \(Self.px(qp.bottom)) \(Self.px(qp.left));border-radius:10px;background:\(theme.replyFill.hex);"
        css += "border-left:3px solid \(theme.replyBar.hex);color:\(theme.replyTextColor.hex);font-size:\(Self.px(style.replyText.size));line-height:1.25;"
        css += "overflow:hidden;display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:\(style.replyMaxLines)}"
        // The bar is on the snippet's leading edge, on either side, as the Cairo scene draws it:
        // the left, the right for right-to-left text (`y`).
        css += ".r.o{margin-\(near):auto}.r.y{border-left:0;border-right:3px solid \(theme.replyBar.hex)}"
        css += ".c>.r+.b{margin-top:\(Self.px(style.replySpacing))}"
        // Photo grids: square cells.
        // (each grid's width comes with it, the engine's for its row width; kept within the bubble)
        css += ".gr{display:grid;grid-template-columns:repeat(6,1fr);gap:\(Self.px(style.gridSpacing));width:min(100%,\(Self.px(2 * 129 + style.gridSpacing)));max-width:100%}"
        css += ".gr img{grid-column:span 3;width:100%;height:auto;aspect-ratio:1;object-fit:cover;border-radius:4px;display:block}"
        css += ".gr img.t{grid-column:span 2}.gr img.w{grid-column:span 6;aspect-ratio:var(--wa,\(Self.num(2 * 129 + style.gridSpacing))/129)}"
        // Typing: three dots.
        let d = style.typingDotSize
        css += ".ty{width:\(Self.px(style.typingBubbleSize.width));height:\(Self.px(style.typingBubbleSize.height));display:flex;align-items:center;justify-content:center;gap:\(Self.px(d * 0.6))}"
        css += ".ty>i{width:\(Self.px(d));height:\(Self.px(d));border-radius:50%;background:\(theme.typingDotsColor.hex)}"
        return css
    }

    /// Header, navigation and the index page.
    func chrome() -> String {
        let sm = Self.px(style.sideMargin)
        var css = "header{max-width:\(Self.px(width));margin:0 auto;padding:10px 0 2px;color:var(--sys);font-size:\(Self.px(style.systemText.size));line-height:\(Self.px(metrics.system.lineHeight))}"
        css += "header>*{margin:0 \(sm) 2px}"
        css += "h1{font-size:\(Self.px(style.text.size * 1.25));line-height:1.2;font-weight:700;color:var(--sep);overflow-wrap:anywhere}"
        css += "nav{max-width:\(Self.px(width));margin:0 auto;padding:6px 0;display:flex;gap:12px;justify-content:center;"
        css += "font-size:\(Self.px(style.systemText.size));line-height:1.5;color:var(--sys)}nav a{color:var(--sep)}"
        css += "ol.pages{max-width:\(Self.px(width));margin:8px auto;padding:0 \(sm) 0 calc(\(sm) + 2em);color:var(--sep);line-height:1.6}"
        css += "ol.pages a{color:inherit}ol.pages small{color:var(--sys)}"
        css += "@media print{nav{display:none}.b,.d,.s,.h{break-inside:avoid}}"
        return css
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
    static func load(_ direction: Direction, theme: Theme, themeFolder: String, mirrorLayout: Bool = false,
                     pictures: any PictureDecoder) throws(RenderError) -> HTMLArt? {
        guard case .art(let spec) = theme.bubble(direction).shape else { return nil }
        let mirrored = (spec.mirror ?? false) != mirrorLayout
        var candidates: [(resolution: Double, png: [UInt8])] = []
        var caps: EdgeInsets?
        for scale in [1.0, 2.0, 3.0] {
            guard let (art, png) = try pictures.themeArt(direction, theme: theme, themeFolder: themeFolder,
                                                         outputScale: scale, mirrored: mirrored) else { return nil }
            guard !candidates.contains(where: { $0.resolution == art.scale }) else { continue }
            func runs(_ r: [SliceSegment]) -> (Double, Double) {
                let first = r.first.map { $0.stretches ? 0 : $0.length } ?? 0
                let last = r.count > 1 ? (r.last!.stretches ? 0 : r.last!.length) : 0
                return (Double(first) / art.scale, Double(last) / art.scale)
            }
            let (left, right) = runs(art.horizontal)
            let (top, bottom) = runs(art.vertical)
            if caps == nil {
                caps = mirrored ? EdgeInsets(top: top, left: right, bottom: bottom, right: left)
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
        let mode: String = switch spec.mode ?? .stretch {
        case .stretch: "stretch"
        case .tile, .repeat: "repeat"
        case .round: "round"
        case .space: "space"
        }
        return HTMLArt(source: String(decoding: b.bytes, as: UTF8.self), caps: caps ?? .zero,
                       tint: spec.tint ?? false, repeatMode: mode)
    }
}
