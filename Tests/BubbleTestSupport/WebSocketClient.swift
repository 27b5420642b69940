import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket client over a plain blocking socket to 127.0.0.1 (RFC 6455: the upgrade, masked
/// text frames out, text/ping/close frames in), for tests and the bench: nothing between it and
/// the server, one thread per client.
public final class WebSocketClient: @unchecked Sendable {  // used by one thread at a time
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Where the unread bytes of `buffer` start (consumed bytes are dropped now and then, not
    /// at every frame).
    private var start = 0
    public private(set) var isOpen = true

    /// Opens `path` on `port` (with `headers`, e.g. `Origin`); throws with the server's status
    /// and body when it does not upgrade.
    public init(port: Int, path: String, headers: [String: String] = [:], timeout: Int = 30) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrowserlessError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { Glibc.close(fd); throw BrowserlessError("connect to \(port): \(errno)") }
        setTimeout(seconds: Double(timeout))
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var head =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        head += "\r\n"
        try write(Array(head.utf8))
        // The server's answer, up to the empty line.
        while true {
            if let end = Self.find([13, 10, 13, 10], in: buffer) {
                let answer = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                guard answer.hasPrefix("HTTP/1.1 101") else {
                    // Not upgraded: the rest of the reply names why.
                    _ = try? fill(atLeast: buffer.count + 1)
                    let body = String(decoding: buffer, as: UTF8.self)
                    Glibc.close(fd); isOpen = false
                    throw BrowserlessError("not upgraded: \(answer.split(separator: "\r\n").first ?? "") \(body)")
                }
                break
            }
            guard try fill(atLeast: buffer.count + 1) else { Glibc.close(fd); throw BrowserlessError("no answer to the upgrade") }
        }
    }

    deinit { if isOpen { Glibc.close(fd) } }

    public func setTimeout(seconds: Double) {
        var t = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends a text frame (masked, as a client must).
    public func send(_ text: String) throws {
        try frame(opcode: 1, Array(text.utf8))
    }

    /// `object` as JSON text.
    public func send(json object: [String: Any]) throws {
        try send(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
    }

    /// The next text message; nil when the connection closed or nothing came before the timeout.
    public func receive() throws -> String? {
        var message: [UInt8] = []
        while isOpen {
            guard try fill(atLeast: 2) else { return nil }
            let b0 = buffer[start], b1 = buffer[start + 1]
            var length = Int(b1 & 0x7F), at = 2
            if length == 126 {
                guard try fill(atLeast: 4) else { return nil }
                length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3]); at = 4
            } else if length == 127 {
                guard try fill(atLeast: 10) else { return nil }
                length = (2..<10).reduce(0) { $0 << 8 | Int(buffer[start + $1]) }; at = 10
            }
            guard try fill(atLeast: at + length) else { return nil }
            if b0 & 0x0F == 1 && b0 & 0x80 != 0 && message.isEmpty {
                // A whole text frame: straight from the buffer.
                let text = String(decoding: buffer[(start + at)..<(start + at + length)], as: UTF8.self)
                consume(at + length)
                return text
            }
            let payload = Array(buffer[(start + at)..<(start + at + length)])
            consume(at + length)
            switch b0 & 0x0F {
            case 0, 1:
                message += payload
                if b0 & 0x80 != 0 { return String(decoding: message, as: UTF8.self) }
            case 8:
                try? frame(opcode: 8, Array(payload.prefix(2)))
                Glibc.close(fd); isOpen = false
                return nil
            case 9: try frame(opcode: 10, payload)
            default: break
            }
        }
        return nil
    }

    private var pending: [[String: Any]] = []

    /// The next JSON object (a frame holding an array gives its objects one by one).
    public func receiveJSON() throws -> [String: Any]? {
        if !pending.isEmpty { return pending.removeFirst() }
        guard let text = try receive() else { return nil }
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        if let list = value as? [[String: Any]], let first = list.first {
            pending = Array(list.dropFirst())
            return first
        }
        return value as? [String: Any]
    }

    /// Closes the connection at once, without a closing handshake (a dropped network).
    public func drop() {
        if isOpen { shutdown(fd, Int32(SHUT_RDWR)); Glibc.close(fd); isOpen = false }
    }

    /// A closing handshake (1000).
    public func close() {
        guard isOpen else { return }
        try? frame(opcode: 8, [0x03, 0xE8])
        Glibc.close(fd); isOpen = false
    }

    private func frame(opcode: UInt8, _ payload: [UInt8]) throws {
        var out: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65_536 {
            out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        out += mask
        out += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        try write(out)
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { isOpen = false; throw BrowserlessError("send: \(errno)") }
            sent += n
        }
    }

    private func consume(_ n: Int) {
        start += n
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true); start = 0
        } else if start > 1 << 16 {
            buffer.removeFirst(start); start = 0
        }
    }

    /// Reads until the buffer holds `count` unread bytes; false at the end of the stream or a timeout.
    private func fill(atLeast count: Int) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while buffer.count - start < count {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { if n == 0 { isOpen = false }; return false }
            buffer += chunk[0..<n]
        }
        return true
    }

    static func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle { return i }
        return nil
    }
}
