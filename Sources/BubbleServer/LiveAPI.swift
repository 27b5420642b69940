import BubbleCore
import BubbleMarkup
import BubbleMedia
import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore
import NIOPosix

/// Limits of live writes: a message's size, and how fast one connection may send.
public struct LiveLimits: Sendable {
    /// Largest text of a message (UTF-8 bytes); more is a 413.
    public var maxText: Int
    /// Writes per second a WebSocket connection may make on average (0: no limit)…
    public var rate: Double
    /// …and at once.
    public var burst: Double
    /// Limits of `maxText` bytes a message and `rate` writes a second (`burst` at once).
    public init(maxText: Int = defaultMaxLiveText, rate: Double = 100, burst: Double = 200) {
        self.maxText = maxText; self.rate = rate; self.burst = burst
    }
}

/// Live writes, the same for the JSON API and the socket: new conversations, messages (exactly
/// once by client id), edits, deletions, reactions, replies, photos; and catch-up by revision.
/// Each request is a JSON object; a refusal is an `APIError` (400, 404, 409, 413) and stores
/// nothing.
struct LiveAPI: Sendable {
    let store: any ConversationStore
    let accounts: any AccountStore
    let hub: LiveHub
    let limits: LiveLimits
    let pictures: any PictureDecoder

    /// The reactions a client may add: iMessage's tapbacks and WhatsApp's quick reactions.
    static let reactions = ["❤️", "👍", "👎", "😂", "‼️", "❓", "😮", "😢", "🙏"]

    /// `POST /api/v1/conversations` `{"title", "participants": ["Ann", {"id", "name"}, …]}`: the
    /// first participant is the outgoing side.
    func createConversation(_ body: NewConversationRequest, by identity: Identity) async throws -> ConversationJSON {
        if let me = identity.user { return try await createConversation(body, by: me) }
        let title = body.title?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard let list = body.participants, !list.isEmpty, list.count <= 50 else {
            throw APIError.badRequest("participants: expected 1 to 50 names or {\"id\", \"name\"} objects")
        }
        var people: [Participant] = []
        for (i, item) in list.enumerated() {
            let name: String, given: String?
            switch item {
            case .name(let s): name = s; given = nil
            case .given(let id, let n): name = n; given = id
            }
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, trimmed.count <= 200 else { throw APIError.badRequest("participants[\(i)]: expected a name of 1 to 200 characters") }
            var id = given ?? Self.slug(trimmed)
            if given == nil { var n = 2; while people.contains(where: { $0.id == id }) { id = Self.slug(trimmed) + "-\(n)"; n += 1 } }
            guard !id.isEmpty, id.count <= 100, !people.contains(where: { $0.id == id }) else {
                throw APIError.badRequest("participants[\(i)]: id \"\(id)\" is empty, too long or given twice")
            }
            people.append(Participant(id: id, name: trimmed))
        }
        guard title.count <= 500 else { throw APIError.badRequest("title: expected at most 500 characters") }
        let c = try await store.createConversation(title: title.isEmpty ? people.map(\.name).joined(separator: ", ") : title, participants: people)
        var o = ConversationJSON(c)
        o.rev = 0
        o.owner = people[0].id
        return o
    }

