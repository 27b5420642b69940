import ArgumentParser
import BubbleCore
import BubbleText
import BubbleRender
import Foundation

/// `bubbles nineslice`: stretch one piece of bubble art to a size, for theme authors checking
/// their caps and 9-patches.
struct NineSlice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nineslice",
        abstract: "Stretch bubble art (PNG with cap insets, or an Android .9.png) to a size and write a PNG.",
        discussion: """
            Examples:
              bubbles nineslice bubble.png --legacy 24,13 --size 220x60 -o out.png
              bubbles nineslice bubble@2x.png --art-scale 2 --insets 13,24,16,17 --size 220x60 --scale 2 -o out.png
              bubbles nineslice bubble.9.png --nine-patch --size 300x80 --mode round -o out.png
            """
    )

    @Argument(help: "The art: a PNG file.") var art: String
    @Option(name: .shortAndLong, help: "Output PNG file.") var output: String
    @Option(help: "Target size in points, WIDTHxHEIGHT.") var size: String
    @Option(help: "Cap insets in points, TOP,LEFT,BOTTOM,RIGHT (UIKit order).") var insets: String?
    @Option(help: "Legacy UIKit caps LEFT,TOP: one-point stretch, right/bottom caps are what is left.") var legacy: String?
    @Flag(help: "Read the slices from the art's Android 9-patch border.") var ninePatch = false
    @Option(help: "Pixels per point of the art (2 for @2x art).") var artScale: Double = 1
    @Option(help: "Pixels per point of the output.") var scale: Double = 1
    @Option(help: "stretch, tile (UIKit), or a CSS border-image-repeat: repeat, round, space.") var mode: String = "stretch"
    @Flag(help: "CSS: leave the centre out (border-image-slice without fill).") var noFill = false
    @Flag(help: "Mirror the art left to right.") var mirror = false
    @Option(help: "Background colour (#rrggbb or #rrggbbaa), or 'gradient'.") var background: String = "#dbe2ed"

    func run() async throws {
        let target = try parseSize(size, option: "--size")
        guard [insets != nil, legacy != nil, ninePatch].filter({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of --insets, --legacy or --nine-patch")
        }
        guard let rule = TileRule(rawValue: mode) else {
            throw ValidationError("--mode '\(mode)' is not one of \(TileRule.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let sliceMode: NineSliceMode =
            switch rule {
            case .stretch, .tile: NineSliceMode(horizontal: rule, vertical: rule, fill: !noFill)
            default: .css(rule, fill: !noFill)
            }
        guard scale.isFinite, scale > 0, scale <= 8 else { throw ValidationError("--scale \(scale) must be between 0 and 8") }
        let image: StretchableImage = try reporting {
            if ninePatch { return try StretchableImage(ninePatchFile: art, scale: artScale) }
            let caps: EdgeInsets
            if let insets {
                let v = try parseNumbers(insets, count: 4, option: "--insets")
                caps = EdgeInsets(top: v[0], left: v[1], bottom: v[2], right: v[3])
            } else {
                let v = try parseNumbers(legacy!, count: 2, option: "--legacy")
                let probe = try ImageSurface(pngFile: art)
                caps = try EdgeInsets.legacy(
                    leftCapWidth: v[0], topCapHeight: v[1],
                    width: Double(probe.width) / artScale, height: Double(probe.height) / artScale)
            }
            return try StretchableImage(pngFile: art, scale: artScale, capInsets: caps)
        }
        let margin = 10.0
        let canvasSize = Size(width: target.width + 2 * margin, height: target.height + 2 * margin)
        try reporting {
            let surface = try ImageSurface(
                width: Int((canvasSize.width * scale).rounded(.up)),
                height: Int((canvasSize.height * scale).rounded(.up)))
            let canvas = try Canvas(surface: surface, scale: scale)
            try paintBackground(background, size: canvasSize, on: canvas)
            try image.draw(
                in: Rect(x: margin, y: margin, width: target.width, height: target.height),
                on: canvas, mode: sliceMode, mirrored: mirror)
            try surface.writePNG(to: output)
        }
    }
}

func parseSize(_ text: String, option: String) throws -> Size {
    let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
    guard parts.count == 2, let w = Double(parts[0]), let h = Double(parts[1]), w.isFinite, h.isFinite, w >= 0, h >= 0 else {
        throw ValidationError("\(option) '\(text)' is not a size; expected WIDTHxHEIGHT in points, e.g. 220x60")
    }
    return Size(width: w, height: h)
}

func parseNumbers(_ text: String, count: Int, option: String) throws -> [Double] {
    let values = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard values.count == count, values.allSatisfy({ $0 != nil }) else {
        throw ValidationError("\(option) '\(text)' must be \(count) comma-separated numbers")
    }
    return values.map { $0! }
}

func paintBackground(_ spec: String, size: Size, on canvas: Canvas) throws {
    let rect = Rect(origin: .zero, size: size)
    if spec == "gradient" {
        canvas.fillGradient(rect, from: Color(r8: 255, g8: 183, b8: 94), to: Color(r8: 63, g8: 94, b8: 251))
    } else if let color = Color(hex: spec) {
        canvas.fill(rect, color: color)
    } else {
        throw ValidationError("background '\(spec)' is not a colour; expected #rrggbb, #rrggbbaa or 'gradient'")
    }
}
