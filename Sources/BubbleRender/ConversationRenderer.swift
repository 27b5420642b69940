import BubbleCore
import BubbleMedia
import BubbleText
import Foundation

/// Output formats of the Cairo renderer (and the SVG writer).
public enum OutputFormat: String, Sendable, CaseIterable {
    /// `png`: pixels at `RenderOptions.scale`; `pdf`: vector pages with selectable text; `svg`:
    /// vector pages with the text as text.
    case png, pdf, svg

    /// From a file name's extension; nil when it names none of these.
    public init?(path: String) {
        self.init(rawValue: PathText.fileExtension(path).lowercased())
    }
}

/// How to render a conversation.
public struct RenderOptions: Sendable {
    /// The file format written: PNG, PDF or SVG.
    public var format: OutputFormat
    /// Width of the conversation in points (PNG and SVG: the image width; PDF: the paper decides).
    public var width: Double = 375
    /// Device pixels per point for PNG (1, 2 or 3).
    public var scale: Double = 2
    /// PNG only: cut into numbered page images of this height (points); nil for one tall image.
    public var pageHeight: Double?
    /// PDF paper size.
    public var paper: Size = PageSetup.a4
    /// Draws the theme's dark palette (when it has one) instead of its light one.
    public var dark = false
    /// Right-to-left interface: incoming on the right, outgoing on the left, art mirrored.
    public var mirrored = false
    /// The zone day separators and message times are shown in.
    public var timeZone: TimeZone = .current
    /// Locale of day and time texts; nil: the fixed English defaults (`DateTexts`).
    public var locale: Locale?
    /// Day separators of this day and the one before say "Today", "Yesterday"; nil: dates only.
    public var now: Date?
    /// PDF only: the pages are painted in this many parts at once, each on a thread of its own
    /// into a PDF of its own, then joined into one file (`PDFMerger`). nil: one part per core
    /// when there are at least 8 pages, the text engine can draw from several threads
    /// (`supportsConcurrentDrawing`) and Cairo writes PDFs the merger knows; 1: one part.
    /// A number > 1 is honoured (up to the page count) when the engine and Cairo allow it.
    public var pdfParts: Int?
    /// A picture or file that cannot be read is an error instead of a placeholder.
    public var strictMedia = false
    /// Spoilers drawn as plain text instead of a hatched box (whose text is left out).
    public var revealSpoilers = false

    /// Options for `format` with the defaults: 375 points wide at 2x, one page per PNG.
    public init(format: OutputFormat) { self.format = format }
}

/// Lays out and paints a conversation into PNG, PDF or SVG files.
///
///     let (theme, folder) = try ThemeLibrary.load("imessage")
///     let renderer = ConversationRenderer(theme: theme, themeFolder: folder, photosFolder: ".")
///     let files = try renderer.render(conversation, to: "chat.pdf", options: RenderOptions(format: .pdf))
public final class ConversationRenderer {
    /// The theme every bubble is drawn in.
    public let theme: Theme
    /// The folder `theme` was loaded from (its bubble art is read from there).
    public let themeFolder: String
    /// Measures and draws the text (`TextEngineKind.standard` unless given).
    public let engine: any DrawingTextEngine
    package let photos: PhotoLoader
    /// Called with (pages done, pages in all) while rendering.
    public var progress: ((Int, Int) -> Void)?
    /// Which of the engine's copies of its Cairo fonts this renderer draws with: 0, the fonts
    /// themselves; 1…4, copies kept apart, so that renderers sharing one engine on several
    /// threads (`bubbles render --all`) do not wait for each other on Cairo's font locks. PDF
    /// parts painted in parallel use their own.
    package var fontCopy = 0

    /// A renderer that measures and draws with a new engine of `textEngine`'s kind.
    public convenience init(theme: Theme, themeFolder: String, photosFolder: String, textEngine: TextEngineKind) {
        self.init(theme: theme, themeFolder: themeFolder, photosFolder: photosFolder, engine: textEngine.makeDrawingEngine())
    }

