import BubbleCore
import Foundation

/// A picture or file that could not be shown: which (the name inside the export when the
/// importer kept it, else the path) and why. The message shows a labelled placeholder instead.
public struct MediaProblem: Hashable, Sendable, CustomStringConvertible {
    /// The file as the conversation names it.
    public var file: String
    /// Why it could not be shown (missing, not a picture, unreadable).
    public var reason: String
    public var description: String { "\(file): \(reason)" }
    /// A problem with `file`.
    public init(file: String, reason: String) { self.file = file; self.reason = reason }
}

/// What `MediaResolver.resolve` found: the problems, and how many pictures and files it looked at.
public struct MediaReport: Sendable {
    /// Each picture or file that could not be shown, with why.
    public var problems: [MediaProblem] = []
    /// How many pictures and files were looked at.
    public var checked = 0
    /// An empty report.
    public init() {}
    /// "2 of 1,204 attachments could not be read", or nil when all could.
    public var summary: String? {
        guard !problems.isEmpty else { return nil }
        let f = NumberFormatter()
        f.numberStyle = .decimal
        f.locale = Locale(identifier: "en_US")
        let n = f.string(from: NSNumber(value: checked)) ?? "\(checked)"
        return "\(problems.count) of \(n) \(Plural.noun(checked, "attachment")) could not be read"
    }
}

