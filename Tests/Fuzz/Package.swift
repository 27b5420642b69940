// swift-tools-version:6.0
// libFuzzer targets for every BubbleKit reader (`make fuzz`; scripts/fuzz.sh). Built on their own
// with coverage and AddressSanitizer, linked with libFuzzer's driver (scripts/fuzz.sh passes the
// flags), so the main package's build and tests never pay for them.
import PackageDescription

let readers = [
    "SMS", "WhatsApp", "WhatsAppZip", "Telegram", "Native", "IMessage", "Messenger", "Discord", "MsgStore", "WhatsAppBackup", "SignalExport", "Contacts"
]

let package = Package(
    name: "BubbleKitFuzz",
    dependencies: [.package(name: "BubbleKit", path: "../..")],
    targets: [
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "BubbleImport", package: "BubbleKit"),
                .product(name: "BubbleCore", package: "BubbleKit")
            ])
    ] + readers.map { .executableTarget(name: "Fuzz\($0)", dependencies: ["FuzzSupport"]) },
    swiftLanguageModes: [.v6]
)
