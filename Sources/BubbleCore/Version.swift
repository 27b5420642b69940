/// BubbleKit's version: the wave of issues it completes (`bubbles --version`).
public enum BubbleKitVersion {
    /// The library's version (semantic versioning; CHANGELOG.md).
    public static let string = "0.4.0"
}
