import ArgumentParser
import BubbleRender
import BubbleServer
import BubbleStore
import Foundation

/// `bubbles serve`: the store in the browser (and its JSON API), until Ctrl-C.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the store: its conversations in the browser and as a JSON API (docs/SERVER.md).",
        discussion: """
        Listens on 127.0.0.1 (this machine only) unless --host says otherwise; any other address \
        needs a token on every request, given with --token or made up and printed with the URL. \
        Ctrl-C stops it after the requests in flight.
        """)

    @OptionGroup var store: StoreOptions
    @Option(help: "Address to listen on (default 127.0.0.1: this machine only).") var host = "127.0.0.1"
    @Option(help: "Port (0: any free one; the URL printed says which).") var port = 8080
    @Option(help: "Token every request must carry (?token=… or Authorization: Bearer …); made up when listening beyond this machine.")
    var token: String?
    @Option(help: "Theme of the pages (see `bubbles themes`).") var theme = "imessage"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) must be between 0 and 65535") }
        if let token, token.count < 16 { throw ValidationError("--token must be at least 16 characters") }
    }

    func run() throws {
        var config = ServerConfiguration(host: host, port: port, token: token, theme: theme)
        if !config.isLoopback && config.token == nil {
            config.token = (0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max)) }.joined()
        }
        let db = try store.open()
        let server: BubbleServer
        do { server = try BubbleServer(store: db, configuration: config, pictures: PhotoDecoder()) } catch {
            throw CLIError("cannot start: \(error)")
        }
        let shown = config.host.contains(":") ? "[\(config.host)]" : config.host
        let tokenPart = config.token.map { "?token=\($0)" } ?? ""
        let done = DispatchSemaphore(value: 0)
        let failure = ErrorBox()
        Task {
            do {
                try await server.run { port in
                    FileHandle.standardOutput.write(Data("bubbles serve: http://\(shown):\(port)/\(tokenPart) (\(db.path)); Ctrl-C stops it\n".utf8))
                }
            } catch {
                failure.error = error
            }
            done.signal()
        }
        done.wait()
        if let error = failure.error { throw CLIError("bubbles serve: \(error)") }
    }
}

final class ErrorBox: @unchecked Sendable {
    var error: (any Error)?
}
