import BubbleCore
import BubbleHTML
import BubbleStore
import BubbleText
import Foundation
import Hummingbird
import HummingbirdCore

/// The server-rendered pages: the library, a conversation (a window of rows, written by
/// BubbleHTML's `HTMLRowWriter` exactly as the HTML export writes them), search. No script;
/// styles from `/assets/style.css` only.
struct Pages: Sendable {
    let store: SQLiteStore
    let api: API
    let theme: Theme
    let themeFolder: String
    let options: HTMLOptions
    let style: HTMLPageStyle
    let pictures: any PictureDecoder
    /// The theme's sheet, its fonts (embedded) and the pages' own rules.
    let css: String

    init(store: SQLiteStore, theme name: String, pictures: any PictureDecoder) throws {
        self.store = store
        api = API(store: store)
        (theme, themeFolder) = try ThemeLibrary.load(name)
        var options = HTMLOptions()
        options.timeZone = TimeZone(identifier: "UTC")!
        options.assets = .embed
        options.header = false
        self.options = options
        self.pictures = pictures
        style = try HTMLPageStyle(theme: theme, themeFolder: themeFolder, options: options, pictures: pictures)
        let all = HTMLFragment(bytes: [], regularFaces: .max, boldFaces: .max)
        css = style.css + (try style.fontFaces(for: [all])) + Self.ownRules
    }