/// Readies a conversation's pictures and files for drawing — the one step every renderer (PNG,
/// PDF, SVG, HTML) takes before layout, so they all draw the same thing:
///
/// - a photo's size is read from its file, turned by its EXIF orientation;
/// - a photo or sticker that cannot be read (missing, truncated, a format no decoder here reads)
///   never stops the render: it becomes a labelled placeholder (`MediaAttachment.problem`) and a
///   `MediaProblem`; so does an avatar (initials are drawn);
/// - a sticker or photo attachment whose file reads is drawn as a picture (a sticker without a
///   bubble); a video gets a frame — its poster, or a dark frame of its size — with a play
///   symbol, its label below;
/// - an attachment's duration, size, pages or contact name missing from the model are read from
///   its file (`MediaProbe`).
package final class MediaResolver {
    package let decoder: any PictureDecoder
    /// Relative paths are resolved against this folder (the conversation file's).
    package let baseFolder: String
    package let style: LayoutStyle
    private var sizes: [String: (width: Int, height: Int)?] = [:]

    package init(decoder: any PictureDecoder, baseFolder: String, style: LayoutStyle) {
        self.decoder = decoder
        self.baseFolder = baseFolder
        self.style = style
    }

    /// `path` made absolute against `baseFolder`.
    package func fullPath(_ path: String) -> String {
        path.hasPrefix("/") ? path : baseFolder + "/" + path
    }

    /// The displayed size of the picture at `path` (resolved), read once per file.
    func size(_ path: String) -> (width: Int, height: Int)? {
        let full = fullPath(path)
        if let known = sizes[full] { return known }
        let read = decoder.displaySize(ofFile: full)
        sizes[full] = read
        return read
    }

    func reason(_ path: String) -> String {
        let full = fullPath(path)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isDir) else { return "no such file" }
        if isDir.boolValue { return "is a folder" }
        guard FileManager.default.isReadableFile(atPath: full) else { return "permission denied" }
        if let cut = MediaProbe.incompleteness(path: full) {
            let head = FileHandle(forReadingAtPath: full).flatMap { try? $0.read(upToCount: 16) }.map { [UInt8]($0) } ?? []
            return (MediaProbe.browserImageType(head).map { $0 + " " } ?? "") + cut
        }
        if let head = FileHandle(forReadingAtPath: full).flatMap({ try? $0.read(upToCount: 64) }),
            let mime = MediaProbe.mimeType([UInt8](head))
        {
            return "\(mime) that cannot be decoded (damaged or cut short?)"
        }
        return "not an image the renderer reads"
    }

    package func resolve(_ conversation: Conversation) -> (Conversation, MediaReport) {
        var result = conversation
        var report = MediaReport()
        for (i, p) in conversation.participants.enumerated() {
            guard let path = p.avatar else { continue }
            report.checked += 1
            if size(path) == nil {
                report.problems.append(MediaProblem(file: path, reason: "avatar: " + reason(path) + "; initials drawn"))
                result.participants[i].avatar = nil
            }
        }
        // Only messages with pictures or an attachment are written to: a conversation without
        // any keeps its message array as it is (no copy of it).
        for i in conversation.messages.indices where !conversation.messages[i].images.isEmpty || conversation.messages[i].attachment != nil {
            resolve(&result.messages[i], report: &report)
        }
        return (result, report)
    }

    func resolve(_ m: inout Message, report: inout MediaReport) {
        var kept: [ImageAttachment] = []
        for var image in m.images {
            guard let path = image.path else {
                if image.width > 0 && image.height > 0 { kept.append(image); continue }
                report.checked += 1
                problem(
                    &m, kind: image.sticker ? .sticker : .photo, name: image.name, path: nil, reason: "has neither a file nor a size",
                    report: &report)
                continue
            }
            report.checked += 1
            guard let size = size(path) else {
                problem(
                    &m, kind: image.sticker ? .sticker : .photo, name: image.name, path: path, reason: reason(path),
                    report: &report)
                continue
            }
            if image.width <= 0 || image.height <= 0 {
                image.width = Double(size.width)
                image.height = Double(size.height)
            }
            kept.append(image)
        }
        m.images = kept

        // An attachment already marked unreadable (just above, or by the importer) stays so.
        guard var a = m.attachment, a.path != nil || a.poster != nil, a.problem == nil else { return }
        if let path = a.path {
            report.checked += 1
            if a.duration == nil || a.byteSize == nil || a.pageCount == nil || a.title == nil || a.width == nil {
                let facts = MediaProbe.probe(path: fullPath(path))
                if facts.byteSize == nil && a.problem == nil {
                    a.problem = reason(path)
                    report.problems.append(MediaProblem(file: a.fileName ?? path, reason: a.problem!))
                    m.attachment = a
                    return
                }
                a.fill(from: facts)
            }
        }
        switch a.kind {
        case .sticker, .photo:
            // A picture sent as a file: drawn as one when it reads.
            guard m.images.isEmpty, let path = a.path else { break }
            if let size = size(path) {
                m.images = [
                    ImageAttachment(
                        path: path, width: Double(size.width), height: Double(size.height), name: a.fileName,
                        sticker: a.kind == .sticker)
                ]
                m.attachment = nil
                return
            }
            a.problem = a.problem ?? reason(path)
            report.problems.append(MediaProblem(file: a.fileName ?? path, reason: a.problem!))
        case .video, .gif:
            guard m.images.isEmpty, a.path != nil || a.poster != nil else { break }
            var frame = ImageAttachment(path: nil, width: style.videoFrameSize.width, height: style.videoFrameSize.height)
            if let poster = a.poster, let size = size(poster) {
                frame = ImageAttachment(path: poster, width: Double(size.width), height: Double(size.height))
            } else if let w = a.width, let h = a.height, w > 0, h > 0, w.isFinite, h.isFinite {
                // The video's own aspect, at least as large as the default frame's width.
                let factor = max(1, style.videoFrameSize.width / w)
                frame = ImageAttachment(path: nil, width: w * factor, height: h * factor)
            }
            frame.videoFrame = true
            m.images = [frame]
        default:
            break
        }
        m.attachment = a
    }

    /// An unreadable picture: the message gets a placeholder naming it (its first one, when it
    /// already has an attachment the placeholder is not added), and the report a problem.
    private func problem(
        _ m: inout Message, kind: MediaAttachment.Kind, name: String?, path: String?, reason: String,
        report: inout MediaReport
    ) {
        report.problems.append(MediaProblem(file: name ?? path.map(fullPath) ?? "(no file)", reason: reason))
        if m.attachment == nil {
            m.attachment = MediaAttachment(
                kind: kind, fileName: name ?? path.map { ($0 as NSString).lastPathComponent } ?? kind.rawValue,
                path: path, problem: reason)
        }
    }
}
