import BubbleCore
import Foundation
import BubbleRender

/// Runs Debian's headless Chromium on exported pages: screenshots and the DOM after load.
public enum Chromium {
    public static let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]

    /// The browser, or a failure that says how to get it.
    public static func executable() throws -> String {
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BrowserError(
                """
                headless Chromium is needed for the HTML export tests and is not installed \
                (looked for \(candidates.joined(separator: ", "))); install it with \
                `apt-get install -y --no-install-recommends chromium` (scripts/bootstrap.sh does this)
                """)
        }
        return path
    }

    /// Runs Chromium on `url` with `arguments`; returns its standard output. Fonts are pinned to
    /// the project's fontconfig file, colours to sRGB, the device scale to 1.
    public static func run(_ url: URL, _ arguments: [String], dark: Bool = false, timeout: Double = 90) throws -> Data {
        TestFonts.pin()
        let exe = try executable()
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("bk-chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        var args = [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--force-device-scale-factor=1", "--force-color-profile=srgb", "--disable-extensions",
            "--user-data-dir=\(profile.path)", "--virtual-time-budget=10000"
        ]
        if dark { args.append("--force-dark-mode") }
        p.arguments = args + arguments + [url.absoluteString]
        var env = ProcessInfo.processInfo.environment
        env["FONTCONFIG_FILE"] = TestFonts.configFile
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let watchdog = Watchdog(p)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { watchdog.expire() }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        if watchdog.finish() { throw BrowserError("chromium did not finish within \(Int(timeout)) s on \(url.path)") }
        guard p.terminationStatus == 0 else { throw BrowserError("chromium exited with \(p.terminationStatus) on \(url.path)") }
        return data
    }

    /// A `width`×`height` screenshot of the page, decoded.
    public static func screenshot(_ file: String, width: Int, height: Int, dark: Bool = false) throws -> RGBAImage {
        let png = FileManager.default.temporaryDirectory.appendingPathComponent("bk-shot-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: png) }
        _ = try run(URL(fileURLWithPath: file), ["--window-size=\(width),\(height)", "--screenshot=\(png)"], dark: dark)
        return try ImageSurface(pngFile: png).rgbaImage()
    }

    /// The DOM after load (and after any script would have run), serialised.
    public static func dom(_ file: String) throws -> String {
        String(decoding: try run(URL(fileURLWithPath: file), ["--dump-dom"]), as: UTF8.self)
    }
}

/// Terminates a process that outlives its time; `finish` tells whether it had to.
public final class Watchdog: @unchecked Sendable {
    private let process: Process
    private let lock = NSLock()
    private var finished = false
    private var expired = false
    init(_ process: Process) { self.process = process }
    func expire() {
        lock.lock(); defer { lock.unlock() }
        if !finished { expired = true; process.terminate() }
    }
    func finish() -> Bool {
        lock.lock(); defer { lock.unlock() }
        finished = true
        return expired
    }
}

public struct BrowserError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

/// A region of one colour found in a picture: its bounding box in pixels.
public struct ColourBlob: CustomStringConvertible {
    public var minX: Int, minY: Int, maxX: Int, maxY: Int
    public var count: Int
    public var width: Int { maxX - minX + 1 }
    public var height: Int { maxY - minY + 1 }
    public var description: String { "[\(minX),\(minY) \(width)×\(height)]" }
}

/// Connected regions (4-neighbours) of pixels within `tolerance` of `color`, with at least
/// `minimumPixels` pixels, top to bottom. Text inside a bubble makes holes, not new regions.
public func colourBlobs(_ image: RGBAImage, _ color: Color, tolerance: Int = 6, minimumPixels: Int = 150) -> [ColourBlob] {
    let target = [color.red, color.green, color.blue].map { Int(($0 * 255).rounded()) }
    let w = image.width, h = image.height
    var mask = [Bool](repeating: false, count: w * h)
    image.bytes.withUnsafeBufferPointer { px in
        for i in 0..<(w * h) {
            mask[i] =
                abs(Int(px[i * 4]) - target[0]) <= tolerance && abs(Int(px[i * 4 + 1]) - target[1]) <= tolerance
                && abs(Int(px[i * 4 + 2]) - target[2]) <= tolerance
        }
    }
    var seen = [Bool](repeating: false, count: w * h)
    var blobs: [ColourBlob] = []
    var stack: [Int] = []
    for start in 0..<(w * h) where mask[start] && !seen[start] {
        var b = ColourBlob(minX: w, minY: h, maxX: -1, maxY: -1, count: 0)
        stack.append(start); seen[start] = true
        while let i = stack.popLast() {
            let x = i % w, y = i / w
            b.count += 1
            b.minX = min(b.minX, x); b.maxX = max(b.maxX, x); b.minY = min(b.minY, y); b.maxY = max(b.maxY, y)
            for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)] where nx >= 0 && nx < w && ny >= 0 && ny < h {
                let j = ny * w + nx
                if mask[j] && !seen[j] { seen[j] = true; stack.append(j) }
            }
        }
        if b.count >= minimumPixels { blobs.append(b) }
    }
    return blobs.sorted { ($0.minY, $0.minX) < ($1.minY, $1.minX) }
}

/// A scratch folder removed by the caller.
public func htmlTempFolder() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bk-html-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}
