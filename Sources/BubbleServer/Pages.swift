import BubbleCore
import BubbleHTML
import BubbleMedia
import BubbleStore
import BubbleText
import Foundation
import Hummingbird
import HummingbirdCore

/// The server-rendered pages: the library, a conversation (a window of rows, written by
/// BubbleHTML's `HTMLRowWriter` exactly as the HTML export writes them), search, and the
/// viewer's windows (`view`), built with `HTML` (escapes by default). Scripts and style sheets
/// only from `/assets/` (`WebAssets`: the files of `Web/` and each theme's sheet, under hashed
/// names).
struct Pages: Sendable {
    let store: any ConversationStore
    let accounts: any AccountStore
    let api: API
    let pictures: any PictureDecoder
    /// The theme pages are drawn in unless `?theme=` names another.
    let defaultTheme: String
    /// Every theme a page can be drawn in: the bundled ones and the server's own.
    let themes: [String: ThemedStyle]
    let geometries: Geometries
    let live: LiveLimits
    /// The style sheets' fonts: `/assets/fonts/NAME` → the font file.
    let fonts: [String: String]
    /// The script, the app's style sheet and the themes' sheets.
    let assets: WebAssets
    /// Statistics and galleries, per revision of a conversation.
    let insights: Insights
    /// The gallery's thumbnails, kept beside the store's media.
    let thumbnails: Thumbnails
    /// Measures the charts' texts.
    let chartEngine: FastTextEngine
    /// Widest column (CSS px); a narrower window gets a narrower one, laid out at its width.
    static let columnWidth = 720.0
    /// Days and times on the pages (and the layout's day separators).
    static let timeZone = TimeZone(identifier: "UTC")!

    /// One theme's row style and its style sheet's URL (the theme's rules and `@font-face`
    /// rules linking its fonts under `/assets/fonts/`).
    struct ThemedStyle: Sendable {
        let name: String
        let theme: Theme
        let themeFolder: String
        let style: HTMLPageStyle
        var sheetURL: String = ""
    }

    init(
        store: any ConversationStore, accounts: any AccountStore, theme name: String, pictures: any PictureDecoder, live: LiveLimits, metrics: ServerMetrics,
        compactFrom: Int
    ) throws {
        self.store = store
        self.accounts = accounts
        self.live = live
        api = API(store: store, accounts: accounts)
        self.pictures = pictures
        var options = HTMLOptions()
        options.timeZone = Self.timeZone
        options.assets = .embed
        options.header = false
        options.width = Self.columnWidth
        var themes: [String: ThemedStyle] = [:]
        var fonts: [String: String] = [:]
        var sheets: [String: [UInt8]] = [:], sheetNames: [String: String] = [:]
        for n in Set(ThemeLibrary.bundledNames + [name]).sorted() {
            let (theme, folder) = try ThemeLibrary.load(n)
            let style = try HTMLPageStyle(theme: theme, themeFolder: folder, options: options, pictures: pictures)
            let all = HTMLFragment(bytes: [], regularFaces: .max, boldFaces: .max)
            // Fonts by URL (`/assets/fonts/…`, served from `fontsFolder`): the style sheet that
            // blocks the first paint is kilobytes, not the ~9 MB of every face embedded.
            let faces = try style.linkedFontFaces(for: [all], under: "/assets")
            fonts.merge(faces.files) { a, _ in a }
            themes[n] = ThemedStyle(name: n, theme: theme, themeFolder: folder, style: style)
            let sheet = Self.sheetName(n, taken: sheets)
            sheets[sheet] = Array((style.css + faces.css).utf8)
            sheetNames[n] = sheet
        }
        assets = try WebAssets(folder: Self.webFolder, generated: sheets)
        for (n, sheet) in sheetNames { themes[n]?.sheetURL = assets.url(sheet) }
        self.themes = themes
        self.fonts = fonts
        defaultTheme = name
        geometries = Geometries(store: store, pictures: pictures, compactFrom: compactFrom, metrics: metrics)
        insights = Insights(store: store)
        thumbnails = Thumbnails(media: store.mediaFolder, pictures: pictures)
        chartEngine = FastTextEngine()
    }

    /// The web app's files: `Web/` of this module's resources.
    static var webFolder: URL { Bundle.module.resourceURL!.appendingPathComponent("Web") }

    /// `theme-NAME.css` for a theme's sheet (a theme given as a path: its folder's name, only
    /// `[a-z0-9_-]`), numbered when two themes would share a name.
    static func sheetName(_ theme: String, taken: [String: [UInt8]]) -> String {
        let base = String(
            (theme as NSString).lastPathComponent.lowercased().unicodeScalars.map { s -> Character in
                ("a"..."z").contains(s) || ("0"..."9").contains(s) || s == "-" || s == "_" ? Character(s) : "_"
            })
        var name = "theme-\(base).css", k = 2
        while taken[name] != nil { name = "theme-\(base)-\(k).css"; k += 1 }
        return name
    }