    /// A renderer of `theme` (loaded from `themeFolder`) that finds relative photo paths in
    /// `photosFolder` and measures and draws text with `engine`.
    public init(
        theme: Theme, themeFolder: String, photosFolder: String,
        engine: any DrawingTextEngine = TextEngineKind.standard.makeDrawingEngine()
    ) {
        self.theme = theme
        self.themeFolder = themeFolder
        self.engine = engine
        self.photos = PhotoLoader(baseFolder: photosFolder)
    }

    /// What the last `render` found of its pictures and files (the problems it drew placeholders
    /// for, and how many it looked at).
    public internal(set) var mediaReport = MediaReport()
    /// Whether the last PNG render was cut into page images on its own (one image would have
    /// been taller than `maxPixels`).
    public private(set) var pagedAutomatically = false

    /// The conversation ready to draw (`MediaResolver`): photo sizes read from their files with
    /// their EXIF orientation, stickers and videos made pictures and frames; whatever cannot be
    /// read becomes a labelled placeholder and a problem in the report — never an error.
    public func resolveMedia(_ conversation: Conversation) -> (Conversation, MediaReport) {
        MediaResolver(decoder: PhotoDecoder(), baseFolder: photos.baseFolder, style: theme.layoutStyle).resolve(conversation)
    }

    /// `resolveMedia`, strict: the first picture or file that cannot be read is an error naming it.
    public func resolvePhotos(_ conversation: Conversation) throws(RenderError) -> Conversation {
        let (resolved, report) = resolveMedia(conversation)
        if let first = report.problems.first { throw .unreadableImage(path: first.file, reason: first.reason) }
        return resolved
    }

    /// The page geometry for `options`.
    public func pageSetup(_ options: RenderOptions) -> PageSetup {
        switch options.format {
        case .pdf: return .printed(options.paper)
        case .png: return PageSetup(width: options.width, height: options.pageHeight)
        case .svg: return PageSetup(width: options.width)
        }
    }

    /// The engine a render measures with. Chats repeat themselves: identical texts at the same
    /// width are measured once, through a `CachingTextEngine` — except with an engine that keeps
    /// its prepared texts itself (the fast one), where a second cache in front of it only costs.
    func measuringEngine() -> any TextEngine {
        (engine as? any FastPathTextEngine)?.preparedTextsAreCompact == true ? engine : CachingTextEngine(engine)
    }

    /// Lays out and paginates (no drawing).
    public func scene(for conversation: Conversation, options: RenderOptions) throws -> [ScenePage] {
        let (builder, plan) = try scenePlan(for: conversation, options: options)
        return try builder.pages(of: plan)
    }

    /// Lays out and decides the pages; `builder.page(_:of:)` fills each.
    func scenePlan(for conversation: Conversation, options: RenderOptions) throws -> (builder: SceneBuilder, plan: ScenePlan) {
        let theme = self.theme.appearance(dark: options.dark)
        let setup = pageSetup(options)
        let measuring = measuringEngine()
        var style = theme.layoutStyle
        style.mirrored = options.mirrored
        let layouter = ConversationLayouter(
            style: style, engine: measuring, timeZone: options.timeZone,
            locale: options.locale, now: options.now)
        let layout = try layouter.layout(conversation, width: setup.contentWidth)
        let builder = SceneBuilder(
            theme: theme, engine: measuring, timeZone: options.timeZone, locale: options.locale,
            revealSpoilers: options.revealSpoilers, measuresSpanAreas: options.format == .svg)
        return (builder, try builder.plan(for: conversation, layout: layout, setup: setup))
    }

