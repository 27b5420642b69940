import ArgumentParser
import BubbleCore
import BubbleText
import BubbleHTML
import BubbleRender
import Foundation

/// `bubbles demo`: renders the built-in samples into a folder.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render the built-in samples (what `make demo` runs)."
    )
    @Option(name: .shortAndLong, help: "Output folder (created if missing).") var output: String = "out/demo"
    @Option(help: "Text engine: fast (the default) or pango (the reference).") var textEngine: TextEngineKind = .standard

    func run() async throws {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        let utc = TimeZone(identifier: "UTC")!
        let samples = BundledSamples.folder.path
        func load(_ input: String) throws -> Conversation {
            let data = try Data(contentsOf: URL(fileURLWithPath: input))
            let (conversation, _) = try reporting { try ConversationFile.decode(data, path: input) }
            return conversation
        }
        let seeds = try load(BundledSamples.demoConversation)
        let features = try load(BundledSamples.featuresConversation)

        /// One output: a sample, a theme (with the times where `timestamps` says, when given).
        struct Job {
            var conversation: Conversation
            var theme: String
            var path: String
            var format: OutputKind
            var dark = false
            var mirrored = false
            var timestamps: Theme.TimestampPlacement? = nil
        }
        // The seeds' conversation in every bundled theme (dark variants too), PDF, SVG, HTML.
        var jobs: [Job] = []
        for name in ThemeLibrary.bundledNames {
            let (theme, _) = try reporting { try ThemeLibrary.load(name) }
            jobs.append(Job(conversation: seeds, theme: name, path: "\(output)/demo-\(name).png", format: .cairo(.png)))
            if theme.dark != nil {
                jobs.append(Job(conversation: seeds, theme: name, path: "\(output)/demo-\(name)-dark.png", format: .cairo(.png), dark: true))
            }
        }
        jobs.append(Job(conversation: seeds, theme: "imessage", path: "\(output)/demo.pdf", format: .cairo(.pdf)))
        jobs.append(Job(conversation: seeds, theme: "classic", path: "\(output)/demo.svg", format: .cairo(.svg)))
        jobs.append(Job(conversation: seeds, theme: "imessage", path: "\(output)/demo.html", format: .html))
        // Every conversation feature in one group chat: the four time placements (one per
        // theme), dark, a right-to-left interface, and PDF, SVG and HTML.
        jobs += [
            Job(conversation: features, theme: "imessage", path: "\(output)/features-imessage.png", format: .cairo(.png), timestamps: .beside),
            Job(conversation: features, theme: "imessage", path: "\(output)/features-imessage-dark.png", format: .cairo(.png), dark: true, timestamps: .beside),
            Job(conversation: features, theme: "whatsapp", path: "\(output)/features-whatsapp.png", format: .cairo(.png)),
            Job(conversation: features, theme: "sms", path: "\(output)/features-sms.png", format: .cairo(.png), timestamps: .daySeparator),
            Job(conversation: features, theme: "classic", path: "\(output)/features-classic.png", format: .cairo(.png)),
            Job(conversation: features, theme: "imessage", path: "\(output)/features-rtl.png", format: .cairo(.png), mirrored: true),
            Job(conversation: features, theme: "imessage", path: "\(output)/features.pdf", format: .cairo(.pdf)),
            Job(conversation: features, theme: "whatsapp", path: "\(output)/features.svg", format: .cairo(.svg)),
            Job(conversation: features, theme: "whatsapp", path: "\(output)/features.html", format: .html)
        ]
        for job in jobs {
            var (theme, folder) = try reporting { try ThemeLibrary.load(job.theme) }
            if let timestamps = job.timestamps { theme.timestamps = timestamps }
            switch job.format {
            case .html:
                var options = HTMLOptions()
                options.timeZone = utc
                options.dark = job.dark ? true : nil
                options.pageSize = .single
                options.mirrored = job.mirrored
                options.textEngine = textEngine
                let exporter = HTMLExporter(theme: theme, themeFolder: folder, photosFolder: samples, options: options, pictures: PhotoDecoder())
                _ = try reporting { try exporter.export(job.conversation, to: job.path) }
            case .cairo(let format):
                var options = RenderOptions(format: format)
                options.dark = job.dark
                options.mirrored = job.mirrored
                options.timeZone = utc
                options.scale = 2
                let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: samples, textEngine: textEngine)
                _ = try reporting { try renderer.render(job.conversation, to: job.path, options: options) }
            }
            print(job.path)
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
        let incoming = try StretchableImage(
            pngFile: BundledThemes.path("classic/incoming\(suffix).png"),
            scale: scale, capInsets: ClassicBubbleArt.capInsets)
        let green = try StretchableImage(
            pngFile: BundledThemes.path("classic/outgoing\(suffix).png"),
            scale: scale, capInsets: ClassicBubbleArt.capInsets)
        let size = Size(width: 640, height: 354)
        let surface = try ImageSurface(width: Int(size.width * scale), height: Int(size.height * scale))
        let canvas = try Canvas(surface: surface, scale: scale)
        canvas.fill(Rect(x: 0, y: 0, width: 320, height: size.height), color: Color(r8: 219, g8: 226, b8: 237))
        canvas.fillGradient(
            Rect(x: 320, y: 0, width: 320, height: size.height),
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
