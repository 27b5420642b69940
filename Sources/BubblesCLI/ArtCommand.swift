import ArgumentParser
import BubbleCore
import BubbleText
import BubbleRender
import Foundation

/// `bubbles art`: draws the classic theme's bubble art again (the committed PNGs are its output).
struct Art: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the classic theme's bubble art (@1x, @2x, @3x PNGs) into a folder.",
        shouldDisplay: false
    )
    @Option(name: .shortAndLong, help: "Output folder (must exist).") var output: String
    @Flag(help: "Write the demo conversation's photo (demo-photo.png) instead.") var samplePhoto = false

    func run() async throws {
        if samplePhoto {
            try reporting { try SamplePhoto.draw().writePNG(to: "\(output)/demo-photo.png") }
            return
        }
        try reporting {
            for (name, top, bottom) in ClassicTheme.artColours {
                for scale in 1...3 {
                    let suffix = scale == 1 ? "" : "@\(scale)x"
                    try ClassicBubbleArt.draw(top: top, bottom: bottom, scale: scale)
                        .writePNG(to: "\(output)/\(name)\(suffix).png")
                }
            }
        }
    }
}

/// The classic theme's two bubbles: white-grey incoming, green outgoing (iOS 6 SMS).
enum ClassicTheme {
    static let artColours: [(String, Color, Color)] = [
        ("incoming", Color(r8: 252, g8: 252, b8: 252), Color(r8: 222, g8: 224, b8: 228)),
        ("outgoing", Color(r8: 178, g8: 236, b8: 120), Color(r8: 100, g8: 196, b8: 60))
    ]
}
