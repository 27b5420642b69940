import Foundation

/// The theme files and art that ship inside the package (Sources/BubbleCore/Themes).
public enum BundledThemes {
    /// Folder of the bundled themes.
    public static var folder: URL { Bundle.module.resourceURL!.appendingPathComponent("Themes") }

    /// Path of a bundled file, e.g. `path("classic/incoming@2x.png")`.
    public static func path(_ relative: String) -> String { folder.appendingPathComponent(relative).path }
}

/// The built-in sample conversation (`bubbles demo`): the seeds' messages, one photo.
public enum BundledSamples {
    /// The folder of the bundled sample conversations.
    public static var folder: URL { Bundle.module.resourceURL!.appendingPathComponent("Samples") }
    /// The path of the demo conversation `make demo` renders.
    public static var demoConversation: String { folder.appendingPathComponent("demo.json").path }
    /// A group chat with every conversation feature: names, avatars, links, reactions, a reply,
    /// emoji-only, right-to-left text, a photo grid with a caption, failed and read status, typing.
    public static var featuresConversation: String { folder.appendingPathComponent("features.json").path }
}
