import BubbleCore
import BubbleStore
import Foundation

/// The messaging-app frame around the pages: a sidebar of conversations (initials, title, the
/// last message's first line and time, the app it came from, its size) with a search field on
/// top, beside the open conversation. At phone width one pane shows at a time (the list on `/`,
/// the conversation with a back button on `/c/ID`). Dates and numbers are written in English
/// and carry their value (`<time datetime>`, `<data value>`), which the script writes again in
/// the reader's locale.
extension Pages {
    /// What the sidebar says of a conversation: its last message (by sequence number).
    struct Preview {
        var text: String
        var date: Date?
        /// The last message's sequence number (0: none).
        var seq: Int64
    }

    /// The app a conversation came from, as people call it.
    static func appName(_ format: String) -> String { SourceApp.name(format) }

    /// Up to two initials of a title ("Ann Lee" → "AL"; "+1 555…" → "#").
    static func initials(_ title: String) -> String {
        let words = title.split { !$0.isLetter && !$0.isNumber }.filter { $0.first?.isLetter == true }
        let letters = words.prefix(2).compactMap { $0.first.map { String($0).uppercased() } }.joined()
        return letters.isEmpty ? "#" : letters
    }

    /// One of eight avatar colours, the same for a title everywhere.
    static func colourClass(_ title: String) -> String {
        var h = StableHash()
        h.add(title.utf8)
        return "k\(Int(h.value % 8))"
    }

    /// `14 Nov 2023` (UTC, the pages' time zone; the script writes it in the reader's locale).
    static func shortDay(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_GB")
        f.timeZone = timeZone
        f.dateFormat = "d MMM yyyy"
        return f.string(from: date)
    }

    /// `1,000,000`.
    static func grouped(_ n: Int) -> String {
        let f = NumberFormatter()
        f.numberStyle = .decimal
        f.locale = Locale(identifier: "en_US")
        return f.string(from: NSNumber(value: n)) ?? String(n)
    }

    static func time(_ date: Date) -> HTML { "<time datetime=\"\(API.iso(date))\">\(shortDay(date))</time>" }
    static func number(_ n: Int) -> HTML { "<data value=\"\(n)\">\(grouped(n))</data>" }

    /// The last message of `c` as a line: its text's first line, else what it holds.
    func preview(_ c: StoredConversation) async throws -> Preview {
        guard let last = try await store.bounds(of: c.id)?.last,
            let m = try await store.messages(in: c.id, before: last + 1, limit: 1).first?.message
        else { return Preview(text: "", date: nil, seq: 0) }
        return Preview(text: Self.previewLine(m, participants: c.participants), date: m.date, seq: last)
    }

    /// The list's line for a message: its text's first line, else what it holds; in a group,
    /// the sender's name first ("Ann: see you at 8").
    static func previewLine(_ m: Message, participants: [Participant]) -> String {
        let line = (m.text ?? "").split(whereSeparator: \.isNewline).first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        let shown = !line.isEmpty ? line : !m.images.isEmpty ? "📷 Photo" : m.attachment.map(Self.attachmentLine) ?? ""
        let who = participants.count > 2 && m.kind != .system ? participants.first { $0.id == m.sender }?.name : nil
        return (who.map { $0 + ": " } ?? "") + String(shown.prefix(120))
    }

    /// A message without text as a line of the list: what it holds.
    static func attachmentLine(_ a: MediaAttachment) -> String {
        switch a.kind {
        case .photo: return "📷 Photo"
        case .video: return "🎬 Video"
        case .gif: return "GIF"
        case .sticker: return "Sticker"
        case .audio: return "🎵 " + (a.fileName ?? "Audio")
        case .voice: return "🎤 Voice message"
        case .document: return "📄 " + (a.fileName ?? "Document")
        case .contact: return "👤 Contact"
        case .location: return "📍 Location"
        case .poll: return "📊 Poll"
        case .viewOnce: return "View once"
        case .deleted: return "This message was deleted"
        default: return "📎 " + (a.fileName ?? "Attachment")
        }
    }

