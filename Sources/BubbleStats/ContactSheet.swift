import BubbleCore
import Foundation

/// A static contact sheet of a conversation's media (`bubbles render --gallery`): pages of
/// cells grouped by month, newest first as the gallery shows them — photos, stickers and video
/// posters as pictures (a video's length on it), voice notes, audio and documents as cards with
/// their name, length or pages — each with its day and sender under it.
package struct ContactSheet {
    package struct Entry: Sendable {
        package var item: MediaItem
        package var date: Date
        package var sender: String?
    }

    package let measurer: BubbleMeasurer
    package let family: String
    package let palette: StatsChart.Palette
    package let timeZone: TimeZone
    package let locale: Locale
    /// Page size in points (A4 by default).
    package var pageSize = Size(width: 595, height: 842)
    package var margin = 36.0
    package var cell = 96.0

    package init(theme: Theme, engine: any TextEngine, dark: Bool, timeZone: TimeZone, locale: Locale) {
        measurer = BubbleMeasurer(style: theme.layoutStyle, engine: engine)
        family = theme.font.family
        palette = dark ? .dark : .light
        self.timeZone = timeZone
        self.locale = locale
    }

    /// The media of `conversation`, newest first.
    package static func entries(of conversation: Conversation) -> [Entry] {
        let names = Dictionary(conversation.participants.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        var out: [Entry] = []
        for m in conversation.messages {
            for item in MediaItem.items(of: m) { out.append(Entry(item: item, date: m.date, sender: m.sender.map { names[$0] ?? $0 })) }
        }
        return out.enumerated().sorted { $0.element.date != $1.element.date ? $0.element.date > $1.element.date : $0.offset > $1.offset }.map(\.element)
    }

    func text(
        _ string: String, _ size: Double, _ color: Color, x: Double, y: Double, width: Double, bold: Bool = false,
        align: Double = 0
    ) throws(LayoutError) -> (SceneItem, Double) {
        try measurer.placedText(
            string, TextStyle(family: family, size: size, weight: bold ? .bold : .regular), color,
            x: x, y: y, width: width, align: align, maxLines: 1)
    }

    /// The pages: a title on the first, a heading per month, rows of cells; a month's heading is
    /// never the last thing on a page.
    package func pages(title: String, entries: [Entry]) throws(LayoutError) -> [ScenePage] {
        let inner = pageSize.width - 2 * margin
        let gap = 8.0, captionHeight = 13.0
        let cols = max(1, Int((inner + gap) / (cell + gap)))
        let rowHeight = cell + captionHeight + gap
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let monthFormat = Date.FormatStyle(date: .omitted, time: .omitted, locale: locale, calendar: calendar, timeZone: timeZone).month(.wide).year()
        let dayFormat = Date.FormatStyle(date: .omitted, time: .omitted, locale: locale, calendar: calendar, timeZone: timeZone).day().month(.abbreviated)
        var pages: [ScenePage] = []
        var items: [SceneItem] = []
        var y = margin
        func newPage() {
            pages.append(ScenePage(size: pageSize, items: [.fill(Rect(origin: .zero, size: pageSize), palette.background)] + items, number: pages.count + 1))
            items = []
            y = margin
        }
        let (heading, h) = try text(title, 18, palette.ink, x: margin, y: y, width: inner, bold: true)
        items.append(heading); y += h + 2
        let (count, ch) = try text(
            "\(Plural.count(entries.count, "photo, video or file", "photos, videos and files"))", 10, palette.muted, x: margin, y: y, width: inner)
        items.append(count); y += ch + 6
        var k = 0
        while k < entries.count {
            let month = calendar.dateComponents([.year, .month], from: entries[k].date)
            var end = k
            while end < entries.count, calendar.dateComponents([.year, .month], from: entries[end].date) == month { end += 1 }
            // The heading and at least one row together.
            if y + 26 + rowHeight > pageSize.height - margin { newPage() }
            y += 10
            let (label, lh) = try text(entries[k].date.formatted(monthFormat), 13, palette.ink, x: margin, y: y, width: inner, bold: true)
            items.append(label); y += lh + 6
            for rowStart in stride(from: k, to: end, by: cols) {
                if y + rowHeight > pageSize.height - margin { newPage() }
                for (c, entry) in entries[rowStart..<min(rowStart + cols, end)].enumerated() {
                    let x = margin + Double(c) * (cell + gap)
                    try draw(entry, in: Rect(x: x, y: y, width: cell, height: cell), into: &items)
                    let caption = entry.date.formatted(dayFormat) + (entry.sender.map { " · " + $0 } ?? "")
                    items.append(try text(caption, 7, palette.muted, x: x, y: y + cell + 2, width: cell).0)
                }
                y += rowHeight
            }
            k = end
        }
        newPage()
        return pages
    }

    func draw(_ entry: Entry, in rect: Rect, into items: inout [SceneItem]) throws(LayoutError) {
        let item = entry.item
        if let picture = item.picture {
            items.append(.photo(path: picture, rect, cornerRadius: 4))
        } else {
            items.append(.path(BubbleShape.roundedRect(rect, radius: 4), fill: palette.grid, stroke: nil, lineWidth: 0))
            items.append(try text(item.kind.symbol, 24, palette.ink, x: rect.minX, y: rect.minY + 18, width: rect.width, align: 0.5).0)
            if let name = item.name {
                items.append(try text(name, 8, palette.ink, x: rect.minX + 4, y: rect.minY + 56, width: rect.width - 8, align: 0.5).0)
            }
        }
        var badge: String?
        if let d = item.duration, d > 0 { badge = MediaItem.duration(d) }
        if let p = item.pages { badge = Plural.count(p, "page") }
        if let badge {
            let (t, _) = try measurer.measure(badge, style: TextStyle(family: family, size: 7), maxWidth: rect.width)
            let box = Rect(x: rect.maxX - t.width - 8, y: rect.maxY - 14, width: t.width + 6, height: 11)
            items.append(.path(BubbleShape.roundedRect(box, radius: 5), fill: Color(red: 0, green: 0, blue: 0, alpha: 0.6), stroke: nil, lineWidth: 0))
            items.append(try text(badge, 7, Color(red: 1, green: 1, blue: 1), x: box.minX + 3, y: box.minY + 1, width: t.width + 1).0)
        }
    }
}
