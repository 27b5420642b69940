import BubbleCore
import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore

/// The People page (`/people`): each person with their numbers, emails and app ids, and their
/// conversations from every app; `GET /api/v1/people` gives the same as JSON. Only the
/// conversations the one asking can read are listed, and only people who are in one.
struct PeopleRoutes {
    let pages: Pages

    func register(_ groups: RouteGroups) {
        let pages = self.pages
        groups.api.get("people") { _, context in try await pages.peopleJSON(for: context.identity) }
        groups.pages.get("people") { _, context in try await pages.peoplePage(for: context.identity) }
    }
}

/// `{"name", "identities", "conversations": [ids], "avatar": "/api/v1/attachments/…"}`.
struct PersonEntryJSON: Codable, Sendable {
    var name: String
    var identities: [String]
    var conversations: [Int64]
    var avatar: String?
}

extension Pages {
    /// The people in conversations `identity` can read, each with only those conversations.
    func visiblePeople(for identity: Identity) async throws -> (people: [PersonEntry], conversations: [Int64: StoredConversation]) {
        let visible = try await API.visible(store, accounts, identity)
        let byID = Dictionary(visible.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let people = try await store.peopleEntries().compactMap { entry -> PersonEntry? in
            var e = entry
            e.conversations = e.conversations.filter { byID[$0] != nil }
            return e.conversations.isEmpty ? nil : e
        }
        return (people, byID)
    }

    /// A store file's URL for the page (`/api/v1/attachments/<sha>.<ext>`), nil for other paths.
    func attachmentURL(_ path: String?) -> String? {
        guard let path, path.hasPrefix(store.mediaFolder + "/") else { return nil }
        return "/api/v1/attachments/" + (path as NSString).lastPathComponent
    }

    func peopleJSON(for identity: Identity) async throws -> Response {
        let people = try await visiblePeople(for: identity).people.map {
            PersonEntryJSON(name: $0.name, identities: $0.identities, conversations: $0.conversations, avatar: attachmentURL($0.avatar))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(people))))
    }

    func peoplePage(for identity: Identity) async throws -> Response {
        let (people, conversations) = try await visiblePeople(for: identity)
        var list: HTML = "<ul class=\"people\" id=\"people\" aria-label=\"People\">"
        if people.isEmpty {
            list += "<li class=\"none\">Nobody yet: import conversations, and contacts with <code>bubbles contacts import FILE</code>.</li>"
        }
        for p in people {
            let avatar: HTML =
                attachmentURL(p.avatar).map { "<img class=\"av\" src=\"\($0)\" alt=\"\" width=\"40\" height=\"40\">" }
                ?? "<span class=\"av \(Self.colourClass(p.name))\" aria-hidden=\"true\">\(Self.initials(p.name))</span>"
            let chats = p.conversations.compactMap { conversations[$0] }.map { c -> HTML in
                "<li><a href=\"/c/\(c.id)\">\(c.title)</a> <small>\(Self.appName(c.sourceFormat)) · "
                    + "\(Self.number(c.messageCount)) \(Plural.noun(c.messageCount, "message"))</small></li>"
            }.joined()
            list +=
                "<li class=\"person\">" + avatar + "<div><strong class=\"pn\">\(p.name)</strong>"
                + "<small class=\"ids\">\(p.identities.joined(separator: " · "))</small><ul class=\"pc\">" + chats + "</ul></div></li>"
        }
        list += "</ul>"
        let head: HTML =
            "<header class=\"bk head\"><div class=\"who\"><h1>People</h1><small class=\"meta\">\(Self.number(people.count)) "
            + "\(people.count == 1 ? "person" : "people") · each with their conversations from every app</small></div></header>"
        let body = try await sidebar(for: identity, current: nil) + "<div class=\"pane peoplepane\">" + head + list + "</div>"
        return await page(title: "People", body: body, script: true, bodyClass: "app v", for: identity)
    }
}
