import Foundation

/// A look for conversations: colours, fonts, paddings, bubble shapes (vector or art), spacing.
/// Themes are JSON files (docs/THEMES.md); the bundled ones live in Sources/BubbleCore/Themes.
public struct Theme: Hashable, Sendable, Codable {
    /// The theme's name (`--theme NAME`).
    public var name: String
    /// One line about the look.
    public var description: String?
    /// The message font.
    public var font: FontSpec
    /// What is behind the bubbles: a colour, a gradient or an image.
    public var background: Background
    /// How incoming bubbles look.
    public var incoming: BubbleTheme
    /// How outgoing bubbles look.
    public var outgoing: BubbleTheme
    /// Colours of day separators, system lines and times.
    public var labels: LabelColors
    /// Widths, margins and spacing.
    public var layout: LayoutNumbers
    /// Where message times go: nowhere, above each group (seed 000), inside the bubble after
    /// the last line (WhatsApp), in day separators only, or beside each bubble.
    public var timestamps: TimestampPlacement
    /// Colours for the dark appearance, when the theme has one.
    public var dark: DarkPalette?
    /// Sender names, avatars, status, emoji, reactions, replies, typing (all optional).
    public var features: Features? = nil

    /// Where message times go.
    public enum TimestampPlacement: String, Hashable, Sendable, Codable {
        /// Nowhere.
        case none
        /// Above each group of bubbles (seed 000).
        case aboveGroup
        /// Inside the bubble, after the last line when it fits (WhatsApp).
        case inside
        /// In day separators only.
        case daySeparator
        /// Beside each bubble.
        case beside
    }

    /// The conversation features a theme can tune; every key is optional (docs/THEMES.md).
    public struct Features: Hashable, Sendable, Codable {
        /// "never", "groups" (more than two participants; the default) or "always".
        public var senderNames: LayoutStyle.Rule?
        /// Which incoming bubbles have the sender's avatar beside them: "never", "groups" or "always".
        public var avatars: LayoutStyle.Rule?
        /// Avatar diameter in points (default 28).
        public var avatarSize: Double?
        /// Emoji-only messages: font size as a multiple of the body size (default 2.5).
        public var emojiScale: Double?
        /// Badge and snippet fills (default: the incoming fill / a grey), link detection.
        public var reactionFill: Color?
        /// Reaction pills' border.
        public var reactionBorder: Color?
        /// Reply snippets' fill.
        public var replyFill: Color?
        /// Reply snippets' bar.
        public var replyBar: Color?
        /// Reply snippets' text.
        public var replyText: Color?
        /// Sender names.
        public var senderColor: Color?
        /// Status labels.
        public var statusColor: Color?
        /// "Failed" and its badge (default #ff3b30).
        public var failedColor: Color?
        /// Typing dots.
        public var typingDots: Color?
        /// Links, phone numbers and email addresses become links (default true).
        public var links: Bool?
        /// No features set: every default.
        public init() {}
    }

    /// The message font.
    public struct FontSpec: Hashable, Sendable, Codable {
        /// A fontconfig family name or alias.
        public var family: String
        /// Size in points.
        public var size: Double
        /// Size of day separators, system lines and times; default three quarters of `size`.
        public var labelSize: Double?
    }

    /// What is behind the bubbles.
    public enum Background: Hashable, Sendable, Codable {
        /// One colour standing for the background (badge borders cut into it).
        public var averageColor: Color {
            switch self {
            case .color(let c): return c
            case .gradient(let a, _): return a
            case .image: return Color(r8: 255, g8: 255, b8: 255)
            }
        }
        /// One colour.
        case color(Color)
        /// Top to bottom.
        case gradient(Color, Color)
        /// An image file (relative to the theme file), tiled.
        case image(String)

