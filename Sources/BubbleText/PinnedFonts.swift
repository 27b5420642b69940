import Foundation

/// The project's pinned fontconfig file (Sources/BubbleText/Fonts/fonts.conf).
public enum PinnedFonts {
    /// The path of the project's fontconfig file, which names the bundled and Debian font packages
    /// the layout numbers are pinned to.
    public static var configFile: String { Bundle.module.resourceURL!.appendingPathComponent("Fonts/fonts.conf").path }

    /// Points fontconfig at the pinned fonts unless `FONTCONFIG_FILE` is already set. Call it
    /// before the first text is measured: fontconfig reads its configuration once.
    public static func use() {
        if ProcessInfo.processInfo.environment["FONTCONFIG_FILE"] == nil {
            setenv("FONTCONFIG_FILE", configFile, 1)
        }
    }
}
