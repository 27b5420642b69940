import BubbleCore
import BubbleMedia
import BubbleStats
import BubbleText
import CCairo
import Foundation

/// What `renderBook` made.
package struct BookReport: Sendable {
    package var pages: Int
    /// Each chapter's title and the page its heading is on.
    package var chapters: [(title: String, page: Int)]
    /// Photos printed below `BookOptions.lowDPI` at their printed size.
    package var lowResolution: [LowResolutionPhoto]
    /// Pictures and files that could not be read (drawn as placeholders).
    package var media: MediaReport
}

extension ConversationRenderer {
    /// A print-ready book of `conversation` (`BookBuilder`): trim and bleed boxes on every page,
    /// mirrored margins with a gutter, cover, title page, contents, chapters opening on
    /// right-hand pages, running heads and page numbers on the outer side; photos printed at
    /// no more than `printDPI`. Painted in parts on every core and joined (`PDFMerger`, which
    /// also writes the TrimBox and BleedBox Cairo cannot). Nothing is left at `path` on failure.
    @discardableResult
    package func renderBook(
        _ conversation: Conversation, to path: String, options: BookOptions, timeZone: TimeZone,
        locale: Locale? = nil
    ) throws -> BookReport {
        AtomicFile.sweepStaleParts()
        AtomicFile.sweepStale(beside: path)
        guard PDFMerger.understandsCairoOutput else {
            throw RenderError.unwritable(
                path: path,
                reason: "books need the Cairo 1.16 PDF output this build's merger reads "
                    + "(to write each page's TrimBox and BleedBox); this Cairo is \(String(cString: cairo_version_string()))")
        }
        let (resolved, report) = resolveMedia(conversation)
        let measuring = measuringEngine()
        let builder = BookBuilder(theme: theme, engine: measuring, options: options, timeZone: timeZone, locale: locale)
        let plan = try builder.plan(for: resolved)
        let g = plan.geometry
        func n(_ v: Double) -> String { String(format: "%.3f", v) }
        let boxes =
            "/TrimBox [\(n(g.trimBox.minX)) \(n(g.trimBox.minY)) \(n(g.trimBox.maxX)) \(n(g.trimBox.maxY))] "
            + "/BleedBox [0 0 \(n(g.sheet.width)) \(n(g.sheet.height))]"
        let parts = engine.supportsConcurrentDrawing ? max(1, min(UsableCores.count, plan.pageCount / 4)) : 1
        try renderPDF(
            pageCount: plan.pageCount, page: { index throws in try builder.page(index, of: plan) }, to: path,
            title: plan.title, theme: builder.scene.theme, parts: parts, pageBoxes: boxes, printDPI: options.printDPI)
        return BookReport(
            pages: plan.pageCount, chapters: plan.chapters.map { ($0.title, $0.firstPage) },
            lowResolution: plan.lowResolution, media: report)
    }
}
