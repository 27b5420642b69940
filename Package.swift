// swift-tools-version:6.0
// BubbleKit: SMS/iMessage-style conversation bubbles, laid out in pure Swift and drawn with Cairo.
import PackageDescription

let package = Package(
    name: "BubbleKit",
    products: [
        .library(name: "BubbleCore", targets: ["BubbleCore"]),
        .library(name: "BubbleRender", targets: ["BubbleRender"]),
        .library(name: "BubbleImport", targets: ["BubbleImport"]),
        .executable(name: "bubbles", targets: ["BubblesCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
    ],
    targets: [
        // Pure Swift (Foundation only): model, geometry, nine-slice, layout.
        .target(name: "BubbleCore"),
        // Cairo + Pango (+ libpng) as one system library found with pkg-config.
        .systemLibrary(
            name: "CCairo",
            pkgConfig: "pangocairo",
            providers: [.apt(["libcairo2-dev", "libpango1.0-dev", "libpng-dev"])]
        ),
        // gdk-pixbuf decodes photos (JPEG, PNG, GIF, WebP…) for bubbles.
        .systemLibrary(
            name: "CGdkPixbuf",
            pkgConfig: "gdk-pixbuf-2.0",
            providers: [.apt(["libgdk-pixbuf-2.0-dev"])]
        ),
        // libpng behind a tiny C shim: libpng reports errors with setjmp/longjmp, which Swift cannot use.
        .target(name: "CPNGShim", linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("z")]),
        // ICU's UAX #14 line breaker, grapheme breaker and bidi classes (FastTextEngine).
        .target(name: "CLineBreak", linkerSettings: [.linkedLibrary("icuuc"), .linkedLibrary("icudata")]),
        // Swift types that own the C handles; paints what BubbleCore computes.
        .target(name: "BubbleRender", dependencies: ["BubbleCore", "CCairo", "CGdkPixbuf", "CPNGShim", "CLineBreak"], resources: [.copy("Themes"), .copy("Samples"), .copy("Fonts")]),
        // libxml2's push parser with SAX2 callbacks (SMS Backup & Restore XML), wrapped by SAXPushParser.
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // Chat exports (SMS Backup & Restore, WhatsApp, Telegram, iMessage, native JSON) → Conversation.
        .target(
            name: "BubbleImport",
            dependencies: [
                "BubbleCore", "CLibXML2",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        .executableTarget(
            name: "BubblesCLI",
            dependencies: [
                "BubbleCore", "BubbleRender", "BubbleImport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // `make bench`: release-build benchmarks, each case in a child process.
        .executableTarget(name: "BubbleBench", dependencies: ["BubbleCore", "BubbleRender", "BubbleImport"]),
        .testTarget(name: "BubbleCoreTests", dependencies: ["BubbleCore"]),
        // Golden/: pictures compared with what is drawn (read by path; BUBBLEKIT_UPDATE_GOLDEN=1 rewrites them).
        .testTarget(name: "BubbleRenderTests", dependencies: ["BubbleRender", "BubbleCore"], exclude: ["Golden"]),
        .testTarget(
            name: "BubbleImportTests",
            dependencies: [
                "BubbleImport", "BubbleCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            resources: [.copy("Fixtures")]
        ),
        // Runs the built `bubbles` tool as a user would.
        .testTarget(name: "BubblesCLITests", dependencies: ["BubblesCLI", "BubbleRender"]),
    ],
    swiftLanguageModes: [.v6]
)
