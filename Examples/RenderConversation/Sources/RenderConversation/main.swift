import BubbleHTML
import BubbleKit
import Foundation

// A conversation built in code: two people, four messages a minute apart.
let me = Participant(id: "me", name: "Me")
let ann = Participant(id: "ann", name: "Ann")
let lines: [(Participant, String)] = [
    (ann, "Here's a little bubble"),
    (me, "Bubbles stretch to fit their text, and wrap when it is longer than the row allows."),
    (ann, "Bubbles respect\nnewlines"),
    (me, "👍"),
]
let start = Date(timeIntervalSince1970: 1_700_000_000)
var conversation = Conversation(title: "Ann", participants: [me, ann])
for (i, (who, text)) in lines.enumerated() {
    conversation.messages.append(Message(
        sender: who.id, direction: who.id == me.id ? .outgoing : .incoming,
        date: start.addingTimeInterval(Double(i) * 60), text: text))
}

// Draw it in the bundled iMessage theme with the pinned fonts: PNG (375 points wide at 2x),
// PDF and SVG, into the folder named on the command line.
PinnedFonts.use()
let folder = CommandLine.arguments.dropFirst().first ?? "."
let (theme, themeFolder) = try ThemeLibrary.load("imessage")
let renderer = ConversationRenderer(theme: theme, themeFolder: themeFolder, photosFolder: ".")
for format in [OutputFormat.png, .pdf, .svg] {
    var options = RenderOptions(format: format)
    options.timeZone = TimeZone(identifier: "UTC")!
    let files = try renderer.render(conversation, to: "\(folder)/conversation.\(format.rawValue)", options: options)
    print("wrote \(files.joined(separator: ", "))")
}

// The same theme as one self-contained HTML page (BubbleKitHTML).
var html = HTMLOptions()
html.timeZone = TimeZone(identifier: "UTC")!
let exporter = HTMLExporter(theme: theme, themeFolder: themeFolder, photosFolder: ".", options: html, pictures: PhotoDecoder())
print("wrote \(try exporter.export(conversation, to: "\(folder)/conversation.html").joined(separator: ", "))")
