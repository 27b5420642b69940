import BubbleImport
import BubbleKit
import Foundation

// Reads a WhatsApp export (the .txt, or the .zip with its photos) and prints where every
// bubble goes: the layout engine's frames, in points, with the seeds' numbers.
guard CommandLine.arguments.count == 3 else {
    print("usage: BubbleFrames EXPORT OWNER   (OWNER: whose messages are outgoing)")
    exit(2)
}
let utc = TimeZone(identifier: "UTC")!
let chat = try Importer.load(path: CommandLine.arguments[1],
                             options: ImportOptions(me: CommandLine.arguments[2], timeZone: utc))

// Seed 001: 16-point text, padding (top 4, left 22, bottom 7, right 16) on the tail side's
// mirror; seed 002: a bubble takes at most 65 % of the row; a 320-point row.
PinnedFonts.use()
let style = LayoutStyle(
    text: TextStyle(size: 16),
    incomingPadding: EdgeInsets(top: 4, left: 22, bottom: 7, right: 16),
    outgoingPadding: EdgeInsets(top: 4, left: 16, bottom: 7, right: 22),
    maxWidthShare: 0.65)
let layouter = ConversationLayouter(style: style, engine: PangoTextEngine(), timeZone: utc)
let layout = try layouter.layout(chat.conversation, width: 320)

func pt(_ value: Double) -> String { String(format: "%.1f", value) }
print("\(chat.conversation.title ?? "?"): \(layout.rows.count) rows, \(pt(layout.height)) points tall;"
      + " a bubble at most \(pt(style.maxWidthShare * 320)) wide (65 % of 320)")
for row in layout.rows {
    guard let index = row.messageIndex, let bubble = row.bubble else { continue }
    let message = chat.conversation.messages[index]
    let frame = bubble.bubble.offsetBy(dx: row.frame.minX, dy: row.frame.minY)
    let lines = bubble.text.lineCount
    let text = (message.text ?? "").replacingOccurrences(of: "\n", with: "⏎")
    print("\(message.direction) x \(pt(frame.minX)) y \(pt(frame.minY)) w \(pt(frame.width)) h \(pt(frame.height)),"
          + " \(lines) line\(lines == 1 ? "" : "s"): \(text)")
}

// Seed 001's bubble art: 42 × 30 pixels cut by UIKit's legacy rule (left cap 24, top cap 13),
// stretched to a 220 × 60 bubble: nine patches, the corners drawn as they are and the one-pixel
// middle stretched.
let insets = try EdgeInsets.legacy(leftCapWidth: 24, topCapHeight: 13, width: 42, height: 30)
let art = try NineSliceArt(pixelWidth: 42, pixelHeight: 30, capInsets: insets)
print("seed 001's art, insets \(insets):")
for patch in try art.patches(for: Size(width: 220, height: 60)) {
    print("  \(patch)")
}
