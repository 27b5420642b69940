import Foundation

/// Chromium driven through Debian's `chromium-driver` over the W3C WebDriver protocol (JSON over
/// HTTP on loopback): a page can be opened, clicked, typed into, resized, scripted and
/// screenshotted as a user would. Headless, fonts pinned to the project's fontconfig file, no
/// proxy (every request of the page stays on loopback). `quit()` ends the browser and the driver;
/// `deinit` does it too, so a failing test never leaves them running.
public final class WebDriver: @unchecked Sendable {
    public static let driverCandidates = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
    let driver = Process()
    let port: Int
    let session: String
    let profile: URL
    private var ended = false

    /// Starts chromedriver on a free port and a headless Chromium session with a `width`×`height`
    /// window.
    public init(width: Int = 1000, height: Int = 800) throws {
        guard let exe = Self.driverCandidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BrowserError(
                "chromedriver is needed for the viewer's browser tests and is not installed "
                    + "(looked for \(Self.driverCandidates.joined(separator: ", "))); install it with "
                    + "`apt-get install -y --no-install-recommends chromium-driver` (scripts/bootstrap.sh does this)")
        }
        let browser = try Chromium.executable()
        TestFonts.pin()
        port = HTTP.freePort()
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("bk-webdriver-\(UUID().uuidString)")
        driver.executableURL = URL(fileURLWithPath: exe)
        driver.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
        var env = ProcessInfo.processInfo.environment
        env["FONTCONFIG_FILE"] = TestFonts.configFile
        for k in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] { env[k] = nil }
        driver.environment = env
        driver.standardOutput = FileHandle.nullDevice
        driver.standardError = FileHandle.nullDevice
        try driver.run()
        // Ready when /status says so.
        let deadline = Date().addingTimeInterval(20)
        var ready = false
        while !ready, Date() < deadline {
            if let r = try? HTTP.request(port: port, method: "GET", path: "/status", timeout: 5),
                let o = try? r.json() as? [String: Any], (o["value"] as? [String: Any])?["ready"] as? Bool == true
            {
                ready = true
            } else {
                usleep(50_000)
            }
        }
        guard ready else {
            driver.terminate()
            throw BrowserError("chromedriver did not become ready on port \(port) within 20 s")
        }
        let args = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-proxy-server",
            "--force-device-scale-factor=1", "--force-color-profile=srgb", "--disable-extensions",
            "--hide-scrollbars", "--disable-background-networking", "--disable-dev-shm-usage",
            "--window-size=\(width),\(height)", "--user-data-dir=\(profile.path)"
        ]
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": ["binary": browser, "args": args]
                ]
            ]
        ]
        let reply = try Self.call(port: port, "POST", "/session", capabilities)
        guard let value = reply as? [String: Any], let id = value["sessionId"] as? String else {
            driver.terminate()
            throw BrowserError("chromedriver made no session: \(reply)")
        }
        session = id
    }

    deinit { quit() }

    /// Ends the session and the driver (the browser goes with it).
    public func quit() {
        guard !ended else { return }
        ended = true
        _ = try? Self.call(port: port, "DELETE", "/session/\(session)", nil, timeout: 10)
        if driver.isRunning {
            driver.terminate()
            let deadline = Date().addingTimeInterval(3)
            while driver.isRunning, Date() < deadline { usleep(20_000) }
            if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
        }
        // A browser busy with a page (a huge one, a hung script) can outlive its driver: its
        // processes are found by this session's own profile folder.
        let sweep = Process()
        sweep.executableURL = URL(fileURLWithPath: "/usr/bin/pkill")
        sweep.arguments = ["-KILL", "-f", "--", "--user-data-dir=" + profile.path]
        sweep.standardOutput = FileHandle.nullDevice
        sweep.standardError = FileHandle.nullDevice
        if (try? sweep.run()) != nil { sweep.waitUntilExit() }
        try? FileManager.default.removeItem(at: profile)
    }

    /// One WebDriver command; its `value`, or the error the driver named.
    static func call(port: Int, _ method: String, _ path: String, _ body: Any?, timeout: Int = 60) throws -> Any {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let r = try HTTP.request(port: port, method: method, path: path, body: data ?? (method == "POST" ? Data("{}".utf8) : nil), timeout: timeout)
        let o = (try? r.json()) as? [String: Any]
        if r.status >= 400 {
            let v = o?["value"] as? [String: Any]
            throw BrowserError("webdriver \(method) \(path): \(r.status) \(v?["error"] ?? "") \(String((v?["message"] as? String ?? r.text).prefix(400)))")
        }
        return o?["value"] ?? NSNull()
    }

    @discardableResult
    func command(_ method: String, _ path: String, _ body: Any? = nil) throws -> Any {
        try Self.call(port: port, method, "/session/\(session)" + path, body)
    }

    /// Opens `url` and waits for the page's load.
    public func open(_ url: String) throws { try command("POST", "/url", ["url": url]) }

    public var url: String { (try? command("GET", "/url")) as? String ?? "" }

    /// Runs `script` (a function body: `arguments[0]`…, `return …`) in the page; its result.
    @discardableResult
    public func run(_ script: String, _ args: [Any] = []) throws -> Any {
        try command("POST", "/execute/sync", ["script": script, "args": args])
    }

    /// Runs `script` until it returns something other than null/false, or fails after `timeout` s.
    @discardableResult
    public func wait(for what: String, timeout: Double = 15, _ script: String) throws -> Any {
        let deadline = Date().addingTimeInterval(timeout)
        var last: Any = NSNull()
        repeat {
            last = try run(script)
            if !(last is NSNull), (last as? Bool) != false { return last }
            usleep(50_000)
        } while Date() < deadline
        throw BrowserError("waited \(timeout) s for \(what); the page: \(try run("return location.href + ' ' + document.title"))")
    }

    /// The outer size of the window.
    public func resize(width: Int, height: Int) throws {
        try command("POST", "/window/rect", ["width": width, "height": height])
    }

    /// The element matching `css` (a WebDriver element reference).
    public func element(_ css: String) throws -> String {
        let v = try command("POST", "/element", ["using": "css selector", "value": css])
        guard let o = v as? [String: Any], let ref = o.values.first as? String else { throw BrowserError("no element \(css)") }
        return ref
    }

    public func click(_ css: String) throws { try command("POST", "/element/\(try element(css))/click") }

    /// Types `text` into the element (file inputs take a path).
    public func type(_ css: String, _ text: String) throws {
        try command("POST", "/element/\(try element(css))/value", ["text": text])
    }

    /// Presses keys as a user would, wherever the focus is (WebDriver actions: each character
    /// down and up; `\u{E004}` Tab, `\u{E007}` Enter, `\u{E015}` ↓, `\u{E013}` ↑, `\u{E00C}` Esc).
    /// Presses `key` while `modifiers` are held (`\u{E00A}` Alt, `\u{E009}` Control, `\u{E008}` Shift).
    public func press(_ key: String, holding modifiers: String) throws {
        var actions: [[String: Any]] = modifiers.unicodeScalars.map { ["type": "keyDown", "value": String($0)] }
        actions += [["type": "keyDown", "value": key], ["type": "keyUp", "value": key]]
        actions += modifiers.unicodeScalars.reversed().map { ["type": "keyUp", "value": String($0)] }
        try command("POST", "/actions", ["actions": [["type": "key", "id": "keyboard", "actions": actions]]])
    }

    public func press(_ keys: String) throws {
        var actions: [[String: Any]] = []
        for k in keys.unicodeScalars {
            actions.append(["type": "keyDown", "value": String(k)])
            actions.append(["type": "keyUp", "value": String(k)])
        }
        try command("POST", "/actions", ["actions": [["type": "key", "id": "keyboard", "actions": actions]]])
    }

    /// The page as it is now, decoded.
    public func screenshot() throws -> Data {
        guard let b64 = try command("GET", "/screenshot") as? String, let png = Data(base64Encoded: b64) else {
            throw BrowserError("no screenshot")
        }
        return png
    }
}
