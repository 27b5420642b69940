import BubbleCore
import BubbleStats
import BubbleStore
import BubbleText
import Foundation
import Hummingbird
import HummingbirdCore

/// The Stats and Gallery tabs of a conversation, the library's gallery, and their API:
/// `…/stats` (JSON), `…/stats.svg` (the charts), `…/media` and `/api/v1/media` (the gallery's
/// items), `/api/v1/thumbnails/{id}` (made by the server, kept on disk).
struct InsightRoutes {
    let pages: Pages

    func register(_ groups: RouteGroups) {
        let pages = self.pages
        let one = groups.conversationAPI(.read)
        one.get("stats") { request, context in try await pages.statsJSON(try id(context), request.uri.queryParameters) }
        one.get("stats.svg") { request, context in try await pages.statsSVG(try id(context), request.uri.queryParameters) }
        one.get("media") { _, context in try await pages.media(of: try id(context)) }
        let api = groups.api
        api.get("media") { _, context in try await pages.media(for: context.identity) }
        api.get("thumbnails/:file") { request, context in
            try await pages.thumbnail(context.parameters.get("file") ?? "", request.uri.queryParameters, identity: context.identity)
        }
        let page = groups.conversationPages
        page.get("stats") { request, context in try await pages.statsPage(try id(context), request.uri.queryParameters, for: context.identity) }
        page.get("gallery") { _, context in try await pages.galleryPage(try id(context), for: context.identity) }
        groups.pages.get("gallery") { _, context in try await pages.galleryPage(nil, for: context.identity) }
    }
}

extension Pages {
    /// `?tz=`: an IANA zone (default UTC, the pages' zone), else a 400 naming it.
    static func zone(_ query: Parameters) throws -> TimeZone {
        guard let raw = query["tz"], !raw.isEmpty else { return timeZone }
        guard let z = TimeZone(identifier: String(raw)) else {
            throw APIError.badRequest("tz \"\(raw)\" is not a time zone; expected an IANA name such as Europe/Berlin")
        }
        return z
    }