    /// The list of conversations (newest first), with the one open marked.
    func sidebar(for identity: Identity, current: Int64?) async throws -> HTML {
        let all = try await API.visible(store, accounts, identity)
        var rows: [(StoredConversation, Preview)] = []
        for c in all { rows.append((c, try await preview(c))) }
        rows.sort { ($0.1.date ?? $0.0.last ?? .distantPast) > ($1.1.date ?? $1.0.last ?? .distantPast) }
        // Unread per user, kept by the server (the open conversation shows none: it is being read).
        let unread = try await accounts.unread(rows.map(\.0.id), user: ReadMarks.account(identity), own: identity.speaker)
        var s: HTML = "<aside class=\"side\" id=\"side\" aria-label=\"Conversations\">" + Self.sideHead(identity)
        s += "<ul id=\"library\" class=\"chats\" aria-label=\"Conversations\">"
        if rows.isEmpty {
            s += "<li class=\"none\">None yet: add one with the form on the right, or with <code>bubbles import FILE</code>.</li>"
        }
        for (c, p) in rows {
            let mark: HTML = c.id == current ? " aria-current=\"page\"" : ""
            // A one-to-one chat with someone whose card has a picture shows it.
            let picture = c.participants.count == 2 ? c.participants.compactMap { attachmentURL($0.avatar) }.first : nil
            let avatar: HTML =
                picture.map { "<img class=\"av\" src=\"\($0)\" alt=\"\" width=\"40\" height=\"40\">" }
                ?? "<span class=\"av \(Self.colourClass(c.title))\" aria-hidden=\"true\">\(Self.initials(c.title))</span>"
            let when: HTML = p.date.map(Self.time) ?? ""
            let size: HTML = "\(Self.appName(c.sourceFormat)) · \(Self.number(c.messageCount)) \(Plural.noun(c.messageCount, "message"))"
            // Live conversations carry their newest message: the script counts what is unread.
            let last: HTML = c.sourceFormat == "live" ? " data-last=\"\(p.seq)\"" : ""
            let n = c.id == current ? 0 : unread[c.id] ?? 0
            let badge: HTML = n > 0 ? "<span class=\"unread\" aria-label=\"\(Self.grouped(n)) unread\">\(Self.number(n))</span>" : ""
            s += "<li><a class=\"chat\" href=\"/c/\(c.id)\" data-id=\"\(c.id)\"\(mark)\(last)>" + avatar + "<span class=\"t\">\(c.title)</span>" + when
            s += "<span class=\"p\">\(p.text)</span><span class=\"k\">" + size + "</span>" + badge + "</a></li>"
        }
        return s + "</ul></aside>"
    }

    /// The top of the list, as the messaging apps have it: who is signed in (their avatar),
    /// "Chats", the gallery and people as icons, + (import or start a conversation) and one ⋮
    /// menu for light/dark and signing out; then the search field.
    static func sideHead(_ identity: Identity) -> HTML {
        let user = identity.user
        let name = user?.displayName ?? "You"
        let adds = user != nil || identity == .owner
        var s: HTML =
            "<div class=\"sidehead\"><div class=\"toprow\">"
            + "<span class=\"av self \(colourClass(name))\" title=\"\(name)\" aria-hidden=\"true\">\(initials(name))</span>"
            + "<a class=\"home\" href=\"/\">Chats</a><span class=\"icons\">"
            + "<a class=\"icon\" href=\"/gallery\" title=\"Gallery: photos and files of every conversation\" aria-label=\"Gallery\">🖼</a>"
            + "<a class=\"icon\" href=\"/people\" title=\"People: everyone, with their conversations from every app\" aria-label=\"People\">👥</a>"
        if adds { s += "<a class=\"icon\" href=\"/?add=1\" title=\"Add an export or start a conversation\" aria-label=\"Add a conversation\">＋</a>" }
        s += "<details class=\"tool menu\"><summary title=\"Menu\" aria-label=\"Menu\"><span aria-hidden=\"true\">⋮</span></summary><div class=\"pop\">"
        if let user {
            s += "<p class=\"who\"><b>\(user.displayName)</b><small>\(user.name)\(user.isAdmin ? " · admin" : "")</small></p>"
        }
        s += "<button type=\"button\" class=\"item scheme\" id=\"scheme\">◐ Dark</button>"
        if user != nil {
            s +=
                "<button type=\"button\" class=\"item\" id=\"signout\">Sign out</button>"
                + "<button type=\"button\" class=\"item\" id=\"signoutall\" title=\"End every session of yours, on every device\">Sign out everywhere</button>"
        }
        return s + "</div></details></span></div>"
            + "<form action=\"/search\" method=\"get\" role=\"search\" class=\"find\"><input type=\"search\" name=\"q\" id=\"findall\" "
            + "placeholder=\"Search  (/)\" aria-label=\"Search all conversations\"></form></div>"
    }

    /// The open conversation's header: back (phone width), avatar, title, participants, size
    /// and dates, and where the page is.
    static func header(_ c: StoredConversation) -> HTML {
        let people = c.participants.map(\.name).filter { !$0.isEmpty }
        let dates = [c.first, c.last].compactMap { $0 }
        let span: HTML = dates.isEmpty ? "" : " · " + (Set(dates.map(shortDay)).count == 1 ? time(dates[0]) : time(dates[0]) + " – " + time(dates[1]))
        return "<a class=\"back\" href=\"/\" aria-label=\"All conversations\" title=\"All conversations\">‹</a>"
            + "<span class=\"av \(colourClass(c.title))\" aria-hidden=\"true\">\(initials(c.title))</span>"
            + "<div class=\"who\"><h1>\(c.title)</h1><small class=\"meta\">\(people.joined(separator: ", "))"
            + (people.isEmpty ? "" : " · ")
            + "\(appName(c.sourceFormat)) · <span id=\"msgcount\">\(number(c.messageCount)) \(Plural.noun(c.messageCount, "message"))</span>\(span)</small>"
    }

    /// A toolbar button that opens a small panel (`<details>`: works without the script; Esc
    /// and a click elsewhere close it).
    static func tool(_ icon: String, _ label: String, _ tip: String, _ panel: HTML) -> HTML {
        "<details class=\"tool\"><summary title=\"\(tip)\" aria-label=\"\(label)\"><span aria-hidden=\"true\">\(icon)</span> <span class=\"lbl\">\(label)</span></summary>"
            + "<div class=\"pop\">\(panel)</div></details>"
    }
}
