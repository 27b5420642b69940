import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 over a plain socket to 127.0.0.1 (no proxy, nothing else in between).
public enum HTTP {
    public struct Reply {
        public var status: Int; public var headers: [String: String]; public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }
        public func json() throws -> Any { try JSONSerialization.jsonObject(with: body) }
    }

    public static func request(
        port: Int, method: String, path: String, headers: [String: String] = [:], body: Data? = nil,
        contentType: String = "application/json", timeout: Int = 60
    ) throws -> Reply {
        let fd = try connected(port)
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Sending too: a server that stops reading a body fails the request instead of hanging it.
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let body { head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n" }
        head += "\r\n"
        var out = Data(head.utf8)
        if let body { out += body }
        // All of it before reading a byte of the reply, as simple clients do (urllib); a server
        // that answers early and closes cuts the sending short (no SIGPIPE), then its answer is read.
        var sent = 0
        out.withUnsafeBytes { raw in
            while sent < raw.count {
                let n = send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                if n <= 0 { break }
                sent += n
            }
        }
        // Read to the end of the reply: its Content-Length, the last chunk, or the connection's
        // end (a server may keep the connection open despite `Connection: close`).
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var split: Range<Data.Index>?
        while true {
            if split == nil { split = data.range(of: Data("\r\n\r\n".utf8)) }
            if let split {
                let head = String(decoding: data[..<split.lowerBound], as: UTF8.self).lowercased()
                if let m = head.firstMatch(of: #/content-length:\s*(\d+)/#), data.count - split.upperBound >= Int(m.1)! { break }
                if head.contains("transfer-encoding: chunked"), data[split.upperBound...].range(of: Data("0\r\n\r\n".utf8)) != nil { break }
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        guard let split else { throw BrowserlessError("no HTTP reply from \(port): \(data.count) bytes") }
        let lines = String(decoding: data[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        var bodyOut = Data(data[split.upperBound...])
        if fields["transfer-encoding"] == "chunked" { bodyOut = unchunk(bodyOut) }
        return Reply(status: status, headers: fields, body: bodyOut)
    }

    /// A client sending its request's headers one line every `every` seconds, never ending them:
    /// what the server said (empty when it closed without a word) and when, or nil when it still
    /// waited after `limit` seconds.
    public static func slowHeaders(port: Int, every: Double = 0.5, limit: Double = 30) throws -> (seconds: Double, reply: String)? {
        let fd = try connected(port)
        defer { close(fd) }
        let started = Date()
        var line = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date().timeIntervalSince(started) < limit {
            if send(fd, line, line.count, Int32(MSG_NOSIGNAL)) < 0 { return (Date().timeIntervalSince(started), "") }
            line = Array("X-Slow: 1\r\n".utf8)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Int32(every * 1000)) > 0 {
                let n = recv(fd, &buffer, buffer.count, 0)
                return (Date().timeIntervalSince(started), n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : "")
            }
        }
        return nil
    }

    /// Sends `bytes` as they are (no request built around them) and reads until the server
    /// closes the connection or `limit` seconds pass: what it said, whether it closed, and when.
    public static func raw(port: Int, _ bytes: [UInt8], limit: Double = 10) throws -> (reply: String, closed: Bool, seconds: Double) {
        let fd = try connected(port)
        defer { close(fd) }
        let started = Date()
        _ = send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL))
        var reply = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date().timeIntervalSince(started) < limit {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return (String(decoding: reply, as: UTF8.self), true, Date().timeIntervalSince(started)) }
            reply.append(contentsOf: buffer[0..<n])
        }
        return (String(decoding: reply, as: UTF8.self), false, Date().timeIntervalSince(started))
    }

    /// A socket connected to 127.0.0.1:`port` (the caller closes it).
    static func connected(_ port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrowserlessError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw BrowserlessError("connect to \(port): \(errno)") }
        return fd
    }

    static func unchunk(_ data: Data) -> Data {
        var out = Data(), at = data.startIndex
        while let end = data[at...].range(of: Data("\r\n".utf8)) {
            let size = Int(String(decoding: data[at..<end.lowerBound], as: UTF8.self), radix: 16) ?? 0
            if size == 0 { break }
            out += data[end.upperBound..<(end.upperBound + size)]
            at = end.upperBound + size + 2
        }
        return out
    }

    /// A port nothing listens on now.
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct BrowserlessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
