import BubbleCore
import BubbleMedia
import BubbleText
import Foundation

/// What every page of a theme shares: the style sheet (measured once with the theme's fonts so
/// the browser's lines match the Cairo renderer's), the font stack and its `@font-face` rules.
/// Built once per export — or once per server — and then used for any number of pages and
/// fragments (`HTMLRowWriter`).
///
///     let style = try HTMLPageStyle(theme: theme, themeFolder: folder, options: options, pictures: PhotoDecoder())
///     let rows = try HTMLRowWriter(conversation: c, style: style, photosFolder: ".", pictures: PhotoDecoder())
///     let fragment = try rows.rows(c.messages[100..<200], context: HTMLRowContext(in: c, range: 100..<200))
///     // <style> style.css + style.fontFaces(for: [fragment]) </style> … fragment.html
package final class HTMLPageStyle: @unchecked Sendable {
    package let theme: Theme
    package let options: HTMLOptions
    let style: LayoutStyle
    let fonts: HTMLFontStack
    let metrics: HTMLMetrics
    /// Fallback faces whose runs get a `<span class="fN">` (bit per face).
    let spanFaces: UInt32
    /// The style sheet without `@font-face` rules, as bytes (copied into every page).
    let cssBytes: [UInt8]
    /// Shared with `HTMLRowWriter`s that shrink-wrap bubbles (the Pango reference engine).
    let pango: PangoTextEngine

    /// Measures the theme's fonts and builds the sheet. With `backgroundImages` the theme's
    /// background pictures are embedded (data URIs); without, they are left out (a sheet to read
    /// or restyle). Throws `LayoutError` (a width the theme cannot lay out, an unknown font) or
    /// `RenderError` (unreadable theme art or background).
    package init(
        theme: Theme, themeFolder: String, options: HTMLOptions, pictures: any PictureDecoder,
        backgroundImages: Bool = true
    ) throws {
        self.theme = theme
        self.options = options
        style = theme.layoutStyle
        try Self.check(width: options.width, style: style)
        fonts = HTMLFontStack.resolve(family: style.text.family)
        pango = PangoTextEngine()
        var metrics = try HTMLMetrics.measure(style, engine: pango)
        try metrics.measureFaces(fonts, style: style.text, engine: pango)
        self.metrics = metrics
        spanFaces = metrics.faceLineHeights.keys.reduce(0) { $0 | (1 << UInt32($1)) }
        var art: [Direction: HTMLArt] = [:]
        for d in [Direction.incoming, .outgoing] {
            art[d] = try HTMLArt.load(d, theme: theme, themeFolder: themeFolder, mirrorLayout: options.mirrored, pictures: pictures)
        }
        var images: [String: String] = [:]
        if backgroundImages {
            for appearance in [theme.appearance(dark: false), theme.appearance(dark: true)] {
                if case .image(let p) = appearance.background, images[p] == nil {
                    let full = p.hasPrefix("/") ? p : themeFolder + "/" + p
                    guard let data = FileManager.default.contents(atPath: full),
                        let mime = MediaProbe.browserImageType([UInt8](data.prefix(16)))
                    else {
                        throw RenderError.unreadableImage(path: full, reason: "theme background: cannot be read as PNG, JPEG, GIF or WebP")
                    }
                    images[p] = "data:\(mime);base64,\(data.base64EncodedString())"
                }
            }
        }
        var sheet = HTMLStyleSheet(
            theme: theme, style: style, metrics: metrics, fonts: fonts, width: options.width,
            dark: options.dark, art: art)
        sheet.shrinkWrap = options.shrinkWrap
        sheet.mirrored = options.mirrored
        cssBytes = Array(sheet.css(images: images).utf8)
    }

    /// Refuses a page width the theme cannot lay out.
    static func check(width: Double, style: LayoutStyle) throws(LayoutError) {
        guard width.isFinite, width > 0 else { throw .invalidWidth(width) }
        guard width >= style.minimumRowWidth - 1e-9 else {
            throw .rowTooNarrow(width: width, minimum: style.minimumRowWidth)
        }
    }

    /// The style sheet, without `@font-face` rules (`fontFaces(for:)` adds those a page uses).
    package var css: String { String(decoding: cssBytes, as: UTF8.self) }

    /// The `@font-face` rules for the faces `fragments` use (fonts embedded as data URIs, or by
    /// `local()` name when too large or `embedFonts` is off).
    package func fontFaces(for fragments: [HTMLFragment]) throws -> String {
        let regular = fragments.reduce(0) { $0 | $1.regularFaces }, bold = fragments.reduce(0) { $0 | $1.boldFaces }
        var out: [UInt8] = []
        for (faces, isBold) in [(regular, false), (bold, true)] {
            for face in fonts.regular.indices where faces & (1 << UInt32(face)) != 0 {
                if let rule = try fontRule(face: face, bold: isBold, copyInto: nil) { out += rule }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The same rules with each font linked as `urlPrefix/fonts/NAME` instead of embedded (a
    /// server's style sheet: a few kilobytes, the fonts fetched once and only those a page
    /// needs), and the files to serve under those names (name → the font file's path). Names
    /// carry a hash of the file's path: two fonts of one name in different folders stay apart.
    package func linkedFontFaces(for fragments: [HTMLFragment], under urlPrefix: String) throws -> (css: String, files: [String: String]) {
        let regular = fragments.reduce(0) { $0 | $1.regularFaces }, bold = fragments.reduce(0) { $0 | $1.boldFaces }
        var out: [UInt8] = []
        var files: [String: String] = [:]
        for (faces, isBold) in [(regular, false), (bold, true)] {
            for face in fonts.regular.indices where faces & (1 << UInt32(face)) != 0 {
                guard let f = isBold ? fonts.bold[face] : fonts.regular[face] else { continue }
                if let rule = try fontRule(face: face, bold: isBold, copyInto: ("", urlPrefix)) {
                    out += rule
                    files[Self.linkedName(f)] = f.file
                }
            }
        }
        return (String(decoding: out, as: UTF8.self), files)
    }

    /// A font's name under a server's URL: `<hash of its path>-<its file name>`.
    static func linkedName(_ face: FontFace) -> String {
        var h = StableHash()
        h.add(face.file.utf8)
        return String(h.value, radix: 16) + "-" + safeName(face)
    }

    /// The `@font-face` rule of a face: the font file embedded (data URI) or, given `copyInto`
    /// (a temporary assets folder and its final name), copied to its `fonts/` folder; a face too
    /// large to embed (or with `embedFonts` off) by `local()` name only. Nil: nothing names it.
    func fontRule(face index: Int, bold: Bool, copyInto assets: (temporary: String, name: String)?) throws -> [UInt8]? {
        guard let face = bold ? fonts.bold[index] : fonts.regular[index] else { return nil }
        var r = HTMLBuffer()
        r.append("@font-face{font-family:\"bk"); r.append(int: index); r.append("\";font-weight:")
        r.append(bold ? "700" : "400"); r.append(";font-style:normal;src:")
        if options.embedFonts, let format = face.webFormat, face.size <= options.maxEmbeddedFontSize,
            let data = FileManager.default.contents(atPath: face.file)
        {
            if let assets {
                // An empty folder: linked where it is (a server serves it), not copied.
                let name = assets.temporary.isEmpty ? Self.linkedName(face) : try Self.copyFont(face, data: data, into: assets.temporary)
                r.append("url("); r.appendURLPath(assets.name + "/fonts/" + name); r.append(")")
            } else {
                r.append("url(data:"); r.append(raw: format.mime); r.append(";base64,")
                data.withUnsafeBytes { r.appendBase64($0) }
                r.append(")")
            }
            r.append(" format(\""); r.append(raw: format.format); r.append("\")")
        } else {
            let names = [face.fullName, face.postscriptName].compactMap { $0.flatMap(HTMLFontStack.cssSafeName) }
            guard !names.isEmpty else { return nil }
            r.append(raw: names.map { "local(\"\($0)\")" }.joined(separator: ","))
        }
        if index == fonts.emojiFace { r.append(";unicode-range:"); r.append(raw: HTMLFontStack.emojiUnicodeRange) }
        r.append("}\n")
        return r.bytes
    }

    static func copyFont(_ face: FontFace, data: Data, into tmp: String) throws -> String {
        let dir = tmp + "/fonts"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let name = safeName(face)
        try HTMLPhotoAssets.writeOnce(data, to: dir + "/" + name)
        return name
    }

    /// A font file's name with only `[A-Za-z0-9._-]`, no leading dot.
    static func safeName(_ face: FontFace) -> String {
        let base = (face.file as NSString).lastPathComponent
        let safe = String(
            base.unicodeScalars.map { s -> Character in
                let v = s.value
                let ok = (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A) || v == 0x2D || v == 0x5F || v == 0x2E
                return ok ? Character(s) : "_"
            }
        ).trimmingCharacters(in: CharacterSet(charactersIn: "."))
        return safe.isEmpty ? "font-\(face.weight)" : safe
    }
}
