import BubbleCore
import Foundation

/// `ConversationStats` drawn as one page of charts — messages per month (bars), who writes
/// (shares), weekday × hour (a heatmap), the key numbers, reply times, emoji and words — as a
/// `ScenePage` any backend paints (Cairo for PNG/PDF, the SVG writer for the page). Month and
/// weekday names in `locale`; light or dark.
package struct StatsChart {
    package struct Palette: Sendable {
        package var background, ink, muted, grid, bar, cell: Color
        package var people: [Color]
        package static let light = Palette(
            background: Color(r8: 255, g8: 255, b8: 255), ink: Color(r8: 28, g8: 28, b8: 30), muted: Color(r8: 110, g8: 110, b8: 115),
            grid: Color(r8: 229, g8: 229, b8: 234), bar: Color(r8: 0, g8: 122, b8: 255), cell: Color(r8: 0, g8: 122, b8: 255),
            people: [
                Color(r8: 0, g8: 122, b8: 255), Color(r8: 52, g8: 199, b8: 89), Color(r8: 255, g8: 149, b8: 0),
                Color(r8: 175, g8: 82, b8: 222), Color(r8: 255, g8: 59, b8: 48), Color(r8: 90, g8: 200, b8: 250),
                Color(r8: 255, g8: 204, b8: 0), Color(r8: 142, g8: 142, b8: 147)
            ])
        package static let dark = Palette(
            background: Color(r8: 0, g8: 0, b8: 0), ink: Color(r8: 242, g8: 242, b8: 247), muted: Color(r8: 152, g8: 152, b8: 159),
            grid: Color(r8: 58, g8: 58, b8: 60), bar: Color(r8: 10, g8: 132, b8: 255), cell: Color(r8: 10, g8: 132, b8: 255),
            people: [
                Color(r8: 10, g8: 132, b8: 255), Color(r8: 48, g8: 209, b8: 88), Color(r8: 255, g8: 159, b8: 10),
                Color(r8: 191, g8: 90, b8: 242), Color(r8: 255, g8: 69, b8: 58), Color(r8: 100, g8: 210, b8: 255),
                Color(r8: 255, g8: 214, b8: 10), Color(r8: 152, g8: 152, b8: 159)
            ])
    }

    package let measurer: BubbleMeasurer
    package let family: String
    package let palette: Palette
    package let locale: Locale
    /// Page width in points.
    package var width: Double = 720

    package init(theme: Theme, engine: any TextEngine, dark: Bool, locale: Locale) {
        measurer = BubbleMeasurer(style: theme.layoutStyle, engine: engine)
        family = theme.font.family
        palette = dark ? .dark : .light
        self.locale = locale
    }

    func style(_ size: Double, bold: Bool = false) -> TextStyle {
        TextStyle(family: family, size: size, weight: bold ? .bold : .regular)
    }

    /// `string` with its box's top-left at `x`, `y`, aligned in `width` (0 left, 0.5 centre,
    /// 1 right); the item and its height.
    func text(
        _ string: String, _ style: TextStyle, _ color: Color, x: Double, y: Double, width: Double,
        align: Double = 0
    ) throws(LayoutError) -> (SceneItem, Double) {
        try measurer.placedText(string, style, color, x: x, y: y, width: width, align: align)
    }

    /// The charts of `stats` on one page.
    package func page(_ stats: ConversationStats) throws(LayoutError) -> ScenePage {
        var c = Canvas(margin: 32, inner: width - 64, locale: locale)
        // Title and the span.
        c.y += try c.put(text(stats.title ?? "Conversation", style(22, bold: true), palette.ink, x: c.margin, y: c.y, width: c.inner)) + 4
        var span = "\(c.n(stats.messages)) messages"
        if let first = stats.firstDate, let last = stats.lastDate {
            span += " · \(dayLabel(String(first.prefix(10)))) – \(dayLabel(String(last.prefix(10))))"
        }
        c.y += try c.put(text(span, style(12), palette.muted, x: c.margin, y: c.y, width: c.inner))
        try heading("Messages per month", &c)
        try monthBars(stats, &c)
        try heading("Who writes", &c)
        try shares(stats, &c)
        try heading("When (\(stats.timeZone))", &c)
        try weekHours(stats, &c)
        try heading("At a glance", &c)
        for f in facts(stats, c) { c.y += try c.put(text(f, style(12), palette.ink, x: c.margin, y: c.y, width: c.inner)) + 4 }
        if !stats.topWords.isEmpty {
            try heading("Words", &c)
            try topWords(stats, &c)
        }
        let size = Size(width: width, height: ceil(c.y + c.margin))
        return ScenePage(size: size, items: [.fill(Rect(origin: .zero, size: size), palette.background)] + c.items, number: 1)
    }

    /// What a page is being drawn into: its items so far, where the next goes, and numbers in the locale.
    private struct Canvas {
        let margin: Double
        /// The width inside the margins.
        let inner: Double
        var items: [SceneItem] = []
        var y: Double
        let number = NumberFormatter()

        init(margin: Double, inner: Double, locale: Locale) {
            self.margin = margin
            self.inner = inner
            y = margin
            number.numberStyle = .decimal
            number.locale = locale
        }

        /// Keeps a placed item; its height.
        @discardableResult
        mutating func put(_ made: (SceneItem, Double)) -> Double {
            items.append(made.0)
            return made.1
        }

        func n(_ v: Int) -> String { number.string(from: NSNumber(value: v)) ?? String(v) }
    }

    private func heading(_ string: String, _ c: inout Canvas) throws(LayoutError) {
        c.y += 18
        c.y += try c.put(text(string, style(15, bold: true), palette.ink, x: c.margin, y: c.y, width: c.inner)) + 10
    }

    /// Messages per month: bars, a few gridlines, month labels where they fit.
    private func monthBars(_ stats: ConversationStats, _ c: inout Canvas) throws(LayoutError) {
        let chartHeight = 150.0, axis = 40.0
        let plot = Rect(x: c.margin + axis, y: c.y, width: c.inner - axis, height: chartHeight)
        let peak = max(1, stats.months.map(\.messages).max() ?? 1)
        let step = Self.niceStep(Double(peak) / 4)
        let top = ceil(Double(peak) / step) * step
        var tick = 0.0
        while tick <= top {
            let ty = plot.maxY - plot.height * tick / top
            c.items.append(.fill(Rect(x: plot.minX, y: ty - 0.25, width: plot.width, height: 0.5), palette.grid))
            c.put(try text(c.n(Int(tick)), style(9), palette.muted, x: c.margin, y: ty - 6, width: axis - 6, align: 1))
            tick += step
        }
        if !stats.months.isEmpty {
            let slot = plot.width / Double(stats.months.count)
            let barWidth = max(0.5, slot * 0.75)
            let labelEvery = max(1, Int(ceil(34 / slot)))
            for (k, month) in stats.months.enumerated() {
                let h = plot.height * Double(month.messages) / top
                c.items.append(.fill(Rect(x: plot.minX + Double(k) * slot + (slot - barWidth) / 2, y: plot.maxY - h, width: barWidth, height: h), palette.bar))
                if k % labelEvery == 0 {
                    c.put(
                        try text(
                            monthLabel(month.month, withYear: k == 0 || month.month.hasSuffix("-01")), style(9), palette.muted,
                            x: plot.minX + Double(k) * slot - 30 + slot / 2, y: plot.maxY + 4, width: 60, align: 0.5))
                }
            }
        }
        c.y = plot.maxY + 20
    }

    /// Who writes: a share bar per person.
    private func shares(_ stats: ConversationStats, _ c: inout Canvas) throws(LayoutError) {
        let shown = Array(stats.people.prefix(8))
        let nameWidth = 150.0, countWidth = 110.0
        for (k, person) in shown.enumerated() {
            let share = stats.messages > 0 ? Double(person.messages) / Double(stats.messages) : 0
            let rowHeight = try c.put(text(person.name, style(12), palette.ink, x: c.margin, y: c.y, width: nameWidth - 8))
            let barMax = c.inner - nameWidth - countWidth
            c.items.append(
                .fill(Rect(x: c.margin + nameWidth, y: c.y + 2, width: max(1, barMax * share), height: 12), palette.people[k % palette.people.count]))
            let percent = share.formatted(.percent.precision(.fractionLength(0)).locale(locale))
            c.put(
                try text(
                    "\(c.n(person.messages)) · \(percent)", style(11), palette.muted, x: width - c.margin - countWidth, y: c.y, width: countWidth, align: 1))
            c.y += max(rowHeight, 16) + 4
        }
    }

    /// Weekday × hour: a heatmap.
    private func weekHours(_ stats: ConversationStats, _ c: inout Canvas) throws(LayoutError) {
        let labelWidth = 44.0
        let cellWidth = (c.inner - labelWidth) / 24, cellHeight = 16.0
        let busiest = max(1, stats.hours.flatMap { $0 }.max() ?? 1)
        let weekdays = Self.weekdayNames(locale)
        for (row, counts) in stats.hours.enumerated() {
            c.put(try text(weekdays[row], style(10), palette.muted, x: c.margin, y: c.y + Double(row) * cellHeight + 2, width: labelWidth - 4))
            for (hour, count) in counts.enumerated() {
                var shade = palette.cell
                shade.alpha = count == 0 ? 0.06 : 0.15 + 0.85 * Double(count) / Double(busiest)
                c.items.append(
                    .fill(
                        Rect(
                            x: c.margin + labelWidth + Double(hour) * cellWidth + 1, y: c.y + Double(row) * cellHeight + 1,
                            width: cellWidth - 2, height: cellHeight - 2), shade))
            }
        }
        for hour in stride(from: 0, to: 24, by: 3) {
            c.put(
                try text(
                    String(hour), style(9), palette.muted, x: c.margin + labelWidth + Double(hour) * cellWidth, y: c.y + 7 * cellHeight + 3,
                    width: cellWidth, align: 0.5))
        }
        c.y += 7 * cellHeight + 20
    }

    /// The numbers: streak, active days, the busiest day, reply times, media, emoji.
    private func facts(_ stats: ConversationStats, _ c: Canvas) -> [String] {
        var facts: [String] = []
        if stats.longestStreakDays > 0, let from = stats.longestStreak.from, let to = stats.longestStreak.to {
            facts.append("Longest streak: \(c.n(stats.longestStreakDays)) \(Plural.noun(stats.longestStreakDays, "day")) (\(dayLabel(from)) – \(dayLabel(to)))")
        }
        facts.append("Days with messages: \(c.n(stats.activeDays))")
        if let day = stats.busiestDays.first { facts.append("Busiest day: \(dayLabel(day.date)) (\(c.n(day.messages)) messages)") }
        for p in stats.people.prefix(8) {
            if let average = p.averageReplySeconds {
                facts.append("\(p.name) answers in \(Self.duration(p.medianReplySeconds ?? average)) (median; \(c.n(p.replies)) replies)")
            }
        }
        let m = stats.media
        let mediaParts: [(Int, String)] = [
            (m.photos, "photos"), (m.videos, "videos"), (m.gifs, "GIFs"), (m.stickers, "stickers"),
            (m.voice, "voice notes"), (m.audio, "audio"), (m.documents, "documents"),
            (m.locations, "locations"), (m.links, "links"), (m.deleted, "deleted")
        ]
        let mediaLine = mediaParts.filter { $0.0 > 0 }.map { "\(c.n($0.0)) \($0.1)" }.joined(separator: " · ")
        if !mediaLine.isEmpty { facts.append("Media: " + mediaLine) }
        if !stats.topEmoji.isEmpty {
            facts.append("Top emoji: " + stats.topEmoji.prefix(10).map { "\($0.value) \(c.n($0.count))" }.joined(separator: "  "))
        }
        return facts
    }

    /// Words per person.
    private func topWords(_ stats: ConversationStats, _ c: inout Canvas) throws(LayoutError) {
        for p in stats.topWords.prefix(8) {
            c.y += try c.put(text(p.name, style(12, bold: true), palette.ink, x: c.margin, y: c.y, width: c.inner)) + 2
            let words = p.words.prefix(12).map { "\($0.value) \(c.n($0.count))" }.joined(separator: " · ")
            c.y += try c.put(text(words, style(11), palette.muted, x: c.margin, y: c.y, width: c.inner)) + 8
        }
    }

    /// 1, 2 or 5 × a power of ten, at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw > 1 else { return 1 }
        let power = pow(10, floor(log10(raw)))
        for f in [1.0, 2, 5, 10] where f * power >= raw { return f * power }
        return 10 * power
    }

    /// Monday first, short, in `locale`.
    static func weekdayNames(_ locale: Locale) -> [String] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.locale = locale
        let names = calendar.shortWeekdaySymbols  // Sunday first
        return Array(names[1...]) + [names[0]]
    }

    /// "Mar" or "Mar 2026" for "2026-03", in the locale.
    func monthLabel(_ month: String, withYear: Bool) -> String {
        let parts = month.split(separator: "-")
        guard parts.count == 2, let y = Int(parts[0]), let m = Int(parts[1]) else { return month }
        var calendar = Calendar(identifier: .gregorian)
        calendar.locale = locale
        let name = calendar.shortMonthSymbols[(m - 1 + 12) % 12]
        return withYear ? "\(name) \(y)" : name
    }

    /// "12 Mar 2026" for "2026-03-12", in the locale.
    func dayLabel(_ day: String) -> String {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return day }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])) else { return day }
        return date.formatted(Date.FormatStyle(date: .abbreviated, time: .omitted, locale: locale, timeZone: calendar.timeZone))
    }

    /// "45 s", "12 min", "3 h 20 min".
    package static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        return s % 3600 / 60 == 0 ? "\(s / 3600) h" : "\(s / 3600) h \(s % 3600 / 60) min"
    }
}