    /// Renders into `path` (PNG pages: `name-001.png`, `name-002.png`, …). Returns the files
    /// written. Nothing is left behind on failure.
    @discardableResult
    public func render(_ conversation: Conversation, to path: String, options: RenderOptions) throws -> [String] {
        // Work files of renders killed before they could remove them: parts in the temporary
        // folder, an interrupted write beside this output.
        AtomicFile.sweepStaleParts()
        AtomicFile.sweepStale(beside: path)
        let (resolved, report) = resolveMedia(conversation)
        mediaReport = report
        if options.strictMedia, let first = report.problems.first {
            throw RenderError.unreadableImage(path: first.file, reason: first.reason + " (--strict)")
        }
        var options = options
        var (builder, plan) = try scenePlan(for: resolved, options: options)
        pagedAutomatically = false
        if options.format == .png, options.pageHeight == nil, plan.pageCount == 1,
            let only = try builder.pages(of: plan).first, (only.size.height * options.scale).rounded(.up) > Self.maxPixels
        {
            // Taller than one PNG can be: numbered page images, as `--pages` makes them.
            options.pageHeight = Self.defaultPageHeight
            (builder, plan) = try scenePlan(for: resolved, options: options)
            pagedAutomatically = true
        }
        if options.format == .pdf {
            let parts = pdfPartCount(pages: plan.pageCount, options: options)
            if parts > 1 {
                try renderPDF(
                    pageCount: plan.pageCount, page: { index throws in try builder.page(index, of: plan) }, to: path,
                    title: conversation.title, theme: theme.appearance(dark: options.dark), parts: parts)
                return [path]
            }
        }
        let pages = try builder.pages(of: plan)
        return try write(
            pages, to: path, format: options.format, dark: options.dark, scale: options.scale, title: conversation.title,
            numberedPages: options.pageHeight != nil)
    }

    /// Writes scene `pages` (laid out by a `SceneBuilder`, a `BookBuilder`, `StatsChart`…) in
    /// `format`: one PDF or SVG, or PNG files (`name-001.png`… when there are several pages or
    /// `numberedPages`). Returns the files written; nothing is left behind on failure.
    @discardableResult
    public func write(
        _ pages: [ScenePage], to path: String, format: OutputFormat, dark: Bool = false, scale: Double = 2,
        title: String? = nil, numberedPages: Bool = false
    ) throws -> [String] {
        let painter = ScenePainter(
            theme: theme.appearance(dark: dark), themeFolder: themeFolder,
            engine: engine, photos: photos)
        switch format {
        case .pdf:
            let doc = try PDFDocument(path: path, title: title)
            for page in pages {
                let canvas = try doc.beginPage(size: page.size)
                canvas.fontCopy = fontCopy
                try painter.paint(page, on: canvas)
                progress?(page.number, pages.count)
            }
            try doc.finish()
            return [path]
        case .png:
            // Checked before any page is written: a page past Cairo's limit fails the whole render.
            if let tall = pages.first(where: { ($0.size.height * scale).rounded(.up) > Self.maxPixels }) {
                let px = Int((tall.size.height * scale).rounded(.up)).formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
                throw RenderError.unwritable(
                    path: path,
                    reason: "a page is \(px) px tall at scale \(scale.formatted()), more than one PNG "
                        + "image can be (32,767 px); use a smaller --page-height or a lower --scale, or write PDF")
            }
            let paths =
                pages.count == 1 && !numberedPages
                ? [path]
                : pages.map { Self.pagePath(path, number: $0.number) }
            // Paint page n while page n − 1 is encoded on the other core.
            let writer = PageWriter()
            do {
                for (page, file) in zip(pages, paths) {
                    let surface = try rasterize(page, painter: painter, scale: scale)
                    try writer.enqueue(surface, to: file)
                    progress?(page.number, pages.count)
                }
                try writer.finish()
            } catch {
                try? writer.finish()
                for file in paths { try? FileManager.default.removeItem(atPath: file) }
                throw error
            }
            let written = paths
            return written
        case .svg:
            let svg = try SVGWriter(theme: theme.appearance(dark: dark), themeFolder: themeFolder, photos: photos)
                .document(pages)
            try AtomicFile.write(to: path) { (tmp: String) throws(RenderError) in
                guard FileManager.default.createFile(atPath: tmp, contents: Data(svg.utf8)) else {
                    throw .unwritable(path: path, reason: "cannot create the file")
                }
            }
            progress?(pages.count, pages.count)
            return [path]
        }
    }

    /// How many parts `render` paints a PDF of `pages` pages in (see `RenderOptions.pdfParts`).
    func pdfPartCount(pages: Int, options: RenderOptions) -> Int {
        guard engine.supportsConcurrentDrawing, PDFMerger.understandsCairoOutput else { return 1 }
        if let forced = options.pdfParts { return max(1, min(forced, pages)) }
        guard pages >= Self.minimumPagesToSplit else { return 1 }
        return max(1, min(UsableCores.count, pages / 4))
    }

    /// Fewer pages than this are painted on one thread (a thread and a merge cost more than
    /// they save).
    static let minimumPagesToSplit = 8

