import BubbleText
import Foundation

/// How `HTMLExporter` writes a conversation.
///
///     var options = HTMLOptions()
///     options.timeZone = TimeZone(identifier: "Europe/Berlin")!
///     options.pageSize = .byMonth
///     options.assets = .folder          // photos and fonts in chat_files/ next to chat.html
public struct HTMLOptions: Sendable, Hashable {
    /// Where photos (and, with `.folder`, the fonts) go.
    public enum Assets: String, Sendable, Hashable, CaseIterable {
        /// Everything inside each page: photos as `data:` URIs, fonts as `data:` URIs.
        /// Each page is one self-contained file.
        case embed
        /// Photos and fonts copied once into `NAME_files/` next to the page(s), referenced by
        /// relative URLs (sanitised file names; nothing is written outside that folder).
        case folder
        /// Photos referenced by their own relative path, not read, not checked, not copied (a
        /// path that is absolute, has `..` or a URL scheme is refused). Fonts are embedded. For
        /// pages written next to the photos, and for benchmarks whose photos do not exist.
        case reference
    }

    /// How a long conversation is split into pages.
    public enum Pagination: Sendable, Hashable {
        /// One page, however long.
        case single
        /// At most this many messages (system lines included) per page.
        case messages(Int)
        /// One page per calendar month (in `timeZone`).
        case byMonth
    }

    /// Zone in which days start and times are shown (as `RenderOptions.timeZone`).
    public var timeZone: TimeZone = .current
    /// Locale of day and time texts; nil: the fixed English defaults (`DateTexts`).
    public var locale: Locale?
    /// Day separators of this day and the one before say "Today", "Yesterday"; nil: dates only.
    public var now: Date?
    /// `nil`: light colours, and the theme's dark palette under `prefers-color-scheme: dark`
    /// when it has one. `true` / `false`: only the dark / light colours.
    public var dark: Bool? = nil
    /// Where the style sheet, fonts and pictures go: inside the page (the default) or in files beside it.
    public var assets: Assets = .embed
    /// Several pages are `NAME-001.html`, `NAME-002.html`, … plus an index at the given path,
    /// with previous/next links; a conversation that fits one page is just the given path.
    public var pageSize: Pagination = .messages(5_000)
    /// `loading="lazy"` on photos. Turn it off for printing (lazy images may be missing on paper).
    public var lazyImages: Bool = true
    /// Maximum width of the conversation column in CSS px (= points; the Cairo renderer's page
    /// width). Narrower windows get a narrower column and the bubbles follow.
    public var width: Double = 375
    /// Embed the theme's fonts (the files Pango uses, when small enough) so the browser breaks
    /// lines where Cairo does. Off: only `local()` names and family names (smaller pages).
    public var embedFonts: Bool = true
    /// Font files larger than this (bytes) are referenced by `local()` name instead of embedded
    /// (CJK and colour emoji fonts are 10–20 MB).
    public var maxEmbeddedFontSize: Int = 2_000_000
    /// A header with the title, participants and dates above the conversation.
    public var header: Bool = true
    /// Turn `http://` and `https://` URLs in messages into links.
    public var links: Bool = true
    /// Give each bubble of several lines the width the Cairo layout gives it (its widest line),
    /// measured with Pango. Without it CSS `width: fit-content` makes a wrapped bubble as wide as
    /// the row allows (CSS cannot hug the widest wrapped line), up to the length of a word wider
    /// than Cairo's. Costs a Pango layout per message (~0.1–0.3 ms): for exports of thousands,
    /// not millions, of messages.
    public var shrinkWrap: Bool = false
    /// Right-to-left interface: incoming on the right, outgoing on the left, art mirrored
    /// (`bubbles render --rtl`).
    public var mirrored: Bool = false
    /// The engine that measures for `shrinkWrap` (the style sheet's line metrics always come
    /// from Pango).
    public var textEngine: TextEngineKind = .standard
    /// A picture or file that cannot be read is an error instead of a labelled placeholder.
    public var strictMedia = false
    /// A folder beside the output, shared with other exports (`bubbles render --all`): photos and
    /// fonts are written there under names made from their content (once, however many pages use
    /// them; never removed), and the pages link into it. Nil: `assets` decides. Not with `.reference`.
    public var sharedAssets: String?

    /// The defaults: one self-contained page of up to 5,000 messages, 375 points wide.
    public init() {}
}
