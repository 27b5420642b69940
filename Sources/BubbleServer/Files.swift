import BubbleCore
import BubbleStore
import Foundation
import Hummingbird
import HummingbirdCore
import NIOFileSystem
import NIOPosix

/// Imports an uploaded export into the store — `bubbles import`'s own code, handed in by the CLI
/// (BubbleServer does not link the importers). Throws the importer's error, naming the file and
/// the line or field, with the store unchanged.
public protocol ExportImporting: Sendable {
    /// Imports every conversation of the export at `path` (a whole phone's backup, or one chat),
    /// each in its own transaction; `progress` learns how many of how many are done. `password`:
    /// an encrypted iPhone backup's, from the upload form (never written to disk by the server).
    func importExport(
        _ path: String, password: String?, into store: any ConversationStore,
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void
    ) async throws -> WholeImportReport
}

/// Writes a stored conversation (or a date range of it) as a download — the CLI's renderers
/// (`bubbles render` / `convert`), handed in by the CLI. `format` is one of `formats`; the file
/// goes into `folder`; returns its path.
public protocol ConversationExporting: Sendable {
    /// The formats `export` writes ("pdf", "png", "html", "json"…).
    var formats: [String] { get }
    /// Writes `conversation` of `store` (from `since` to `until`, dates as `YYYY-MM-DD`, when given)
    /// in `format` and `theme` into `folder`, and returns the file's path.
    func export(
        conversation: Int64, from store: any ConversationStore, format: String, theme: String,
        since: String?, until: String?, into folder: String
    ) throws -> String
}

/// Uploads, attachments and exports: files in and out of the store.
struct Files: Sendable {
    let store: any ConversationStore
    let accounts: any AccountStore
    let importer: (any ExportImporting)?
    let exporter: (any ConversationExporting)?
    let maxUpload: Int
    let geometries: Geometries

    // MARK: uploads

