// The `BubbleKit` product: one import for laying out and drawing conversations.
@_exported import BubbleCore
@_exported import BubbleMedia
@_exported import BubblePeople
@_exported import BubbleRender
@_exported import BubbleText
