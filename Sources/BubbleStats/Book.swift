import BubbleCore
import Foundation

/// A book's trim size: the cut page.
package enum TrimSize: String, CaseIterable, Sendable {
    case a5, a4, letter
    case sixByNine = "6x9"
    case square8 = "8x8"

    /// Width and height in points.
    package var size: Size {
        switch self {
        case .a5: Size(width: BookGeometry.mm(148), height: BookGeometry.mm(210))
        case .a4: Size(width: BookGeometry.mm(210), height: BookGeometry.mm(297))
        case .letter: Size(width: 612, height: 792)
        case .sixByNine: Size(width: 432, height: 648)
        case .square8: Size(width: 576, height: 576)
        }
    }
}

/// How a book is cut into chapters.
package enum ChapterMode: String, CaseIterable, Sendable {
    case month, year, none
}

/// What `bubbles book` makes: sizes in points.
package struct BookOptions: Sendable {
    package var trim: TrimSize = .a5
    /// Printed beyond the trim on every side (0: none); the MediaBox is the trim plus twice this.
    package var bleed = 0.0
    /// Added to the inner margin (the binding side: left on odd pages, right on even ones).
    package var gutter = BookGeometry.mm(6)
    /// Outer, top and bottom margins of the text block.
    package var outerMargin = BookGeometry.mm(14)
    package var topMargin = BookGeometry.mm(17)
    package var bottomMargin = BookGeometry.mm(19)
    package var innerMargin = BookGeometry.mm(12)
    package var chapters: ChapterMode = .month
    /// A big photo gets a page of its own instead of a block across the text.
    package var photoPages = false
    /// A picture filling the cover, bleed included.
    package var coverPhoto: String?
    package var title: String?
    /// The conversation is laid out at the text block's width ÷ this and printed at this scale:
    /// a theme's screen sizes (16 pt) become book sizes (about 10 pt).
    package var scale = 0.62
    /// Photos are printed at up to this resolution (downscaled above, never upscaled)…
    package var printDPI = 300.0
    /// …and named in the report below this one at their printed size.
    package var lowDPI = 150.0

    package init() {}
}

/// Page geometry of a book: the sheet (trim + bleed), the trim box, each page's text block.
package struct BookGeometry: Sendable {
    package let options: BookOptions

    package static func mm(_ v: Double) -> Double { v / 25.4 * 72 }

    package var trim: Size { options.trim.size }
    /// The MediaBox: the trim and the bleed around it.
    package var sheet: Size { Size(width: trim.width + 2 * options.bleed, height: trim.height + 2 * options.bleed) }
    package var trimBox: Rect { Rect(x: options.bleed, y: options.bleed, width: trim.width, height: trim.height) }
    package var blockWidth: Double { trim.width - options.outerMargin - options.innerMargin - options.gutter }
    package var blockHeight: Double { trim.height - options.topMargin - options.bottomMargin }

    /// The text block of page `number` (1-based, in sheet coordinates): odd pages (right-hand)
    /// have the binding on the left, even pages on the right.
    package func block(page number: Int) -> Rect {
        let inner = options.innerMargin + options.gutter
        let left = number % 2 == 1 ? inner : options.outerMargin
        return Rect(x: options.bleed + left, y: options.bleed + options.topMargin, width: blockWidth, height: blockHeight)
    }

    /// Whether page `number` is a right-hand page.
    package static func isRecto(_ number: Int) -> Bool { number % 2 == 1 }
}

/// A chapter: its title, its messages (a conversation of their own: day separators start
/// afresh) and the page its heading is on.
package struct BookChapter: Sendable {
    package var title: String
    package var conversation: Conversation
    package var firstPage = 0
}

/// What a page of a book is.
package enum BookPageKind: Sendable {
    case cover
    case blank
    case titlePage
    /// Table-of-contents entries `range` (chapter indices).
    case contents(Range<Int>)
    /// Part of chapter `chapter`'s flow; `opener`: its first page, with the heading.
    case flow(chapter: Int, opener: Bool, placements: [BookPlacement], band: Double, continues: Bool)
    /// A photo on a page of its own (`photoPages`).
    case photo(chapter: Int, BookPhoto)
}