    /// `POST /api/v1/imports`: a multipart form whose `file` is an export (or a .zip of one),
    /// saved to a temporary file under its own name (the importers recognise formats by it),
    /// imported — a whole phone's backup conversation by conversation, each in its own
    /// transaction — and removed. 413 past `maxUpload` bytes, 400 for a form without `file`, 422
    /// for an export the importers refuse (their message) or whose conversations all failed, 201
    /// with what went where (`ImportJSON`). With `Accept: application/x-ndjson` the answer is 200
    /// and a line per step as the import runs — `{"progress":{"done":3,"total":305}}` — ending in
    /// `{"result":{…ImportJSON…}}` or `{"error":{"status":422,"message":…}}`.
    func upload(_ request: Request, identity: Identity) async throws -> Response {
        guard let importer else { throw APIError(status: .notImplemented, message: "this server does not import uploads") }
        guard identity == .owner || identity.user?.isAdmin == true else {
            throw APIError.forbidden("imports are for admins (an archive is its importer's, shared by them)")
        }
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix("multipart/form-data"),
            let boundary = Self.parameter("boundary", in: type)
        else {
            throw APIError.badRequest("the body is not multipart/form-data with a boundary; send the export as the form field \"file\"")
        }
        try refuseDeclaredLength(request, limit: maxUpload, what: "the upload")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let part: String
        var password: String?
        do {
            // The body to a file first (any size up to the limit, never all in memory), written by
            // NIO's file system as it comes.
            let raw = folder.appendingPathComponent("body")
            let maxUpload = self.maxUpload
            try await FileSystem.shared.withFileHandle(forWritingAt: FilePath(raw.path), options: .newFile(replaceExisting: true)) { handle in
                var writer = handle.bufferedWriter()
                var size = 0
                for try await chunk in request.body {
                    size += chunk.readableBytes
                    if size > maxUpload { throw APIError.tooLarge("the upload", limit: maxUpload) }
                    try await writer.write(contentsOf: chunk)
                }
                try await writer.flush()
            }
            // Finding the file's part reads the whole body: off Swift's cooperative threads.
            (part, password) = try await NIOThreadPool.singleton.runIfActive { [folder] in
                let body = try MultipartFile.body(raw.path)
                return (
                    try MultipartFile.extract(field: "file", boundary: boundary, from: body, into: folder.path),
                    try MultipartFile.text(field: "password", boundary: boundary, in: body)
                )
            }
            try? FileManager.default.removeItem(at: raw)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            if DurableFile.isOutOfSpace(error) {
                throw APIError(status: .insufficientStorage, message: "the upload cannot be saved: no space left on the device, or the file-size limit")
            }
            throw error
        }
        // With accounts, what an admin imports is theirs (and whom they share it with).
        let accounts = self.accounts
        let owner = identity.user.map { user in { @Sendable (id: Int64) async throws in try await accounts.setMember(id, user: user, access: .owner) } }
        let run = ImportRun(importer: importer, store: store, geometries: geometries, part: part, folder: folder.path, password: password, own: owner)
        guard request.headers[.accept]?.lowercased().contains("application/x-ndjson") == true else {
            defer { try? FileManager.default.removeItem(at: folder) }
            let json = try await run.run(progress: { _, _ in })
            return try Self.encoded(json, status: .created)
        }
        // Progress as it comes: the import runs in a task of its own and its lines are written
        // as they are made (a client that goes away does not stop the import).
        let (lines, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        Task {
            defer { try? FileManager.default.removeItem(at: folder) }
            do {
                let json = try await run.run(progress: { done, total in
                    continuation.yield(Array("{\"progress\":{\"done\":\(done),\"total\":\(total)}}\n".utf8))
                })
                let body = try BubbleRequestContext.encoder.encode(json)
                continuation.yield(Array("{\"result\":".utf8) + body + Array("}\n".utf8))
            } catch {
                let e = error as? APIError ?? APIError(status: .internalServerError, message: "\(error)")
                let line = try? BubbleRequestContext.encoder.encode(["error": ErrorLine(status: e.status.code, message: e.message)])
                continuation.yield(Array(line ?? Data("{\"error\":{}}".utf8)) + [UInt8(ascii: "\n")])
            }
            continuation.finish()
        }
        let headers: HTTPFields = [.contentType: "application/x-ndjson; charset=utf-8", .cacheControl: "no-store"]
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                for await line in lines { try await writer.write(ByteBuffer(bytes: line)) }
                try await writer.finish(nil)
            })
    }

    static func encoded<T: Encodable>(_ value: T, status: HTTPResponse.Status) throws -> Response {
        // The server's own encoder (sorted keys, `/` not escaped), as every other answer.
        let data = try BubbleRequestContext.encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// `name=value` (quoted or not) in a header value such as a Content-Type.
    static func parameter(_ name: String, in header: String) -> String? {
        for piece in header.split(separator: ";") {
            let kv = piece.trimmingCharacters(in: .whitespaces)
            guard kv.lowercased().hasPrefix(name + "=") else { continue }
            var v = String(kv.dropFirst(name.count + 1))
            if v.hasPrefix("\""), v.hasSuffix("\""), v.count >= 2 { v = String(v.dropFirst().dropLast()) }
            return v.isEmpty ? nil : v
        }
        return nil
    }

    // MARK: attachments

    /// `GET /api/v1/attachments/{id}`: a file of the store by its id (`<sha256>.<ext>`, as the API
    /// lists it): its type, `Content-Disposition` (inline for pictures, video and audio, else a
    /// download; `?download=1` always), and `Range` requests (206, 416).
    func attachment(_ id: String, _ request: Request, identity: Identity) async throws -> Response {
        guard id.wholeMatch(of: #/[0-9a-f]{64}(\.[a-z0-9]{1,10})?/#) != nil else {
            throw APIError.badRequest("attachment id \"\(id.prefix(80))\" is not one; expected the 64 hex digits of its SHA-256 and its extension")
        }
        // A user's: only files of conversations they reach (the same 404 as for none at all).
        if identity != .owner {
            guard let user = identity.user, try await accounts.mediaReadable(id, by: user) else { throw APIError.notFound("no attachment \(id)") }
        }
        let path = store.mediaFolder + "/" + id.prefix(2) + "/" + id
        guard let info = try? await FileSystem.shared.info(forFileAt: FilePath(path)), info.type == .regular else {
            throw APIError.notFound("no attachment \(id)")
        }
        let size = UInt64(info.size)
        let ext = PathText.fileExtension(id).lowercased()
        let type = Self.mimeTypes[ext] ?? "application/octet-stream"
        let inline = ["image/", "video/", "audio/"].contains { type.hasPrefix($0) } && request.uri.queryParameters["download"] == nil
        var headers: HTTPFields = [.contentType: type, .acceptRanges: "bytes", .cacheControl: "private, max-age=86400"]
        headers[.contentDisposition] = inline ? "inline" : "attachment; filename=\"\(id)\""
        var range: Range<UInt64> = 0..<size
        var status = HTTPResponse.Status.ok
        if let asked = request.headers[.range] {
            guard let r = Self.byteRange(asked, size: size) else {
                var h: HTTPFields = [.contentRange: "bytes */\(size)"]
                h[.contentType] = "application/json; charset=utf-8"
                return Response(
                    status: .rangeNotSatisfiable, headers: h,
                    body: .init(byteBuffer: ByteBuffer(string: #"{"error":"range \#(asked.prefix(60)) is not within the \#(size) bytes of this attachment"}"#)))
            }
            range = r
            status = .partialContent
            headers[.contentRange] = "bytes \(r.lowerBound)-\(r.upperBound - 1)/\(size)"
        }
        headers[.contentLength] = String(range.count)
        return Response(status: status, headers: headers, body: Self.stream(path, range: range))
    }

    /// `bytes=A-B`, `bytes=A-`, `bytes=-N` (one range); nil when it cannot be satisfied.
    static func byteRange(_ header: String, size: UInt64) -> Range<UInt64>? {
        guard let m = header.wholeMatch(of: #/\s*bytes=(\d*)-(\d*)\s*/#), size > 0 else { return nil }
        let a = UInt64(m.1), b = UInt64(m.2)
        switch (a, b) {
        case let (a?, b?) where a <= b && a < size: return a..<(min(b, size - 1) + 1)
        case let (a?, nil) where a < size: return a..<size
        case let (nil, n?) where n > 0: return (size - min(n, size))..<size
        default: return nil
        }
    }

    /// A whole small file (a font, a cached thumbnail) read by NIO's file system, off the
    /// cooperative threads; nil when it is not there, cannot be read or is over `limit` bytes.
    static func contents(_ path: String, limit: Int = 16 << 20) async -> ByteBuffer? {
        try? await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
            try await handle.readToEnd(maximumSizeAllowed: .bytes(Int64(limit)))
        }
    }

    /// The bytes of `range` of the file at `path`, read in 64 KiB chunks by NIO's file system
    /// (off the cooperative threads) as the client takes them; `removing` goes afterwards.
    static func stream(_ path: String, range: Range<UInt64>, removing folder: String? = nil) -> ResponseBody {
        ResponseBody(contentLength: Int(range.count)) { writer in
            defer { if let folder { try? FileManager.default.removeItem(atPath: folder) } }
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                for try await chunk in handle.readChunks(in: Int64(range.lowerBound)..<Int64(range.upperBound), chunkLength: .kibibytes(64)) {
                    try await writer.write(chunk)
                }
            }
            try await writer.finish(nil)
        }
    }

    static let mimeTypes: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "heif": "image/heif", "tif": "image/tiff", "tiff": "image/tiff", "bmp": "image/bmp",
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "3gp": "video/3gpp", "webm": "video/webm", "mkv": "video/x-matroska",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "ogg": "audio/ogg", "opus": "audio/ogg", "oga": "audio/ogg",
        "amr": "audio/amr", "wav": "audio/wav", "pdf": "application/pdf", "vcf": "text/vcard", "txt": "text/plain; charset=utf-8",
        "zip": "application/zip", "json": "application/json", "csv": "text/csv; charset=utf-8", "html": "text/html; charset=utf-8"
    ]

    // MARK: exports

    /// `GET /api/v1/conversations/{id}/export?format=pdf|png|html|json|csv[&since=D][&until=D][&theme=T]`:
    /// the whole conversation or a date range, written by the renderers into a temporary file and
    /// streamed as a download (several PNG pages: a .zip of them).
    func export(_ id: Int64, _ query: Parameters, theme: String) async throws -> Response {
        guard let exporter else { throw APIError(status: .notImplemented, message: "this server does not export") }
        guard let c = try await store.conversation(id: id) else { throw APIError.notFound("no conversation \(id)") }
        guard let format = query["format"].map({ String($0).lowercased() }), exporter.formats.contains(format) else {
            throw APIError.badRequest("format \"\(query["format"] ?? "")\" is not one of \(exporter.formats.joined(separator: ", "))")
        }
        // Checked here, passed on as given (the renderers read them in the same forms).
        _ = try API.date(query, "since"); _ = try API.date(query, "until")
        let range = [query["since"].map(String.init), query["until"].map(String.init)]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bubbles-export-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file: String
        do {
            // The renderers run in a child process, waited for off Swift's cooperative threads.
            file = try await NIOThreadPool.singleton.runIfActive { [range, store] in
                try exporter.export(conversation: id, from: store, format: format, theme: theme, since: range[0], until: range[1], into: folder)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw APIError(status: .unprocessableContent, message: "\(error)".replacingOccurrences(of: folder + "/", with: ""))
        }
        guard let info = try? await FileSystem.shared.info(forFileAt: FilePath(file)), info.type == .regular else {
            try? FileManager.default.removeItem(atPath: folder)
            throw APIError(status: .internalServerError, message: "the export wrote no file")
        }
        let size = UInt64(info.size)
        let ext = PathText.fileExtension(file).lowercased()
        let safeTitle = String(c.title.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? Character($0) : "-" }).prefix(60)
        let name = (safeTitle.isEmpty ? "conversation" : String(safeTitle)) + "." + ext
        var headers: HTTPFields = [.contentType: Self.mimeTypes[ext] ?? "application/octet-stream", .contentLength: String(size)]
        headers[.contentDisposition] = "attachment; filename=\"\(name)\""
        return Response(status: .ok, headers: headers, body: Self.stream(file, range: 0..<size, removing: folder))
    }
}

/// The last line of a streamed upload that failed.
struct ErrorLine: Encodable, Sendable {
    var status: Int
    var message: String
}

/// One upload's import: the importer's report as `ImportJSON`, the layouts of what changed let go.
struct ImportRun: Sendable {
    let importer: any ExportImporting
    let store: any ConversationStore
    let geometries: Geometries
    let part: String
    let folder: String
    /// An encrypted iPhone backup's password, from the form.
    var password: String?
    /// Makes the uploader owner of each conversation stored (with accounts).
    var own: (@Sendable (Int64) async throws -> Void)?

    func run(progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void) async throws -> ImportJSON {
        let report: WholeImportReport
        do {
            report = try await importer.importExport(part, password: password, into: store, progress: progress)
        } catch let e as StoreError {
            throw APIError(status: e.outOfSpace ? .insufficientStorage : .internalServerError, message: e.reason)
        } catch {
            // The importer's own words, without the temporary folder's name.
            throw APIError(status: .unprocessableContent, message: "\(error)".replacingOccurrences(of: folder + "/", with: ""))
        }
        for s in report.stored {
            await geometries.invalidate(s.summary.conversationID)
            try await own?(s.summary.conversationID)
        }
        let failed = report.failed.map { ImportJSON.Failed(name: $0.name, reason: $0.reason.replacingOccurrences(of: folder + "/", with: "")) }
        guard !report.stored.isEmpty else {
            throw APIError(
                status: .unprocessableContent,
                message: failed.isEmpty
                    ? "the export holds no conversation"
                    : "no conversation could be imported: " + failed.map { "\($0.name): \($0.reason)" }.joined(separator: "; "))
        }
        let all = report.stored.map {
            ImportJSON.One(
                id: $0.summary.conversationID, title: $0.title, added: $0.summary.messagesAdded, skipped: $0.summary.messagesSkipped,
                attachments: $0.summary.attachmentsAdded, new: $0.isNew)
        }
        return ImportJSON(conversations: all, failed: failed, summary: report.line)
    }
}

/// The one file of a `multipart/form-data` body on disk, found without reading it all into memory.
enum MultipartFile {
    /// The upload's body, mapped (not read into memory).
    static func body(_ path: String) throws -> Data {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else {
            throw APIError.badRequest("the upload could not be read")
        }
        return data
    }

    /// The first part whose `name` is `field` (and that `accept` takes, by its
    /// Content-Disposition): that header and where its content lies; nil when there is none.
    static func part(
        _ field: String, in data: Data, boundary: String,
        accept: (String) -> Bool = { _ in true }
    ) throws -> (disposition: String, content: Range<Data.Index>)? {
        let delimiter = Data(("--" + boundary).utf8)
        var at = data.startIndex
        while let start = data.range(of: delimiter, in: at..<data.endIndex) {
            let headersStart = start.upperBound + 2  // CRLF after the delimiter
            guard headersStart <= data.endIndex, let headersEnd = data.range(of: Data("\r\n\r\n".utf8), in: headersStart..<data.endIndex) else { return nil }
            let headers = String(decoding: data[headersStart..<headersEnd.lowerBound], as: UTF8.self)
            guard let next = data.range(of: Data("\r\n".utf8) + delimiter, in: headersEnd.upperBound..<data.endIndex) else {
                throw APIError.badRequest("the multipart body ends before its closing boundary")
            }
            let disposition = headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-disposition:") }.map(String.init) ?? ""
            if Files.parameter("name", in: disposition) == field, accept(disposition) { return (disposition, headersEnd.upperBound..<next.lowerBound) }
            at = next.lowerBound + 2
        }
        return nil
    }

    /// A short text field's value (at most 1 KiB: a password), nil when the form has none or it is empty.
    static func text(field: String, boundary: String, in data: Data) throws -> String? {
        guard let (_, range) = try part(field, in: data, boundary: boundary, accept: { Files.parameter("filename", in: $0) == nil }) else { return nil }
        let value = data[range]
        guard value.count <= 1024 else { throw APIError.badRequest("the field \"\(field)\" is longer than 1 KiB") }
        guard let text = String(data: value, encoding: .utf8) else { throw APIError.badRequest("the field \"\(field)\" is not UTF-8 text") }
        return text.isEmpty ? nil : text
    }

    /// Writes the part named `field` into `folder` under its own file name (sanitised); its path.
    static func extract(field: String, boundary: String, from data: Data, into folder: String) throws -> String {
        guard let (disposition, range) = try part(field, in: data, boundary: boundary) else {
            throw APIError.badRequest("the form has no field \"\(field)\"; send the export as the form field \"file\"")
        }
        var name = Files.parameter("filename", in: disposition) ?? "upload"
        name = (name.replacingOccurrences(of: "\\", with: "/") as NSString).lastPathComponent
        name = String(name.unicodeScalars.filter { $0.value >= 32 && $0 != "/" && $0 != ":" }.map(Character.init))
        if name.isEmpty || name.hasPrefix(".") { name = "upload" + name }
        guard !range.isEmpty else { throw APIError.badRequest("the field \"\(field)\" is empty; choose an export file") }
        let path = folder + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: nil), let out = FileHandle(forWritingAtPath: path) else {
            throw APIError(status: .internalServerError, message: "the upload could not be saved")
        }
        defer { try? out.close() }
        var from = range.lowerBound
        while from < range.upperBound {
            let to = min(from + (1 << 20), range.upperBound)
            try out.write(contentsOf: data[from..<to])
            from = to
        }
        return path
    }
}
