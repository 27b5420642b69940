import Foundation

/// A client of a live conversation as the viewer is one: it keeps the conversation as the
/// changes it was sent describe it (sequence number → client id and text), the last revision it
/// has, and sends messages exactly once — the same UUID again after a drop or a timeout until
/// the server acknowledges it. Used by the load and fault tests and by `make bench`.
public final class LiveClient: @unchecked Sendable {  // used by one thread at a time
    public let port: Int
    public let conversation: Int
    public let sender: String
    public private(set) var socket: WebSocketClient?
    /// The conversation as this client has been told it: seq → (clientId, text).
    public private(set) var view: [Int: (clientID: String, text: String)] = [:]
    public private(set) var lastRev = 0
    /// Revisions arrived out of order or twice (must stay 0).
    public private(set) var disorder = 0
    /// Messages this client saw acknowledged (clientId → seq).
    public private(set) var acknowledged: [String: Int] = [:]
    public private(set) var reconnects = 0
    /// Sends refused for speed (429) and then sent again.
    public private(set) var throttled = 0
    /// When each change arrived (clientId → time), for latency figures.
    public var arrivals: [String: UInt64] = [:]
    public var recordArrivals = false

    public init(port: Int, conversation: Int, sender: String) {
        self.port = port; self.conversation = conversation; self.sender = sender
    }

    /// Opens the socket asking for what came after `lastRev`, and reads up to `ready`.
    public func connect(timeout: Int = 10) throws {
        socket?.drop()
        socket = nil
        let s = try WebSocketClient(port: port, path: "/api/v1/conversations/\(conversation)/live?since=\(lastRev)", timeout: timeout)
        socket = s
        // Whole messages (a frame may hold the catch-up's last changes, `ready` and what follows):
        // everything in them is taken, nothing left for a later read.
        while let text = try s.receive() {
            var ready = false
            for frame in try Self.decode(text) {
                if frame["type"] as? String == "ready" { ready = true } else { take(frame) }
            }
            if ready { return }
        }
        throw BrowserlessError("the socket closed before it was ready")
    }

    /// Opens again, after `connect` failed or the socket was dropped, with back-off, until
    /// `deadline`.
    public func reconnect(until deadline: Date) throws {
        var wait = 0.05
        while true {
            do { try connect(); reconnects += 1; return } catch {
                if Date() > deadline { throw error }
                Thread.sleep(forTimeInterval: wait)
                wait = min(wait * 2, 1)
            }
        }
    }

    /// Drops the connection as a network does (no closing handshake).
    public func drop() { socket?.drop(); socket = nil }

    /// Sends `text` with `clientID` until it is acknowledged (reconnecting and sending the same id
    /// again when the socket goes away); `duplicate` sends it twice at once. The sequence number.
    @discardableResult
    public func send(
        _ text: String, clientID: String = UUID().uuidString.lowercased(), duplicate: Bool = false,
        until deadline: Date
    ) throws -> Int {
        while true {
            if socket == nil { try reconnect(until: deadline) }
            guard let s = socket else { continue }
            do {
                let frame: [String: Any] = ["type": "send", "clientId": clientID, "text": text, "sender": sender]
                try s.send(json: frame)
                if duplicate { try s.send(json: frame) }
                if let seq = try awaitAck(clientID, on: s) { return seq }
            } catch {
                drop()
            }
            if Date() > deadline { throw BrowserlessError("\(sender): \(clientID) not acknowledged in time") }
        }
    }

    /// Reads until the answer to `clientID`: its sequence number; nil when the socket went away or
    /// the server asked to slow down (then it is sent again).
    func awaitAck(_ clientID: String, on s: WebSocketClient) throws -> Int? {
        while let text = try s.receive() {
            guard let frames = try frames(text) else { continue }
            var answer: Int??
            for frame in frames {
                if frame["type"] as? String == "ack", frame["ref"] as? String == clientID {
                    let seq = frame["seq"] as! Int
                    acknowledged[clientID] = seq
                    answer = .some(seq)
                } else if frame["type"] as? String == "error", frame["ref"] as? String == clientID {
                    guard frame["status"] as? Int == 429 else { throw BrowserlessError("\(sender): \(frame["error"] ?? "")") }
                    throttled += 1
                    answer = .some(nil)
                } else {
                    take(frame)
                }
            }
            if let answer {
                if answer == nil { Thread.sleep(forTimeInterval: 0.05) }
                return answer
            }
        }
        drop()
        return nil
    }

    /// The objects of one message from the socket (a frame holds one or an array); nil for a
    /// frame of changes only glanced at (`recordArrivals`: the bench decodes answers alone).
    func frames(_ text: String) throws -> [[String: Any]]? {
        if recordArrivals, !text.contains(#""type":"ack""#), !text.contains(#""type":"error""#) { glance(text); return nil }
        return try Self.decode(text)
    }

    /// A socket message's objects (one, or an array of them).
    static func decode(_ text: String) throws -> [[String: Any]] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return (value as? [[String: Any]]) ?? [value as? [String: Any] ?? [:]]
    }

    /// Reads what comes until nothing has for `quiet` seconds.
    public func drain(quiet: Double = 0.3) throws {
        guard let s = socket else { return }
        s.setTimeout(seconds: quiet)
        defer { s.setTimeout(seconds: 10) }
        while let text = try s.receive() { try frames(text)?.forEach(take) }
        if !s.isOpen { socket = nil }
    }

    /// A frame read without decoding it (the bench's clients read 10,000s a second): the client
    /// ids of the changes it holds (their arrival) and the newest revision.
    func glance(_ text: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        for r in text.ranges(of: #""clientId":""#) {
            let from = r.upperBound
            guard let end = text[from...].firstIndex(of: "\"") else { continue }
            let id = String(text[from..<end])
            if arrivals[id] == nil { arrivals[id] = now }
        }
        // `…,"rev":N,"type":"change"}`: the frame's own revision (keys are sorted).
        for r in text.ranges(of: #","type":"change"}"#) {
            let head = text[..<r.lowerBound]
            if let colon = head.lastIndex(of: ":"), let rev = Int(head[head.index(after: colon)...]) { lastRev = max(lastRev, rev) }
        }
    }

    /// A change applied to the view (in revision order: anything else is counted as disorder).
    func take(_ frame: [String: Any]) {
        guard frame["type"] as? String == "change", let rev = frame["rev"] as? Int, let m = frame["message"] as? [String: Any],
            let seq = m["seq"] as? Int
        else { return }
        if rev <= lastRev { disorder += 1 }
        lastRev = max(lastRev, rev)
        let id = m["clientId"] as? String ?? ""
        view[seq] = (id, m["text"] as? String ?? "")
        if recordArrivals, arrivals[id] == nil { arrivals[id] = DispatchTime.now().uptimeNanoseconds }
    }
}
