import Foundation
import HummingbirdCore
import Logging
import NIOCore

/// The server's connections, each with `RequestHeadGuard` in front of Hummingbird's own handlers
/// (which see a request only once its head has been read whole).
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let limits: RequestHeadGuard.Limits

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(RequestHeadGuard(limits: limits), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Request heads as they come in, before any HTTP parsing: one larger than `maxHeadBytes` is
/// answered `431` at once (a header flood), one that has not ended `headTimeout` after its first
/// byte `408` (a client sending its headers a byte at a time holds no connection for long), and
/// a request line that is not `METHOD SP target SP HTTP/1.x` in visible ASCII (invalid UTF-8, a
/// control character, a bare LF) `400` as soon as its line ends; either way the connection
/// closes. Without it the decoder's own overflow left the connection open and unanswered until
/// the idle timeout, and a request line of bytes that are not UTF-8 was never answered at all.
///
/// Bytes are read as HTTP/1.1 without pipelining (what browsers and the tests send): a head ends
/// at its blank line; what follows is its body until the server starts answering, after which
/// the next bytes begin the next head. A `101 Switching Protocols` (a WebSocket) takes the
/// guard out of the connection.
final class RequestHeadGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    struct Limits: Sendable {
        var maxHeadBytes = 64 << 10
        /// Header lines (the decoder's own limit lies beyond it and would leave the client hanging).
        var maxHeadLines = 256
        var headTimeout = TimeAmount.seconds(20)
    }

    enum State { case idle, head(bytes: Int, lines: Int), body, answering, closed }

    let limits: Limits
    private var state = State.idle
    /// How much of the blank line that ends a head the last bytes read were (0…3).
    private var blank = 0
    /// The request line read so far (nil once it has ended and was found well formed).
    private var requestLine: [UInt8]? = []
    private var deadline: Scheduled<Void>?

    init(limits: Limits) { self.limits = limits }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        switch state {
        case .closed: return
        case .body: break
        case .answering where !Self.startsRequest(buffer):
            // More of the body after the answer began (a 413 sent before the body was read).
            break
        case .idle, .answering:
            state = .head(bytes: 0, lines: 0)
            blank = 0
            requestLine = []
            let loop = context.eventLoop
            let bound = NIOLoopBound((self, context), eventLoop: loop)
            deadline = loop.scheduleTask(in: limits.headTimeout) {
                let (guardian, context) = bound.value
                guardian.refuse(
                    context, status: "408 Request Timeout",
                    "the request's headers did not arrive within \(guardian.limits.headTimeout.nanoseconds / 1_000_000_000) s")
            }
            read(buffer, context: context)
        case .head:
            read(buffer, context: context)
        }
        if case .closed = state { return }
        context.fireChannelRead(data)
    }

    /// Counts head bytes and lines and looks for the blank line that ends the head, in one pass
    /// over the read (the blank line's progress, `blank`, carries over from the read before).
    private func read(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        guard case .head(var total, var lines) = state else { return }
        var ended = false
        var badLine = false
        for b in buffer.readableBytesView {
            total += 1
            if requestLine != nil {
                if b == 10 {
                    badLine = !Self.wellFormed(requestLine!)
                    requestLine = nil
                } else if requestLine!.count < limits.maxHeadBytes {
                    requestLine!.append(b)
                }
                if badLine { break }
            }
            if b == 10 { lines += 1 }
            // \r\n\r\n: `blank` counts how much of it the last bytes were.
            switch (blank, b) {
            case (0, 13), (2, 13): blank += 1
            case (1, 10): blank = 2
            case (3, 10): ended = true
            case (_, 13): blank = 1
            default: blank = 0
            }
            if ended { break }
        }
        if badLine {
            refuse(
                context, status: "400 Bad Request",
                "the request line is not METHOD /path HTTP/1.1 in visible ASCII (bytes that are not UTF-8, or control characters)")
            return
        }
        if total > limits.maxHeadBytes || lines > limits.maxHeadLines {
            refuse(
                context, status: "431 Request Header Fields Too Large",
                "the request's headers are over \(limits.maxHeadBytes) bytes or \(limits.maxHeadLines) lines; this server takes no more")
            return
        }
        if ended {
            state = .body
            deadline?.cancel()
            deadline = nil
            return
        }
        state = .head(bytes: total, lines: lines)
    }

    /// Whether a request line (without its LF) is `METHOD SP target SP HTTP/1.x` with an upper-case
    /// method, a target of visible ASCII, and at most a CR at its end.
    static func wellFormed(_ line: [UInt8]) -> Bool {
        var line = line[...]
        if line.last == 13 { line = line.dropLast() }
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, let method = parts.first, (1...20).contains(method.count),
            method.allSatisfy({ ($0 >= 65 && $0 <= 90) || $0 == 45 })
        else { return false }
        let target = parts[1]
        guard !target.isEmpty, target.allSatisfy({ $0 > 32 && $0 < 127 }) else { return false }
        return parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
    }

    /// Whether `buffer` starts like a request line (`GET `, `POST `…: capital letters, a space).
    static func startsRequest(_ buffer: ByteBuffer) -> Bool {
        var letters = 0
        for b in buffer.readableBytesView.prefix(8) {
            if b >= 65 && b <= 90 { letters += 1; continue }
            return b == 32 && letters >= 3
        }
        return false
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .body = state {
            let buffer = unwrapOutboundIn(data)
            if buffer.readableBytesView.starts(with: Array("HTTP/1.1 101".utf8)) {
                // A WebSocket from here on: frames, not heads.
                context.write(data, promise: promise)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            state = .answering
        }
        context.write(data, promise: promise)
    }

    /// Answers `status` with a JSON error and closes the connection.
    private func refuse(_ context: ChannelHandlerContext, status: String, _ message: String) {
        guard case .head = state else { return }
        state = .closed
        deadline?.cancel()
        deadline = nil
        let body = #"{"error":"\#(message)"}"#
        let head = "HTTP/1.1 \(status)\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: head + body))).whenComplete { _ in bound.value.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
