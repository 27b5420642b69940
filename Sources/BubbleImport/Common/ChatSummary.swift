import BubbleCore
import BubbleMedia
import Foundation

/// A conversation `Importer.loadEach` handed over: how the export names it, and its size.
public struct ChatSummary: Hashable, Sendable {
    /// How the export tells this conversation from the others (stable from one export to the next).
    public var key: String
    /// The conversation's title as the export gives it.
    public var title: String
    /// How many messages the conversation holds.
    public var messageCount: Int
}
