import BubbleCore
import BubbleText
import BubbleHTML
import BubbleRender
import BubbleTestSupport
import Foundation

// MARK: HTML export

let htmlMessages = 1_000_000
/// imessage-exporter's own figures for its HTML export (its README), messages per second.
let imessageExporterHTML = 117_000.0...132_000.0
let htmlGoal = 250_000.0

/// The synthetic conversation (1,000,000 messages) exported to HTML pages of 5,000 messages with
/// fonts embedded and photos referenced (the synthetic photos do not exist). Building the
/// conversation is not timed.
func htmlCase() throws -> Figures {
    let conversation = SyntheticConversation.make(count: htmlMessages, seed: 2026)
    let (theme, folder) = try ThemeLibrary.load("imessage")
    var options = HTMLOptions()
    options.timeZone = utc
    options.assets = .reference
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let modelMB = peakMemoryMB()
    let exporter = HTMLExporter(theme: theme, themeFolder: folder, photosFolder: dir, options: options, pictures: PhotoDecoder())
    var files: [String] = []
    let perMessage = try timed(htmlMessages) { files = try exporter.export(conversation, to: dir + "/chat.html") }
    let bytes = files.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
    return Figures(
        name: "html-export", messages: htmlMessages, microsPerMessage: ["export": perMessage],
        peakMemoryMB: peakMemoryMB(),
        notes: [
            "files": String(files.count), "MB written": String(format: "%.0f", Double(bytes) / 1e6),
            "RSS before export MB": String(format: "%.0f", modelMB)
        ])
}

func printHTML(_ f: Figures) {
    let perSecond = 1e6 / f.microsPerMessage["export"]!
    print("")
    print("HTML export of \(f.messages) messages (imessage theme, pages of 5,000, fonts embedded; ratio = ours ÷ other)")
    print(pad("", 30) + lpad("msg/s", 12) + lpad("ratio", 9))
    print(pad("BubbleKit", 30) + lpad(String(format: "%.0f", perSecond), 12))
    print(pad("goal (issue 6)", 30) + lpad(String(format: "%.0f", htmlGoal), 12) + lpad(String(format: "%.2f×", perSecond / htmlGoal), 9))
    print(
        pad("imessage-exporter (reported)", 30)
            + lpad(String(format: "%.0f–%.0fk", imessageExporterHTML.lowerBound / 1000, imessageExporterHTML.upperBound / 1000), 12)
            + lpad(String(format: "%.1f–%.1f×", perSecond / imessageExporterHTML.upperBound, perSecond / imessageExporterHTML.lowerBound), 9))
    print(
        "peak memory \(String(format: "%.0f MB", f.peakMemoryMB)) (the 1M-message model alone: \(f.notes["RSS before export MB"] ?? "?") MB); "
            + "\(f.notes["files"] ?? "?") files, \(f.notes["MB written"] ?? "?") MB written")
}
