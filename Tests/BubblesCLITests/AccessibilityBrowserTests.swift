import BubbleTestSupport
import Foundation
import Testing

/// axe-core in the page: the accessibility rules a screen reader's user and a reader with low
/// vision depend on (contrast, names, landmarks, roles), run in Chromium on every kind of page.
enum Axe {
    /// axe.min.js (axe-core 4.12.1, from PyPI's axe-playwright-python: `scripts/fetch-axe.sh`,
    /// run here when the file is not there yet).
    static func script() throws -> String {
        let file = Tool.root.appendingPathComponent(".build/axe/axe.min.js")
        if !FileManager.default.fileExists(atPath: file.path) {
            let p = Process()
            p.executableURL = Tool.root.appendingPathComponent("scripts/fetch-axe.sh")
            try p.run()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { throw BrowserlessError("scripts/fetch-axe.sh failed (\(p.terminationStatus))") }
        }
        return try String(contentsOf: file, encoding: .utf8)
    }

    /// The violations of impact critical or serious on the page `b` shows: "rule: where — why".
    static func serious(_ b: WebDriver, script: String) throws -> [String] {
        try b.run(script + "\n;return true;")
        try b.run(
            """
            window.__axe = null;
            axe.run(document, { resultTypes: ['violations'] }).then((r) => {
              window.__axe = r.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious')
                .map((v) => v.id + ': ' + v.nodes.slice(0, 4).map((n) => n.target.join(' ') + ' — ' + ((n.any[0] || n.all[0] || n.none[0] || {}).message || '')).join(' | '));
            }, (e) => { window.__axe = ['axe failed: ' + e]; });
            """)
        return try b.wait(for: "axe's answer", timeout: 60, "return window.__axe") as? [String] ?? ["no answer from axe"]
    }
}

@Suite("bubbles serve: accessibility (axe-core in Chromium)", .serialized)
struct AccessibilityBrowserTests {
    @Test(
        "no critical or serious axe-core violation on any kind of page — sign-in, the list, an imported and a live conversation, search, gallery, stats, people, an invitation — in light and dark"
    )
    func everyPage() throws {
        let axe = try Axe.script()
        let store = try AccountsStore(.sqlite)
        var browsers: [WebDriver] = []
        defer {
            for b in browsers { b.quit() }
            store.stop()
        }
        try store.addUser("ann", "ann-password", admin: true, display: "Ann")
        try store.addUser("ben", "ben-password", display: "Ben")
        let imported = try Tool.run(["import", AppBrowserTests.fixtures.appendingPathComponent("telegram-single/result.json").path, "--db", store.db])
        #expect(imported.status == 0, "\(imported.stderr)")
        let server = try store.serve()
        let ann = try UserClient.signIn(server.port, "ann", "ann-password")
        let live = try #require(try ann.call("POST", "/api/v1/conversations", ["title": "Dinner", "participants": ["ann", "ben"]]).json["id"] as? Int)
        for text in ["are we on for 8?", "yes — booked the table", "> quoted\nand *bold*"] {
            #expect(try ann.send(live, text).status == 201)
        }
        let invite = try ann.call("POST", "/api/v1/conversations/\(live)/invites", [String: Any]())
        let token = try #require((invite.json["url"] as? String)?.split(separator: "/").last.map(String.init))
        let base = "http://127.0.0.1:\(server.port)"

        let b = try WebDriver(width: 1280, height: 800); browsers.append(b)
        var found: [String] = []
        for scheme in ["light", "dark"] {
            try b.open(base + "/login")
            try b.run("localStorage.setItem('bk-scheme', arguments[0]);", [scheme])
            try b.open(base + "/login")
            found += try Axe.serious(b, script: axe).map { "\(scheme) /login: \($0)" }
        }
        try AccountsBrowserTests.signIn(b, base: base, path: "/", name: "ann", password: "ann-password")
        let pages = ["/", "/c/1", "/c/\(live)", "/search?q=eclipse", "/c/1/gallery", "/c/1/stats", "/people", "/invite/\(token)"]
        for scheme in ["light", "dark"] {
            try b.run("localStorage.setItem('bk-scheme', arguments[0]);", [scheme])
            for page in pages {
                try b.open(base + page)
                try b.wait(
                    for: "\(page) loaded", timeout: 20, "return document.readyState === 'complete' && (!window.bubbleViewer || !window.bubbleViewer.busy());")
                #expect(try b.run("return document.documentElement.dataset.scheme || ''") as? String == scheme)
                found += try Axe.serious(b, script: axe).map { "\(scheme) \(page): \($0)" }
            }
        }
        #expect(found.isEmpty, "\(found.count) violations:\n\(found.joined(separator: "\n"))")
    }
}
