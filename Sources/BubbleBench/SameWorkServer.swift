import BubbleHTML
import Foundation
import GRDB
import Hummingbird

// MARK: the same-work baseline for `bubbles serve`'s windows (issue 67)

/// `--same-work-server DB`: the simplest server that does a window's work — a plain Hummingbird
/// app over the same SQLite store through GRDB, answering `/c/1/view?from=SEQ&count=N` by reading
/// those messages by sequence number and writing each as one escaped HTML string, in the JSON
/// shape the viewer gets (`first`, `last`, `tops`, `html`). No layout, no caches, no middleware
/// beyond what a minimal app has. Prints its URL like `bubbles serve`.
func runSameWorkServer(db path: String) async throws {
    var config = Configuration()
    config.readonly = true
    let pool = try DatabasePool(path: path, configuration: config)
    let router = Router()
    router.get("c/:id/view") { request, context -> Response in
        let id = try context.parameters.require("id", as: Int64.self)
        let from = request.uri.queryParameters.get("from", as: Int64.self) ?? 1
        let count = min(400, max(1, request.uri.queryParameters.get("count", as: Int.self) ?? 50))
        let rows = try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT seq, sender, outgoing, date, text FROM message WHERE conversation_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
                arguments: [id, from, count]
            ).map { SameWorkRow(seq: $0["seq"], sender: $0["sender"] ?? "", outgoing: $0["outgoing"] ?? false, date: $0["date"] ?? 0, text: $0["text"] ?? "") }
        }
        var window = SameWorkWindow(first: rows.first?.seq ?? 0, last: rows.last?.seq ?? 0, tops: [], html: "")
        window.html.reserveCapacity(rows.count * 300)
        for (k, row) in rows.enumerated() {
            window.tops.append(Double(k) * 48)
            window.html += "<div class=\"r \(row.outgoing ? "out" : "in")\" data-n=\"\(row.seq)\"><div class=\"b\"><span class=\"who\">"
            window.html += HTMLEscape.text(row.sender)
            window.html += "</span><p>"
            window.html += HTMLEscape.text(row.text)
            window.html += "</p><time>\(Int(row.date))</time></div></div>"
        }
        let body = try JSONEncoder().encode(window)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            FileHandle.standardOutput.write(Data("same-work: http://127.0.0.1:\(channel.localAddress?.port ?? 0)/\n".utf8))
        })
    try await app.runService()
}

private struct SameWorkRow: Sendable {
    var seq: Int64
    var sender: String
    var outgoing: Bool
    var date: Double
    var text: String
}

private struct SameWorkWindow: Encodable {
    var first: Int64
    var last: Int64
    var tops: [Double]
    var html: String
}

/// The CPU time (user + system, seconds) process `pid` has used so far, from `/proc/PID/stat`.
func processCPUSeconds(_ pid: Int32) -> Double { processStat(pid)?.cpuSeconds ?? .nan }
