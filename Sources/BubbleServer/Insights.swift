import BubbleCore
import BubbleStats
import BubbleStore
import BubbleText
import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOFileSystem

/// One photo, video, sticker, voice note or document of a conversation, as the gallery lists it.
struct GalleryItemJSON: Codable, Sendable, Equatable {
    var conversation: Int64
    var seq: Int64
    var date: String
    /// "YYYY-MM" (UTC, the pages' zone): the gallery's groups.
    var month: String
    var sender: String?
    var senderName: String?
    /// photo, video, gif, sticker, voice, audio, document.
    var kind: String
    /// The stored file's id (`/api/v1/attachments/{id}`); nil when the export left it out.
    var file: String?
    /// Its thumbnail (`/api/v1/thumbnails/{id}`): photos, stickers, GIFs and video posters.
    var thumb: String?
    var width: Double?
    var height: Double?
    var duration: Double?
    var name: String?
    var pages: Int?
    var caption: String?
}

/// `GET …/media`: newest first.
struct GalleryJSON: ResponseEncodable, Sendable {
    var items: [GalleryItemJSON]
    var people: [String]
}

/// What the statistics and the gallery are made from, computed once per revision of a
/// conversation (its newest sequence number and live revision) and kept: a second request is a
/// lookup. Reading a conversation for them waits on the store, never a thread.
actor Insights {
    struct Revision: Hashable { var lastSeq: Int64; var lastRev: Int64 }
    let store: any ConversationReading & LiveStore
    private var stats: [String: (Revision, ConversationStats)] = [:]
    private var galleries: [Int64: (Revision, [GalleryItemJSON])] = [:]

    init(store: any ConversationReading & LiveStore) { self.store = store }

    func revision(_ id: Int64) async throws -> Revision {
        Revision(lastSeq: try await store.bounds(of: id)?.last ?? 0, lastRev: try await store.lastRev(of: id) ?? 0)
    }

    /// The statistics of conversation `id` in `zone` (cached per revision and zone; at most 64
    /// kept).
    func stats(_ id: Int64, zone: TimeZone) async throws -> ConversationStats {
        let revision = try await revision(id)
        let key = "\(id)|\(zone.identifier)"
        if let (r, s) = stats[key], r == revision { return s }
        let conversation = try await store.load(id)
        // Counted off the actor (seconds for a million messages): other conversations' requests go on.
        let s = await Task.detached(priority: .utility) { ConversationStats(conversation, timeZone: zone) }.value
        if stats.count >= 64 { stats.removeAll() }
        stats[key] = (revision, s)
        return s
    }

    /// Conversation `id`'s media, newest first (cached per revision).
    func gallery(_ id: Int64, participants: [Participant]) async throws -> [GalleryItemJSON] {
        let revision = try await revision(id)
        if let (r, items) = galleries[id], r == revision { return items }
        var names: [String: String] = [:]
        for p in participants where names[p.id] == nil { names[p.id] = p.name }
        var items: [GalleryItemJSON] = []
        var after: Int64 = 0
        while true {
            let page = try await store.messages(in: id, after: after, limit: 1_000)
            for s in page { items.append(contentsOf: Self.items(of: s, conversation: id, names: names, media: store.mediaFolder)) }
            guard let last = page.last, page.count == 1_000 else { break }
            after = last.seq
        }
        items.reverse()
        if galleries.count >= 64 { galleries.removeAll() }
        galleries[id] = (revision, items)
        return items
    }

    /// The gallery's items of one message.
    static func items(of s: StoredMessage, conversation: Int64, names: [String: String], media: String) -> [GalleryItemJSON] {
        let m = s.message
        func stored(_ path: String?) -> String? {
            guard let path, path.hasPrefix(media + "/") else { return nil }
            return (path as NSString).lastPathComponent
        }
        let date = API.iso(m.date)
        return MediaItem.items(of: m).map { item in
            GalleryItemJSON(
                conversation: conversation, seq: s.seq, date: date, month: String(date.prefix(7)), sender: m.sender,
                senderName: m.sender.flatMap { names[$0] }, kind: item.kind.rawValue, file: stored(item.file),
                thumb: stored(item.picture).map { "/api/v1/thumbnails/" + $0 }, width: item.width, height: item.height,
                duration: item.duration, name: item.name, pages: item.pages, caption: m.text.map { String($0.prefix(200)) })
        }
    }
}

/// Thumbnails of stored pictures: made by the `PictureDecoder` (gdk-pixbuf: orientation
/// applied, JPEG, PNG when transparent), once, kept on disk by the file's content hash and the
/// size (`<media>/.thumbnails/<size>/<id>.jpg`); a picture that cannot be read is remembered as
/// such and answered with a placeholder. At most `UsableCores.count` are made at a time, each
/// in a task of its own; requests for one being made wait for it instead of making it again.
actor Thumbnails {
    static let sizes = [256, 1_024]
    let folder: String
    let media: String
    let pictures: any PictureDecoder
    private var making: [String: Task<(mime: String, bytes: [UInt8])?, Never>] = [:]
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(media: String, pictures: any PictureDecoder) {
        self.media = media
        folder = media + "/.thumbnails"
        self.pictures = pictures
    }

    /// The placeholder of a picture that cannot be shown: a grey square with a crossed frame.
    static let placeholder = Array(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256"><rect width="256" height="256" fill="#d1d1d6"/>\
        <rect x="72" y="80" width="112" height="96" rx="8" fill="none" stroke="#8e8e93" stroke-width="8"/>\
        <path d="M72 80l112 96M184 80L72 176" stroke="#8e8e93" stroke-width="8"/></svg>
        """.utf8)

    /// The thumbnail of stored file `id` at `size`: (mime, bytes, from disk), nil for a picture
    /// that cannot be read.
    func thumbnail(_ id: String, size: Int) async -> (mime: String, bytes: [UInt8], cached: Bool)? {
        let base = "\(folder)/\(size)/\(id)"
        for (ext, mime) in [("jpg", "image/jpeg"), ("png", "image/png")] {
            if let data = await Files.contents(base + "." + ext) { return (mime, Array(buffer: data), true) }
        }
        if (try? await FileSystem.shared.info(forFileAt: FilePath(base + ".failed"))) != nil { return nil }
        let key = "\(size)/\(id)"
        if let task = making[key] { return await task.value.map { ($0.mime, $0.bytes, false) } }
        let source = media + "/" + id.prefix(2) + "/" + id
        let pictures = self.pictures
        let task = Task<(mime: String, bytes: [UInt8])?, Never> {
            await self.slot()
            let result = await Task.detached(priority: .utility) { () -> (mime: String, bytes: [UInt8])? in
                let made = try? pictures.thumbnail(ofFile: source, maxSide: size)
                try? FileManager.default.createDirectory(atPath: (base as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                if let made {
                    Self.writeAtomically(Data(made.bytes), to: base + (made.mime == "image/png" ? ".png" : ".jpg"))
                } else {
                    Self.writeAtomically(Data(), to: base + ".failed")
                }
                return made
            }.value
            self.release()
            return result
        }
        making[key] = task
        let result = await task.value
        making[key] = nil
        return result.map { ($0.mime, $0.bytes, false) }
    }

    private func slot() async {
        if running < UsableCores.count { running += 1; return }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume() }
    }

    /// Written beside and renamed: a reader never sees half a thumbnail.
    nonisolated static func writeAtomically(_ data: Data, to path: String) {
        let tmp = path + ".tmp-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: tmp, contents: data) else { return }
        if rename(tmp, path) != 0 { unlink(tmp) }
    }
}
