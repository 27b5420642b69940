import BubbleCore
import BubbleMedia
import BubbleText
import Foundation

/// A photo file checked and ready to reference from pages.
struct HTMLPhoto {
    /// Resolved path of the source file.
    var source: String
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`: what the bytes are, by their
    /// signature (not the file name). Other formats gdk-pixbuf reads (HEIC, TIFF, BMP…), which
    /// browsers do not all show, are converted (`convert`) when they are written
    /// (`PictureDecoder.browserImage`: JPEG turned by their orientation, PNG when transparent); their
    /// `mime` is known once they are (folder mode), or is the embedded bytes' own.
    var mime: String
    var convert: Bool
    /// Pixel size read from the file (for messages that give none).
    var width: Int
    var height: Int
    /// Folder mode: the copy's name inside `NAME_files/`.
    var copyName: String?
}

/// Photos for one export: checked before anything is written (as `ConversationRenderer.resolvePhotos`
/// does), then embedded, copied or referenced.
final class HTMLPhotoAssets {
    let mode: HTMLOptions.Assets
    let pictures: any PictureDecoder
    /// Relative photo paths are resolved against this folder.
    let photosFolder: String
    /// Resolved path → photo.
    private(set) var photos: [String: HTMLPhoto] = [:]
    /// Copies are named by their content (a folder shared by several exports), not numbered.
    var contentNames = false
    private var nextNumber = 1

    init(mode: HTMLOptions.Assets, photosFolder: String, pictures: any PictureDecoder) {
        self.mode = mode
        self.photosFolder = photosFolder
        self.pictures = pictures
    }

    /// `path` made absolute against `photosFolder`.
    func fullPath(_ path: String) -> String {
        path.hasPrefix("/") ? path : photosFolder + "/" + path
    }

    /// Checks every photo of `conversation` (readable, an image) and, in folder mode, copies it
    /// into `folder`. Errors name the file and the message.
    func prepare(_ conversation: Conversation, copyInto folder: String?) throws(RenderError) {
        guard mode != .reference else {
            for (i, message) in conversation.messages.enumerated() {
                for path in message.images.compactMap(\.path) where Self.referencePath(path) == nil {
                    throw .unreadableImage(
                        path: path,
                        reason:
                            "messages[\(i)].image.path: with assets \"reference\" a photo must be a relative path inside the output folder (no \"..\", no leading \"/\", no URL scheme)"
                    )
                }
            }
            return
        }
        // Avatars are photos too (checked, embedded or copied the same way).
        for p in conversation.participants {
            guard let path = p.avatar else { continue }
            let full = fullPath(path)
            if photos[full] == nil { _ = try check(full, message: -1, copyInto: folder) }
        }
        for (i, message) in conversation.messages.enumerated() {
            for image in message.images {
                guard let path = image.path else {
                    if !(image.width > 0 && image.height > 0) {
                        throw .unreadableImage(path: "messages[\(i)].image", reason: "has neither a path nor a size")
                    }
                    continue
                }
                let full = fullPath(path)
                if photos[full] != nil { continue }
                _ = try check(full, message: i, copyInto: folder)
            }
        }
    }

    /// Checks one photo (and, given `folder`, copies it there); remembers it.
    func check(_ full: String, message i: Int, copyInto folder: String? = nil) throws(RenderError) -> HTMLPhoto {
        let photo = try read(full, message: i, copyInto: folder)
        photos[full] = photo
        return photo
    }

    private func read(_ full: String, message i: Int, copyInto folder: String?) throws(RenderError) -> HTMLPhoto {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isDir), !isDir.boolValue else {
            throw .unreadableImage(path: full, reason: isDir.boolValue ? "is a folder (messages[\(i)].image.path)" : "no such file (messages[\(i)].image.path)")
        }
        guard let handle = FileHandle(forReadingAtPath: full) else {
            throw .unreadableImage(path: full, reason: "cannot be read (messages[\(i)].image.path)")
        }
        let head = [UInt8]((try? handle.read(upToCount: 16)) ?? Data())
        try? handle.close()
        guard let size = pictures.displaySize(ofFile: full) else {
            throw .unreadableImage(path: full, reason: "not an image gdk-pixbuf can read (messages[\(i)].image.path)")
        }
        let native = MediaProbe.browserImageType(head)
        var photo = HTMLPhoto(
            source: full, mime: native ?? "image/png", convert: native == nil,
            width: size.width, height: size.height)
        if let folder {
            // Converted now and written, not kept: an export of many HEIC photos holds none.
            let converted = photo.convert ? try pictures.browserImage(ofFile: full) : nil
            if let converted { photo.mime = converted.mime }
            if contentNames {
                // Shared: the same bytes get the same name; written once, atomically.
                guard let bytes = converted.map({ Data($0.bytes) }) ?? FileManager.default.contents(atPath: full) else {
                    throw .unreadableImage(path: full, reason: "cannot be read")
                }
                let name = Self.contentName(bytes, mime: photo.mime)
                try Self.writeOnce(bytes, to: folder + "/" + name)
                photo.copyName = name
                return photo
            }
            let name = copyName(for: full, mime: photo.mime)
            let target = folder + "/" + name
            if let converted {
                guard FileManager.default.createFile(atPath: target, contents: Data(converted.bytes)) else {
                    throw .unwritable(path: target, reason: "cannot create the file")
                }
            } else {
                do { try FileManager.default.copyItem(atPath: full, toPath: target) } catch {
                    throw .unwritable(path: target, reason: "cannot copy \(full): \(error.localizedDescription)")
                }
            }
            photo.copyName = name
        }
        return photo
    }

    /// `3f2a…c9.jpg`: 64-bit FNV-1a of the bytes in hex, the extension of the real type.
    static func contentName(_ bytes: Data, mime: String) -> String {
        var h = StableHash()
        bytes.withUnsafeBytes { h.add($0) }
        let ext: String =
            switch mime {
            case "image/jpeg": "jpg"
            case "image/gif": "gif"
            case "image/webp": "webp"
            default: "png"
            }
        return String(format: "%016llx", h.value) + "." + ext
    }

    /// Writes `bytes` to `target` unless it is there: through a temporary file renamed into
    /// place, so a reader (or another export writing the same file) never sees it half written.
    static func writeOnce(_ bytes: Data, to target: String) throws(RenderError) {
        guard !FileManager.default.fileExists(atPath: target) else { return }
        let tmp = target + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard FileManager.default.createFile(atPath: tmp, contents: bytes) else {
            throw .unwritable(path: target, reason: "cannot create the file")
        }
        guard rename(tmp, target) == 0 else {
            unlink(tmp)
            throw .unwritable(path: target, reason: String(cString: strerror(errno)))
        }
    }

    /// `0001-holiday_photo.jpg`: numbered (unique), only `[A-Za-z0-9._-]`, no leading dot, the
    /// extension of the real type — a name that cannot climb out of the assets folder.
    func copyName(for path: String, mime: String) -> String {
        let ext: String =
            switch mime {
            case "image/jpeg": "jpg"
            case "image/gif": "gif"
            case "image/webp": "webp"
            default: "png"
            }
        var stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        stem = String(
            stem.unicodeScalars.map { s -> Character in
                let v = s.value
                let ok = (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A) || v == 0x2D || v == 0x5F
                return ok ? Character(s) : "_"
            }.prefix(60))
        let number = String(format: "%04d", nextNumber)
        nextNumber += 1
        return stem.isEmpty ? "\(number).\(ext)" : "\(number)-\(stem).\(ext)"
    }

    /// A photo path usable as a relative URL as it is, or nil: no scheme, not absolute, no `..`
    /// segment, no backslash, no control characters.
    static func referencePath(_ path: String) -> String? {
        guard !path.isEmpty, !path.hasPrefix("/"), !path.hasPrefix("~"), !path.contains("\\") else { return nil }
        if let colon = path.firstIndex(of: ":"), !path[..<colon].contains("/") { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0 == ".." }) else { return nil }
        guard !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return path
    }

    /// The bytes to embed for `photo` and their type (converted when the browser cannot show the
    /// file).
    func embedded(_ photo: HTMLPhoto) throws(RenderError) -> (mime: String, bytes: [UInt8]) {
        if photo.convert { return try pictures.browserImage(ofFile: photo.source) }
        guard let data = FileManager.default.contents(atPath: photo.source) else {
            throw .unreadableImage(path: photo.source, reason: "cannot be read")
        }
        return (photo.mime, [UInt8](data))
    }
}