    /// With accounts: `participants` are user names; the creator is one of them (an admin may
    /// create for others) and its owner — the first named is the outgoing side of the stored
    /// conversation — and everyone named is a member who writes.
    func createConversation(_ body: NewConversationRequest, by me: StoredUser) async throws -> ConversationJSON {
        let title = body.title?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard title.count <= 500 else { throw APIError.badRequest("title: expected at most 500 characters") }
        guard let list = body.participants, !list.isEmpty, list.count <= 50 else {
            throw APIError.badRequest("participants: expected 1 to 50 user names")
        }
        var users: [StoredUser] = []
        for (i, item) in list.enumerated() {
            guard case .name(let name) = item else { throw APIError.badRequest("participants[\(i)]: expected a user name") }
            guard let user = try await accounts.user(named: name.trimmingCharacters(in: .whitespaces))?.user, !user.disabled else {
                throw APIError.badRequest("participants[\(i)]: no user named \"\(name)\"")
            }
            if !users.contains(where: { $0.id == user.id }) { users.append(user) }
        }
        if let mine = users.firstIndex(where: { $0.id == me.id }) {
            users.insert(users.remove(at: mine), at: 0)
        } else if !me.isAdmin {
            throw APIError.forbidden("participants: you (\(me.name)) must be one of them; only an admin creates conversations for others")
        }
        let people = users.map { Participant(id: $0.key, name: $0.displayName) }
        let c = try await store.createConversation(title: title.isEmpty ? people.map(\.name).joined(separator: ", ") : title, participants: people)
        for (i, u) in users.enumerated() { try await accounts.setMember(c.id, user: u, access: i == 0 ? .owner : .write) }
        var o = ConversationJSON(c)
        o.rev = 0
        o.owner = people[0].id
        return o
    }

    /// A participant id from a name: lower case letters and digits joined by "-".
    static func slug(_ name: String) -> String {
        let parts = name.lowercased().split { !($0.isLetter || $0.isNumber) }
        return parts.joined(separator: "-").prefix(60).description
    }

    /// Who writes: the signed-in user (`speaker`; a `sender` naming anyone else is a 403), or in
    /// single-owner mode the `sender` given.
    static func sender(_ given: String?, speaker: String?) throws -> String {
        guard let speaker else {
            guard let given, !given.isEmpty else { throw APIError.badRequest("sender: expected a string") }
            return given
        }
        if let given, !given.isEmpty, UserName.key(given) != speaker {
            throw APIError.forbidden("sender \"\(given)\" is not you (\(speaker)); you write as yourself only")
        }
        return speaker
    }

    /// A new message: `{"clientId": UUID, "text", "sender", "photo"?: id, "replyTo"?: seq}`.
    func send(_ conversation: Int64, _ body: SendRequest, as speaker: String?) async throws -> AddedMessage {
        guard let raw = body.clientId, let uuid = UUID(uuidString: raw) else {
            throw APIError.badRequest("clientId: expected a UUID made by the client (the same one when it sends again)")
        }
        let sender = try Self.sender(body.sender, speaker: speaker)
        let text = body.text
        let photo = try body.photo.map(photoAttachment)
        if photo != nil, let name = body.photo, let speaker {
            // A signed-in user sends photos of conversations they reach (an id seen elsewhere
            // is not a way into another conversation's files).
            guard let me = try await accounts.user(named: speaker)?.user, try await accounts.mediaReadable(name, by: me) else {
                throw APIError.badRequest("photo \"\(name)\": no such photo in the store; upload it first")
            }
            try await accounts.recordMedia([name], in: conversation)
        }
        let blank = (text ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        guard !blank || photo != nil else { throw APIError.badRequest("text: empty or only spaces; expected something to send (or a photo)") }
        if let text { try checkSize(text) }
        let replyTo = try body.replyTo.map { n -> Int64 in
            guard n >= 1 else { throw APIError.badRequest("replyTo: expected a sequence number ≥ 1") }
            return n
        }
        // What was typed, read as chat markup: `*bold*` is stored as "bold" with a bold span.
        let (plain, spans) = blank ? ("", []) : Self.markup(text ?? "")
        let new = NewMessage(
            clientID: uuid.uuidString.lowercased(), text: blank ? nil : plain, sender: sender, photo: photo, replyTo: replyTo,
            spans: spans)
        return try await write(conversation, by: sender) { try await store.add(new, to: conversation) }
    }

    /// `{"text", "sender"}`: the author's new text.
    func edit(_ conversation: Int64, _ seq: Int64, _ body: EditRequest, as speaker: String?) async throws -> StoredChange {
        let sender = try Self.sender(body.sender, speaker: speaker)
        let text = try Self.required(body.text, "text")
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw APIError.badRequest("text: empty or only spaces; delete the message instead")
        }
        try checkSize(text)
        let (plain, spans) = Self.markup(text)
        return try await write(conversation, by: sender) { try await store.edit(seq, in: conversation, text: plain, spans: spans, by: sender) }
    }

