/// BubbleKit's version: the wave of issues it completes (`bubbles --version`).
public enum BubbleKitVersion {
    public static let string = "0.3.0"
}
