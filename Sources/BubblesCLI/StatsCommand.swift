import ArgumentParser
import BubbleCore
import BubbleHTML
import BubbleRender
import BubbleStats
import BubbleText
import Foundation

/// `bubbles stats INPUT|--conversation ID [--json] [-o stats.svg|png|pdf|html]`.
struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Statistics of a conversation: who writes, when, how fast people answer, emoji, words, media — as text, JSON or charts.",
        discussion: """
            Months, days and the weekday × hour table are counted in --tz (default: the conversation's \
            zone as imported, else this machine's). A reply is a message answering someone else's \
            within 24 hours; reply times are per person (mean and median). Top words leave out \
            stop words of the message's language, numbers, links and one-letter words; Chinese, \
            Japanese and Korean count as two-character words. The JSON's field names (messages, \
            people, months, hours, firstDate, lastDate, longestStreakDays…) are stable.
            Examples:
              bubbles stats "WhatsApp Chat with Ann.zip" --me Ben
              bubbles stats --conversation 4 --json > stats.json
              bubbles stats chat.json -o stats.png --dark --locale de_DE --tz Europe/Berlin
            """
    )

    @OptionGroup var source: InputOptions
    @Flag(help: "Print the statistics as JSON.") var json = false
    @Option(name: .shortAndLong, help: "Write the charts: .svg, .png, .pdf or .html (an .json file gets the JSON).") var output: String?
    @Flag(help: "Charts in dark colours.") var dark = false
    @Option(help: "A bundled theme (see `bubbles themes`) or a theme .json file: the charts' font.") var theme: String?
    @Option(help: "Locale of month and weekday names and numbers in the charts (e.g. en_GB, de_DE).") var locale: String?

    func run() async throws {
        enum Target { case json, chart(OutputFormat), html }
        var target: Target?
        if let output {
            try source.refuseUnsafeOutput(output)
            switch PathText.fileExtension(output).lowercased() {
            case "json": target = .json
            case "html", "htm": target = .html
            case let ext:
                guard let format = OutputFormat(rawValue: ext) else {
                    throw ValidationError("-o \(output): expected a name ending in .svg, .png, .pdf, .html or .json")
                }
                target = .chart(format)
            }
        }
        let locale = try BubblesCLI.locale(locale) ?? Locale(identifier: "en_US")
        let loaded = try await source.loadAny()
        defer { loaded.close() }
        loaded.reportWarnings()
        try loaded.refuseEmptyRange(source)
        let stats = ConversationStats(loaded.conversation, timeZone: loaded.timeZone)

        if json && output == nil {
            FileHandle.standardOutput.write(try stats.json() + Data("\n".utf8))
            return
        }
        guard let output, let target else {
            FileHandle.standardOutput.write(Data(Self.summary(stats).utf8))
            return
        }
        if case .json = target {
            try reporting {
                try AtomicFile.write(to: output) { (tmp: String) throws(RenderError) in
                    guard let data = try? stats.json(), FileManager.default.createFile(atPath: tmp, contents: data) else {
                        throw .unwritable(path: output, reason: "cannot create the file")
                    }
                }
            }
            return
        }
        let (themeValue, themeFolder) = try reporting { try ThemeLibrary.load(theme ?? loaded.result.theme ?? "imessage") }
        let renderer = ConversationRenderer(theme: themeValue, themeFolder: themeFolder, photosFolder: loaded.folder)
        let page = try reporting { try StatsChart(theme: themeValue, engine: renderer.engine, dark: dark, locale: locale).page(stats) }
        switch target {
        case .chart(let format):
            try reporting { try renderer.write([page], to: output, format: format, dark: dark, title: stats.title) }
        case .html:
            let svg = try reporting {
                try SVGWriter(theme: themeValue.appearance(dark: dark), themeFolder: themeFolder, photos: renderer.photos).document([page])
            }
            let html = Self.html(stats, svg: svg, dark: dark)
            try reporting {
                try AtomicFile.write(to: output) { (tmp: String) throws(RenderError) in
                    guard FileManager.default.createFile(atPath: tmp, contents: Data(html.utf8)) else {
                        throw .unwritable(path: output, reason: "cannot create the file")
                    }
                }
            }
        case .json:
            break
        }
        if json { FileHandle.standardOutput.write(try stats.json() + Data("\n".utf8)) }
    }

    /// A few lines for a terminal.
    static func summary(_ s: ConversationStats) -> String {
        var lines = [
            "\(s.title ?? "Conversation"): \(s.messages) messages"
                + (s.firstDate.map { " from \($0.prefix(10))" } ?? "") + (s.lastDate.map { " to \($0.prefix(10))" } ?? "")
        ]
        for p in s.people {
            let share = s.messages > 0 ? 100 * Double(p.messages) / Double(s.messages) : 0
            var line = "  \(p.name): \(p.messages) (\(String(format: "%.1f", share)) %)"
            if let median = p.medianReplySeconds { line += ", answers in \(StatsChart.duration(median)) (median)" }
            lines.append(line)
        }
        if let day = s.busiestDays.first { lines.append("busiest day: \(day.date) (\(day.messages))") }
        lines.append("longest streak: \(Plural.count(s.longestStreakDays, "day"))" + (s.longestStreak.from.map { " from \($0)" } ?? ""))
        if !s.topEmoji.isEmpty { lines.append("top emoji: " + s.topEmoji.prefix(10).map { "\($0.value) \($0.count)" }.joined(separator: "  ")) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The charts (SVG inline) and the numbers behind them as tables; nothing from the
    /// conversation is put in unescaped.
    static func html(_ s: ConversationStats, svg: String, dark: Bool) -> String {
        func e(_ t: String) -> String { HTMLEscape.text(t) }
        var out = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(e(s.title ?? "Conversation")) · statistics</title>
            <style>
            body{margin:0;padding:16px;font:14px system-ui,sans-serif;background:\(dark ? "#000" : "#fff");color:\(dark ? "#f2f2f7" : "#1c1c1e")}
            .chart svg{max-width:100%;height:auto}
            table{border-collapse:collapse;margin:12px 0}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid \(dark ? "#3a3a3c" : "#e5e5ea")}
            td.n{text-align:right;font-variant-numeric:tabular-nums}
            </style></head><body>
            <div class="chart">\(svg.hasPrefix("<?xml") ? String(svg.drop(while: { $0 != "\n" })) : svg)</div>
            <h2>People</h2><table><tr><th>Name</th><th>Messages</th><th>Words</th><th>Media</th><th>Median reply</th></tr>

            """
        for p in s.people {
            out +=
                "<tr><td>\(e(p.name))</td><td class=\"n\">\(p.messages)</td><td class=\"n\">\(p.words)</td><td class=\"n\">\(p.media)</td>"
                + "<td class=\"n\">\(p.medianReplySeconds.map { StatsChart.duration($0) } ?? "")</td></tr>\n"
        }
        out += "</table>\n<h2>Months</h2><table><tr><th>Month</th><th>Messages</th></tr>\n"
        for m in s.months { out += "<tr><td>\(e(m.month))</td><td class=\"n\">\(m.messages)</td></tr>\n" }
        out += "</table>\n<h2>Busiest days</h2><table><tr><th>Day</th><th>Messages</th></tr>\n"
        for d in s.busiestDays { out += "<tr><td>\(e(d.date))</td><td class=\"n\">\(d.messages)</td></tr>\n" }
        out += "</table>\n</body></html>\n"
        return out
    }
}