        enum CodingKeys: String, CodingKey { case color, gradient, image }
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if let color = try c.decodeIfPresent(Color.self, forKey: .color) { self = .color(color); return }
            if let pair = try c.decodeIfPresent([Color].self, forKey: .gradient) {
                guard pair.count == 2 else {
                    throw DecodingError.dataCorruptedError(forKey: .gradient, in: c, debugDescription: "expected two colours, top and bottom")
                }
                self = .gradient(pair[0], pair[1]); return
            }
            if let image = try c.decodeIfPresent(String.self, forKey: .image) { self = .image(image); return }
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "expected one of \"color\", \"gradient\" or \"image\""))
        }
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .color(let color): try c.encode(color, forKey: .color)
            case .gradient(let a, let b): try c.encode([a, b], forKey: .gradient)
            case .image(let path): try c.encode(path, forKey: .image)
            }
        }
    }

    /// How the bubbles of one side look.
    public struct BubbleTheme: Hashable, Sendable, Codable {
        /// The bubble's colour (tints art with `ArtSpec.tint`).
        public var fill: Color
        /// The text's colour.
        public var textColor: Color
        /// Text inset inside the bubble.
        public var padding: EdgeInsets
        /// Vector (rounded rectangle, tail) or stretchable art.
        public var shape: Shape
        /// Colour of a time inside the bubble (WhatsApp); default the text colour at 60 %.
        public var timeColor: Color?
    }

    /// How a bubble is drawn: a vector outline or stretchable art.
    public enum Shape: Hashable, Sendable, Codable {
        /// A rounded rectangle of corner `radius`; `tail` adds a tail to the last bubble of a
        /// group; `outline` strokes the border (of `outlineWidth`) instead of filling.
        case vector(radius: Double, tail: Bool, outline: Bool, outlineWidth: Double)
        /// Stretchable art (a PNG cut by cap insets, legacy caps or its 9-patch border).
        case art(ArtSpec)

        enum CodingKeys: String, CodingKey { case vector, art }
        struct VectorSpec: Codable {
            var radius: Double
            var tail: Bool?
            var outline: Bool?
            var outlineWidth: Double?
        }
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if let v = try c.decodeIfPresent(VectorSpec.self, forKey: .vector) {
                self = .vector(radius: v.radius, tail: v.tail ?? true, outline: v.outline ?? false, outlineWidth: v.outlineWidth ?? 1)
                return
            }
            if let a = try c.decodeIfPresent(ArtSpec.self, forKey: .art) { self = .art(a); return }
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "expected \"vector\" or \"art\""))
        }
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case let .vector(radius, tail, outline, width):
                try c.encode(VectorSpec(radius: radius, tail: tail, outline: outline, outlineWidth: width), forKey: .vector)
            case .art(let spec): try c.encode(spec, forKey: .art)
            }
        }
    }

    /// Bubble art: a PNG (path relative to the theme file; `@2x`/`@3x` siblings are used for
    /// sharper output when present) cut by `insets`, by `legacyCaps` [left, top], or by its own
    /// 9-patch border. `tint` recolours the art with the bubble's `fill` (keeping its shading);
    /// `mirror` flips it, so one template serves both sides as in JSQMessagesViewController.
    public struct ArtSpec: Hashable, Sendable, Codable {
        /// The PNG, relative to the theme file.
        public var image: String
        /// The art's scale (2 for an @2x file); default 1.
        public var scale: Double?
        /// Cap insets in points: the corners kept as drawn.
        public var insets: EdgeInsets?
        /// Legacy caps `[left, top]` (UIKit's `stretchableImage(withLeftCapWidth:topCapHeight:)`:
        /// one pixel stretches).
        public var legacyCaps: [Double]?
        /// The PNG is an Android 9-patch: its one-pixel border marks what stretches.
        public var ninePatch: Bool?
        /// Recolour the art with the bubble's `fill`, keeping its shading.
        public var tint: Bool?
        /// Flip the art left to right (one template for both sides).
        public var mirror: Bool?
        /// How the stretchable runs fill their space (default `stretch`).
        public var mode: TileRule?
    }

    /// Colours of the texts outside bubbles.
    public struct LabelColors: Hashable, Sendable, Codable {
        /// Day separators.
        public var separator: Color
        /// System lines.
        public var system: Color
        /// Times.
        public var time: Color
    }

    /// The layout numbers a theme sets (`LayoutStyle` has the rest).
    public struct LayoutNumbers: Hashable, Sendable, Codable {
        /// The widest a bubble may be as a share of the row (seed 002: 0.65, seed 003: 0.70).
        public var maxWidthShare: Double
        /// The widest a bubble may be in points, whatever the row; nil for none.
        public var maxBubbleWidth: Double?
        /// Distance from the row's edge to the bubble.
        public var sideMargin: Double
        /// Fit the widest line, or balance the lines.
        public var widthMode: LayoutStyle.WidthMode
        /// Space above a row that starts a group.
        public var rowSpacing: Double
        /// Space above a row that continues a group.
        public var groupedSpacing: Double
        /// Seconds between two messages of one sender that still form a group.
        public var groupingInterval: Double
        /// The smallest bubble (art needs room for its caps).
        public var minimumBubbleSize: Size?
        /// Corner radius of photos inside bubbles (seed 002: 5).
        public var imageCornerRadius: Double?
    }

    /// The colours of the dark appearance.
    public struct DarkPalette: Hashable, Sendable, Codable {
        /// The background.
        public var background: Background
        /// Incoming bubbles' fill.
        public var incomingFill: Color
        /// Incoming bubbles' text.
        public var incomingText: Color
        /// Outgoing bubbles' fill.
        public var outgoingFill: Color
        /// Outgoing bubbles' text.
        public var outgoingText: Color
        /// Separators, system lines and times.
        public var labels: LabelColors
        /// Feature colours for the dark appearance (each falls back as in the light one).
        public var features: Features?
    }

    /// The look of bubbles on `direction`'s side.
    public func bubble(_ direction: Direction) -> BubbleTheme { direction == .incoming ? incoming : outgoing }

    /// Feature colours with their defaults.
    public var failedColor: Color { features?.failedColor ?? Color(r8: 255, g8: 59, b8: 48) }
    /// Sender names' colour (default: the time colour).
    public var senderColor: Color { features?.senderColor ?? labels.time }
    /// Status labels' colour (default: the time colour).
    public var statusColor: Color { features?.statusColor ?? labels.time }
    /// Reaction pills' fill (default: the incoming fill).
    public var reactionFill: Color { features?.reactionFill ?? incoming.fill }
    /// Reaction pills' border (default: the background's colour).
    public var reactionBorder: Color { features?.reactionBorder ?? background.averageColor }
    /// Reply snippets' fill (default: the incoming fill at half opacity).
    public var replyFill: Color { features?.replyFill ?? incoming.fill.withAlpha(0.5) }
    /// Reply snippets' bar (default: the time colour).
    public var replyBar: Color { features?.replyBar ?? labels.time }
    /// Reply snippets' text (default: the system line colour).
    public var replyTextColor: Color { features?.replyText ?? labels.system }
    /// Typing dots' colour (default: the time colour).
    public var typingDotsColor: Color { features?.typingDots ?? labels.time }

    /// This theme with its dark palette applied (itself when it has none).
    public func appearance(dark useDark: Bool) -> Theme {
        guard useDark, let dark else { return self }
        var t = self
        t.background = dark.background
        t.incoming.fill = dark.incomingFill
        t.incoming.textColor = dark.incomingText
        t.outgoing.fill = dark.outgoingFill
        t.outgoing.textColor = dark.outgoingText
        t.labels = dark.labels
        if let f = dark.features {
            var merged = t.features ?? Features()
            merged.reactionFill = f.reactionFill
            merged.reactionBorder = f.reactionBorder
            merged.replyFill = f.replyFill
            merged.replyBar = f.replyBar
            merged.replyText = f.replyText
            merged.senderColor = f.senderColor
            merged.statusColor = f.statusColor
            merged.failedColor = f.failedColor ?? merged.failedColor
            merged.typingDots = f.typingDots
            t.features = merged
        } else if var f = t.features {
            // Light colours do not carry over; the dark defaults derive from the dark palette.
            f.reactionFill = nil; f.reactionBorder = nil; f.replyFill = nil; f.replyBar = nil; f.replyText = nil
            f.senderColor = nil; f.statusColor = nil; f.typingDots = nil
            t.features = f
        }
        t.dark = nil
        return t
    }

    /// The numbers the layout engine needs from this theme.
    public var layoutStyle: LayoutStyle {
        let labelSize = font.labelSize ?? (font.size * 0.75).rounded()
        let padding = incoming.padding
        var style = LayoutStyle(
            text: TextStyle(family: font.family, size: font.size),
            incomingPadding: incoming.padding,
            outgoingPadding: outgoing.padding,
            minimumBubbleSize: layout.minimumBubbleSize
                ?? Size(width: padding.horizontal + 8, height: padding.vertical + font.size),
            maxWidthShare: layout.maxWidthShare,
            maxBubbleWidth: layout.maxBubbleWidth,
            sideMargin: layout.sideMargin,
            widthMode: layout.widthMode,
            rowSpacing: layout.rowSpacing,
            groupedSpacing: layout.groupedSpacing,
            groupingInterval: layout.groupingInterval,
            separatorText: TextStyle(family: font.family, size: labelSize, weight: .bold),
            systemText: TextStyle(family: font.family, size: labelSize),
            showsTimeAboveGroup: timestamps == .aboveGroup,
            timeLabelText: TextStyle(family: font.family, size: labelSize))
        style.timeInsideBubble = timestamps == .inside
        style.timeBeside = timestamps == .beside
        style.timeInDaySeparator = timestamps == .daySeparator
        let f = features ?? Features()
        style.senderNames = f.senderNames ?? .groups
        style.avatars = f.avatars ?? .groups
        style.avatarSize = f.avatarSize ?? 28
        style.senderNameText = TextStyle(family: font.family, size: labelSize)
        style.statusText = TextStyle(family: font.family, size: labelSize)
        style.emojiText = TextStyle(family: font.family, size: (font.size * (f.emojiScale ?? 2.5)).rounded())
        style.reactionText = TextStyle(family: font.family, size: labelSize + 1)
        style.replyText = TextStyle(family: font.family, size: labelSize + 1)
        style.typingBubbleSize = Size(
            width: max(style.minimumBubbleSize.width, padding.horizontal + 36),
            height: max(style.minimumBubbleSize.height, padding.vertical + font.size))
        style.detectsLinks = f.links ?? true
        return style
    }
}

