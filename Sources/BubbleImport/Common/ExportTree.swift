import BubbleCore
import Foundation

/// An export that is a tree of files — a folder on disk or a .zip read in place — as the readers
/// of many-file exports (Messenger, Instagram) see it: the files' paths relative to the export's
/// root, a JSON file to read (a zip entry is taken out into a scratch folder first), and a media
/// file a message names, resolved inside the export and never outside it.
final class ExportTree {
    enum Storage {
        case folder(String)
        case zip(ZipExport)
    }

    let storage: Storage
    /// The name errors use for the root (the path as given).
    let displayPath: String
    /// Relative paths of every regular file, "/"-separated, in a stable order.
    let files: [String]
    private var scratch: String?

    /// Reads the folder's file list (symbolic links are not followed; with `listing` false, the
    /// list stays empty: one thread of a big folder is read without walking all of it) or the
    /// zip's directory.
    init(path: String, displayPath: String, limits: ImportLimits, expected: String, listing: Bool = true) throws(ImportError) {
        self.displayPath = displayPath
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ImportError(path: displayPath, reason: "no such file or folder")
        }
        if isFolder.boolValue {
            let root = URL(fileURLWithPath: path).standardizedFileURL.path
            storage = .folder(root)
            var found: [String] = []
            if listing, let walker = FileManager.default.enumerator(atPath: root) {
                while let relative = walker.nextObject() as? String {
                    if walker.fileAttributes?[.type] as? FileAttributeType == .typeRegular { found.append(relative) }
                }
            }
            files = found.sorted()
        } else {
            let zip = try ZipExport(path: path, displayPath: displayPath, limits: limits, expected: expected)
            storage = .zip(zip)
            files = zip.filePaths
        }
        listed = Set(files)
    }

    private let listed: Set<String>

    /// Whether the export holds a file at `relative` (an unlisted folder is asked).
    func contains(_ relative: String) -> Bool {
        if listed.contains(relative) { return true }
        guard files.isEmpty, case .folder(let root) = storage else { return false }
        return FileManager.default.fileExists(atPath: (root as NSString).appendingPathComponent(relative))
    }

    deinit { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }

    /// How errors name the file at `relative`: "export.zip/messages/inbox/ann_1/message_1.json".
    func displayName(_ relative: String) -> String {
        (displayPath.hasSuffix("/") ? displayPath : displayPath + "/") + relative
    }

    /// A path on disk holding the file at `relative`: the file itself in a folder, a scratch copy
    /// of a zip entry (removed with the tree).
    func localFile(_ relative: String) throws(ImportError) -> String {
        switch storage {
        case .folder(let root):
            return (root as NSString).appendingPathComponent(relative)
        case .zip(let zip):
            guard let entry = zip.entry(path: relative) else {
                throw ImportError(path: displayName(relative), reason: "is not in the archive")
            }
            if scratch == nil {
                let folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-export-" + UUID().uuidString)
                do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                    throw ImportError(path: folder, reason: "cannot create a scratch folder: \(error.localizedDescription)")
                }
                scratch = folder
            }
            let destination = (scratch! as NSString).appendingPathComponent(UUID().uuidString + ".json")
            do { try zip.extract(entry, to: destination) } catch {
                throw ImportError(path: displayName(relative), reason: "refused: \(error.reason)")
            }
            return destination
        }
    }

    /// Removes a scratch copy `localFile` made (a folder's own files are left alone).
    func done(with local: String) {
        if case .zip = storage { try? FileManager.default.removeItem(atPath: local) }
    }

    /// Where the media file `relative` (a path from the export's root) is on disk — in the folder,
    /// or taken out of the zip into the import's attachments folder — or nil with a warning (and
    /// the message's placeholder counted as missing media): a path that leaves the export, a
    /// link leading out of it, a file the export does not hold, an entry the zip guards refuse.
    func media(_ relative: String, what: String, location: String, file: String, context: ImportContext) -> String? {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        if relative.isEmpty || relative.hasPrefix("/") || relative.contains("\\") || relative.contains("\u{0}")
            || parts.contains(where: { $0 == ".." }) || relative.contains("://")
        {
            context.warn(
                location, "\(what) \(relative)",
                relative.contains("://")
                    ? "is a web address (not in the export, never fetched); shown as a placeholder"
                    : "path leaves the export folder; shown as a placeholder",
                skipped: true, file: file, media: true)
            return nil
        }
        switch storage {
        case .folder(let root):
            let path = (root as NSString).appendingPathComponent(relative)
            guard FileManager.default.fileExists(atPath: path) else {
                context.warn(
                    location, "\(what) \(relative)", "no such file in the export (downloaded without media?); shown as a placeholder",
                    skipped: true, file: file, media: true)
                return nil
            }
            guard Self.isInside(path, root) else {
                context.warn(
                    location, "\(what) \(relative)", "is a link leading out of the export folder; shown as a placeholder",
                    skipped: true, file: file, media: true)
                return nil
            }
            return URL(fileURLWithPath: path).standardizedFileURL.path
        case .zip(let zip):
            guard let entry = zip.entry(path: relative) else {
                context.warn(
                    location, "\(what) \(relative)", "not in the zip (downloaded without media?); shown as a placeholder",
                    skipped: true, file: file, media: true)
                return nil
            }
            let name = (relative as NSString).lastPathComponent
            do {
                let folder = try context.attachmentsFolder()
                let destination = (folder as NSString).appendingPathComponent(
                    context.uniqueAttachmentName(stem: (name as NSString).deletingPathExtension, ext: PathText.fileExtension(name).lowercased()))
                try zip.extract(entry, to: destination)
                return destination
            } catch let error as ZipExport.Refusal {
                context.warn(location, "\(what) \(relative)", "refused: \(error.reason); shown as a placeholder", skipped: true, file: file, media: true)
            } catch {
                context.warn(location, "\(what) \(relative)", "\(error); shown as a placeholder", skipped: true, file: file, media: true)
            }
            return nil
        }
    }

    /// Whether `path`, its links resolved, lies inside `root`.
    static func isInside(_ path: String, _ root: String) -> Bool {
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let base = URL(fileURLWithPath: root).resolvingSymlinksInPath().path
        return real.hasPrefix(base.hasSuffix("/") ? base : base + "/")
    }

    /// `relative` inside `folder` (resolved), or nil when it would leave it (an absolute path,
    /// "..", or a link leading out).
    static func inside(_ folder: String, _ relative: String) -> String? {
        guard !relative.hasPrefix("/"), !relative.contains("\u{0}") else { return nil }
        let full = URL(fileURLWithPath: folder).appendingPathComponent(relative).standardizedFileURL.path
        let base = URL(fileURLWithPath: folder).standardizedFileURL.path
        guard full.hasPrefix(base.hasSuffix("/") ? base : base + "/") else { return nil }
        return FileManager.default.fileExists(atPath: full) && !isInside(full, base) ? nil : full
    }
}
