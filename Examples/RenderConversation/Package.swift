// swift-tools-version:6.1
// An example of depending on BubbleKit: a conversation built in code, drawn to PNG, PDF, SVG
// and HTML.
// In a package of your own, depend on BubbleKit by its URL instead:
//     .package(url: "https://github.com/<you>/BubbleKit", from: "0.4.0")
// and name the product `.product(name: "BubbleKit", package: "BubbleKit")`.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name (the clone's); traits [] leaves out the
// store and the server (BubbleKit's default traits), which this program does not use.
let bubbleKit = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "RenderConversation",
    dependencies: [.package(path: bubbleKit.path, traits: [])],
    targets: [
        .executableTarget(
            name: "RenderConversation",
            dependencies: [
                .product(name: "BubbleKit", package: bubbleKit.lastPathComponent),
                .product(name: "BubbleKitHTML", package: bubbleKit.lastPathComponent),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
