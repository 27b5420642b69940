import ArgumentParser
import BubbleCore
import BubbleRender
import Foundation

/// `bubbles demo`: renders the built-in samples into a folder.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render the built-in samples (what `make demo` runs)."
    )
    @Option(name: .shortAndLong, help: "Output folder (created if missing).") var output: String = "out/demo"
    @Option(help: "Text engine: fast (the default) or pango (the reference).") var textEngine: TextEngineKind = .standard

    func run() throws {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let input = BundledSamples.demoConversation
        let data = try Data(contentsOf: URL(fileURLWithPath: input))
        let (conversation, _) = try reporting { try ConversationFile.decode(data, path: input) }
        let utc = TimeZone(identifier: "UTC")!
        // Every bundled theme as PNG, the dark variants too; one PDF and one SVG.
        var jobs: [(String, String, Bool, OutputFormat)] = []
        for name in ThemeLibrary.bundledNames {
            let (theme, _) = try reporting { try ThemeLibrary.load(name) }
            jobs.append((name, "\(output)/demo-\(name).png", false, .png))
            if theme.dark != nil { jobs.append((name, "\(output)/demo-\(name)-dark.png", true, .png)) }
        }
        jobs.append(("imessage", "\(output)/demo.pdf", false, .pdf))
        jobs.append(("classic", "\(output)/demo.svg", false, .svg))
        for (name, path, dark, format) in jobs {
            let (theme, folder) = try reporting { try ThemeLibrary.load(name) }
            var options = RenderOptions(format: format)
            options.dark = dark
            options.timeZone = utc
            options.scale = 2
            let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: BundledSamples.folder.path,
                                                textEngine: textEngine)
            try reporting { try renderer.render(conversation, to: path, options: options) }
            print(path)
        }
        for scale in [1, 2, 3] {
            let path = "\(output)/nineslice@\(scale)x.png"
            try reporting { try NineSliceSheet.render(scale: Double(scale), to: path) }
            print(path)
        }
    }
}

/// The classic bubble art stretched to seed 001's four bubble sizes, both sides, over seed
/// 001's flat background and over a gradient (the art composites with real alpha).
enum NineSliceSheet {
    static func render(scale: Double, to path: String) throws {
        let art = Int(scale)
        let suffix = art == 1 ? "" : "@\(art)x"
        let incoming = try StretchableImage(pngFile: BundledThemes.path("classic/incoming\(suffix).png"),
                                            scale: scale, capInsets: ClassicBubbleArt.capInsets)
        let green = try StretchableImage(pngFile: BundledThemes.path("classic/outgoing\(suffix).png"),
                                         scale: scale, capInsets: ClassicBubbleArt.capInsets)
        let size = Size(width: 640, height: 354)
        let surface = try ImageSurface(width: Int(size.width * scale), height: Int(size.height * scale))
        let canvas = try Canvas(surface: surface, scale: scale)
        canvas.fill(Rect(x: 0, y: 0, width: 320, height: size.height), color: Color(r8: 219, g8: 226, b8: 237))
        canvas.fillGradient(Rect(x: 320, y: 0, width: 320, height: size.height),
                            from: Color(r8: 255, g8: 183, b8: 94), to: Color(r8: 63, g8: 94, b8: 251), vertical: true)
        // Seed 001's bubble sizes (text box plus padding 4, 16, 7, 22), alternating sides.
        let bubbles: [(Double, Double)] = [(190, 30), (110, 86), (160, 112), (290, 72)]
        for half in [0.0, 320.0] {
            var y = 10.0
            for (i, (w, h)) in bubbles.enumerated() {
                let left = i % 2 == 0
                let width = min(w, 300)
                let x = left ? half + 5 : half + 315 - width
                try (left ? incoming : green).draw(in: Rect(x: x, y: y, width: width, height: h), on: canvas, mirrored: !left)
                y += h + 8
            }
        }
        try surface.writePNG(to: path)
    }
}
