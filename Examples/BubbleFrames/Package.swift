// swift-tools-version:6.1
// An example of depending on BubbleKit's importers: a WhatsApp export read, laid out with the
// seeds' numbers, and every bubble's frame printed. See RenderConversation's Package.swift for
// the dependency line of a package of your own.
import Foundation
import PackageDescription

let bubbleKit = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "BubbleFrames",
    dependencies: [.package(path: bubbleKit.path, traits: [])],
    targets: [
        .executableTarget(
            name: "BubbleFrames",
            dependencies: [
                .product(name: "BubbleKit", package: bubbleKit.lastPathComponent),
                .product(name: "BubbleKitImport", package: bubbleKit.lastPathComponent),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