    /// The theme `?theme=` names (a bundled one), else the server's; a 400 for an unknown name.
    func themed(_ query: Parameters) throws -> ThemedStyle {
        guard let raw = query["theme"], !raw.isEmpty else { return themes[defaultTheme]! }
        guard let t = themes[String(raw)] else {
            throw APIError.badRequest("theme \"\(raw)\" is not one of \(themes.keys.sorted().joined(separator: ", "))")
        }
        return t
    }

    /// The theme `?theme=` names, else the one the reader picked last (their setting), else the server's.
    func themed(_ query: Parameters, for identity: Identity) async throws -> ThemedStyle {
        if let raw = query["theme"], !raw.isEmpty { return try themed(query) }
        let picked = identity == .anonymous ? nil : try? await accounts.settings(of: ReadMarks.account(identity))["theme"]
        return picked.flatMap { themes[$0] } ?? themes[defaultTheme]!
    }

    /// The export panel's formats: the value, its name, what it is.
    static let exportFormats = [
        ("pdf", "PDF", "pages to print or share"), ("png", "PNG", "one tall picture"), ("html", "HTML", "a web page, photos inside"),
        ("json", "JSON", "BubbleKit's own, to import again"), ("csv", "CSV", "a table, one message a row")
    ]

    /// A theme's name as people write it.
    static func themeLabel(_ name: String) -> String {
        ["imessage": "iMessage", "whatsapp": "WhatsApp", "sms": "SMS", "classic": "Classic"][name] ?? name
    }

    /// `/assets/NAME`: the script's modules, the app's and the themes' style sheets, under their
    /// hashed names (`WebAssets`); a 404 for any other name.
    func asset(_ name: String, _ headers: HTTPFields) throws -> Response {
        guard let response = assets.response(name, headers: headers) else { throw APIError.notFound("no asset \(name.prefix(80))") }
        return response
    }

