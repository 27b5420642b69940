import BubbleCore
import BubbleHTML
import BubbleStore
import BubbleText
import Foundation
import Hummingbird
import HummingbirdCore

/// The server-rendered pages: the library, a conversation (a window of rows, written by
/// BubbleHTML's `HTMLRowWriter` exactly as the HTML export writes them), search, and the
/// viewer's windows (`view`). Scripts only from `/assets/viewer.js`, style sheets only from
/// `/assets/style.css`.
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

    /// One theme's style sheet (its fonts embedded) and row style.
    struct ThemedStyle: Sendable {
        let name: String
        let theme: Theme
        let themeFolder: String
        let style: HTMLPageStyle
        let css: String
    }

    init(store: any ConversationStore, accounts: any AccountStore, theme name: String, pictures: any PictureDecoder, live: LiveLimits, metrics: ServerMetrics,
         compactFrom: Int) throws {
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
        for n in Set(ThemeLibrary.bundledNames + [name]) {
            let (theme, folder) = try ThemeLibrary.load(n)
            let style = try HTMLPageStyle(theme: theme, themeFolder: folder, options: options, pictures: pictures)
            let all = HTMLFragment(bytes: [], regularFaces: .max, boldFaces: .max)
            // Fonts by URL (`/assets/fonts/…`, served from `fontsFolder`): the style sheet that
            // blocks the first paint is kilobytes, not the ~9 MB of every face embedded.
            let faces = try style.linkedFontFaces(for: [all], under: "/assets")
            fonts.merge(faces.files) { a, _ in a }
            themes[n] = ThemedStyle(name: n, theme: theme, themeFolder: folder, style: style, css: style.css + faces.css + Self.ownRules)
        }
        self.themes = themes
        self.fonts = fonts
        defaultTheme = name
        geometries = Geometries(store: store, pictures: pictures, compactFrom: compactFrom, metrics: metrics)
        insights = Insights(store: store)
        thumbnails = Thumbnails(media: store.mediaFolder, pictures: pictures)
        chartEngine = FastTextEngine()
    }

    /// The theme `?theme=` names (a bundled one), else the server's; a 400 for an unknown name.
    func themed(_ query: Parameters) throws -> ThemedStyle {
        guard let raw = query["theme"], !raw.isEmpty else { return themes[defaultTheme]! }
        guard let t = themes[String(raw)] else {
            throw APIError.badRequest("theme \"\(raw)\" is not one of \(themes.keys.sorted().joined(separator: ", "))")
        }
        return t
    }

    func script() -> Response {
        Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "max-age=300"],
                 body: .init(byteBuffer: ByteBuffer(string: Viewer.script)))
    }

    /// The pages' own rules. A conversation page is a header and a scrolling column
    /// (`#scroller`); with the script the column is as tall as the whole conversation laid out
    /// (`.virtual`) and holds one window of rows (`.vw`), each message's rows (`.vm`) where the layout engine put them.
    static let ownRules = """
        :root{--ui-bg:#fff;--ui-fg:#1d1d1f;--ui-side:#f6f6f8;--ui-line:#dcdce0;--ui-edge:#a9a9b0;--ui-muted:#595959;--ui-soft:#444;--ui-hover:#ececf1;--ui-current:#dce8fd;--ui-field:#fff;--ui-link:#0b5cc0;--ui-accent:#0b84ff}
        @media (prefers-color-scheme:dark){:root:not([data-scheme=light]){--ui-bg:#000;--ui-fg:#f2f2f7;--ui-side:#1c1c1e;--ui-line:#3a3a3c;--ui-edge:#636366;--ui-muted:#aeaeb2;--ui-soft:#c7c7cc;--ui-hover:#2c2c2e;--ui-current:#12355f;--ui-field:#2c2c2e;--ui-link:#64a8ff;--ui-accent:#0b84ff}}
        html[data-scheme=dark]{--ui-bg:#000;--ui-fg:#f2f2f7;--ui-side:#1c1c1e;--ui-line:#3a3a3c;--ui-edge:#636366;--ui-muted:#aeaeb2;--ui-soft:#c7c7cc;--ui-hover:#2c2c2e;--ui-current:#12355f;--ui-field:#2c2c2e;--ui-link:#64a8ff;--ui-accent:#0b84ff}
        .bk{max-width:760px;margin:0 auto;padding:12px 16px;font:15px/1.45 system-ui,sans-serif;color:var(--ui-fg)}
        .bk a{color:var(--ui-link)}.bk h1{font-size:22px;margin:8px 0;color:var(--ui-fg)}.bk table{border-collapse:collapse;width:100%}
        .bk td,.bk th{text-align:left;padding:6px 8px;border-bottom:1px solid var(--ui-line);vertical-align:top}.bk .n{text-align:right}
        .bk form{margin:4px 0;display:inline-block}.bk input,.bk select{font:inherit;padding:3px 6px}.bk mark{background:#ffe58a}.bk small{color:var(--ui-muted)}
        .c>.hl{outline:3px solid #ffcc00;outline-offset:2px}.c mark{background:#ffe58a;color:inherit}
        .bk nav{display:flex;gap:14px;flex-wrap:wrap;align-items:center;justify-content:flex-start;max-width:none;margin:0;padding:2px 0;font-size:14px}
        body.app{margin:0;height:100vh;height:100dvh;display:flex;overflow:hidden;color:var(--ui-fg);background:var(--ui-bg)}
        .side,.ro{font:15px/1.45 system-ui,sans-serif}
        .side{width:320px;flex:none;display:flex;flex-direction:column;border-right:1px solid var(--ui-line);background:var(--ui-side);min-height:0}
        .sidehead{padding:10px 12px;border-bottom:1px solid var(--ui-line);display:flex;flex-direction:column;gap:8px}
        .sidehead .home{font-weight:700;font-size:20px;color:var(--ui-fg);text-decoration:none}
        .sidehead .me{padding:0;border:0;justify-content:flex-start;flex-wrap:wrap}
        .find{margin:0}.find input{width:100%;box-sizing:border-box;font:inherit;padding:6px 12px;border-radius:16px;border:1px solid var(--ui-edge);background:var(--ui-field);color:var(--ui-fg)}
        .chats{list-style:none;margin:0;padding:0;overflow-y:auto;flex:1}
        .chats .none{padding:12px;color:var(--ui-muted);font-size:14px}
        .chat{display:grid;grid-template-columns:44px minmax(0,1fr) auto;column-gap:10px;padding:8px 12px;color:inherit;text-decoration:none;border-bottom:1px solid var(--ui-line)}
        .chat .av{grid-row:1/4;align-self:center}
        .chat .t{font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        .chat time{font-size:12px;color:var(--ui-muted);justify-self:end;align-self:center;padding-left:6px}
        .chat .p,.chat .k{grid-column:2/4;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-size:13px;color:var(--ui-soft)}
        .chat .k{font-size:12px;color:var(--ui-muted)}
        .chat:hover{background:var(--ui-hover)}.chat[aria-current=page]{background:var(--ui-current)}
        .av{display:inline-flex;align-items:center;justify-content:center;width:40px;height:40px;border-radius:50%;color:#fff;font-weight:600;font-size:15px;flex:none}
        .k0{background:#4d5fd0}.k1{background:#227a52}.k2{background:#a85d12}.k3{background:#ad2f6c}.k4{background:#6a4bc4}.k5{background:#1f6f8f}.k6{background:#a0432d}.k7{background:#4f6a16}
        .pane{flex:1;min-width:0;display:flex;flex-direction:column}
        .pane.home{overflow-y:auto}.pane .hint{color:var(--ui-muted)}
        .bk.head{flex:none;display:flex;align-items:center;gap:10px;max-width:none;width:100%;margin:0;box-sizing:border-box;padding:8px 16px;border-bottom:1px solid var(--ui-line);background:var(--ui-bg)}
        .head .who{flex:1;min-width:0}.bk.head h1{font-size:18px;margin:0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:var(--ui-fg)}
        .head .meta{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:var(--ui-muted)}
        .head .back{display:none;font-size:30px;line-height:1;text-decoration:none;color:var(--ui-link);padding:0 6px 4px 0}
        .bk .pager{display:flex;gap:12px;font-size:13px;padding:0;flex-wrap:wrap}.pager small{color:var(--ui-muted)}
        .bk .tools{display:flex;gap:4px;flex:none;padding:0}
        .tool{position:relative}.tool summary{list-style:none;cursor:pointer;padding:5px 10px;border-radius:15px;border:1px solid var(--ui-edge);background:var(--ui-field);color:var(--ui-fg);font-size:13px;white-space:nowrap}
        .tool summary::-webkit-details-marker{display:none}.tool[open] summary{background:var(--ui-current);border-color:var(--ui-accent)}
        .pop{position:absolute;right:0;top:calc(100% + 6px);z-index:10;background:var(--ui-field);color:var(--ui-fg);border:1px solid var(--ui-edge);border-radius:12px;padding:10px;box-shadow:0 4px 16px rgba(0,0,0,.18);min-width:230px}
        .bk .pop form{display:flex;flex-wrap:wrap;gap:6px;align-items:flex-end;margin:0}
        .pop label{display:flex;flex-direction:column;font-size:12px;gap:2px}.pop select{margin-top:6px}
        .ro{flex:none;margin:0;padding:10px 16px;border-top:1px solid var(--ui-line);color:var(--ui-soft);font-size:13px;text-align:center;background:var(--ui-side)}
        :focus-visible{outline:3px solid #0b84ff;outline-offset:2px}
        @media (max-width:1000px){.tool .lbl{display:none}.side{width:270px}}
        @media (max-width:600px){
          body.app.v .side{display:none}
          body.app.lib{flex-direction:column;height:auto;min-height:100vh;overflow:visible}
          body.app.lib .side{width:auto;border-right:0}
          .head .back{display:inline}.tool .lbl{display:none}
          .bk.head{padding:6px 8px;gap:6px}.head .av{width:32px;height:32px;font-size:13px}
          .bk .pager a{display:none}.tool summary{padding:5px 8px}
        }
        #scroller{flex:1;overflow-y:auto;overflow-x:hidden;position:relative}
        #rows.virtual{position:relative;padding:0;overflow:hidden}
        #rows.virtual>.vw{position:absolute;left:0;right:0;top:0}
        .vw>.vm{position:absolute;left:0;right:0;max-width:none;margin:0;padding:0}
        .bk .up{display:block;margin:8px 0}.bk h2.hits{font-size:16px;margin:16px 0 4px}.bk .err{color:#b00020}.bk progress{width:160px}
        .live{flex:none;border-top:1px solid var(--ui-line);padding:6px 12px 8px;font:15px/1.4 system-ui,sans-serif;position:relative;background:var(--ui-side);color:var(--ui-fg)}
        .composer{display:flex;gap:8px;align-items:flex-end;max-width:760px;margin:0 auto}
        .composer textarea{flex:1;resize:none;font:inherit;padding:7px 12px;border:1px solid var(--ui-edge);background:var(--ui-field);color:var(--ui-fg);border-radius:18px;max-height:160px;overflow-y:auto;box-sizing:border-box}
        .composer select,.composer button{font:inherit;padding:6px 10px;border-radius:16px;border:1px solid var(--ui-edge);background:var(--ui-field);color:var(--ui-fg)}
        .composer #add{background:#0b84ff;color:#fff;border-color:#0b84ff;font-weight:600}
        .att{cursor:pointer;padding:6px 4px;font-size:18px;position:relative}.att input{position:absolute;left:0;top:0;width:1px;height:1px;opacity:0}
        .live .err{color:#b00020;font-size:13px;max-width:760px;margin:2px auto 0}
        .outbox{max-width:760px;margin:0 auto}.outbox .ob{display:flex;flex-direction:column;align-items:flex-end;margin:2px 0 6px}
        .outbox .ob.in{align-items:flex-start}
        .outbox .ob>div{background:#0b84ff;color:#fff;border-radius:18px;padding:6px 12px;max-width:70%;white-space:pre-wrap;overflow-wrap:anywhere;opacity:.75}
        .outbox .ob.in>div{background:#e5e5ea;color:#000}
        .outbox .ob small{font-size:11px;color:#777}.outbox .ob.failed>div{background:#d33;opacity:1}
        .outbox .ob button{font:inherit;font-size:11px;border:0;background:none;color:#0b63ce;cursor:pointer;padding:0 0 0 6px}
        .typing{position:absolute;left:16px;top:-30px;background:#e5e5ea;border-radius:14px;padding:4px 10px;font-size:13px;color:#333}
        .dots i{display:inline-block;width:6px;height:6px;margin:0 1px;border-radius:3px;background:#888;animation:bkdot 1s infinite}
        .dots i:nth-child(2){animation-delay:.2s}.dots i:nth-child(3){animation-delay:.4s}
        @keyframes bkdot{0%,60%,100%{opacity:.3}30%{opacity:1}}
        .pill{position:absolute;left:50%;transform:translateX(-50%);top:-38px;border:0;border-radius:16px;padding:6px 14px;background:#0b84ff;color:#fff;font:600 13px system-ui,sans-serif;cursor:pointer;box-shadow:0 1px 4px rgba(0,0,0,.3)}
        .banner{max-width:760px;margin:0 auto 4px;font-size:13px;color:#555;border-left:3px solid #0b84ff;padding-left:8px}
        .banner button{font:inherit;border:0;background:none;color:#0b63ce;cursor:pointer}
        .actions{position:fixed;z-index:5;background:var(--ui-field);color:var(--ui-fg);border:1px solid var(--ui-edge);border-radius:18px;padding:3px 6px;box-shadow:0 2px 8px rgba(0,0,0,.25)}
        .actions button{font:inherit;font-size:14px;border:0;background:none;cursor:pointer;padding:4px 5px;border-radius:12px}
        .actions button:hover{background:var(--ui-hover)}.actions .re.on{background:#cfe3ff}
        .vm{cursor:default}
        .me{flex:none;display:flex;gap:8px;justify-content:flex-end;align-items:center;padding:4px 16px;font:13px system-ui,sans-serif;color:var(--ui-muted);border-bottom:1px solid var(--ui-line)}
        .me button{font:inherit;border:1px solid var(--ui-edge);border-radius:12px;background:var(--ui-field);color:var(--ui-fg);padding:2px 10px;cursor:pointer}
        .signin form{display:flex;flex-direction:column;gap:10px;max-width:320px}
        .signin label{display:flex;flex-direction:column;gap:2px;font-size:14px}
        .signin button{align-self:flex-start;font:inherit;padding:6px 16px;border-radius:16px;border:1px solid #0b84ff;background:#0b84ff;color:#fff;font-weight:600}
        .cal{margin-top:8px;font:13px system-ui,sans-serif}.calhead{display:flex;align-items:center;justify-content:space-between;margin-bottom:4px;font-weight:600}
        .calhead button{font:inherit;border:1px solid var(--ui-edge);border-radius:10px;background:var(--ui-field);color:var(--ui-fg);width:28px;cursor:pointer}
        .calgrid{display:grid;grid-template-columns:repeat(7,32px);gap:2px;text-align:center}.calgrid .wd{color:var(--ui-muted);font-size:11px}
        .cd{position:relative;height:32px;line-height:22px;border-radius:8px;color:var(--ui-muted)}
        button.cd{font:inherit;border:0;background:none;color:var(--ui-fg);cursor:pointer;padding:0}button.cd:hover{background:var(--ui-hover)}
        .dot{position:absolute;left:50%;bottom:3px;transform:translateX(-50%);border-radius:50%;background:var(--ui-accent)}
        .dot.s1{width:4px;height:4px}.dot.s2{width:6px;height:6px}.dot.s3{width:8px;height:8px}
        .sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
        .chat{position:relative}.unread{position:absolute;right:12px;bottom:9px;min-width:20px;height:20px;border-radius:10px;background:var(--ui-accent);color:#fff;font:600 12px/20px system-ui,sans-serif;text-align:center;padding:0 6px;box-sizing:border-box}
        .scheme{align-self:flex-start;font:13px system-ui,sans-serif;border:1px solid var(--ui-edge);border-radius:12px;background:var(--ui-field);color:var(--ui-fg);padding:2px 10px;cursor:pointer}
        .sidehead .glink{font:14px system-ui,sans-serif;color:var(--ui-link);text-decoration:none;align-self:center}
        .sidehead .glinks{display:flex;gap:16px;justify-content:center}.chat img.av{border-radius:50%;object-fit:cover}
        .peoplepane{overflow-y:auto}.people{list-style:none;margin:0;padding:4px 16px;font:15px system-ui,sans-serif;color:var(--ui-fg)}
        .people .person{display:flex;gap:12px;align-items:flex-start;padding:10px 0;border-bottom:1px solid var(--ui-line)}
        .people img.av{border-radius:50%;object-fit:cover;flex:none}.people .ids{display:block;color:var(--ui-muted);font-size:13px;margin:2px 0 4px}
        .people .pc{list-style:none;margin:0;padding:0}.people .pc a{color:var(--ui-link);text-decoration:none}.people .pc small{color:var(--ui-muted)}
        .tabs{display:flex;flex:none;gap:2px;padding:4px 16px;font:14px system-ui,sans-serif;border-bottom:1px solid var(--ui-line);background:var(--ui-bg)}.tabs a{padding:4px 12px;border-radius:14px;color:var(--ui-link);text-decoration:none}
        .tabs a[aria-current=page]{background:var(--ui-current);color:var(--ui-fg);font-weight:600}
        .gfilter{display:flex;gap:12px;align-items:center;padding:6px 16px;font:14px system-ui,sans-serif;color:var(--ui-fg);border-bottom:1px solid var(--ui-line)}
        .gallery{flex:1;overflow-y:scroll;overflow-x:hidden;position:relative;background:var(--ui-bg)}#gspace{position:relative;margin:0 6px}
        .gallery .gm{position:absolute;left:0;right:0;height:36px;margin:0;padding:10px 4px 0;font:600 15px system-ui,sans-serif;color:var(--ui-fg)}
        .gallery .gr{position:absolute;left:0;right:0;height:calc(var(--cell,120px) + 6px);display:flex;gap:6px}
        .gc{position:relative;width:var(--cell,120px);height:var(--cell,120px);flex:none;padding:0;border:0;border-radius:6px;overflow:hidden;background:var(--ui-side);cursor:pointer;color:var(--ui-fg)}
        .gc img{width:100%;height:100%;object-fit:cover;display:block}.gc.gk-sticker img{object-fit:contain}
        .gc:focus-visible{outline:3px solid var(--ui-accent);outline-offset:-3px}
        .gc .gi{display:block;font-size:34px;margin-top:22px}.gc .gn{display:block;font-size:11px;padding:4px 6px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
        .gc .gd{position:absolute;right:4px;bottom:4px;padding:1px 5px;border-radius:8px;background:rgba(0,0,0,.6);color:#fff;font:11px system-ui,sans-serif}
        .gc.broken,.gc.missing{background:repeating-linear-gradient(45deg,var(--ui-side),var(--ui-side) 8px,var(--ui-hover) 8px,var(--ui-hover) 16px)}
        .lightbox{position:fixed;inset:0;z-index:50;display:flex;align-items:center;justify-content:center;gap:8px;background:rgba(0,0,0,.88);color:#fff;font:14px system-ui,sans-serif}
        .lightbox[hidden]{display:none}.lightbox figure{margin:0;max-width:86vw;text-align:center}
        .lightbox img,.lightbox video{max-width:86vw;max-height:78vh;display:block;margin:0 auto}.lightbox figcaption{margin:8px 0}.lightbox a{color:#8fc1ff}
        .lightbox button{background:none;border:0;color:#fff;font-size:36px;cursor:pointer;padding:8px}#lbclose{position:absolute;top:8px;right:12px;font-size:24px}
        main.stats{max-width:760px}.stats .chart{width:100%;height:auto;display:block;margin:8px 0 16px;border-radius:8px}.stats form.tz{margin:4px 0}
        .stats td,.stats th{padding:3px 10px;text-align:left;border-bottom:1px solid var(--ui-line)}
        """

    /// `/assets/fonts/NAME`: a font of the style sheets (only those), cached for a day.
    func font(_ name: String) throws -> Response {
        guard let path = fonts[name], let data = FileManager.default.contents(atPath: path) else {
            throw APIError.notFound("no font \(name.prefix(80))")
        }
        let ext = PathText.fileExtension(name).lowercased()
        let type = ["ttf": "font/ttf", "otf": "font/otf", "woff": "font/woff", "woff2": "font/woff2", "ttc": "font/collection"][ext] ?? "application/octet-stream"
        return Response(status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=86400"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    func styleSheet(_ query: Parameters) throws -> Response {
        Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=300"],
                 body: .init(byteBuffer: ByteBuffer(string: try themed(query).css)))
    }

    static func escape(_ s: String) -> String { HTMLEscape.text(s) }

    /// A search hit's page, as an attribute value: the conversation at that message, the search
    /// (for the previous and next hits) and the word to mark.
    static func hitURL(_ id: Int64, _ seq: Int64, q: String, highlight: String) -> String {
        let q = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let hl = highlight.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "/c/\(id)?at=\(seq)&amp;q=\(q)&amp;hl=\(hl)"
    }

    /// A whole page. A signed-in user's carries the session's CSRF token (`bk-csrf`, which the
    /// script sends with every write), their name and a sign-out button.
    static func page(title: String, body: String, script: Bool = false, extraScript: String? = nil, theme: String? = nil, bodyClass: String? = nil,
                     for identity: Identity = .owner) -> Response {
        let sheet = "/assets/style.css" + (theme.map { "?theme=" + escape($0) } ?? "")
        var meta = "", bar = ""
        if let user = identity.user {
            meta = "<meta name=\"bk-user\" content=\"\(escape(user.key))\">" + (identity.csrf.map { "<meta name=\"bk-csrf\" content=\"\($0)\">" } ?? "")
            bar = "<div class=\"me\" id=\"me\"><span>\(escape(user.displayName))</span> <button type=\"button\" id=\"signout\">Sign out</button>"
                + " <button type=\"button\" id=\"signoutall\" title=\"End every session of yours, on every device\">Sign out everywhere</button></div>"
        }
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
            <meta name="referrer" content="no-referrer">\(meta)<title>\(escape(title))</title>
            <link rel="stylesheet" href="\(sheet)">\(script || !bar.isEmpty ? "<script src=\"/assets/viewer.js\" defer></script>" : "")\(extraScript.map { "<script src=\"\($0)\" defer></script>" } ?? "")</head>
            <body\(bodyClass.map { " class=\"\($0)\"" } ?? "")>\(body.contains(Self.barPlace) ? body.replacingOccurrences(of: Self.barPlace, with: bar) : bar + body)</body></html>

            """
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// Where a page's frame wants the signed-in user's bar (else it opens the body).
    static let barPlace = "<!--me-->"

    static func searchForm(_ q: String = "", conversation: Int64? = nil) -> String {
        "<form action=\"/search\" method=\"get\"><input type=\"search\" name=\"q\" value=\"\(escape(q))\" placeholder=\"Search\" aria-label=\"Search\">"
            + (conversation.map { "<input type=\"hidden\" name=\"conversation\" value=\"\($0)\">" } ?? "")
            + " <button>Search</button></form>"
    }

    func library(for identity: Identity) async throws -> Response {
        let importer = identity.user?.isAdmin ?? true
        var body = "<main class=\"pane home\"><div class=\"bk\"><h1>Conversations</h1>"
            + "<p class=\"hint\">Open one from the list — or add an export, or start a live conversation.</p>"
        if importer { body += "<form id=\"upload\" class=\"up\" action=\"/api/v1/imports\" method=\"post\" enctype=\"multipart/form-data\">"
            + "<label>Add an export (SMS Backup &amp; Restore XML, WhatsApp .txt or .zip, Telegram JSON, iMessage chat.db, Messenger or Instagram .zip, DiscordChatExporter JSON, BubbleKit JSON): "
            + "<input type=\"file\" name=\"file\" id=\"file\"></label> <button>Import</button> "
            + "<progress id=\"progress\" hidden max=\"1\" value=\"0\"></progress> <span id=\"status\" role=\"status\"></span></form>" }
        // With accounts, participants are user names (the script puts the signed-in user first).
        let people = identity.user == nil ? "You, Ann, …" : "user names: ann, ben"
        body += "<form id=\"newchat\" class=\"up\" hidden><label>New conversation: <input id=\"newtitle\" placeholder=\"Title\" aria-label=\"Title\" maxlength=\"500\"></label> "
            + "<input id=\"newpeople\" placeholder=\"\(people)\" aria-label=\"Participants, you first\" size=\"24\"> <button>Start</button> "
            + "<span id=\"newstatus\" role=\"status\"></span></form></div></main>"
        return Self.page(title: "BubbleKit", body: try await sidebar(for: identity, current: nil) + body, script: true, bodyClass: "app lib", for: identity)
    }

    /// Rows of `messages[range]` of a conversation as HTML, each message's rows numbered by its
    /// sequence number (`first` for the range's first), in context: the message before decides
    /// groups and day separators, the one after the last tail. Also whether they have an avatar
    /// column (their container then has class `w`).
    func rowsAndColumn(_ messages: [Message], _ range: Range<Int>, first: Int64, of c: (title: String?, participants: [Participant]),
                       in themed: ThemedStyle, width: Double? = nil) throws -> (html: String, avatars: Bool) {
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
    func rows(_ window: [StoredMessage], of c: StoredConversation, in themed: ThemedStyle, perspective: String? = nil) async throws -> (html: String, avatars: Bool) {
        guard let first = window.first, let last = window.last else { return ("", false) }
        let seen = { (m: Message) in Geometries.seen(m, by: perspective) }
        // As the geometry's messages are.
        var messages = Geometries.seen(window.map(\.message), by: perspective,
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
        let band = try query["h"].map { raw -> Double in
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
            return Self.json(status: .accepted) { out in out.field("measuring", true); out.field("done", p.done); out.field("total", p.total) }
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
        let messages = geometry.list.isCompact ? try await geometries.window(around, of: geometry, key: key, theme: themed.theme)
            : around.map(geometry.message)
        let local = (range.lowerBound - around.lowerBound)..<(range.upperBound - around.lowerBound)
        let (html, avatars) = try rowsAndColumn(messages, local, first: geometry.seqs[range.lowerBound], of: (geometry.list.conversation.title, geometry.list.conversation.participants), in: themed, width: column)
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
        let themed = try themed(query)
        let (window, c) = try await api.window(id, query)
        let bounds = try await store.bounds(of: id)
        let keep = themed.name == defaultTheme ? "" : "&amp;theme=" + Self.escape(themed.name)
        // Earlier / later windows as links (the script scrolls instead), and the newest.
        var pager = "<nav class=\"pager\" aria-label=\"Pages of the conversation\">"
        if let first = window.first, let b = bounds, first.seq > b.first { pager += "<a href=\"/c/\(id)?before=\(first.seq)\(keep)\" rel=\"prev\">← Earlier</a>" }
        if let last = window.last, let b = bounds, last.seq < b.last { pager += "<a href=\"/c/\(id)?after=\(last.seq)\(keep)\" rel=\"next\">Later →</a>" }
        pager += "<a href=\"/c/\(id)\(keep.isEmpty ? "" : "?" + keep.dropFirst(5))\" id=\"newest\">Newest</a>"
        // Opened from a search hit: the previous and next hits in this conversation.
        let at = try API.integer(query, "at", range: 1...Int64.max)
        let highlight = query["hl"].map(String.init) ?? ""
        if let at, let q = query["q"], !q.trimmingCharacters(in: .whitespaces).isEmpty {
            let seqs = ((try? await store.search(StoreSearch(String(q), conversation: id, limit: 200))) ?? []).map(\.seq).sorted()
            let link = { (seq: Int64, rel: String, text: String) in
                "<a href=\"\(Self.hitURL(id, seq, q: String(q), highlight: highlight))\(keep)\" id=\"\(rel)-hit\">\(text)</a>"
            }
            if let p = seqs.last(where: { $0 < at }) { pager += link(p, "prev", "↑ previous hit") }
            if let n = seqs.first(where: { $0 > at }) { pager += link(n, "next", "↓ next hit") }
        }
        pager += "<small id=\"range\"></small></nav>"
        // The toolbar: search here, a date (the calendar and the months with their counts, filled
        // by the script from the per-day counts), export, theme; invite for a member who writes.
        let day = { (d: Date?) in d.map(API.day) ?? "" }
        var tools = "<nav class=\"tools\" aria-label=\"Conversation tools\">"
        tools += Self.tool("🔍", "Search", "Search in this conversation", Self.searchForm(conversation: id))
        tools += Self.tool("📅", "Date", "Jump to a date",
                           "<form action=\"/c/\(id)\" method=\"get\" id=\"day\"><input type=\"date\" name=\"date\" min=\"\(day(c.first))\" max=\"\(day(c.last))\" aria-label=\"Go to a day\">"
                           + (keep.isEmpty ? "" : "<input type=\"hidden\" name=\"theme\" value=\"\(Self.escape(themed.name))\">") + " <button>Go</button></form>"
                           + "<select id=\"months\" hidden aria-label=\"Go to a month\"></select><div id=\"calendar\" class=\"cal\" hidden></div>")
        // Downloads, made by the renderers: the whole conversation or the days between two dates.
        tools += Self.tool("⬇", "Export", "Download the conversation (PDF, PNG, HTML, JSON, CSV)",
                           "<form action=\"/api/v1/conversations/\(id)/export\" method=\"get\" id=\"export\"><label>Format <select name=\"format\" aria-label=\"Export format\">"
                           + ["pdf", "png", "html", "json", "csv"].map { "<option>\($0)</option>" }.joined() + "</select></label>"
                           + "<label>From <input type=\"date\" name=\"since\" aria-label=\"From\" min=\"\(day(c.first))\" max=\"\(day(c.last))\"></label>"
                           + "<label>Until <input type=\"date\" name=\"until\" aria-label=\"Until (not included)\" min=\"\(day(c.first))\" max=\"\(day(c.last))\"></label>"
                           + "<input type=\"hidden\" name=\"theme\" value=\"\(Self.escape(themed.name))\"> <button>Export</button></form>")
        tools += Self.tool("🎨", "Theme", "The bubbles' theme",
                           "<form action=\"/c/\(id)\" method=\"get\" id=\"themes\"><select name=\"theme\" aria-label=\"Theme\">"
                           + themes.keys.sorted().map { "<option\($0 == themed.name ? " selected" : "")>\(Self.escape($0))</option>" }.joined()
                           + "</select> <button>Apply</button></form>")
        // A signed-in member who writes invites others: a single-use link to hand over.
        if identity.user != nil, access?.writes == true {
            tools += Self.tool("➕", "Invite", "Make a single-use link that lets someone join",
                               "<button type=\"button\" id=\"invite\">Make a link</button><input id=\"invitelink\" readonly hidden aria-label=\"Invitation link\" size=\"40\">")
        }
        tools += "</nav>"
        let viewer = try await perspective(id, query, for: identity)
        let firstScreen = try await rows(window, of: c, in: themed, perspective: viewer)
        let range = window.isEmpty ? "no messages" : "messages \(window.first!.seq)–\(window.last!.seq) of \(c.messageCount)"
        pager = pager.replacingOccurrences(of: "<small id=\"range\"></small>", with: "<small id=\"range\">\(range)</small>")
        let rev = try await store.lastRev(of: id) ?? 0
        // The composer only where one writes: live conversations; an archive says it is one.
        let composer = c.sourceFormat == "live" ? try await composer(c, for: identity, access: access) : ""
        let footer = composer.isEmpty
            ? "<p class=\"ro\" role=\"note\">\(c.sourceFormat == "live" ? "You can read this conversation." : "Imported from \(Self.appName(c.sourceFormat))") · read-only</p>"
            : composer
        let newest = query["after"] == nil && query["before"] == nil && query["at"] == nil && query["date"] == nil
        let side = try await sidebar(for: identity, current: id)
        let body = side + "<div class=\"pane\"><header class=\"bk head\">" + Self.header(c) + pager + "</div>" + tools + "</header>" + Self.tabs(id, current: "Messages")
            + "<div id=\"announce\" class=\"sr\" role=\"log\" aria-live=\"polite\" aria-label=\"New messages\"></div>"
            + "<div id=\"scroller\"><main class=\"c\(firstScreen.avatars ? " w" : "")\" id=\"rows\" aria-label=\"Messages\" "
            + "data-live=\"\(c.sourceFormat == "live")\" data-last=\"\(bounds?.last ?? 0)\" "
            + "data-id=\"\(id)\" data-theme=\"\(Self.escape(themed.name))\" data-count=\"\(c.messageCount)\" "
            + "data-at=\"\(at.map(String.init) ?? "")\" data-hl=\"\(Self.escape(highlight))\" data-date=\"\(Self.escape(query["date"].map(String.init) ?? ""))\" "
            + "data-newest=\"\(newest)\" data-rev=\"\(rev)\" data-max-text=\"\(live.maxText)\" data-as=\"\(Self.escape(viewer ?? ""))\">\n"
            + firstScreen.html + "</main></div>" + footer + "</div>"
        return Self.page(title: c.title, body: body, script: true, theme: keep.isEmpty ? nil : themed.name, bodyClass: "app v", for: identity)
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
    func composer(_ c: StoredConversation, for identity: Identity, access: MemberAccess?) async throws -> String {
        let owner = try await store.owner(of: c.id)
        var people = c.participants.sorted { ($0.id == owner ? 0 : 1) < ($1.id == owner ? 0 : 1) }
        // A signed-in user is who they are: no "send as"; one who only reads gets no composer.
        if let me = identity.speaker {
            guard let mine = people.first(where: { $0.id == me }), access?.writes == true else {
                return ""
            }
            people = [mine]
        }
        let options = people.map { "<option value=\"\(Self.escape($0.id))\">\(Self.escape($0.name.isEmpty ? $0.id : $0.name))</option>" }.joined()
        let reactions = LiveAPI.reactions.map { "<button type=\"button\" class=\"re\" data-emoji=\"\($0)\">\($0)</button>" }.joined()
        return "<div id=\"live\" class=\"live\" hidden><div id=\"typing\" class=\"typing\" hidden><span class=\"dots\"><i></i><i></i><i></i></span> <span id=\"typingname\"></span></div>"
            + "<button type=\"button\" id=\"pill\" class=\"pill\" hidden>New messages ↓</button>"
            + "<div id=\"outbox\" class=\"outbox\"></div>"
            + "<div id=\"banner\" class=\"banner\" hidden><span id=\"bannertext\"></span> <button type=\"button\" id=\"bannercancel\">Cancel</button></div>"
            + "<form id=\"composer\" class=\"composer\" autocomplete=\"off\">"
            + "<select id=\"sendas\" aria-label=\"Send as\"\(identity.user != nil ? " hidden" : "")>\(options)</select>"
            + "<label class=\"att\" title=\"Attach a photo\">📷<input type=\"file\" id=\"photo\" accept=\"image/jpeg,image/png,image/gif,image/webp\"></label>"
            + "<textarea id=\"text\" rows=\"1\" placeholder=\"Message\" aria-label=\"Message\"></textarea>"
            + "<button id=\"add\">Add</button></form><div id=\"cerr\" class=\"err\" role=\"alert\"></div>"
            + "<div id=\"actions\" class=\"actions\" hidden>\(reactions)<button type=\"button\" data-act=\"reply\">Reply</button>"
            + "<button type=\"button\" data-act=\"edit\">Edit</button><button type=\"button\" data-act=\"delete\">Delete</button></div></div>"
    }

    func search(_ query: Parameters, for identity: Identity) async throws -> Response {
        let q = query["q"].map(String.init) ?? ""
        let conversation = try API.integer(query, "conversation", range: 1...Int64.max)
        var body = "<main class=\"pane home\"><div class=\"bk\"><h1>Search</h1>" + Self.searchForm(q, conversation: conversation)
        if !q.trimmingCharacters(in: CharacterSet.whitespaces).isEmpty {
            let hits: [StoreHit]
            let within = try await API.within(accounts, identity)
            if let conversation, within.map({ !$0.contains(conversation) }) ?? false { throw APIError.notFound("no conversation \(conversation)") }
            do { hits = try await store.search(StoreSearch(q, conversation: conversation, limit: 50, within: within)) } catch let e as StoreError {
                throw APIError.badRequest(e.reason)
            }
            let titles = Dictionary(try await API.visible(store, accounts, identity).map { ($0.id, $0.title) }, uniquingKeysWith: { (a: String, _: String) in a })
            // The word a hit's page marks: the first one searched for (not excluded, no quotes or *).
            let words = q.split(separator: " ").first { !$0.hasPrefix("-") }.map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "\"*")) } ?? ""
            if hits.isEmpty { body += "<p>No messages match.</p>" }
            // Hits grouped by conversation, the conversation of the best hit first.
            var order: [Int64] = []
            for h in hits where !order.contains(h.conversation) { order.append(h.conversation) }
            for c in order {
                let group = hits.filter { $0.conversation == c }
                body += "<h2 class=\"hits\">\(Self.escape(titles[c] ?? "?")) <small>\(Plural.count(group.count, "hit"))</small></h2><table><tbody>"
                for h in group {
                    // The match marked, everything escaped.
                    let p = h.snippetParts
                    let marked = Self.escape(p[0]) + (p[1].isEmpty ? "" : "<mark>" + Self.escape(p[1]) + "</mark>") + Self.escape(p[2])
                    body += "<tr><td><a href=\"\(Self.hitURL(h.conversation, h.seq, q: q, highlight: words))\">"
                        + "\(Self.escape(String(API.iso(h.date).prefix(16)).replacingOccurrences(of: "T", with: " ")))</a><br>"
                        + "<small>\(Self.escape(h.senderName ?? h.sender ?? ""))</small></td><td>\(marked)</td></tr>"
                }
                body += "</tbody></table>"
            }
        }
        return Self.page(title: "Search", body: try await sidebar(for: identity, current: conversation) + body + "</div></main>",
                         script: true, bodyClass: "app lib", for: identity)
    }
}
