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

    static let ownRules = """
        .bk{max-width:760px;margin:0 auto;padding:12px 16px;font:15px/1.45 system-ui,sans-serif;color:#222}
        .bk a{color:#0b63ce}.bk h1{font-size:22px;margin:8px 0}.bk table{border-collapse:collapse;width:100%}
        .bk td,.bk th{text-align:left;padding:6px 8px;border-bottom:1px solid #ddd;vertical-align:top}.bk .n{text-align:right}
        .bk form{margin:10px 0}.bk input{font:inherit;padding:4px 6px}.bk mark{background:#ffe58a}.bk small{color:#777}
        .bk nav{display:flex;gap:14px;flex-wrap:wrap;align-items:center;justify-content:flex-start;max-width:none;margin:0;padding:4px 0;font-size:14px}
        """

    func styleSheet() -> Response {
        Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=300"],
                 body: .init(byteBuffer: ByteBuffer(string: css)))
    }

    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func page(title: String, body: String) -> Response {
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
            <meta name="referrer" content="no-referrer"><title>\(escape(title))</title>
            <link rel="stylesheet" href="/assets/style.css"></head>
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

    func conversation(_ id: Int64, _ query: Parameters) throws -> Response {
        let (window, c) = try api.window(id, query)
        var full = Conversation(title: c.title, participants: c.participants, messages: window.map { (s: StoredMessage) in s.message })
        full.typing = []
        let rows = try HTMLRowWriter(conversation: full, style: style, photosFolder: store.mediaFolder, pictures: pictures)
        var context = HTMLRowContext(startsPage: true)
        if let first = window.first { context.previous = try store.messages(in: id, before: first.seq, limit: 1).first?.message }
        if let last = window.last {
            context.next = try store.messages(in: id, after: last.seq, limit: 1).first?.message
            // The newest outgoing message of the window shows its status when it is the conversation's last message.
            if context.next == nil {
                context.lastOutgoing = window.lastIndex { (s: StoredMessage) in s.message.kind == .message && s.message.direction == .outgoing }
            }
        }
        let fragment = try rows.rows(full.messages[...], context: context)
        let bounds = try store.bounds(of: id)
        var nav = "<nav><a href=\"/\">All conversations</a>"
        if let first = window.first, let b = bounds, first.seq > b.first { nav += "<a href=\"/c/\(id)?before=\(first.seq)\" rel=\"prev\">← Earlier</a>" }
        if let last = window.last, let b = bounds, last.seq < b.last { nav += "<a href=\"/c/\(id)?after=\(last.seq)\" rel=\"next\">Later →</a>" }
        nav += "<a href=\"/c/\(id)\">Newest</a>"
        nav += "<form action=\"/c/\(id)\" method=\"get\"><input type=\"date\" name=\"date\" aria-label=\"Go to a day\"> <button>Go</button></form>"
        nav += "</nav>" + Self.searchForm(conversation: id)
        let range = window.isEmpty ? "no messages" : "messages \(window.first!.seq)–\(window.last!.seq) of \(c.messageCount)"
        let body = "<div class=\"bk\"><h1>\(Self.escape(c.title))</h1><p><small>\(range)</small></p>\(nav)</div>"
            + "<main class=\"c\">\n\(fragment.html)</main>"
        return Self.page(title: c.title, body: body)
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
                body += "<tr><td><a href=\"/c/\(h.conversation)?at=\(h.seq)\">\(Self.escape(titles[h.conversation] ?? "?"))</a><br>"
                    + "<small>\(Self.escape(String(API.iso(h.date).prefix(16)).replacingOccurrences(of: "T", with: " "))) · \(Self.escape(h.senderName ?? h.sender ?? ""))</small></td>"
                    + "<td>\(marked)</td></tr>"
            }
            if !hits.isEmpty { body += "</tbody></table>" }
        }
        return Self.page(title: "Search", body: body + "</div>")
    }
}