    /// `/assets/fonts/NAME`: a font of the style sheets (only those), cached for a day.
    func font(_ name: String) async throws -> Response {
        guard let path = fonts[name], let data = await Files.contents(path) else {
            throw APIError.notFound("no font \(name.prefix(80))")
        }
        let ext = PathText.fileExtension(name).lowercased()
        let type =
            ["ttf": "font/ttf", "otf": "font/otf", "woff": "font/woff", "woff2": "font/woff2", "ttc": "font/collection"][ext] ?? "application/octet-stream"
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=86400"],
            body: .init(byteBuffer: data))
    }

    /// A search hit's page: the conversation at that message, the search (for the previous and
    /// next hits) and the word to mark.
    static func hitURL(_ id: Int64, _ seq: Int64, q: String, highlight: String) -> String {
        let q = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let hl = highlight.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "/c/\(id)?at=\(seq)&q=\(q)&hl=\(hl)"
    }

    /// A whole page: the app's and the theme's style sheets, the script (`app.js`, with its
    /// modules preloaded) when `script` says so, and the reader's light or dark (their setting,
    /// kept by the server). A signed-in user's page carries the session's CSRF token (`bk-csrf`,
    /// which the script sends with every write) and their name.
    func page(
        title: String, body: HTML, script: Bool = false, theme: String? = nil, bodyClass: String? = nil,
        for identity: Identity = .anonymous
    ) async -> Response {
        let sheet = themes[theme ?? defaultTheme]?.sheetURL ?? themes[defaultTheme]!.sheetURL
        var meta: HTML = ""
        if let user = identity.user {
            meta = "<meta name=\"bk-user\" content=\"\(user.key)\">" + (identity.csrf.map { "<meta name=\"bk-csrf\" content=\"\($0)\">" } ?? "")
        }
        let settings = identity == .anonymous ? [:] : (try? await accounts.settings(of: ReadMarks.account(identity))) ?? [:]
        let scheme: HTML = settings["scheme"].map { SettingsRoutes.schemes.contains($0) ? " data-scheme=\"\($0)\"" : "" } ?? ""
        var scripts: HTML = ""
        if script {
            scripts =
                (assets.imports["app.js"] ?? []).map { url -> HTML in "<link rel=\"modulepreload\" href=\"\(url)\">" }.joined()
                + "<script type=\"module\" src=\"\(assets.url("app.js"))\"></script>"
        }
        let html: HTML = """
            <!DOCTYPE html>
            <html lang="en"\(scheme)><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
            <meta name="referrer" content="no-referrer">\(meta)<title>\(title)</title>
            <link rel="stylesheet" href="\(sheet)"><link rel="stylesheet" href="\(assets.url("app.css"))">\(scripts)</head>
            <body\(bodyClass.map { c -> HTML in " class=\"\(c)\"" } ?? "")>\(body)</body></html>

            """
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html.text)))
    }

    /// A page request that failed, as a page of the app (HTML, the error's status): the list
    /// beside it for a reader who is signed in, and what happened said plainly — "This chat isn't
    /// available" for a conversation that is not there or not theirs (the same words for both:
    /// nothing says which), the server's reason under it.
    func errorPage(_ error: APIError, for identity: Identity) async -> Response {
        let chat = error.message.hasPrefix("no conversation")
        let (title, detail): (String, String) =
            switch error.status.code {
            case 404 where chat: ("This chat isn’t available", "It doesn’t exist, or you aren’t one of its members. Ask someone in it for an invitation.")
            case 404: ("This page isn’t here", "The link may be mistyped or out of date.")
            case 400: ("That didn’t work", "Something in the link or the form isn’t right.")
            case 403: ("Not allowed", "Your account can’t do this here.")
            default: ("Something went wrong", "The server couldn’t answer this time.")
            }
        let signedIn = identity != .anonymous
        let side: HTML = signedIn ? ((try? await sidebar(for: identity, current: nil)) ?? "") : ""
        let body: HTML =
            side + "<main class=\"pane home\" id=\"main\"><div class=\"bk empty\"><h1>\(title)</h1><p>\(detail)</p>"
            + "<p class=\"why\"><small>\(error.message)</small></p><p><a href=\"/\">Back to your chats</a></p></div></main>"
        var response = await page(title: title, body: body, script: signedIn, bodyClass: signedIn ? "app lib" : nil, for: identity)
        response.status = error.status
        return response
    }

    /// The search form: every conversation's (`/search`), or one conversation's — which the
    /// script keeps in the conversation: its matches counted ("3 of 1,204") and walked with ↑/↓.
    static func searchForm(_ q: String = "", conversation: Int64? = nil) -> HTML {
        guard let conversation else {
            return
                "<form action=\"/search\" method=\"get\"><input type=\"search\" name=\"q\" value=\"\(q)\" placeholder=\"Search\" aria-label=\"Search\"> <button>Search</button></form>"
        }
        return
            "<form action=\"/search\" method=\"get\" id=\"insearch\"><input type=\"search\" name=\"q\" value=\"\(q)\" placeholder=\"Search in this chat\" aria-label=\"Search in this chat\">"
            + "<input type=\"hidden\" name=\"conversation\" value=\"\(conversation)\"> <button>Search</button>"
            + "<span class=\"matchnav\" id=\"matchnav\" hidden><span id=\"matchcount\" role=\"status\" aria-live=\"polite\"></span>"
            + "<button type=\"button\" id=\"matchup\" aria-label=\"Older match\" title=\"Older match (Enter)\">↑</button>"
            + "<button type=\"button\" id=\"matchdown\" aria-label=\"Newer match\" title=\"Newer match (Shift+Enter)\">↓</button></span></form>"
    }

    /// `/`: the list, and beside it (on a phone: behind + in the list's head, `?add=1`) adding
    /// an export and starting a conversation.
    func library(_ query: Parameters, for identity: Identity) async throws -> Response {
        let importer = identity.user?.isAdmin ?? true
        let adding = query["add"] != nil
        var body: HTML =
            "<main class=\"pane home\" id=\"main\"><div class=\"bk\"><a class=\"back\" href=\"/\" aria-label=\"All conversations\">‹ Chats</a><h1>Add a conversation</h1>"
            + "<p class=\"hint\">Open one from the list — or add an export, or start a live conversation.</p>"
        if importer {
            body +=
                "<form id=\"upload\" class=\"up\" action=\"/api/v1/imports\" method=\"post\" enctype=\"multipart/form-data\">"
                + "<label>Add an export (SMS Backup &amp; Restore XML, WhatsApp .txt or .zip, Telegram JSON, iMessage chat.db, Messenger or Instagram .zip, DiscordChatExporter JSON, BubbleKit JSON, an iPhone backup's folder as a .zip): "
                + "<input type=\"file\" name=\"file\" id=\"file\"></label> "
                + "<label class=\"pw\">Backup password (an encrypted iPhone backup) <input type=\"password\" name=\"password\" id=\"backuppassword\" autocomplete=\"off\"></label> "
                + "<button>Import</button> "
                + "<progress id=\"progress\" hidden max=\"1\" value=\"0\"></progress> <span id=\"status\" role=\"status\"></span></form>"
        }
        // With accounts, participants are user names (the script puts the signed-in user first).
        let people = identity.user == nil ? "You, Ann, …" : "user names: ann, ben"
        body +=
            "<form id=\"newchat\" class=\"up\" hidden><label>New conversation: <input id=\"newtitle\" placeholder=\"Title\" aria-label=\"Title\" maxlength=\"500\"></label> "
            + "<input id=\"newpeople\" placeholder=\"\(people)\" aria-label=\"Participants, you first\" size=\"24\"> <button>Start</button> "
            + "<span id=\"newstatus\" role=\"status\"></span></form></div></main>"
        return await page(
            title: "BubbleKit", body: try await sidebar(for: identity, current: nil) + body, script: true,
            bodyClass: adding ? "app lib solo" : "app lib", for: identity)
    }

    /// Rows of `messages[range]` of a conversation as HTML, each message's rows numbered by its
    /// sequence number (`first` for the range's first), in context: the message before decides
    /// groups and day separators, the one after the last tail. Also whether they have an avatar
    /// column (their container then has class `w`).
    func rowsAndColumn(
        _ messages: [Message], _ range: Range<Int>, first: Int64, of c: (title: String?, participants: [Participant]),
        in themed: ThemedStyle, width: Double? = nil
    ) throws -> (html: String, avatars: Bool) {
        guard !range.isEmpty else { return ("", false) }
        let full = Conversation(title: c.title, participants: c.participants, messages: Array(messages[range]))
        let writer = try HTMLRowWriter(conversation: full, style: themed.style, photosFolder: store.mediaFolder, pictures: pictures)
        var context = HTMLRowContext(startsPage: range.lowerBound == 0)
        context.previous = range.lowerBound > 0 ? messages[range.lowerBound - 1] : nil
        context.next = range.upperBound < messages.count ? messages[range.upperBound] : nil
        context.numberFrom = first
        context.rowWidth = width
        // The newest outgoing message shows its status when it is the conversation's last message.
        if context.next == nil {
            context.lastOutgoing = full.messages.lastIndex { $0.kind == .message && $0.direction == .outgoing }
        }
        return (try writer.rows(full.messages[...], context: context).html, writer.showsAvatars)
    }

    /// The rows of a window read from the store (the page's first screen, before any script).
    func rows(_ window: [StoredMessage], of c: StoredConversation, in themed: ThemedStyle, perspective: String? = nil) async throws -> (
        html: String, avatars: Bool
    ) {
        guard let first = window.first, let last = window.last else { return ("", false) }
        let seen = { (m: Message) in Geometries.seen(m, by: perspective) }
        // As the geometry's messages are.
        var messages = Geometries.seen(
            window.map(\.message), by: perspective,
            resolver: MediaResolver(decoder: pictures, baseFolder: store.mediaFolder, style: themed.theme.layoutStyle))
        var range = 0..<messages.count
        if let before = try await store.messages(in: c.id, before: first.seq, limit: 1).first?.message {
            messages.insert(seen(before), at: 0); range = 1..<messages.count
        }
        if let after = try await store.messages(in: c.id, after: last.seq, limit: 1).first?.message { messages.append(seen(after)) }
        return try rowsAndColumn(messages, range, first: first.seq, of: (c.title, c.participants), in: themed)
    }

    /// `/c/ID/view?width=W[&theme=T]` and one of `y=Y&h=H` (the rows that meet that band of the
    /// layout), `at=SEQ`, `date=D`, or nothing (the newest): the layout engine's geometry of the
    /// conversation at that column width (`height`, `count`) and a window of rows with each
    /// message's `tops` — `{"height", "width", "count", "first", "last", "tops", "bottom",
    /// "html", "target"}`. `202 {"measuring": true, "done", "total"}` while the conversation
    /// is first laid out.
    func view(_ id: Int64, _ query: Parameters, for identity: Identity) async throws -> Response {
        let themed = try themed(query)
        guard let rawWidth = query["width"], let width = Double(rawWidth), width.isFinite else {
            throw APIError.badRequest("width is missing or not a number; expected the column's width in CSS px")
        }
        let column = min(Self.columnWidth, max(themed.theme.layoutStyle.minimumRowWidth, width.rounded()))
        let given = ["y", "at", "date"].filter { query[Substring($0)] != nil }
        guard given.count <= 1 else { throw APIError.badRequest("give one of y, at and date, not \(given.joined(separator: " and "))") }
        var target: Int64?
        if let at = try API.integer(query, "at", range: 1...Int64.max) { target = at }
        if let date = try API.date(query, "date") {
            if let found = try await store.seq(in: id, atOrAfter: date) { target = found } else { target = try await store.bounds(of: id)?.last }
        }
        let y = try query["y"].map { raw -> Double in
            guard let v = Double(raw), v.isFinite, v >= 0 else { throw APIError.badRequest("y \"\(raw)\" is not a number ≥ 0") }
            return v
        }
        let band =
            try query["h"].map { raw -> Double in
                guard let v = Double(raw), v.isFinite, v > 0, v <= 20_000 else { throw APIError.badRequest("h \"\(raw)\" is not a number in 1…20000") }
                return v
            } ?? 2_400
        let key = Geometries.Key(conversation: id, theme: themed.name, perspective: try await perspective(id, query, for: identity))
        // Unknown conversations are refused before anything is laid out (an open one is known).
        if await !geometries.has(key) { _ = try await api.known(id) }
        let geometry: ViewGeometry
        switch try await geometries.geometry(key, width: column, theme: themed.theme, wait: query["wait"] == "1") {
        case .success(let g): geometry = g
        case .failure(let p):
            return Self.json(status: .accepted) { out in
                out.field("measuring", true); out.field("done", p.done); out.field("total", p.total)
            }
        }
        guard geometry.count > 0 else {
            return Self.json { out in
                out.field("height", 0); out.field("width", column); out.field("count", 0); out.key("first"); out.null(); out.key("last"); out.null()
                out.key("tops"); out.array([Double]()); out.field("bottom", 0); out.field("html", "")
            }
        }
        let targetIndex = target.map(geometry.index(of:))
        var range: Range<Int>
        if let y {
            range = geometry.messages(from: y, height: band)
            if range.count > 400 { range = range.lowerBound..<(range.lowerBound + 400) }
        } else if let k = targetIndex {
            range = max(0, k - 40)..<min(geometry.count, k + 60)
        } else {
            range = max(0, geometry.count - 100)..<geometry.count
        }
        // The window and its neighbours as they are now (changed messages as changed).
        let around = max(0, range.lowerBound - 1)..<min(geometry.count, range.upperBound + 1)
        let messages =
            geometry.list.isCompact
            ? try await geometries.window(around, of: geometry, key: key, theme: themed.theme)
            : around.map(geometry.message)
        let local = (range.lowerBound - around.lowerBound)..<(range.upperBound - around.lowerBound)
        let (html, avatars) = try rowsAndColumn(
            messages, local, first: geometry.seqs[range.lowerBound], of: (geometry.list.conversation.title, geometry.list.conversation.participants),
            in: themed, width: column)
        let tops = range.map { geometry.top(of: $0) }
        let bottom = range.upperBound < geometry.count ? geometry.top(of: range.upperBound) : geometry.height
        // Written by hand: JSONSerialization spent four times what writing the rows costs.
        var out = JSONBytes()
        out.field("height", geometry.height); out.field("width", column); out.field("count", geometry.count)
        out.field("min", geometry.seqs[0]); out.field("max", geometry.seqs[geometry.count - 1])
        out.field("first", geometry.seqs[range.lowerBound]); out.field("last", geometry.seqs[range.upperBound - 1])
        out.key("tops"); out.array(tops)
        out.field("bottom", bottom); out.field("avatars", avatars); out.field("rev", geometry.rev)
        if let k = targetIndex { out.field("target", geometry.seqs[k]) }
        out.key("html"); out.string(html)
        return Self.json(out)
    }

    /// A JSON object written by hand (`JSONBytes`) as a response.
    static func json(status: HTTPResponse.Status = .ok, _ write: (inout JSONBytes) -> Void) -> Response {
        var out = JSONBytes()
        write(&out)
        return json(out, status: status)
    }

    static func json(_ out: JSONBytes, status: HTTPResponse.Status = .ok) -> Response {
        var out = out
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: out.finish())))
    }

    /// `access`: the signed-in user's to this conversation, as `RouteAccess` decided it.
    func conversation(_ id: Int64, _ query: Parameters, for identity: Identity, access: MemberAccess?) async throws -> Response {
        let themed = try await themed(query, for: identity)
        let (window, c) = try await api.window(id, query)
        let bounds = try await store.bounds(of: id)
        let keep = themed.name == defaultTheme ? "" : "&theme=" + themed.name
        // Earlier / later windows as links (the script scrolls instead), and the newest.
        var pager: HTML = "<nav class=\"pager\" aria-label=\"Pages of the conversation\">"
        if let first = window.first, let b = bounds, first.seq > b.first {
            pager += "<a href=\"/c/\(id)?before=\(first.seq)\(keep)\" rel=\"prev\">← Earlier</a>"
        }
        if let last = window.last, let b = bounds, last.seq < b.last { pager += "<a href=\"/c/\(id)?after=\(last.seq)\(keep)\" rel=\"next\">Later →</a>" }
        pager += "<a href=\"/c/\(id)\(keep.isEmpty ? "" : "?" + keep.dropFirst())\" id=\"newest\">Newest</a>"
        // Opened from a search hit: the previous and next hits in this conversation.
        let at = try API.integer(query, "at", range: 1...Int64.max)
        let highlight = query["hl"].map(String.init) ?? ""
        if let at, let q = query["q"], !q.trimmingCharacters(in: .whitespaces).isEmpty {
            let seqs = ((try? await store.search(StoreSearch(String(q), conversation: id, limit: 200))) ?? []).map(\.seq).sorted()
            let link = { (seq: Int64, rel: String, text: String) -> HTML in
                "<a href=\"\(Self.hitURL(id, seq, q: String(q), highlight: highlight))\(keep)\" id=\"\(rel)-hit\">\(text)</a>"
            }
            if let p = seqs.last(where: { $0 < at }) { pager += link(p, "prev", "↑ previous hit") }
            if let n = seqs.first(where: { $0 > at }) { pager += link(n, "next", "↓ next hit") }
        }
        let range = window.isEmpty ? "no messages" : "messages \(window.first!.seq)–\(window.last!.seq) of \(c.messageCount)"
        pager += "<small id=\"range\">\(range)</small></nav>"
        // The toolbar: search here, a date (the calendar and the months with their counts, filled
        // by the script from the per-day counts), export, theme; invite for a member who writes.
        let day = { (d: Date?) in d.map(API.day) ?? "" }
        var tools: HTML = "<nav class=\"tools\" id=\"tools\" aria-label=\"Conversation tools\">"
        tools += Self.tool("🔍", "Search", "Search in this conversation", Self.searchForm(conversation: id))
        tools += Self.tool(
            "📅", "Date", "Jump to a date",
            "<form action=\"/c/\(id)\" method=\"get\" id=\"day\"><input type=\"date\" name=\"date\" min=\"\(day(c.first))\" max=\"\(day(c.last))\" aria-label=\"Go to a day\">"
                + (keep.isEmpty ? "" : "<input type=\"hidden\" name=\"theme\" value=\"\(themed.name)\">") + " <button>Go</button></form>"
                + "<select id=\"months\" hidden aria-label=\"Go to a month\"></select><div id=\"calendar\" class=\"cal\" hidden></div>")
        // Downloads, made by the renderers: the whole conversation or the days between two dates.
        tools += Self.tool(
            "⬇", "Export", "Download the conversation (PDF, PNG, HTML, JSON, CSV)",
            "<form action=\"/api/v1/conversations/\(id)/export\" method=\"get\" id=\"export\" class=\"panel\"><h2>Download</h2>"
                + "<fieldset class=\"formats\"><legend>Format</legend>"
                + Self.exportFormats.enumerated().map { k, f -> HTML in
                    "<label class=\"choice\"><input type=\"radio\" name=\"format\" value=\"\(f.0)\"\(k == 0 ? HTML(" checked") : "")> <b>\(f.1)</b> <small>\(f.2)</small></label>"
                }.joined() + "</fieldset>"
                + "<div class=\"range\"><label>From <input type=\"date\" name=\"since\" min=\"\(day(c.first))\" max=\"\(day(c.last))\"></label>"
                + "<label>Until <input type=\"date\" name=\"until\" min=\"\(day(c.first))\" max=\"\(day(c.last))\" aria-describedby=\"untilnote\"></label></div>"
                + "<small id=\"untilnote\">Empty dates: the whole conversation. The day “Until” names is not included.</small>"
                + "<input type=\"hidden\" name=\"theme\" value=\"\(themed.name)\"><button class=\"primary\">Download</button></form>")
        tools += Self.tool(
            "🎨", "Theme", "The bubbles' theme",
            "<form action=\"/c/\(id)\" method=\"get\" id=\"themes\" class=\"panel\"><h2>Bubbles</h2><fieldset><legend class=\"sr\">Theme</legend>"
                + themes.keys.sorted().map { t -> HTML in
                    "<label class=\"choice\"><input type=\"radio\" name=\"theme\" value=\"\(t)\"\(t == themed.name ? HTML(" checked") : "")> <b>\(Self.themeLabel(t))</b></label>"
                }.joined()
                + "</fieldset><small>Kept for your account, on every device.</small><button class=\"primary\">Apply</button></form>")
        // A signed-in member who writes invites others: a single-use link to hand over.
        if identity.user != nil, access?.writes == true {
            tools += Self.tool(
                "➕", "Invite", "Make a single-use link that lets someone join",
                "<div class=\"panel\"><h2>Invite someone</h2><p><small>A link that works once: whoever opens it joins this conversation.</small></p>"
                    + "<button type=\"button\" id=\"invite\" class=\"primary\">Make a link</button>"
                    + "<div class=\"copyrow\" id=\"inviterow\" hidden><input id=\"invitelink\" readonly aria-label=\"Invitation link\">"
                    + "<button type=\"button\" class=\"copy\" data-copy=\"invitelink\">Copy</button></div>"
                    + "<span id=\"invitestatus\" role=\"status\"></span></div>")
        }
        // On a phone the title keeps the width: search and "⋮", which shows the other tools.
        tools +=
            "<button type=\"button\" class=\"moretools\" id=\"moretools\" aria-label=\"More tools\" aria-expanded=\"false\" aria-controls=\"tools\">⋮</button></nav>"
        let viewer = try await perspective(id, query, for: identity)
        let firstScreen = try await rows(window, of: c, in: themed, perspective: viewer)
        let rev = try await store.lastRev(of: id) ?? 0
        // The composer only where one writes: live conversations; an archive says it is one.
        let composer: HTML = c.sourceFormat == "live" ? try await composer(c, for: identity, access: access) : ""
        let footer: HTML =
            composer.isEmpty
            ? "<p class=\"ro\" role=\"note\">\(c.sourceFormat == "live" ? "You can read this conversation." : "Imported from \(Self.appName(c.sourceFormat))") · read-only</p>"
            : composer
        let newest = query["after"] == nil && query["before"] == nil && query["at"] == nil && query["date"] == nil
        let side = try await sidebar(for: identity, current: id)
        let body: HTML =
            side + "<div class=\"pane\"><header class=\"bk head\">" + Self.header(c) + pager + "</div>" + tools + "</header>"
            + Self.tabs(id, current: "Messages")
            + "<div id=\"announce\" class=\"sr\" role=\"log\" aria-live=\"polite\" aria-label=\"New messages\"></div>"
            + "<div id=\"scroller\"><main class=\"c\(firstScreen.avatars ? " w" : "")\" id=\"rows\" aria-label=\"Messages\" "
            + "data-live=\"\(c.sourceFormat == "live")\" data-last=\"\(bounds?.last ?? 0)\" "
            + "data-id=\"\(id)\" data-theme=\"\(themed.name)\" data-count=\"\(c.messageCount)\" "
            + "data-at=\"\(at.map(String.init) ?? "")\" data-hl=\"\(highlight)\" data-date=\"\(query["date"].map(String.init) ?? "")\" "
            + "data-newest=\"\(newest)\" data-rev=\"\(rev)\" data-max-text=\"\(live.maxText)\" data-as=\"\(viewer ?? "")\">\n"
            + (firstScreen.html.isEmpty
                ? "<div class=\"emptystate\" role=\"status\">\(c.sourceFormat == "live" ? "No messages yet. Say hello below." : "This conversation holds no messages.")</div>"
                : HTML(trusted: firstScreen.html))
            + "</main></div>" + footer + "</div>"
        return await page(title: c.title, body: body, script: true, theme: keep.isEmpty ? nil : themed.name, bodyClass: "app v", for: identity)
    }

    /// `?as=PARTICIPANT`: whose messages are on the right (nil: as stored, the owner's). A
    /// signed-in user's own are (whatever `as` says).
    func perspective(_ id: Int64, _ query: Parameters, for identity: Identity) async throws -> String? {
        if let me = identity.speaker {
            let people = try await store.people(of: id)
            return me == people.owner || !people.ids.contains(me) ? nil : me
        }
        guard let raw = query["as"], !raw.isEmpty else { return nil }
        // One light read (the window requests of a window seen from another side all carry it).
        guard try await store.lastRev(of: id) != nil else { throw APIError.notFound("no conversation \(id)") }
        let people = try await store.people(of: id)
        guard people.ids.contains(String(raw)) else {
            throw APIError.badRequest("as \"\(raw)\" is not in conversation \(id); expected one of \(people.ids.sorted().joined(separator: ", "))")
        }
        return String(raw) == people.owner ? nil : String(raw)
    }

    /// The live part of a conversation page (shown by the script): who is typing, the new
    /// messages pill, messages on their way, and the composer — a growing text field (Enter
    /// sends, Shift+Enter is a new line), "send as" any participant (the owner's messages are
    /// outgoing, the right-hand side), a photo, Add — and a message's actions.
    func composer(_ c: StoredConversation, for identity: Identity, access: MemberAccess?) async throws -> HTML {
        let owner = try await store.owner(of: c.id)
        var people = c.participants.sorted { ($0.id == owner ? 0 : 1) < ($1.id == owner ? 0 : 1) }
        // A signed-in user is who they are: no "send as"; one who only reads gets no composer.
        if let me = identity.speaker {
            guard let mine = people.first(where: { $0.id == me }), access?.writes == true else {
                return ""
            }
            people = [mine]
        }
        let options = people.map { p -> HTML in "<option value=\"\(p.id)\">\(p.name.isEmpty ? p.id : p.name)</option>" }.joined()
        let reactions = LiveAPI.reactions.map { e -> HTML in "<button type=\"button\" class=\"re\" data-emoji=\"\(e)\">\(e)</button>" }.joined()
        return
            "<div id=\"live\" class=\"live\" hidden><div id=\"typing\" class=\"typing\" hidden><span class=\"dots\"><i></i><i></i><i></i></span> <span id=\"typingname\"></span></div>"
            + "<button type=\"button\" id=\"pill\" class=\"pill\" hidden>New messages ↓</button>"
            + "<div id=\"outbox\" class=\"outbox\"></div>"
            + "<div id=\"banner\" class=\"banner\" hidden><span id=\"bannertext\"></span> <button type=\"button\" id=\"bannercancel\">Cancel</button></div>"
            + "<form id=\"composer\" class=\"composer\" autocomplete=\"off\">"
            + "<select id=\"sendas\" aria-label=\"Send as\"\(identity.user != nil ? HTML(" hidden") : "")>\(options)</select>"
            + "<label class=\"att\" title=\"Attach a photo\">📷<input type=\"file\" id=\"photo\" accept=\"image/jpeg,image/png,image/gif,image/webp\"></label>"
            + "<textarea id=\"text\" rows=\"1\" placeholder=\"Message\" aria-label=\"Message\"></textarea>"
            + "<button id=\"add\">Send</button></form><div id=\"cerr\" class=\"err\" role=\"alert\"></div>"
            + "<div id=\"actions\" class=\"actions\" hidden>\(reactions)<button type=\"button\" data-act=\"reply\">Reply</button>"
            + "<button type=\"button\" data-act=\"edit\">Edit</button><button type=\"button\" data-act=\"delete\">Delete</button></div></div>"
    }

    /// `/search?q=`: every conversation's messages the words match (or one's, `conversation=`),
    /// counted in full and grouped by conversation — most matches first, each with its best
    /// hits as lines with the words marked — in the app's frame (on a phone: alone, with a way
    /// back to the list).
    func search(_ query: Parameters, for identity: Identity) async throws -> Response {
        let q = query["q"].map(String.init) ?? ""
        let conversation = try API.integer(query, "conversation", range: 1...Int64.max)
        var body: HTML =
            "<main class=\"pane home\" id=\"main\"><div class=\"bk found\"><a class=\"back\" href=\"/\" aria-label=\"All conversations\">‹ Chats</a>"
            + "<h1>Search</h1>" + Self.searchForm(q, conversation: conversation)
        if !q.trimmingCharacters(in: CharacterSet.whitespaces).isEmpty {
            var params = Parameters()
            params.append(key: "q", value: Substring(q))
            params.append(key: "limit", value: "200")
            if let conversation { params.append(key: "conversation", value: Substring(String(conversation))) }
            let found = try await api.search(params, for: identity)
            let titles = Dictionary(
                try await API.visible(store, accounts, identity).map { ($0.id, $0.title) }, uniquingKeysWith: { (a: String, _: String) in a })
            // The word a hit's page marks: the first one searched for (not excluded, no quotes or *).
            let words = q.split(separator: " ").first { !$0.hasPrefix("-") }.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\"*")) } ?? ""
            if found.hits.isEmpty {
                body += "<p class=\"rsum\">No messages match. Words are found in any order; try fewer words, or a word’s start with *.</p>"
            } else {
                let groups = found.conversations.count
                body +=
                    "<p class=\"rsum\" role=\"status\">\(Self.number(found.total)) \(Plural.noun(found.total, "message"))"
                    + (conversation == nil ? " in \(Self.number(groups)) \(Plural.noun(groups, "conversation"))" : "") + "</p>"
            }
            for count in found.conversations {
                let group = found.hits.filter { $0.conversation == count.id }
                guard !group.isEmpty else { continue }
                let more = count.count > group.count ? " · the best \(group.count)" : ""
                body +=
                    "<section class=\"rgroup\"><h2>\(titles[count.id] ?? "?") <small>\(Self.number(count.count)) \(Plural.noun(count.count, "match", "matches"))\(more)</small></h2><ul>"
                for h in group {
                    // The match marked, everything escaped.
                    let p = h.parts.count == 3 ? h.parts : [h.snippet, "", ""]
                    let marked: HTML = "\(p[0])" + (p[1].isEmpty ? "" : "<mark>\(p[1])</mark>") + "\(p[2])"
                    body +=
                        "<li><a class=\"rhit\" href=\"\(Self.hitURL(h.conversation, h.seq, q: q, highlight: words))\">"
                        + "<time datetime=\"\(h.date)\">\(String(h.date.prefix(10)))</time><b>\(h.sender ?? "")</b>"
                        + "<span class=\"rline\">\(marked)</span></a></li>"
                }
                body += "</ul></section>"
            }
        }
        return await page(
            title: q.isEmpty ? "Search" : "\(q) · Search", body: try await sidebar(for: identity, current: conversation) + body + "</div></main>",
            script: true, bodyClass: "app lib solo", for: identity)
    }
}