/// A photo printed across the text block (or on a page of its own).
package struct BookPhoto: Hashable, Sendable {
    package var path: String
    /// Pixels, as displayed (EXIF orientation applied).
    package var pixelWidth: Double
    package var pixelHeight: Double
    /// Under the photo; empty when the line in the message's place says it (a photo alone).
    package var caption: String
    /// The file's name as the export names it (not where it was unpacked to).
    package var name: String
}

/// One thing on a flow page, in the chapter's layout units: a row of its layout, or a photo.
package struct BookPlacement: Sendable {
    package enum Block: Sendable {
        case row(Int)
        case photo(BookPhoto)
    }
    package var block: Block
    /// Top, in layout units from the band's top (negative for a row continued from the page before).
    package var y: Double
    package var height: Double
}

/// A photo whose print resolution at its printed size is below `BookOptions.lowDPI`.
package struct LowResolutionPhoto: Hashable, Sendable {
    /// The file's name as the export names it.
    package var path: String
    package var dpi: Double
    package var page: Int
}

/// The book decided: every page, the chapters, each chapter's layout.
package struct BookPlan: Sendable {
    package let geometry: BookGeometry
    package let title: String
    package let subtitle: String
    package let dates: String
    package let messageCount: Int
    package var chapters: [BookChapter]
    package let layouts: [ConversationLayout]
    package var pages: [BookPageKind]
    /// Photos printed below `lowDPI`.
    package var lowResolution: [LowResolutionPhoto] = []
    package var pageCount: Int { pages.count }
}

