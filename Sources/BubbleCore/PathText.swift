/// Pieces of file names worked out in Swift. Foundation's `NSString.pathExtension` traps on Linux
/// on some names — a run of slashes before ".//" (found by `make fuzz` in a signal-export file);
/// names come from exports, messages and request paths, so everything reads them through this.
package enum PathText {
    /// The extension of a file name or path, as `NSString.pathExtension` gives it: the text after
    /// the last "." of the last path component (trailing slashes ignored), "" when there is none
    /// or the name starts with its only dot (".profile").
    ///
    ///     PathText.fileExtension("Media/IMG_1.JPG")  // "JPG"
    package static func fileExtension(_ path: String) -> String {
        var name = Substring(path)
        while name.hasSuffix("/") { name = name.dropLast() }
        if let slash = name.lastIndex(of: "/") { name = name[name.index(after: slash)...] }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}