    func statsJSON(_ id: Int64, _ query: Parameters) async throws -> Response {
        _ = try await api.known(id)
        let stats = try await insights.stats(id, zone: try Self.zone(query))
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: try stats.json())))
    }

    /// The charts as SVG (`?dark=1`, `?locale=de_DE`, `?tz=`), drawn by `StatsChart` in the
    /// server's theme's font.
    func statsSVG(_ id: Int64, _ query: Parameters) async throws -> Response {
        _ = try await api.known(id)
        let stats = try await insights.stats(id, zone: try Self.zone(query))
        let dark = query["dark"].map { $0 == "1" || $0 == "true" } ?? false
        var locale = Locale(identifier: "en_US")
        if let raw = query["locale"], !raw.isEmpty {
            guard raw.wholeMatch(of: #/[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})*/#) != nil else {
                throw APIError.badRequest("locale \"\(raw.prefix(40))\" is not one; expected e.g. en_GB or de_DE")
            }
            locale = Locale(identifier: String(raw))
        }
        let themed = themes[defaultTheme]!
        var chart = StatsChart(theme: themed.theme, engine: chartEngine, dark: dark, locale: locale)
        // The page's column: drawn at the width it is shown at, so a phone's text stays readable.
        if let width = try API.integer(query, "width", range: 300...1_200) { chart.width = Double(width) }
        let page = try chart.page(stats)
        let svg = try pictures.svg([page], theme: themed.theme.appearance(dark: dark), themeFolder: themed.themeFolder)
        return Response(
            status: .ok, headers: [.contentType: "image/svg+xml; charset=utf-8", .cacheControl: "private, max-age=60"],
            body: .init(byteBuffer: ByteBuffer(string: svg)))
    }

    func media(of id: Int64) async throws -> GalleryJSON {
        let c = try await api.known(id)
        let items = try await insights.gallery(id, participants: c.participants)
        return GalleryJSON(items: items, people: Array(Set(items.compactMap { $0.senderName ?? $0.sender })).sorted())
    }

    /// Every conversation's media the identity reaches, newest first.
    func media(for identity: Identity) async throws -> GalleryJSON {
        var items: [GalleryItemJSON] = []
        for c in try await API.visible(store, accounts, identity) {
            items += try await insights.gallery(c.id, participants: c.participants)
        }
        items.sort { $0.date != $1.date ? $0.date > $1.date : ($0.conversation, $0.seq) > ($1.conversation, $1.seq) }
        return GalleryJSON(items: items, people: Array(Set(items.compactMap { $0.senderName ?? $0.sender })).sorted())
    }

    /// `GET /api/v1/thumbnails/{id}?size=256|1024`: the stored picture's thumbnail; a placeholder
    /// (SVG) for one that cannot be read. `X-Thumbnail` says which: made, disk or placeholder.
    func thumbnail(_ file: String, _ query: Parameters, identity: Identity) async throws -> Response {
        guard file.wholeMatch(of: #/[0-9a-f]{64}\.[a-z0-9]{1,10}/#) != nil else {
            throw APIError.badRequest("thumbnail \"\(file.prefix(80))\" is not a stored file; expected the 64 hex digits of its SHA-256 and its extension")
        }
        let size = try API.integer(query, "size", range: 1...4_096).map(Int.init) ?? 256
        guard Thumbnails.sizes.contains(size) else {
            throw APIError.badRequest("size \(size) is not one of \(Thumbnails.sizes.map(String.init).joined(separator: ", "))")
        }
        if identity != .owner {
            guard let user = identity.user, try await accounts.mediaReadable(file, by: user) else { throw APIError.notFound("no attachment \(file)") }
        }
        guard FileManager.default.fileExists(atPath: store.mediaFolder + "/" + file.prefix(2) + "/" + file) else {
            throw APIError.notFound("no attachment \(file)")
        }
        var headers: HTTPFields = [.cacheControl: "private, max-age=86400"]
        let name = HTTPFields.Element.Name("X-Thumbnail")!
        guard let t = await thumbnails.thumbnail(file, size: size) else {
            headers[.contentType] = "image/svg+xml"
            headers[name] = "placeholder"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: Thumbnails.placeholder)))
        }
        headers[.contentType] = t.mime
        headers[name] = t.cached ? "disk" : "made"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: t.bytes)))
    }

    /// Messages · Gallery · Stats.
    static func tabs(_ id: Int64, current: String) -> HTML {
        let tabs = [("Messages", "/c/\(id)"), ("Gallery", "/c/\(id)/gallery"), ("Stats", "/c/\(id)/stats")]
        return "<nav class=\"tabs\" aria-label=\"Views of the conversation\">"
            + tabs.map { name, href -> HTML in
                "<a href=\"\(href)\"\(name == current ? HTML(" aria-current=\"page\"") : "")>\(name)</a>"
            }.joined() + "</nav>"
    }

    func statsPage(_ id: Int64, _ query: Parameters, for identity: Identity) async throws -> Response {
        let c = try await api.known(id)
        let zone = try Self.zone(query)
        let stats = try await insights.stats(id, zone: zone)
        let tz = zone.identifier.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "UTC"
        let chart = "/api/v1/conversations/\(id)/stats.svg?tz=\(tz)"
        var body: HTML =
            try await sidebar(for: identity, current: id) + "<div class=\"pane\"><header class=\"bk head\">" + Self.header(c) + "</div>"
            + "</header>" + Self.tabs(id, current: "Stats") + "<div id=\"scroller\"><main class=\"bk stats\" id=\"stats\" aria-label=\"Statistics\">"
        // The reader's time zone: the script puts the browser's in `tz` unless one was chosen.
        let zones =
            TimeZone.knownTimeZoneIdentifiers.contains(zone.identifier)
            ? TimeZone.knownTimeZoneIdentifiers : [zone.identifier] + TimeZone.knownTimeZoneIdentifiers
        body +=
            "<form method=\"get\" class=\"tz\" id=\"tzform\"><label>Time zone <select name=\"tz\" id=\"tz\">"
            + zones.map { z -> HTML in "<option\(z == zone.identifier ? HTML(" selected") : "")>\(z)</option>" }.joined()
            + "</select></label> <button>Show</button> <a href=\"/api/v1/conversations/\(id)/stats?tz=\(tz)\">JSON</a></form>"
        body +=
            "<picture><source srcset=\"\(chart)&amp;dark=1\" media=\"(prefers-color-scheme: dark)\">"
            + "<img class=\"chart\" id=\"chart\" src=\"\(chart)\" data-src=\"\(chart)\" data-tz=\"\(zone.identifier)\" "
            + "alt=\"Charts: messages per month, who writes, weekday and hour, reply times, emoji and words\"></picture>"
        body += "<h2>People</h2><div class=\"wide\"><table><tr><th>Name</th><th>Messages</th><th>Words</th><th>Media</th><th>Median reply</th></tr>"
        for p in stats.people {
            body +=
                "<tr><td>\(p.name)</td><td>\(Self.number(p.messages))</td><td>\(Self.number(p.words))</td><td>\(Self.number(p.media))</td>"
                + "<td>\(p.medianReplySeconds.map { StatsChart.duration($0) } ?? "–")</td></tr>"
        }
        body += "</table></div><h2>Busiest days</h2><div class=\"wide\"><table><tr><th>Day</th><th>Messages</th></tr>"
        for d in stats.busiestDays { body += "<tr><td>\(d.date)</td><td>\(Self.number(d.messages))</td></tr>" }
        body += "</table></div></main></div></div>"
        return await page(title: c.title + " · Stats", body: body, script: true, bodyClass: "app v", for: identity)
    }

    /// A conversation's gallery (`id`), or every conversation's (nil).
    func galleryPage(_ id: Int64?, for identity: Identity) async throws -> Response {
        var head: HTML = "<header class=\"bk head\">"
        let source: String
        if let id {
            let c = try await api.known(id)
            head += Self.header(c) + "</div></header>" + Self.tabs(id, current: "Gallery")
            source = "/api/v1/conversations/\(id)/media"
        } else {
            head +=
                "<div class=\"who\"><h1>Gallery</h1><small class=\"meta\">Photos, videos, stickers, voice notes and documents of every conversation</small></div>"
            source = "/api/v1/media"
            head += "</header>"
        }
        let filters: HTML =
            "<div class=\"gfilter\" role=\"group\" aria-label=\"Filter\"><label>Kind <select id=\"gkind\"><option value=\"\">All</option>"
            + [
                ("photo", "Photos"), ("video", "Videos"), ("gif", "GIFs"), ("sticker", "Stickers"), ("voice", "Voice notes"), ("audio", "Audio"),
                ("document", "Documents")
            ]
            .map { (value, name) -> HTML in "<option value=\"\(value)\">\(name)</option>" }.joined()
            + "</select></label> <label>From <select id=\"gsender\"><option value=\"\">Everyone</option></select></label> <small id=\"gcount\" role=\"status\">Loading…</small></div>"
        let body: HTML =
            try await sidebar(for: identity, current: id) + "<div class=\"pane\">" + head + filters
            + "<div id=\"gallery\" class=\"gallery\" tabindex=\"0\" data-src=\"\(source)\" aria-label=\"Media, newest first\"><div id=\"gspace\"></div></div>"
            + "<div id=\"lightbox\" class=\"lightbox\" role=\"dialog\" aria-modal=\"true\" aria-label=\"Photo\" hidden><button type=\"button\" id=\"lbclose\" aria-label=\"Close\">✕</button>"
            + "<button type=\"button\" id=\"lbprev\" aria-label=\"Previous\">‹</button><figure><div id=\"lbmedia\"></div><figcaption id=\"lbcaption\"></figcaption>"
            + "<a id=\"lbopen\" href=\"#\">Show in conversation</a></figure><button type=\"button\" id=\"lbnext\" aria-label=\"Next\">›</button></div></div>"
        return await page(title: "Gallery", body: body, script: true, bodyClass: "app v", for: identity)
    }
}
