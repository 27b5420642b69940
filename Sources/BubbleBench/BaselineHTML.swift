import BubbleCore
import Foundation

/// The HTML page Chromium prints in the benchmark: the same messages as bubbles in plain CSS
/// (rounded rectangles, 75 % max width, sides by direction, day separators, photos).
enum BaselineHTML {
    static func page(_ conversation: Conversation) -> String {
        var html = """
            <!doctype html><html><head><meta charset="utf-8"><style>
            body { font: 16px 'Liberation Sans', 'DejaVu Sans', 'Noto Sans CJK JP', 'Noto Color Emoji', sans-serif; width: 523px; margin: 36px auto; }
            .row { display: flex; margin: 10px 10px; break-inside: avoid; }
            .out { justify-content: flex-end; }
            .b { max-width: 75%; padding: 7px 12px 8px; border-radius: 17px; background: #e9e9eb; white-space: pre-wrap; overflow-wrap: break-word; }
            .out .b { background: #0b84fe; color: #fff; }
            .day, .sys { text-align: center; color: #8e8e93; font-size: 12px; margin: 10px; }
            .day { font-weight: bold; }
            img { display: block; max-width: 100%; max-height: 240px; border-radius: 14px; }
            </style></head><body>

            """
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEEE, d MMMM yyyy"
        var lastDay = ""
        for m in conversation.messages {
            let day = f.string(from: m.date)
            if day != lastDay { html += "<div class=\"day\">\(day)</div>\n"; lastDay = day }
            if m.kind == .system { html += "<div class=\"sys\">\(escape(m.text ?? ""))</div>\n"; continue }
            html += "<div class=\"row\(m.direction == .outgoing ? " out" : "")\"><div class=\"b\">"
            if let path = m.image?.path { html += "<img src=\"file://\(escape(path))\">" }
            if let t = m.text { html += escape(t) }
            html += "</div></div>\n"
        }
        return html + "</body></html>\n"
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
