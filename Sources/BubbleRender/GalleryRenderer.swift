import BubbleCore
import BubbleStats
import Foundation

extension ConversationRenderer {
    /// A contact sheet of `conversation`'s media (`ContactSheet`): A4 pages of thumbnails by
    /// month, newest first, in `format` (PDF, PNG pages, SVG). Returns the files written and how
    /// many items they show; nothing is left behind on failure.
    @discardableResult
    package func renderGallery(
        _ conversation: Conversation, to path: String, format: OutputFormat, dark: Bool = false,
        timeZone: TimeZone, locale: Locale = Locale(identifier: "en_US"), scale: Double = 2
    ) throws -> (files: [String], items: Int) {
        AtomicFile.sweepStale(beside: path)
        let (resolved, report) = resolveMedia(conversation)
        mediaReport = report
        let entries = ContactSheet.entries(of: resolved)
        let sheet = ContactSheet(theme: theme, engine: engine, dark: dark, timeZone: timeZone, locale: locale)
        let pages = try sheet.pages(title: conversation.title ?? "Gallery", entries: entries)
        // Cells are an inch or two wide: photos need no more than 200 dpi of them.
        let dpi = photos.printDPI
        photos.printDPI = 200
        defer { photos.printDPI = dpi }
        let files = try write(
            pages, to: path, format: format, dark: dark, scale: scale, title: conversation.title,
            numberedPages: format == .png && pages.count > 1)
        return (files, entries.count)
    }
}