    /// Paints the pages of `plan` in `parts` contiguous runs, each on its own thread — which
    /// also fills its pages (`builder.page`) — into its own PDF file beside `path` (with its own
    /// painter and photo cache: only the text engine is shared), then joins them. The calling
    /// thread reports progress as pages are done, in increasing order. Every part file is
    /// removed whatever happens; a failure leaves no file at `path`.
    /// `page` fills page `index` (0-based); `pageBoxes` go into every page's dictionary; `printDPI`
    /// caps the photos' resolution at their printed size.
    func renderPDF(
        pageCount: Int, page: @escaping (Int) throws -> ScenePage, to path: String, title: String?, theme: Theme,
        parts: Int, pageBoxes: String? = nil, printDPI: Double? = nil
    ) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
            throw RenderError.unwritable(path: path, reason: "folder \(folder) does not exist")
        }
        let token = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // The output's folder must take a file before minutes of painting go into the parts.
        let probe = folder + "/." + url.lastPathComponent + ".tmp-" + token
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            throw RenderError.unwritable(path: path, reason: String(cString: strerror(errno)))
        }
        close(fd)
        unlink(probe)
        // Parts go to the system's temporary folder: a render killed before it removes them
        // strands nothing beside the output (and the temporary folder is cleared by the system).
        let partPaths = (0..<parts).map {
            (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-pdf-part\($0 + 1)-\(token).pdf")
        }
        defer { for part in partPaths { try? FileManager.default.removeItem(atPath: part) } }
        // Contiguous runs of nearly equal length.
        let chunks = (0..<parts).map { k in (pageCount * k / parts)..<(pageCount * (k + 1) / parts) }
        // The builder only reads, and its engine may be called from several threads (`pdfPartCount`).
        let job = PDFPartJob(
            pages: chunks, page: page, paths: partPaths, output: path, title: title, theme: theme,
            themeFolder: themeFolder, engine: engine, photosFolder: photos.baseFolder, printDPI: printDPI)
        for k in 0..<parts {
            let thread = Thread { job.paint(part: k) }
            thread.stackSize = 8 << 20
            thread.start()
        }
        var reported = 0
        while true {
            job.changed.wait()
            let (done, finished, failed) = job.state()
            if !failed, done > reported, let progress {
                progress(done, pageCount)
                reported = done
            }
            if finished == parts { break }
        }
        if let failure = job.failure() { throw failure }
        let count = try PDFMerger.merge(partPaths, into: path, pageBoxes: pageBoxes)
        guard count == pageCount else {
            try? FileManager.default.removeItem(atPath: path)
            throw RenderError.pdfMerge(path: path, reason: "the joined file has \(count) pages, expected \(pageCount)")
        }
    }

    /// One page as pixels.
    /// The tallest (and widest) image Cairo makes, in pixels.
    public static let maxPixels = 32_767.0
    /// PNG page height (points) when a conversation is cut into page images: `--pages`' default.
    public static let defaultPageHeight = 812.0

    package func rasterize(_ page: ScenePage, painter: ScenePainter, scale: Double) throws(RenderError) -> ImageSurface {
        let w = Int((page.size.width * scale).rounded(.up)), h = Int((page.size.height * scale).rounded(.up))
        guard h <= 32767 else {
            throw .invalidSize(width: w, height: h)
        }
        let surface = try ImageSurface(width: w, height: h)
        let canvas = try Canvas(surface: surface, scale: scale)
        canvas.fontCopy = fontCopy
        try painter.paint(page, on: canvas, outputScale: scale)
        return surface
    }

    /// `chat.png` → `chat-003.png`.
    public static func pagePath(_ path: String, number: Int) -> String {
        let ns = path as NSString
        let stem = ns.deletingPathExtension
        let ext = PathText.fileExtension(path)
        return stem + "-" + String(format: "%03d", number) + "." + (ext.isEmpty ? "png" : ext)
    }
}