    func script() -> Response {
        Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "max-age=300"],
                 body: .init(byteBuffer: ByteBuffer(string: Viewer.script)))
    }

    static let ownRules = """
        .bk{max-width:760px;margin:0 auto;padding:12px 16px;font:15px/1.45 system-ui,sans-serif;color:#222}
        .bk a{color:#0b63ce}.bk h1{font-size:22px;margin:8px 0}.bk table{border-collapse:collapse;width:100%}
        .bk td,.bk th{text-align:left;padding:6px 8px;border-bottom:1px solid #ddd;vertical-align:top}.bk .n{text-align:right}
        .bk form{margin:10px 0}.bk input{font:inherit;padding:4px 6px}.bk mark{background:#ffe58a}.bk small{color:#777}
        .bk-scrub input{width:min(420px,70vw)}.c>.hl{outline:3px solid #ffcc00;outline-offset:2px}
        .bk nav{display:flex;gap:14px;flex-wrap:wrap;align-items:center;justify-content:flex-start;max-width:none;margin:0;padding:4px 0;font-size:14px}
        """

    func styleSheet() -> Response {
        Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=300"],
                 body: .init(byteBuffer: ByteBuffer(string: css)))
    }

    static func escape(_ s: String) -> String { HTMLEscape.text(s) }

    static func page(title: String, body: String, script: Bool = false) -> Response {
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
            <meta name="referrer" content="no-referrer"><title>\(escape(title))</title>
            <link rel="stylesheet" href="/assets/style.css">\(script ? "<script src=\"/assets/viewer.js\" defer></script>" : "")</head>
            <body>\(body)</body></html>

            """
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static func searchForm(_ q: String = "", conversation: Int64? = nil) -> String {
        "<form action=\"/search\" method=\"get\"><input type=\"search\" name=\"q\" value=\"\(escape(q))\" placeholder=\"Search\" aria-label=\"Search\">"
            + (conversation.map { "<input type=\"hidden\" name=\"conversation\" value=\"\($0)\">" } ?? "")
            + " <button>Search</button></form>"
    }

    func library() throws -> Response {
        let all = try store.conversations()
        var body = "<div class=\"bk\"><h1>Conversations</h1>" + Self.searchForm()
        if all.isEmpty {
            body += "<p>None yet: add some with <code>bubbles import FILE</code>.</p>"
        } else {
            body += "<table><thead><tr><th>conversation</th><th>people</th><th class=\"n\">messages</th><th>dates</th></tr></thead><tbody>"
            for c in all {
                let dates = [c.first, c.last].compactMap { $0.map { String(API.iso($0).prefix(10)) } }
                body += "<tr><td><a href=\"/c/\(c.id)\">\(Self.escape(c.title))</a></td><td>\(Self.escape(c.participants.map(\.name).joined(separator: ", ")))</td>"
                    + "<td class=\"n\">\(c.messageCount)</td><td>\(Self.escape(Set(dates).count == 1 ? dates[0] : dates.joined(separator: " – ")))</td></tr>"
            }
            body += "</tbody></table>"
        }
        return Self.page(title: "BubbleKit", body: body + "</div>")
    }

    /// The rows of a window as HTML (each message numbered by its sequence number), in context:
    /// the message before decides groups and day separators, the one after the last tail.
    func rows(_ window: [StoredMessage], of c: StoredConversation, startsPage: Bool) throws -> String {
        guard let first = window.first, let last = window.last else { return "" }
        let full = Conversation(title: c.title, participants: c.participants, messages: window.map { (s: StoredMessage) in s.message })
        let writer = try HTMLRowWriter(conversation: full, style: style, photosFolder: store.mediaFolder, pictures: pictures)
        var context = HTMLRowContext(startsPage: startsPage)
        context.previous = try store.messages(in: c.id, before: first.seq, limit: 1).first?.message
        context.next = try store.messages(in: c.id, after: last.seq, limit: 1).first?.message
        context.numberFrom = first.seq
        // The newest outgoing message shows its status when it is the conversation's last message.
        if context.next == nil {
            context.lastOutgoing = window.lastIndex { (s: StoredMessage) in s.message.kind == .message && s.message.direction == .outgoing }
        }
        return try writer.rows(full.messages[...], context: context).html
    }

    /// `/c/ID/rows?after=SEQ|before=SEQ&limit=N`: the next or previous rows for the viewer's
    /// script, as `{"html", "first", "last"}` (no rows: first and last null).
    func moreRows(_ id: Int64, _ query: Parameters) throws -> Response {
        guard query["after"] != nil || query["before"] != nil else { throw APIError.badRequest("give after=SEQ or before=SEQ") }
        let (window, c) = try api.window(id, query)
        return try json(["html": try rows(window, of: c, startsPage: false),
                         "first": window.first.map { $0.seq as Any } ?? NSNull(), "last": window.last.map { $0.seq as Any } ?? NSNull()])
    }

    func conversation(_ id: Int64, _ query: Parameters) throws -> Response {
        let (window, c) = try api.window(id, query)
        let bounds = try store.bounds(of: id)
        var nav = "<nav><a href=\"/\">All conversations</a>"
        if let first = window.first, let b = bounds, first.seq > b.first { nav += "<a href=\"/c/\(id)?before=\(first.seq)\" rel=\"prev\">← Earlier</a>" }
        if let last = window.last, let b = bounds, last.seq < b.last { nav += "<a href=\"/c/\(id)?after=\(last.seq)\" rel=\"next\">Later →</a>" }
        nav += "<a href=\"/c/\(id)\">Newest</a>"
        nav += "<form action=\"/c/\(id)\" method=\"get\"><input type=\"date\" name=\"date\" aria-label=\"Go to a day\"> <button>Go</button></form>"
        nav += "</nav>" + Self.searchForm(conversation: id)
        // Where the reader is: a slider over the whole conversation (its position is the
        // sequence number, so the middle is the middle and the end one drag away).
        if let b = bounds, b.last > b.first {
            nav += "<form action=\"/c/\(id)\" method=\"get\" class=\"bk-scrub\"><input type=\"range\" id=\"scrub\" name=\"at\" min=\"\(b.first)\" max=\"\(b.last)\" "
                + "value=\"\(window.last?.seq ?? b.last)\" aria-label=\"Position in the conversation\"> <button>Go</button></form>"
        }
        let range = window.isEmpty ? "no messages" : "messages \(window.first!.seq)–\(window.last!.seq) of \(c.messageCount)"
        let at = try API.integer(query, "at", range: 1...Int64.max)
        let highlight = query["hl"].map { Self.escape(String($0)) } ?? ""
        let body = "<div class=\"bk\"><h1>\(Self.escape(c.title))</h1><p><small id=\"range\">\(range)</small></p>\(nav)</div>"
            + "<main class=\"c\" id=\"rows\" data-id=\"\(id)\" data-min=\"\(bounds?.first ?? 0)\" data-max=\"\(bounds?.last ?? 0)\" "
            + "data-first=\"\(window.first?.seq ?? 0)\" data-last=\"\(window.last?.seq ?? 0)\" data-at=\"\(at.map(String.init) ?? "")\" data-hl=\"\(highlight)\" "
            + "data-newest=\"\(query["after"] == nil && query["before"] == nil && query["at"] == nil && query["date"] == nil)\">\n"
            + (try rows(window, of: c, startsPage: (window.first?.seq ?? 0) <= (bounds?.first ?? 0))) + "</main>"
        return Self.page(title: c.title, body: body, script: true)
    }

    func search(_ query: Parameters) throws -> Response {
        let q = query["q"].map(String.init) ?? ""
        let conversation = try API.integer(query, "conversation", range: 1...Int64.max)
        var body = "<div class=\"bk\"><nav><a href=\"/\">All conversations</a></nav><h1>Search</h1>" + Self.searchForm(q, conversation: conversation)
        if !q.trimmingCharacters(in: CharacterSet.whitespaces).isEmpty {
            let hits: [StoreHit]
            do { hits = try store.search(StoreSearch(q, conversation: conversation, limit: 50)) } catch let e as StoreError {
                throw APIError.badRequest(e.reason)
            }
            let titles = Dictionary(try store.conversations().map { ($0.id, $0.title) }, uniquingKeysWith: { (a: String, _: String) in a })
            body += hits.isEmpty ? "<p>No messages match.</p>" : "<table><tbody>"
            for h in hits {
                // The match marked, everything escaped.
                let p = h.snippetParts
                let marked = Self.escape(p[0]) + (p[1].isEmpty ? "" : "<mark>" + Self.escape(p[1]) + "</mark>") + Self.escape(p[2])
                let words = q.split(separator: " ").first { !$0.hasPrefix("-") }.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\"*")) } ?? ""
                let hl = words.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                body += "<tr><td><a href=\"/c/\(h.conversation)?at=\(h.seq)&amp;hl=\(hl)\">\(Self.escape(titles[h.conversation] ?? "?"))</a><br>"
                    + "<small>\(Self.escape(String(API.iso(h.date).prefix(16)).replacingOccurrences(of: "T", with: " "))) · \(Self.escape(h.senderName ?? h.sender ?? ""))</small></td>"
                    + "<td>\(marked)</td></tr>"
            }
            if !hits.isEmpty { body += "</tbody></table>" }
        }
        return Self.page(title: "Search", body: body + "</div>")
    }
}