    /// Typed text read as chat markup (`ChatMarkup`); text that would be left blank without its
    /// markers (`` ` ` ``) is kept as typed.
    static func markup(_ text: String) -> (String, [TextSpan]) {
        let (plain, spans) = ChatMarkup.parse(text)
        return plain.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? (text, []) : (plain, spans)
    }

    func delete(_ conversation: Int64, _ seq: Int64, sender given: String?, as speaker: String?) async throws -> StoredChange {
        let sender = try Self.sender(given, speaker: speaker)
        return try await write(conversation, by: sender) { try await store.delete(seq, in: conversation, by: sender) }
    }

    /// `{"emoji", "sender"}`, added (`on`) or taken back.
    func react(_ conversation: Int64, _ seq: Int64, emoji: String, sender given: String?, as speaker: String?, on: Bool) async throws -> StoredChange {
        let sender = try Self.sender(given, speaker: speaker)
        guard Self.reactions.contains(emoji) else {
            throw APIError.badRequest("emoji \"\(emoji)\" is not one of the reactions: \(Self.reactions.joined(separator: " "))")
        }
        return try await write(conversation, by: sender) { try await store.react(seq, in: conversation, emoji: emoji, sender: sender, on: on) }
    }

    /// `GET …/changes?since=REV&limit=N`: what changed after `since`, in order.
    func changes(_ conversation: Int64, _ query: Parameters) async throws -> ChangesJSON {
        let since = try API.integer(query, "since", range: 0...Int64.max) ?? 0
        let limit = try API.integer(query, "limit", range: 1...1_000).map(Int.init) ?? 1_000
        guard let rev = try await store.lastRev(of: conversation) else { throw APIError.notFound("no conversation \(conversation)") }
        let names = try await hub.participantNames(conversation)
        let changes = try await store.changes(in: conversation, since: since, limit: limit)
        return ChangesJSON(
            conversation: conversation, rev: rev,
            changes: changes.map { ChangeJSON($0, names: names, media: store.mediaFolder, frame: false) })
    }

    /// `POST /api/v1/conversations/{id}/photos`: the picture in the body (JPEG, PNG, GIF or WebP,
    /// at most `maxUpload` bytes) into the store; `{"photo": id, "width", "height"}` for a message.
    func uploadPhoto(_ conversation: Int64, _ request: Request, maxUpload: Int) async throws -> EditedResponse<PhotoJSON> {
        guard try await store.lastRev(of: conversation) != nil else { throw APIError.notFound("no conversation \(conversation)") }
        try await requireLive(conversation)
        let body = try await collectBody(request, limit: maxUpload, what: "the photo")
        let head = Array(body.readableBytesView.prefix(16))
        guard let type = MediaProbe.browserImageType(head) else {
            throw APIError(status: .unsupportedMediaType, message: "the body is not a JPEG, PNG, GIF or WebP picture")
        }
        let ext = ["image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"][type]!
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-photo-\(UUID().uuidString).\(ext)").path
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        // Written and decoded off Swift's cooperative threads (a file, a picture's pixels).
        let pictures = self.pictures
        let size = try await NIOThreadPool.singleton.runIfActive { () throws -> (width: Int, height: Int)? in
            guard FileManager.default.createFile(atPath: tmp, contents: Data(buffer: body)) else {
                throw APIError(status: .internalServerError, message: "the photo could not be saved")
            }
            return pictures.displaySize(ofFile: tmp)
        }
        guard let size, size.width > 0, size.height > 0 else {
            throw APIError(status: .unprocessableContent, message: "the \(type) picture cannot be decoded")
        }
        let stored = try await store.storeMedia(file: tmp, name: "photo.\(ext)")
        // Served to the conversation's members from now on.
        try await accounts.recordMedia([(stored as NSString).lastPathComponent], in: conversation)
        return EditedResponse(status: .created, response: PhotoJSON(photo: (stored as NSString).lastPathComponent, width: size.width, height: size.height))
    }