/// Lays out a conversation as a book (`BookPlan`) and fills its pages (`page(_:of:)`), using the
/// same rows as every other output (`SceneBuilder`).
package struct BookBuilder {
    package let scene: SceneBuilder
    package let style: LayoutStyle
    package let engine: any TextEngine
    package let options: BookOptions
    package let geometry: BookGeometry
    let dateTexts: DateTexts
    let timeZone: TimeZone
    /// The words printed besides the conversation, in the book's language.
    let strings: BookStrings

    package init(theme: Theme, engine: any TextEngine, options: BookOptions, timeZone: TimeZone, locale: Locale? = nil) {
        let light = theme.appearance(dark: false)
        self.scene = SceneBuilder(theme: light, engine: engine, timeZone: timeZone, locale: locale)
        self.style = light.layoutStyle
        self.engine = engine
        self.options = options
        self.geometry = BookGeometry(options: options)
        self.dateTexts = DateTexts(timeZone: timeZone, locale: locale)
        self.timeZone = timeZone
        strings = BookStrings.of(dateTexts.locale)
    }

    var theme: Theme { scene.theme }
    /// The layout's width: the text block's, in layout units.
    package var layoutWidth: Double { geometry.blockWidth / options.scale }
    var capacity: Double { geometry.blockHeight / options.scale }
    /// The chapter heading's share of its first page (layout units).
    var openerHeight: Double { geometry.blockHeight * 0.3 / options.scale }
    static let photoGap = 14.0

    // MARK: Planning

    /// The chapters of `conversation` (`messages` in date order).
    package func chapters(of conversation: Conversation) -> [BookChapter] {
        guard options.chapters != .none else {
            return [BookChapter(title: options.title ?? conversation.title ?? "Conversation", conversation: conversation)]
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var out: [BookChapter] = []
        var key: (Int, Int)?
        for m in conversation.messages {
            let c = calendar.dateComponents([.year, .month], from: m.date)
            let k = (c.year ?? 0, options.chapters == .month ? (c.month ?? 0) : 0)
            if key == nil || key! != k {
                key = k
                let title = options.chapters == .year ? String(k.0) : dateTexts.month(number: dateTexts.localDay(m.date))
                var part = conversation
                part.messages = []
                part.typing = []
                out.append(BookChapter(title: title, conversation: part))
            }
            out[out.count - 1].conversation.messages.append(m)
        }
        return out
    }

    /// Whether a photo of `pixels` width gets a block of its own: printed at `printDPI` it would
    /// be wider than a bubble may be.
    func isBig(_ image: ImageAttachment) -> Bool {
        guard image.path != nil, !image.sticker, image.width > 0, image.height > 0 else { return false }
        let printable = image.width * 72 / options.printDPI
        return printable >= style.maxBubbleWidth(rowWidth: layoutWidth) * options.scale
    }

    /// Lays out every chapter and decides every page.
    package func plan(for conversation: Conversation) throws(LayoutError) -> BookPlan {
        var chapters = self.chapters(of: conversation)
        // Big photos leave their bubbles for blocks of their own, after their message.
        var bigPhotos: [[Int: [BookPhoto]]] = []
        var layouts: [ConversationLayout] = []
        let layouter = ConversationLayouter(style: style, engine: engine, timeZone: timeZone, locale: dateTexts.locale)
        for k in chapters.indices {
            var photos: [Int: [BookPhoto]] = [:]
            var kept: [Message] = []
            for var m in chapters[k].conversation.messages {
                let big = m.images.filter(isBig)
                if !big.isEmpty {
                    let who = m.sender.flatMap { id in chapters[k].conversation.participants.first { $0.id == id }?.name } ?? m.sender
                    let caption = [who, dateTexts.dayAndTime(m.date)].compactMap { $0 }.joined(separator: " · ")
                    m.images.removeAll(where: isBig)
                    let alone = m.images.isEmpty && m.text == nil && m.attachment == nil
                    // Only the photo: a system line with the caption stands in its place (its day's
                    // date comes before it), the block follows it without a second caption.
                    let photosHere = big.map {
                        BookPhoto(
                            path: $0.path!, pixelWidth: $0.width, pixelHeight: $0.height, caption: alone ? "" : caption,
                            name: Self.exportName($0))
                    }
                    if alone { m = Message.system(caption, date: m.date) }
                    photos[kept.count] = photosHere
                }
                kept.append(m)
            }
            chapters[k].conversation.messages = kept
            bigPhotos.append(photos)
            layouts.append(try layouter.layout(chapters[k].conversation, width: layoutWidth))
        }

        let title = options.title ?? conversation.title ?? conversation.participants.map(\.name).joined(separator: ", ")
        let names = conversation.participants.map(\.name).joined(separator: ", ")
        var dates = ""
        if let first = conversation.messages.first?.date, let last = conversation.messages.last?.date {
            let a = dateTexts.shortDay(first), b = dateTexts.shortDay(last)
            dates = a == b ? a : "\(a) – \(b)"
        }
        // Front matter: cover, its back, title page, its back, contents (from page 5, odd).
        var pages: [BookPageKind] = [.cover, .blank, .titlePage, .blank]
        if options.chapters != .none {
            let perPage = max(1, Int((capacity * options.scale - 60) / 22))
            var start = 0
            while start < chapters.count {
                pages.append(.contents(start..<min(chapters.count, start + perPage)))
                start += perPage
            }
        }
        var lowResolution: [LowResolutionPhoto] = []
        for k in chapters.indices {
            if pages.count % 2 == 1 { pages.append(.blank) }  // chapters open on a right-hand page
            chapters[k].firstPage = pages.count + 1
            let flow = paginate(layouts[k], photos: bigPhotos[k], chapter: k, opener: options.chapters != .none)
            for page in flow {
                if case let .photo(_, photo) = page {
                    let printed = geometry.blockWidth
                    lowResolution += low(
                        photo, printedWidth: min(printed, geometry.blockHeight * photo.pixelWidth / photo.pixelHeight),
                        page: pages.count + 1)
                } else if case let .flow(_, _, placements, _, _) = page {
                    for p in placements {
                        switch p.block {
                        case .photo(let photo):
                            lowResolution += low(
                                photo, printedWidth: p.height * options.scale * photo.pixelWidth / photo.pixelHeight,
                                page: pages.count + 1)
                        case .row(let r):
                            if case let .message(index, bubble) = layouts[k].rows[r].content {
                                let images = chapters[k].conversation.messages[index].images
                                for (image, frame) in zip(images, bubble.imageFrames) where image.path != nil && image.width > 0 {
                                    lowResolution += low(
                                        BookPhoto(
                                            path: image.path!, pixelWidth: image.width, pixelHeight: image.height, caption: "",
                                            name: Self.exportName(image)),
                                        printedWidth: frame.width * options.scale, page: pages.count + 1)
                                }
                            }
                        }
                    }
                }
                pages.append(page)
            }
        }
        // Messages as `bubbles stats` counts them: system lines are not messages.
        return BookPlan(
            geometry: geometry, title: title.isEmpty ? strings.untitled : title, subtitle: names, dates: dates,
            messageCount: conversation.messages.filter { $0.kind != .system }.count, chapters: chapters, layouts: layouts, pages: pages,
            lowResolution: lowResolution)
    }

    private func low(_ photo: BookPhoto, printedWidth: Double, page: Int) -> [LowResolutionPhoto] {
        guard printedWidth > 0 else { return [] }
        let dpi = photo.pixelWidth / (printedWidth / 72)
        return dpi < options.lowDPI ? [LowResolutionPhoto(path: photo.name, dpi: dpi, page: page)] : []
    }

    /// A picture's name as its export names it (`IMG-20250524-WA0003.jpg`), not the folder it
    /// was unpacked to.
    static func exportName(_ image: ImageAttachment) -> String {
        image.name ?? ((image.path ?? "") as NSString).lastPathComponent
    }

    /// A chapter's rows and photo blocks onto pages: nothing cut across a page but a bubble
    /// taller than a page (cut between its lines), a day's date never alone at a page's foot.
    func paginate(_ layout: ConversationLayout, photos: [Int: [BookPhoto]], chapter: Int, opener: Bool) -> [BookPageKind] {
        typealias Item = BookPlacement.Block
        // `keep`: the item stays on the page of the one after it — a day's date with its first
        // message, a message with the photo block that follows it (not on photo pages).
        var items: [(Item, gap: Double, keep: Bool)] = []
        var lastBottom: Double?
        for (r, row) in layout.rows.enumerated() {
            let list = row.messageIndex.flatMap { photos[$0] } ?? []
            var keep = false
            if case .daySeparator = row.content { keep = true }
            if !list.isEmpty && !options.photoPages { keep = true }
            items.append((.row(r), lastBottom.map { max(0, row.frame.minY - $0) } ?? 0, keep))
            lastBottom = row.frame.maxY
            for p in list { items.append((.photo(p), Self.photoGap, false)) }
        }
        func height(_ item: Item) -> Double {
            switch item {
            case .row(let r): return layout.rows[r].frame.height
            case .photo(let p):
                return min(layoutWidth * p.pixelHeight / max(p.pixelWidth, 1) + (p.caption.isEmpty ? 4 : 22), capacity)
            }
        }
        /// What must fit below `i` on its page for item `i` to go there: the items it keeps with
        /// (the last of them as far as its first lines, when it is taller than a page and is cut).
        func chain(after i: Int) -> Double {
            var total = 0.0
            var j = i
            while items[j].keep, j + 1 < items.count {
                j += 1
                let h = height(items[j].0)
                total += items[j].gap + (h > capacity ? min(h, 40) : h)
            }
            return total
        }
        var pages: [BookPageKind] = []
        var placements: [BookPlacement] = []
        var first = true
        var y = 0.0
        var cap = opener ? capacity - openerHeight : capacity
        func close(band: Double? = nil, continues: Bool = false) {
            pages.append(.flow(chapter: chapter, opener: opener && first, placements: placements, band: band ?? cap, continues: continues))
            placements = []
            first = false
            y = 0
            cap = capacity
        }
        var i = 0
        while i < items.count {
            let (item, gapBefore, _) = items[i]
            let gap = placements.isEmpty ? 0 : gapBefore
            let h = height(item)
            if case .photo(let p) = item, options.photoPages {
                // (A chapter that opens with the photo keeps its opener page, the heading alone.)
                if !placements.isEmpty || (first && opener) { close() }
                pages.append(.photo(chapter: chapter, p))
                first = false
                i += 1
                continue
            }
            var fits = y + gap + h <= cap + 1e-9
            // A day's date keeps its first message with it, a message its photo block: never the
            // last thing on a page (unless what it keeps with could not fit any page with it).
            let kept = chain(after: i)
            if fits, kept > 0, h + kept <= capacity + 1e-9 {
                fits = y + gap + h + kept <= cap + 1e-9
            }
            if fits {
                placements.append(BookPlacement(block: item, y: y + gap, height: h))
                y += gap + h
                i += 1
                continue
            }
            if !placements.isEmpty || (cap < capacity && h + (kept <= capacity - h ? kept : 0) <= capacity + 1e-9) {
                // The next page (a chapter's opener has less room: what fits a page goes on).
                close()
                continue
            }
            // Alone on a page and still too tall: a bubble cut between its lines, page after page.
            guard case .row(let r) = item else {
                placements.append(BookPlacement(block: item, y: 0, height: min(h, cap)))
                y = min(h, cap)
                i += 1
                continue
            }
            let row = layout.rows[r]
            var lineTops: [Double] = []
            if case let .message(_, bubble) = row.content, let text = bubble.textFrame {
                lineTops = bubble.text.lines.map { text.minY + $0.top }
            }
            var offset = 0.0
            while h - offset > cap + 1e-9 {
                let limit = offset + cap
                let cut = lineTops.last(where: { $0 > offset + 1e-9 && $0 <= limit + 1e-9 }) ?? limit
                placements.append(BookPlacement(block: .row(r), y: -offset, height: h))
                close(band: cut - offset, continues: true)
                offset = cut
            }
            placements.append(BookPlacement(block: .row(r), y: -offset, height: h))
            y = h - offset
            i += 1
        }
        if !placements.isEmpty || pages.isEmpty { close() }
        return pages
    }
}

// MARK: Filling pages

extension BookBuilder {
    static let ink = Color(red: 0.12, green: 0.12, blue: 0.13)
    static let grey = Color(red: 0.42, green: 0.42, blue: 0.45)
    static let white = Color(red: 1, green: 1, blue: 1)
    static let coverColor = Color(red: 0.11, green: 0.21, blue: 0.36)

    func style(_ size: Double, bold: Bool = false, italic: Bool = false) -> TextStyle {
        var s = TextStyle(family: theme.font.family, size: size, weight: bold ? .bold : .regular)
        s.italic = italic
        return s
    }

    /// A text in `width`, its box's top-left at `x`, `y`, aligned in `width` (0 left, 0.5 centre, 1 right).
    func text(
        _ string: String, _ style: TextStyle, _ color: Color, x: Double, y: Double, width: Double,
        align: Double = 0
    ) throws(LayoutError) -> (SceneItem, Double) {
        try scene.measurer.placedText(string, style, color, x: x, y: y, width: width, align: align)
    }

    /// Page `index` (0-based) of `plan`, filled. Reads only: pages may be made on several threads.
    package func page(_ index: Int, of plan: BookPlan) throws(LayoutError) -> ScenePage {
        let number = index + 1
        let sheet = geometry.sheet
        let trim = geometry.trimBox
        let block = geometry.block(page: number)
        let recto = BookGeometry.isRecto(number)
        var items: [SceneItem] = []
        func add(_ made: (SceneItem, Double)) -> Double { items.append(made.0); return made.1 }
        func folio(_ runningHead: String?) throws(LayoutError) {
            // The page number at the foot's outer corner, the running head at the top's outer side.
            let numberY = block.maxY + geometry.options.bottomMargin * 0.45
            _ = try add(text(String(number), style(9), Self.ink, x: block.minX, y: numberY, width: block.width, align: recto ? 1 : 0))
            if let runningHead {
                _ = try add(
                    text(
                        runningHead, style(8.5, italic: true), Self.grey, x: block.minX, y: block.minY - geometry.options.topMargin * 0.5,
                        width: block.width, align: recto ? 1 : 0))
            }
        }
        switch plan.pages[index] {
        case .blank:
            break
        case .cover:
            items.append(.fill(Rect(origin: .zero, size: sheet), Self.coverColor))
            if let photo = options.coverPhoto {
                // Fills the sheet, bleed included (cropped to its aspect).
                items.append(.photo(path: photo, Rect(origin: .zero, size: sheet), cornerRadius: 0))
            }
            let width = trim.width - 2 * geometry.options.outerMargin
            let x = trim.minX + geometry.options.outerMargin
            var lines: [(String, TextStyle)] = [(plan.title, style(28, bold: true))]
            if !plan.subtitle.isEmpty, plan.subtitle != plan.title { lines.append((plan.subtitle, style(13))) }
            if !plan.dates.isEmpty { lines.append((plan.dates, style(12))) }
            var measured: [(TextLayout, Double, String, TextStyle)] = []
            var total = 0.0
            for (string, s) in lines {
                let (t, w) = try scene.measurer.measure(string, style: s, maxWidth: width)
                measured.append((t, w, string, s))
                total += t.height + 8
            }
            let top = trim.minY + trim.height * 0.62
            items.append(.fill(Rect(x: 0, y: top - 18, width: sheet.width, height: total + 28), Color(red: 0, green: 0, blue: 0, alpha: 0.45)))
            var y = top
            for (t, w, string, s) in measured {
                items.append(
                    .text(
                        SceneText(
                            string: string, style: s, color: Self.white, origin: Point(x: x + (width - t.width) / 2, y: y),
                            wrapWidth: w, boxWidth: t.width, layout: t, maxLines: nil)))
                y += t.height + 8
            }
        case .titlePage:
            var y = block.minY + block.height * 0.28
            y += try add(text(plan.title, style(22, bold: true), Self.ink, x: block.minX, y: y, width: block.width, align: 0.5)) + 14
            if !plan.subtitle.isEmpty, plan.subtitle != plan.title {
                y += try add(text(plan.subtitle, style(12), Self.ink, x: block.minX, y: y, width: block.width, align: 0.5)) + 8
            }
            if !plan.dates.isEmpty { y += try add(text(plan.dates, style(11), Self.grey, x: block.minX, y: y, width: block.width, align: 0.5)) + 6 }
            _ = try add(text(strings.messages(plan.messageCount), style(10), Self.grey, x: block.minX, y: y, width: block.width, align: 0.5))
            _ = try add(text(strings.madeWith, style(8, italic: true), Self.grey, x: block.minX, y: block.maxY - 12, width: block.width, align: 0.5))
        case .contents(let range):
            var y = block.minY
            if range.lowerBound == 0 { y += try add(text(strings.contents, style(18, bold: true), Self.ink, x: block.minX, y: y, width: block.width)) + 24 }
            for k in range {
                let chapter = plan.chapters[k]
                let (numberItem, _) = try text(String(chapter.firstPage), style(10.5), Self.ink, x: block.minX, y: y, width: block.width, align: 1)
                items.append(numberItem)
                y += try add(text(chapter.title, style(10.5), Self.ink, x: block.minX, y: y, width: block.width - 40)) + 11
            }
            try folio(nil)
        case let .flow(chapter, opener, placements, band, continues):
            let c = plan.chapters[chapter]
            var top = block.minY
            if opener {
                _ = try add(
                    text(
                        c.title, style(24, bold: true), Self.ink, x: block.minX, y: block.minY + openerHeight * options.scale * 0.35,
                        width: block.width))
                top += openerHeight * options.scale
            }
            var content: [SceneItem] = []
            for p in placements {
                switch p.block {
                case .row(let r):
                    content += scene.items(for: plan.layouts[chapter].rows[r], at: Point(x: 0, y: p.y), conversation: c.conversation)
                case .photo(let photo):
                    content += try photoBlock(photo, y: p.y, height: p.height)
                }
            }
            items.append(
                .scaled(
                    origin: Point(x: block.minX, y: top), factor: options.scale,
                    [.clipped(Rect(x: -2, y: 0, width: layoutWidth + 4, height: band), content)]))
            if continues {
                _ = try add(
                    text(
                        strings.continued, style(8, italic: true), Self.grey, x: block.minX, y: top + band * options.scale + 2,
                        width: block.width, align: 0.5))
            }
            try folio(opener ? nil : c.title)
        case let .photo(chapter, photo):
            let aspect = photo.pixelWidth / max(photo.pixelHeight, 1)
            let h = min(block.height - 24, block.width / aspect)
            let w = h * aspect
            items.append(.photo(path: photo.path, Rect(x: block.minX + (block.width - w) / 2, y: block.minY, width: w, height: h), cornerRadius: 0))
            if !photo.caption.isEmpty {
                _ = try add(text(photo.caption, style(8.5, italic: true), Self.grey, x: block.minX, y: block.minY + h + 6, width: block.width, align: 0.5))
            }
            try folio(plan.chapters[chapter].title)
        }
        return ScenePage(size: sheet, items: items, number: number)
    }

    /// A photo across the text block (layout units), its caption below (none when the line in
    /// the message's place above it says it).
    func photoBlock(_ photo: BookPhoto, y: Double, height: Double) throws(LayoutError) -> [SceneItem] {
        let aspect = photo.pixelWidth / max(photo.pixelHeight, 1)
        let h = max(1, height - (photo.caption.isEmpty ? 4 : 22))
        let w = min(layoutWidth, h * aspect)
        let image = SceneItem.photo(path: photo.path, Rect(x: (layoutWidth - w) / 2, y: y, width: w, height: h), cornerRadius: 0)
        guard !photo.caption.isEmpty else { return [image] }
        let caption = try text(photo.caption, style.systemText, theme.labels.system, x: 0, y: y + h + 4, width: layoutWidth, align: 0.5)
        return [image, caption.0]
    }
}

/// The words a book prints besides the conversation, in the book's language (`--locale`):
/// English, and German; other languages get English until they are added here.
package struct BookStrings: Sendable {
    package var contents: String
    package var continued: String
    package var madeWith: String
    package var untitled: String
    var message: String
    var messagesWord: String
    var grouping: Locale

    /// The strings of `locale`'s language.
    package static func of(_ locale: Locale?) -> BookStrings {
        switch locale?.language.languageCode?.identifier {
        case "de":
            return BookStrings(
                contents: "Inhalt", continued: "Fortsetzung folgt", madeWith: "Erstellt mit BubbleKit", untitled: "Unterhaltung",
                message: "Nachricht", messagesWord: "Nachrichten", grouping: Locale(identifier: "de_DE"))
        default:
            return BookStrings(
                contents: "Contents", continued: "continued", madeWith: "Made with BubbleKit", untitled: "Conversation",
                message: "message", messagesWord: "messages", grouping: Locale(identifier: "en_US"))
        }
    }

    /// "1 message", "1,234 messages" ("1.234 Nachrichten").
    package func messages(_ n: Int) -> String {
        "\(n.formatted(.number.grouping(.automatic).locale(grouping))) \(n == 1 ? message : messagesWord)"
    }
}
