import Foundation

/// Pins fontconfig to the project's fonts (`Sources/BubbleText/Fonts/fonts.conf`) for this test process, so
/// `swift test` measures the same as `make test`. Call `TestFonts.pin()` before the first Pango,
/// Cairo text or fontconfig call; it sets `FONTCONFIG_FILE` once (fontconfig reads it only when it
/// starts) and does nothing on later calls.
public enum TestFonts {
    /// The package root: this file is Tests/BubbleTestSupport/TestFonts.swift.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static let configFile: String = repositoryRoot.appendingPathComponent("Sources/BubbleText/Fonts/fonts.conf").path

    private static let pinned: Bool = {
        precondition(FileManager.default.fileExists(atPath: configFile), "missing \(configFile)")
        return setenv("FONTCONFIG_FILE", configFile, 1) == 0
    }()

    public static func pin() {
        precondition(pinned, "could not set FONTCONFIG_FILE")
    }
}