    /// A photo uploaded before (`<sha256>.<ext>`) as a message's picture.
    func photoAttachment(_ id: String) throws -> ImageAttachment {
        guard id.range(of: #"^[0-9a-f]{64}\.(jpg|png|gif|webp)$"#, options: .regularExpression) != nil else {
            throw APIError.badRequest("photo \"\(id)\": expected the id a photo upload gave")
        }
        let stored = "media/" + id.prefix(2) + "/" + id
        let full = store.mediaPath(stored)
        guard let size = pictures.displaySize(ofFile: full) else { throw APIError.badRequest("photo \"\(id)\": no such photo in the store; upload it first") }
        return ImageAttachment(path: stored, width: Double(size.width), height: Double(size.height), name: id)
    }

    func checkSize(_ text: String) throws {
        let bytes = text.utf8.count
        guard bytes <= limits.maxText else {
            throw APIError(status: .contentTooLarge, message: "text: \(bytes) bytes; a message may have at most \(limits.maxText)")
        }
    }

    /// A live write to `conversation`: a 404 when there is none; its participants' names known to
    /// the hub before the change is broadcast (the store's writer does not wait for a read); the
    /// store's refusals as API errors.
    func write<T>(_ conversation: Int64, by sender: String, _ body: () async throws -> T) async throws -> T {
        try await requireLive(conversation)
        _ = try await hub.participantNames(conversation, including: sender)
        do { return try await body() } catch let e as LiveError {
            switch e.kind {
            case .notFound: throw APIError.notFound(e.reason)
            case .invalid: throw APIError.badRequest(e.reason)
            case .forbidden: throw APIError.forbidden(e.reason)
            case .conflict: throw APIError(status: .conflict, message: e.reason)
            }
        }
    }

    /// A 403 for an imported archive: its messages are what the export held (read-only); live
    /// writes go to conversations made on the server.
    func requireLive(_ conversation: Int64) async throws {
        guard try await hub.isLive(conversation) else {
            throw APIError.forbidden(
                "conversation \(conversation) is an imported archive and read-only; start a live conversation to write (POST /api/v1/conversations)")
        }
    }

    /// A JSON body as a `Decodable` request type; a body that is not one is a 400 naming the
    /// field and what was expected there.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int) async throws -> T {
        let buffer = try await collectBody(request, limit: limit, what: "the JSON body")
        return try decode(T.self, from: Data(buffer: buffer))
    }

    /// As `decode`, for a body that may be left out: an empty body is nil, not an error.
    static func decodeIfPresent<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int) async throws -> T? {
        let buffer = try await collectBody(request, limit: limit, what: "the JSON body")
        let data = Data(buffer: buffer)
        if data.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) { return nil }
        return try decode(T.self, from: data)
    }

    /// JSON text (a body, a socket frame) as `T`, or a 400 naming the field.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard data.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") else {
            throw APIError.badRequest("the body: expected a JSON object")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let DecodingError.typeMismatch(expected, c), let DecodingError.valueNotFound(expected, c) {
            throw APIError.badRequest("\(Self.path(c.codingPath)): expected \(Self.kind(expected))")
        } catch let DecodingError.keyNotFound(key, c) {
            throw APIError.badRequest("\(Self.path(c.codingPath + [key])): missing")
        } catch let DecodingError.dataCorrupted(c) where !c.codingPath.isEmpty {
            throw APIError.badRequest("\(Self.path(c.codingPath)): \(c.debugDescription)")
        } catch {
            throw APIError.badRequest("the body: expected a JSON object")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "the body" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        default: "a JSON object"
        }
    }

    /// A response for an added message: 201 when new, 200 with the same message when its client
    /// id was seen before.
    func added(_ a: AddedMessage) async throws -> EditedResponse<MessageResponse> {
        let message = MessageJSON(a.change, names: try await hub.participantNames(a.change.conversation), media: store.mediaFolder)
        return EditedResponse(status: a.existed ? .ok : .created, response: MessageResponse(message: message))
    }

    func changed(_ c: StoredChange) async throws -> MessageResponse {
        MessageResponse(message: MessageJSON(c, names: try await hub.participantNames(c.conversation), media: store.mediaFolder))
    }
}