// MARK: Codable for the geometry and colour values used in themes

extension Color: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let s = try c.decode(String.self)
        guard let color = Color(hex: s) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "\"\(s)\" is not a colour; expected #rgb, #rrggbb or #rrggbbaa")
        }
        self = color
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(hex)
    }
}

extension EdgeInsets: Codable {
    /// JSON: [top, left, bottom, right] (UIKit order).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let v = try c.decode([Double].self)
        guard v.count == 4, v.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected [top, left, bottom, right], four numbers ≥ 0")
        }
        self.init(top: v[0], left: v[1], bottom: v[2], right: v[3])
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode([top, left, bottom, right])
    }
}

extension Size: Codable {
    /// JSON: [width, height].
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let v = try c.decode([Double].self)
        guard v.count == 2, v.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected [width, height], two numbers ≥ 0")
        }
        self.init(width: v[0], height: v[1])
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode([width, height])
    }
}

extension TileRule: Codable {}

/// A theme file that could not be used: the file, where in it, and what was expected.
public struct ThemeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The theme file.
    public var path: String
    /// Where in it (a JSON path); nil for the whole file.
    public var location: String?
    /// What was wrong and what was expected.
    public var reason: String
    /// An error about the theme file at `path`.
    public init(path: String, location: String?, reason: String) {
        self.path = path; self.location = location; self.reason = reason
    }
    public var description: String { "\(path)" + (location.map { ": \($0)" } ?? "") + ": \(reason)" }
}

