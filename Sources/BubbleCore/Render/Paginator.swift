/// A page's share of a laid-out conversation: the band `top ..< top + height` (conversation
/// coordinates) and the rows that show in it.
package struct PageSlice: Hashable, Sendable {
    package var top: Double
    package var height: Double
    package var rows: Range<Int>
}

/// Cuts a conversation into pages without cutting a row: a row that does not fit in what is
/// left of a page starts the next page. Only a row taller than a whole page is split, and then
/// between its text lines (or anywhere, for a photo taller than a page).
package enum Paginator {
    /// `pageHeight`: the content height of every page; `firstPageHeight`: of the first page,
    /// when a header takes room there. Throws nothing; a non-positive height gives one page.
    package static func paginate(
        _ layout: ConversationLayout, pageHeight: Double,
        firstPageHeight: Double? = nil
    ) -> [PageSlice] {
        let rows = layout.rows
        guard !rows.isEmpty, pageHeight > 0, pageHeight.isFinite else {
            return [PageSlice(top: 0, height: max(layout.height, 1), rows: 0..<rows.count)]
        }
        var pages: [PageSlice] = []
        var top = 0.0
        var first = 0
        var capacity = min(firstPageHeight ?? pageHeight, pageHeight)
        func close(rowsUpTo end: Int) {
            pages.append(PageSlice(top: top, height: capacity, rows: first..<end))
            capacity = pageHeight
        }
        var i = 0
        while i < rows.count {
            let row = rows[i].frame
            if row.maxY - top <= capacity + 1e-9 { i += 1; continue }
            if i > first || (row.height <= pageHeight + 1e-9 && row.minY > top) {
                // The row starts the next page (an oversized one too, so it is cut as late as possible).
                close(rowsUpTo: i)
                top = row.minY; first = i
                continue
            }
            // Alone on its page and still too tall: cut between lines, as late as the page allows.
            let limit = top + capacity
            var cut = limit
            if let bubble = rows[i].bubble, let text = bubble.textFrame {
                let lineTops = bubble.text.lines.map { row.minY + text.minY + $0.top }
                if let best = lineTops.last(where: { $0 > top + 1e-9 && $0 <= limit + 1e-9 }) { cut = best }
            }
            close(rowsUpTo: i + 1)
            top = cut
            first = i
            if row.maxY - top <= capacity + 1e-9 { i += 1 }
        }
        pages.append(PageSlice(top: top, height: capacity, rows: first..<rows.count))
        return pages
    }
}
