import BubbleCore
import Foundation

/// Photos carried inside a native JSON file as `data:` URLs in `path`
/// (`"path": "data:image/jpeg;base64,/9j/4AAQ…"`, written by `bubbles convert --assets embed`):
/// decoded into the import's attachments folder so the renderers read them like any photo.
enum EmbeddedPhotos {
    static func extract(_ images: [ImageAttachment], context: ImportContext) throws(ImportError) -> [ImageAttachment] {
        var out = images
        for (i, image) in images.enumerated() {
            guard let path = image.path, path.hasPrefix("data:") else { continue }
            guard let comma = path.firstIndex(of: ","), path[..<comma].hasSuffix(";base64"),
                let bytes = Data(base64Encoded: String(path[path.index(after: comma)...]))
            else {
                context.warn(nil, "embedded photo", "is not a base64 data: URL; left out", skipped: true)
                out[i].path = nil
                continue
            }
            let mime = String(path[path.index(path.startIndex, offsetBy: 5)..<comma].dropLast(";base64".count))
            let ext = TextCleanup.photoExtension(ofMIMEType: mime) ?? "bin"
            let folder = try context.attachmentsFolder()
            let name = context.uniqueAttachmentName(stem: "embedded", ext: ext)
            let file = (folder as NSString).appendingPathComponent(name)
            guard FileManager.default.createFile(atPath: file, contents: bytes) else {
                throw ImportError(path: file, reason: "cannot write the embedded photo")
            }
            out[i].path = file
        }
        return out
    }
}