extension Theme {
    /// Decodes a theme file; errors name the file and the line/column or JSON path.
    public static func decode(_ data: Data, path: String) throws(ThemeError) -> Theme {
        let theme: Theme
        do {
            theme = try JSONDecoder().decode(Theme.self, from: data)
        } catch let error as DecodingError {
            throw ThemeError(
                path: path, location: ConversationFile.location(of: error, in: data),
                reason: ConversationFile.reason(of: error))
        } catch {
            throw ThemeError(path: path, location: nil, reason: "\(error)")
        }
        try theme.validate(path: path)
        return theme
    }

    func validate(path: String) throws(ThemeError) {
        func check(_ ok: Bool, _ location: String, _ reason: String) throws(ThemeError) {
            if !ok { throw ThemeError(path: path, location: location, reason: reason) }
        }
        try check(
            font.size.isFinite && font.size > 0 && font.size < 500, "font.size",
            "is \(font.size); expected a size in points between 0 and 500")
        if let s = font.labelSize {
            try check(s.isFinite && s > 0 && s < 500, "font.labelSize", "is \(s); expected a size in points between 0 and 500")
        }
        try check(
            layout.maxWidthShare > 0 && layout.maxWidthShare <= 1, "layout.maxWidthShare",
            "is \(layout.maxWidthShare); expected a share of the row between 0 and 1 (e.g. 0.7)")
        try check(layout.sideMargin >= 0 && layout.sideMargin.isFinite, "layout.sideMargin", "is \(layout.sideMargin); expected ≥ 0")
        try check(layout.rowSpacing >= 0 && layout.groupedSpacing >= 0, "layout", "rowSpacing and groupedSpacing must be ≥ 0")
        if let m = layout.maxBubbleWidth { try check(m > 0 && m.isFinite, "layout.maxBubbleWidth", "is \(m); expected > 0") }
        if let s = features?.avatarSize { try check(s > 0 && s < 200, "features.avatarSize", "is \(s); expected a size in points between 0 and 200") }
        if let e = features?.emojiScale {
            try check(e >= 1 && e <= 10, "features.emojiScale", "is \(e); expected a multiple of the font size between 1 and 10")
        }
        for (name, bubble) in [("incoming", incoming), ("outgoing", outgoing)] {
            if case let .vector(radius, _, _, width) = bubble.shape {
                try check(radius >= 0 && radius.isFinite, "\(name).shape.vector.radius", "is \(radius); expected ≥ 0")
                try check(width > 0 && width.isFinite, "\(name).shape.vector.outlineWidth", "is \(width); expected > 0")
            }
            if case let .art(spec) = bubble.shape {
                let ways = [spec.insets != nil, spec.legacyCaps != nil, spec.ninePatch == true].filter { $0 }.count
                try check(ways == 1, "\(name).shape.art", "give exactly one of \"insets\", \"legacyCaps\" or \"ninePatch\": true")
                if let caps = spec.legacyCaps {
                    try check(caps.count == 2, "\(name).shape.art.legacyCaps", "expected [leftCapWidth, topCapHeight]")
                }
                if let s = spec.scale { try check(s > 0 && s.isFinite, "\(name).shape.art.scale", "is \(s); expected > 0") }
            }
        }
    }
}
