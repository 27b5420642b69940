import Foundation

/// Finds themes: a bundled theme by name, or a theme file by path.
public enum ThemeLibrary {
    /// Names of the bundled themes, sorted.
    public static var bundledNames: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: BundledThemes.folder.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// Loads `nameOrPath`: a bundled theme's name, or a path to a theme JSON file. Returns the
    /// theme and the folder its relative paths (art, background) are resolved against.
    public static func load(_ nameOrPath: String) throws(ThemeError) -> (theme: Theme, folder: String) {
        let isPath = nameOrPath.contains("/") || nameOrPath.hasSuffix(".json")
        let path = isPath ? nameOrPath : BundledThemes.path(nameOrPath + ".json")
        guard FileManager.default.fileExists(atPath: path) else {
            if isPath { throw ThemeError(path: path, location: nil, reason: "no such file") }
            throw ThemeError(
                path: nameOrPath, location: nil,
                reason: "is not a theme; expected one of \(bundledNames.joined(separator: ", ")) or a path to a theme .json file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ThemeError(path: path, location: nil, reason: "cannot be read")
        }
        let theme = try Theme.decode(data, path: path)
        return (theme, URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }
}
