import BubbleCore
import CZlibInflate
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web app's files served as static assets should be: each under a URL named by a hash of
/// its bytes (`/assets/app.3f9c1e2a4b5d6e7f.js`) and kept by browsers for a year
/// (`Cache-Control: public, max-age=31536000, immutable`), with an `ETag` (a 304 for a matching
/// `If-None-Match`) and a gzip copy for clients that accept it. Bytes are read and compressed
/// once, at start-up; a request copies nothing.
///
/// The files are `Sources/BubbleServer/Web` (SwiftPM resources): ES modules whose imports
/// (`from "./live.js"`) are rewritten to the hashed names of what they import, so a module's
/// hash covers everything it loads and a change anywhere gives the entry a new URL. Generated
/// sheets (the themes' style sheets) join them under names of their own.
struct WebAssets: Sendable {
    struct Asset: Sendable {
        /// The hashed name (`app.3f9c….js`).
        let name: String
        let contentType: String
        let etag: String
        let plain: ByteBuffer
        /// Nil when gzip would not make it smaller.
        let gzipped: ByteBuffer?
    }

    /// Hashed name → asset.
    let byName: [String: Asset]
    /// File name (`app.js`, `theme-whatsapp.css`) → its URL (`/assets/app.….js`).
    let urls: [String: String]
    /// A module → the URLs of every module it imports, directly or not (`modulepreload` links).
    let imports: [String: [String]]

    static let cacheControl = "public, max-age=31536000, immutable"

    enum LoadError: Error, CustomStringConvertible {
        case unreadable(String)
        case missingImport(module: String, imports: String)
        case cycle([String])
        var description: String {
            switch self {
            case .unreadable(let path): "web assets: cannot read \(path)"
            case let .missingImport(module, imports): "web assets: \(module) imports \(imports), which is not in the Web folder"
            case .cycle(let names): "web assets: the modules import each other in a cycle: \(names.joined(separator: " → "))"
            }
        }
    }

