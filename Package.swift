// swift-tools-version:6.1
// BubbleKit: SMS/iMessage-style conversation bubbles, laid out in pure Swift and drawn with Cairo.
import PackageDescription

let package = Package(
    name: "BubbleKit",
    // What a user depends on (README "Use it as a library"; docs/LIBRARY.md). Each product states
    // the system libraries it needs on top of Foundation.
    products: [
        // Model, themes, nine-slice, layout (BubbleCore), people and media (BubblePeople, BubbleMedia), text engines (BubbleText: Pango, HarfBuzz,
        // fontconfig, ICU) and the Cairo renderer (BubbleRender: Cairo, gdk-pixbuf, libpng).
        .library(name: "BubbleKit", targets: ["BubbleKit"]),
        // Self-contained HTML pages of the same themes (+ Pango/fontconfig to find the fonts).
        .library(name: "BubbleKitHTML", targets: ["BubbleHTML"]),
        // Readers of chat exports and app databases (libxml2, zlib; GRDB's SQLite; swift-crypto
        // for encrypted backups with the `Decrypt` trait).
        .library(name: "BubbleKitImport", targets: ["BubbleImport"]),
        // SQLite (GRDB) and PostgreSQL (postgres-nio) stores of conversations.
        .library(name: "BubbleKitStore", targets: ["BubbleStore"]),
        // The Hummingbird server of `bubbles serve`, embeddable in an app of your own.
        .library(name: "BubbleKitServer", targets: ["BubbleServer"]),
        .executable(name: "bubbles", targets: ["BubblesCLI"])
    ],
    // `bubbles` without the store and the server (`make demo`: `--disable-default-traits`) builds
    // in a fraction of the time: no SwiftNIO, Hummingbird, postgres-nio or swift-crypto.
    traits: [
        .trait(name: "Server", description: "bubbles import/list/search/serve/db and --conversation: the store (SQLite, PostgreSQL) and the HTTP server"),
        .trait(
            name: "Decrypt",
            description: "Encrypted inputs: WhatsApp .crypt14/.crypt15 backups, Signal Desktop's SQLCipher 4 database and its attachments (swift-crypto)"),
        .default(enabledTraits: ["Server", "Decrypt"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // `make docs`: the DocC catalogs of the products (a command plugin; nothing of it is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")
    ],
    targets: [
        // Pure Swift (Foundation only): model, geometry, nine-slice, layout, themes, the text protocol.
        .target(name: "BubbleCore", resources: [.copy("Themes"), .copy("Samples")]),
        // Pure Swift beside the core (scripts/check-boundaries.sh keeps them apart): people (phone
        // numbering, vCards, a directory of persons), media (probing MP4/Ogg/Matroska/MP3/vCard
        // headers, finding a message's files) and statistics with the book's plan.
        .target(name: "BubblePeople", dependencies: ["BubbleCore"]),
        .target(name: "BubbleMedia", dependencies: ["BubbleCore", "BubblePeople"]),
        .target(name: "BubbleStats", dependencies: ["BubbleCore"]),
        // Chat markup (`*bold*`, `_italic_`…) read into spans: the WhatsApp importer, the live composer.
        .target(name: "BubbleMarkup", dependencies: ["BubbleCore"]),
        // Pango, HarfBuzz and fontconfig, without Cairo's API (text measurement, HTML font lookup).
        .systemLibrary(name: "CPango", pkgConfig: "pangocairo", providers: [.apt(["libpango1.0-dev"])]),
        // The one C file that makes Pango's Cairo font map for measuring (so measured = drawn).
        .target(name: "CPangoMeasure", dependencies: ["CPango"]),
        // Cairo + Pango (+ libpng) for painting, found with pkg-config.
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
        // The C allocator's free memory given back to the system (glibc's malloc_trim).
        .target(name: "CHeap"),
        // ICU's UAX #14 line breaker, grapheme breaker and bidi classes (FastTextEngine).
        .target(name: "CLineBreak", linkerSettings: [.linkedLibrary("icuuc"), .linkedLibrary("icudata")]),
        // Text engines (Pango, FastTextEngine), pinned fonts: measures what BubbleCore lays out.
        .target(name: "BubbleText", dependencies: ["BubbleCore", "CPango", "CPangoMeasure", "CLineBreak"], resources: [.copy("Fonts")]),
        // HTML export: page style sheet and fonts, conversation rows as fragments, whole files.
        .target(name: "BubbleHTML", dependencies: ["BubbleCore", "BubbleMedia", "BubbleText", "CPango"], resources: [.copy("Web")]),
        // Cairo painting: PNG, PDF, SVG, PDF merging, photos; draws what BubbleText measured.
        .target(
            name: "BubbleRender",
            dependencies: ["BubbleCore", "BubbleMedia", "BubbleStats", "BubbleText", "CPango", "CCairo", "CGdkPixbuf", "CPNGShim", "CLineBreak"]),
        // The `BubbleKit` product: BubbleCore, BubblePeople, BubbleMedia, BubbleText and BubbleRender behind one import.
        .target(name: "BubbleKit", dependencies: ["BubbleCore", "BubblePeople", "BubbleMedia", "BubbleText", "BubbleRender"]),
        // libxml2's push parser with SAX2 callbacks (SMS Backup & Restore XML), wrapped by SAXPushParser.
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // zlib's inflate (a WhatsApp backup's deflated database), streamed with its own errors.
        .systemLibrary(name: "CZlibInflate", providers: [.apt(["zlib1g-dev"])]),
        // Chat exports (SMS Backup & Restore, WhatsApp, Telegram, iMessage, Messenger, Discord, the
        // apps' own databases: WhatsApp msgstore.db and its backups, Signal Desktop) → Conversation.
        .target(
            name: "BubbleImport",
            dependencies: [
                "BubbleCore", "BubblePeople", "BubbleMarkup", "BubbleMedia", "CLibXML2", "CZlibInflate",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Decrypt"])),
                .product(name: "_CryptoExtras", package: "swift-crypto", condition: .when(traits: ["Decrypt"])),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation")
            ]
        ),
        // Conversations kept in SQLite (GRDB) or PostgreSQL (postgres-nio): import once, windows by
        // sequence number, full-text search, live changes (fanned out between servers on PostgreSQL).
        .target(
            name: "BubbleStore",
            dependencies: [
                "BubbleCore", "BubblePeople", "BubbleMarkup", .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the first layout's bulk read (`MessageRow(statement:)`).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log")
            ]),
        // `bubbles serve`: the store over HTTP (Hummingbird): JSON API and server-rendered pages.
        .target(
            name: "BubbleServer",
            dependencies: [
                "BubbleCore", "BubblePeople", "BubbleMarkup", "BubbleMedia", "BubbleStats", "BubbleStore", "BubbleText", "BubbleHTML", "CHeap",
                "CZlibInflate",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus")
            ],
            resources: [.copy("Web")]),
        .executableTarget(
            name: "BubblesCLI",
            dependencies: [
                "BubbleCore", "BubblePeople", "BubbleMedia", "BubbleStats", "BubbleText", "BubbleHTML", "BubbleRender", "BubbleImport",
                .target(name: "BubbleStore", condition: .when(traits: ["Server"])),
                .target(name: "BubbleServer", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation")
            ]
        ),
        // `make bench`: release-build benchmarks, each case in a child process.
        .executableTarget(
            name: "BubbleBench",
            dependencies: [
                "BubbleCore", "BubblePeople", "BubbleMedia", "BubbleStats", "BubbleText", "BubbleHTML", "BubbleRender", "BubbleImport", "BubbleStore",
                "BubbleTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket")
            ]),
        .testTarget(name: "BubbleCoreTests", dependencies: ["BubbleCore", "BubblePeople", "BubbleMedia", "BubbleStats", "BubbleTestSupport"]),
        .testTarget(
            name: "BubbleStoreTests",
            dependencies: [
                "BubbleStore", "BubbleImport", "BubbleCore", "BubblePeople", "BubbleTestSupport",
                .product(name: "GRDB", package: "GRDB.swift")
            ]),
        // Shared by the test targets: pinned fonts, headless Chromium, colour regions in pictures.
        // (And iPhone backups made as Finder makes them, encrypted or not: swift-crypto, GRDB.)
        .target(
            name: "BubbleTestSupport",
            dependencies: [
                "BubbleCore", "BubblePeople", "BubbleRender", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto")
            ],
            path: "Tests/BubbleTestSupport"),
        // Golden/: pictures compared with what is drawn (read by path; BUBBLEKIT_UPDATE_GOLDEN=1 rewrites them).
        .testTarget(name: "BubbleTextTests", dependencies: ["BubbleText", "BubbleRender", "BubbleCore", "BubbleStats", "BubbleTestSupport"]),
        // Opens the written pages in headless Chromium where it is installed.
        .testTarget(
            name: "BubbleHTMLTests", dependencies: ["BubbleHTML", "BubbleRender", "BubbleText", "BubbleCore", "BubbleMedia", "BubbleStats", "BubbleTestSupport"]
        ),
        .testTarget(
            name: "BubbleRenderTests",
            dependencies: ["BubbleRender", "BubbleHTML", "BubbleText", "BubbleCore", "BubbleMedia", "BubbleStats", "BubbleTestSupport"], exclude: ["Golden"]),
        .testTarget(
            name: "BubbleImportTests",
            dependencies: [
                "BubbleImport", "BubbleCore", "BubbleMarkup", "BubblePeople", "BubbleMedia", "CZlibInflate", "BubbleTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation")
            ],
            resources: [.copy("Fixtures")]
        ),
        // Runs the built `bubbles` tool as a user would.
        // `bubbles serve`'s routers in the test process (no socket): access, limits, errors.
        .testTarget(
            name: "BubbleServerTests",
            dependencies: [
                "BubbleServer", "BubbleStore", "BubbleCore", "BubbleStats", "BubbleRender", "BubbleTestSupport", "CHeap",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log")
            ]),
        .testTarget(
            name: "BubblesCLITests",
            dependencies: [
                "BubblesCLI", "BubbleRender", "BubbleText", "BubbleImport", "BubbleTestSupport",
                .product(name: "ZIPFoundation", package: "ZIPFoundation")
            ])
    ],
    swiftLanguageModes: [.v6]
)
