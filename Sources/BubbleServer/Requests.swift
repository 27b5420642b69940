import BubbleCore
import BubbleStore
import Foundation

// The JSON bodies the API and the live socket take, as `Decodable` types: a body that is not
// one is a 400 naming the field and what was expected (`LiveAPI.decode`). Fields are optional
// where the route says what is missing in its own words ("clientId: expected a UUID made by the
// client…") or where the single-owner and the accounts modes differ.

/// `POST /api/v1/conversations`: `{"title", "participants": ["Ann", {"id", "name"}, …]}`.
struct NewConversationRequest: Decodable {
    var title: String?
    var participants: [ParticipantRequest]?
}

/// A participant named by a string, or `{"id"?, "name"}`.
enum ParticipantRequest: Decodable {
    case name(String)
    case given(id: String?, name: String)

    private enum Keys: String, CodingKey { case id, name }

    init(from decoder: any Decoder) throws {
        if let name = try? decoder.singleValueContainer().decode(String.self) {
            self = .name(name)
            return
        }
        let o = try decoder.container(keyedBy: Keys.self)
        self = .given(id: try o.decodeIfPresent(String.self, forKey: .id), name: try o.decode(String.self, forKey: .name))
    }
}

/// `POST …/messages` and a socket's `send`: `{"clientId": UUID, "text", "sender", "photo"?: id, "replyTo"?: seq}`.
struct SendRequest: Decodable {
    var clientId: String?
    var text: String?
    var sender: String?
    var photo: String?
    var replyTo: Int64?
}

/// `PATCH …/messages/{seq}` and a socket's `edit`: `{"text", "sender"}`.
struct EditRequest: Decodable {
    var text: String?
    var sender: String?
}

/// `POST …/messages/{seq}/reactions` and a socket's `react`: `{"emoji", "sender", "on"?}`.
struct ReactRequest: Decodable {
    var emoji: String?
    var sender: String?
    var on: Bool?
}

/// A socket's `delete`: `{"sender"}`.
struct DeleteRequest: Decodable {
    var sender: String?
}

/// `POST /api/v1/login`, and accepting an invitation without an account: `{"name", "password", "displayName"?}`.
struct CredentialsRequest: Decodable {
    var name: String?
    var password: String?
    var displayName: String?
}

/// `POST /api/v1/logout`: `{"everywhere"?: true}` (the body may be empty).
struct SignOutRequest: Decodable {
    var everywhere: Bool?
}

/// `POST /api/v1/tokens`: `{"name"}`.
struct NewTokenRequest: Decodable {
    var name: String?
}

/// `POST …/members` (`{"name", "access"?}`) and `POST …/invites` (`{"access"?}`, the body may be empty).
struct MemberRequest: Decodable {
    var name: String?
    var access: String?
}

/// `POST …/read`: `{"seq"}`, the newest message read.
struct ReadRequest: Decodable {
    var seq: Int64?
}

/// A live socket frame's head: what it asks for, and what its answer quotes back (`ref`, else
/// the `clientId`). The rest is read as the request `type` names.
struct FrameHead: Decodable {
    var type: String?
    var ref: JSONValue?
    var clientId: JSONValue?
    var seq: JSONValue?
    var sender: JSONValue?
}

/// Any JSON value, kept to be written back as it came (a frame's `ref`).
enum JSONValue: Decodable, Equatable {
    case string(String), integer(Int64), number(Double), bool(Bool), null
    case array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    /// The value for `JSONWriter`.
    var any: Any {
        switch self {
        case .string(let s): s
        case .integer(let i): i
        case .number(let d): d
        case .bool(let b): b
        case .null: NSNull()
        case .array(let a): a.map(\.any)
        case .object(let o): o.mapValues(\.any)
        }
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }
}

extension LiveAPI {
    /// A string field that must be there and not empty.
    static func required(_ value: String?, _ name: String) throws -> String {
        guard let value, !value.isEmpty else { throw APIError.badRequest("\(name): expected a string") }
        return value
    }
}