    /// The files of `folder` (its `.js` and `.css`), and `generated` (name → bytes) besides.
    init(folder: URL, generated: [String: [UInt8]] = [:]) throws {
        var files = generated
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names where name.hasSuffix(".js") || name.hasSuffix(".css") {
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
                throw LoadError.unreadable(folder.appendingPathComponent(name).path)
            }
            files[name] = [UInt8](data)
        }
        try self.init(files: files)
    }

    /// The assets of `files` (name → bytes).
    init(files: [String: [UInt8]]) throws {
        var hashed: [String: String] = [:]
        var rewritten: [String: [UInt8]] = [:]
        var imports: [String: [String]] = [:]
        var visiting: [String] = []
        // Depth first: a module's imports are named (hashed) before the module itself.
        func resolve(_ name: String) throws {
            if hashed[name] != nil { return }
            if let k = visiting.firstIndex(of: name) { throw LoadError.cycle(Array(visiting[k...]) + [name]) }
            visiting.append(name)
            defer { visiting.removeLast() }
            var bytes = files[name]!
            var all: [String] = []
            if name.hasSuffix(".js") {
                var text = String(decoding: bytes, as: UTF8.self)
                for spec in Self.importSpecifiers(text) {
                    let target = String(spec.dropFirst(2))
                    guard files[target] != nil else { throw LoadError.missingImport(module: name, imports: spec) }
                    try resolve(target)
                    text = text.replacingOccurrences(of: "\"\(spec)\"", with: "\"./\(hashed[target]!)\"")
                    all.append("/assets/" + hashed[target]!)
                    all += imports[target] ?? []
                }
                bytes = Array(text.utf8)
            }
            var seen = Set<String>()
            imports[name] = all.filter { seen.insert($0).inserted }
            rewritten[name] = bytes
            hashed[name] = Self.hashedName(name, bytes)
        }
        for name in files.keys.sorted() { try resolve(name) }
        var byName: [String: Asset] = [:]
        for (name, bytes) in rewritten {
            let h = hashed[name]!
            let zipped = Self.gzip(bytes).flatMap { $0.count < bytes.count ? ByteBuffer(bytes: $0) : nil }
            byName[h] = Asset(name: h, contentType: Self.contentType(name), etag: "\"\(h)\"", plain: ByteBuffer(bytes: bytes), gzipped: zipped)
        }
        self.byName = byName
        urls = hashed.mapValues { "/assets/" + $0 }
        self.imports = imports
    }

    /// The URL of file `name` (`app.js`).
    func url(_ name: String) -> String { urls[name] ?? "/assets/" + name }

    /// `./x.js` of each `import … from "./x.js"` / `import "./x.js"` (static imports, in order).
    static func importSpecifiers(_ source: String) -> [String] {
        var out: [String] = []
        for line in source.split(separator: "\n") {
            let t = line.trimmingCharacters(in: .whitespaces)
            // `import … from "./x.js"`, `export … from "./x.js"`, `} from "./x.js"` (the end of
            // a multi-line import) and `import "./x.js"`.
            guard t.contains("from \"./") || t.hasPrefix("import \"./") else { continue }
            guard let close = t.lastIndex(of: "\""), let open = t[..<close].lastIndex(of: "\"") else { continue }
            let spec = String(t[t.index(after: open)..<close])
            if spec.hasPrefix("./"), spec.hasSuffix(".js"), !spec.dropFirst(2).contains("/") { out.append(spec) }
        }
        return out
    }

    /// `app.js` → `app.<16 hex digits of the bytes' FNV-1a hash>.js`.
    static func hashedName(_ name: String, _ bytes: [UInt8]) -> String {
        var h = StableHash()
        h.add(bytes)
        let hex = String(h.value, radix: 16)
        let digest = String(repeating: "0", count: 16 - hex.count) + hex
        guard let dot = name.lastIndex(of: ".") else { return name + "." + digest }
        return name[..<dot] + "." + digest + name[dot...]
    }

    static func contentType(_ name: String) -> String {
        name.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8"
    }

    /// An asset's response: 304 when `If-None-Match` names its ETag, else its bytes (gzip when
    /// `Accept-Encoding` allows it). Unknown names: nil (the caller answers 404).
    func response(_ name: String, headers: HTTPFields) -> Response? {
        guard let asset = byName[name] else { return nil }
        var fields: HTTPFields = [.cacheControl: Self.cacheControl, .eTag: asset.etag, .vary: "Accept-Encoding"]
        if let tags = headers[.ifNoneMatch], Self.matches(tags, asset.etag) {
            return Response(status: .notModified, headers: fields)
        }
        fields[.contentType] = asset.contentType
        if let zipped = asset.gzipped, Self.acceptsGzip(headers[values: .acceptEncoding]) {
            fields[.contentEncoding] = "gzip"
            return Response(status: .ok, headers: fields, body: .init(byteBuffer: zipped))
        }
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: asset.plain))
    }

    /// Whether an `If-None-Match` list names `etag` (weak or strong, or `*`).
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { tag in
            let t = tag.trimmingCharacters(in: .whitespaces)
            return t == "*" || t == etag || t == "W/" + etag
        }
    }

    /// Whether `Accept-Encoding` allows gzip (`gzip` or `*`, not with `q=0`).
    static func acceptsGzip(_ values: [String]) -> Bool {
        for value in values {
            for item in value.split(separator: ",") {
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" || coding == "*" else { continue }
                let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
                if q > 0 { return true }
            }
        }
        return false
    }

    /// `bytes` as a gzip member (zlib, best compression); nil if zlib fails.
    static func gzip(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard deflateInit2_(&stream, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return nil
        }
        defer { deflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 64)
        let status: Int32 = bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = UInt32(input.count)
                stream.next_out = output.baseAddress
                stream.avail_out = UInt32(output.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        out.removeSubrange(Int(stream.total_out)...)
        return out
    }
}
