import BubbleCore
import BubbleRender
import BubbleStats
import BubbleTestSupport
import Foundation

// MARK: Book (issue 45)

/// Issue 45's goal: a 50,000-message book in at most this many seconds.
let bookGoalSeconds = 60.0
let bookMessages = 50_000
let bookPhotos = 500

/// `bubbles book`'s work on 50,000 synthetic messages over about five months, 500 of them with a
/// photo (50 generated 1,600 × 1,200 pictures, each used ten times: big enough for a block
/// across the text, downscaled to 300 dpi), A5 with 3 mm bleed, chapters by month.
func bookCase() throws -> Figures {
    let dir = try scratchFolder()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var photos: [String] = []
    for k in 0..<50 {
        let (w, h) = (1600, 1200)
        var bytes = [UInt8](repeating: 255, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                bytes[i] = UInt8((x * 255 / w + k * 5) & 0xFF); bytes[i + 1] = UInt8((y * 255 / h) & 0xFF); bytes[i + 2] = UInt8((k * 37) & 0xFF)
            }
        }
        let path = dir + "/photo-\(k).png"
        try ImageSurface(rgba: RGBAImage(width: w, height: h, bytes: bytes)).writePNG(to: path)
        photos.append(path)
    }
    var conversation = SyntheticConversation.make(count: bookMessages, seed: 2026)
    // About five months: the synthetic messages are minutes apart; spread them over 150 days.
    let start = conversation.messages.first?.date.timeIntervalSince1970 ?? 1_700_000_000
    for i in conversation.messages.indices {
        conversation.messages[i].date = Date(timeIntervalSince1970: start + Double(i) * 150 * 86_400 / Double(bookMessages))
        if i % (bookMessages / bookPhotos) == 7 {
            conversation.messages[i].images = [ImageAttachment(path: photos[(i / 100) % photos.count], width: 0, height: 0)]
        }
    }
    let (theme, folder) = try ThemeLibrary.load("imessage")
    let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: dir)
    var options = BookOptions()
    options.trim = .a5
    options.bleed = BookGeometry.mm(3)
    let path = dir + "/book.pdf"
    var report: BookReport?
    let cpuBefore = cpuSeconds(RUSAGE_SELF)
    let started = now()
    report = try renderer.renderBook(conversation, to: path, options: options, timeZone: utc)
    let seconds = now() - started
    let cpu = cpuSeconds(RUSAGE_SELF) - cpuBefore
    let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    return Figures(
        name: "book-50k", messages: bookMessages,
        microsPerMessage: ["book": seconds * 1e6 / Double(bookMessages), "book cpu": cpu * 1e6 / Double(bookMessages)],
        peakMemoryMB: peakMemoryMB(),
        notes: [
            "pages": String(report?.pages ?? 0), "chapters": String(report?.chapters.count ?? 0),
            "seconds": String(format: "%.1f", seconds), "MB": String(format: "%.0f", Double(bytes) / 1e6)
        ])
}

func printBook(_ results: [String: Figures]) {
    guard let f = results["book-50k"] else { return }
    let seconds = Double(f.notes["seconds"] ?? "") ?? .nan
    print("")
    print("Book (release build, \(ProcessInfo.processInfo.activeProcessorCount) cores; ratio = goal of \(Int(bookGoalSeconds)) s ÷ ours)")
    print(
        pad("case", 12) + lpad("messages", 10) + lpad("photos", 8) + lpad("pages", 8) + lpad("chapters", 10) + lpad("seconds", 9)
            + lpad("ratio", 8) + lpad("cpu s", 8) + lpad("peak MB", 9) + lpad("PDF MB", 8))
    print(
        pad(f.name, 12) + lpad(String(f.messages), 10) + lpad(String(bookPhotos), 8) + lpad(f.notes["pages"] ?? "?", 8)
            + lpad(f.notes["chapters"] ?? "?", 10) + lpad(f.notes["seconds"] ?? "?", 9) + lpad(String(format: "%.2f×", bookGoalSeconds / seconds), 8)
            + lpad(String(format: "%.1f", (f.microsPerMessage["book cpu"] ?? 0) * Double(f.messages) / 1e6), 8)
            + lpad(String(format: "%.0f", f.peakMemoryMB), 9) + lpad(f.notes["MB"] ?? "?", 8))
}