/// Encodes PNG pages in the background while the caller paints the next ones. Encoding costs
/// several times painting, so up to `UsableCores.count` pages are encoded at
/// once (each in its own file); at most that many plus one pages are in memory. The first
/// failure is kept and thrown.
final class PageWriter: @unchecked Sendable {
    private let queue = DispatchQueue(label: "bubblekit.png-pages", attributes: .concurrent)
    private let group = DispatchGroup()
    private let slots = DispatchSemaphore(value: UsableCores.count)
    private let lock = NSLock()
    private var failure: RenderError?

    /// Hands `surface` over: the caller must not draw into it any more.
    func enqueue(_ surface: ImageSurface, to path: String) throws(RenderError) {
        if let failure = currentFailure() { throw failure }
        slots.wait()
        let box = SurfaceBox(surface)
        queue.async(group: group) { [self] in
            defer { slots.signal() }
            do throws(RenderError) { try box.surface.writePNG(to: path) } catch {
                lock.lock(); if failure == nil { failure = error }; lock.unlock()
            }
        }
    }

    /// Waits for the last page; throws the first failure.
    func finish() throws(RenderError) {
        group.wait()
        if let failure = currentFailure() { throw failure }
    }

    private func currentFailure() -> RenderError? {
        lock.lock(); defer { lock.unlock() }
        return failure
    }
}

/// The PDF parts being painted on their threads: what each thread needs (immutable), and the
/// progress and first failure they report (under `lock`; `changed` is signalled after each
/// page and when a thread ends).
private final class PDFPartJob: @unchecked Sendable {
    /// Each part's page indices, and what fills a page.
    let pages: [Range<Int>]
    let page: (Int) throws -> ScenePage
    let paths: [String]
    /// The file the parts become (named in errors instead of a part's temporary name).
    let output: String
    let title: String?
    let theme: Theme
    let themeFolder: String
    /// Shared by the threads: `supportsConcurrentDrawing` says it may be.
    let engine: any DrawingTextEngine
    let photosFolder: String
    let printDPI: Double?
    let changed = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var done = 0
    private var finished = 0
    private var firstFailure: (part: Int, error: any Error)?

    init(
        pages: [Range<Int>], page: @escaping (Int) throws -> ScenePage, paths: [String], output: String, title: String?, theme: Theme, themeFolder: String,
        engine: any DrawingTextEngine, photosFolder: String, printDPI: Double?
    ) {
        self.pages = pages; self.page = page; self.paths = paths; self.output = output; self.title = title; self.theme = theme
        self.themeFolder = themeFolder; self.engine = engine; self.photosFolder = photosFolder; self.printDPI = printDPI
    }

    /// Runs on part `k`'s thread: paints its pages into its own file (its own painter and
    /// photo cache). Stops early when another part failed.
    func paint(part k: Int) {
        do {
            // A painter and photos of its own: their caches are not locked.
            let photos = PhotoLoader(baseFolder: photosFolder)
            photos.printDPI = printDPI
            let painter = ScenePainter(theme: theme, themeFolder: themeFolder, engine: engine, photos: photos)
            let doc = try PDFDocument(path: paths[k], title: title)
            for index in pages[k] {
                let page = try self.page(index)
                if state().failed { break }
                let canvas = try doc.beginPage(size: page.size)
                canvas.fontCopy = k + 1
                try painter.paint(page, on: canvas)
                lock.lock(); done += 1; lock.unlock()
                changed.signal()
            }
            if !state().failed { try doc.finish() }
        } catch {
            var failure: any Error = error
            if case let RenderError.unwritable(path, reason) = error, path == paths[k] {
                failure = RenderError.unwritable(path: output, reason: reason)
            }
            lock.lock()
            if firstFailure == nil || firstFailure!.part > k { firstFailure = (k, failure) }
            lock.unlock()
        }
        lock.lock(); finished += 1; lock.unlock()
        changed.signal()
    }

    func state() -> (done: Int, finished: Int, failed: Bool) {
        lock.lock(); defer { lock.unlock() }
        return (done, finished, firstFailure != nil)
    }

    /// The failure of the earliest part that failed.
    func failure() -> (any Error)? {
        lock.lock(); defer { lock.unlock() }
        return firstFailure?.error
    }
}

/// Moves a surface to the encoding queue; only that queue touches it afterwards.
private final class SurfaceBox: @unchecked Sendable {
    let surface: ImageSurface
    init(_ surface: ImageSurface) { self.surface = surface }
}
