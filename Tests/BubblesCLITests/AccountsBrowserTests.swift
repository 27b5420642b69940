import BubbleTestSupport
import Foundation
import Testing

/// People in browsers: each signs in on the sign-in page in a Chromium of their own (a separate
/// profile: a WebDriver session of its own), and is who they are in the conversation.
@Suite("bubbles serve: accounts in the browser (WebDriver)", .serialized)
struct AccountsBrowserTests {
    /// Signs in through the page `path` sends to, and waits until that page is back and live.
    static func signIn(_ browser: WebDriver, base: String, path: String, name: String, password: String) throws {
        try browser.open(base + path)
        try browser.wait(for: "the sign-in page", timeout: 20, "return location.pathname === '/login' && !!document.getElementById('signin')")
        try browser.type("#signname", name)
        try browser.type("#signpassword", password)
        try browser.click("#signbutton")
        try browser.wait(for: "\(path) after signing in", timeout: 20, "return location.pathname + location.search === '\(path)'")
    }

    /// The HTTP status of a GET from the page (with its cookie).
    static func status(_ browser: WebDriver, _ path: String) throws -> Int? {
        try browser.run("const x = new XMLHttpRequest(); x.open('GET', arguments[0], false); x.send(); return x.status;", [path]) as? Int
    }

    /// ann, ben and carl (each's password is `NAME-password`) and the store served: one server,
    /// or two on one PostgreSQL (ann's is the first).
    static func annBenCarl(_ store: AccountsStore, _ nodes: LiveBrowserTests.Nodes) throws -> (one: LiveServer, two: LiveServer) {
        try store.addUser("ann", "ann-password", display: "Ann")
        try store.addUser("ben", "ben-password", display: "Ben")
        try store.addUser("carl", "carl-password")
        let one = try store.serve()
        return (one, nodes == .twoPostgres ? try store.serve() : one)
    }

    @Test(
        "ann and ben, each signed in in a browser of their own, talk in one conversation: each sees their own messages on the right without choosing a side (no \"send as\"); carl, not a member, gets 404; signing out sends to the sign-in page",
        arguments: LiveBrowserTests.Nodes.allCases)
    func twoPeople(nodes: LiveBrowserTests.Nodes) throws {
        let store = try AccountsStore(nodes == .oneSQLite ? .sqlite : .postgres)
        var browsers: [WebDriver] = []
        defer {
            for b in browsers { b.quit() }
            store.stop()
        }
        let (one, two) = try Self.annBenCarl(store, nodes)
        let made = try UserClient.signIn(one.port, "ann", "ann-password")
            .call("POST", "/api/v1/conversations", ["title": "Ann & Ben", "participants": ["ann", "ben"]])
        let c = try #require(made.json["id"] as? Int)

        let a = try WebDriver(width: 700, height: 640); browsers.append(a)
        let b = try WebDriver(width: 700, height: 640); browsers.append(b)
        try Self.signIn(a, base: "http://127.0.0.1:\(one.port)", path: "/c/\(c)", name: "ann", password: "ann-password")
        try Self.signIn(b, base: "http://127.0.0.1:\(two.port)", path: "/c/\(c)", name: "ben", password: "ben-password")
        try LiveBrowserTests.ready(a, "ann's window live")
        try LiveBrowserTests.ready(b, "ben's window live")
        // Each window is someone: the switch is gone, and it holds them alone.
        for (browser, me) in [(a, "ann"), (b, "ben")] {
            #expect(
                try browser.run("const s = document.getElementById('sendas'); return s.hidden + ':' + s.options.length + ':' + s.value") as? String
                    == "true:1:\(me)")
            #expect(try browser.run("return document.querySelector('.menu .who b').textContent") as? String ?? "" == (me == "ann" ? "Ann" : "Ben"))
            #expect(
                try browser.run("return ['signout', 'signoutall', 'scheme'].every((id) => document.getElementById(id).closest('details.menu'))") as? Bool
                    == true,
                "sign-out and light/dark in the ⋮ menu")
        }

        try a.type("#text", "hello ben\u{E007}")
        try b.wait(for: "ann's message in ben's window", timeout: 20, "return !!document.querySelector('b[data-n=\"1\"]')")
        try b.type("#text", "hi ann\u{E007}")
        try a.wait(for: "ben's message in ann's window", timeout: 20, "return !!document.querySelector('b[data-n=\"2\"]')")
        try b.wait(for: "ben's own message in his window", timeout: 20, "return !!document.querySelector('b[data-n=\"2\"]')")
        try a.wait(for: "ann's message settled in her window", timeout: 20, "return !!document.querySelector('b[data-n=\"1\"]')")
        #expect(try LiveBrowserTests.side(a, 1) == "right" && LiveBrowserTests.side(a, 2) == "left", "ann's own on the right in her window")
        #expect(try LiveBrowserTests.side(b, 2) == "right" && LiveBrowserTests.side(b, 1) == "left", "ben's own on the right in his window")
        #expect(try LiveBrowserTests.rowText(b, 1)?.contains("hello ben") == true)
        // Reloaded, still so (the page is drawn from ben's side by the server).
        try b.open("http://127.0.0.1:\(two.port)/c/\(c)")
        try LiveBrowserTests.ready(b, "ben's window after a reload")
        #expect(try LiveBrowserTests.side(b, 2) == "right" && LiveBrowserTests.side(b, 1) == "left")
        let stored =
            try UserClient.signIn(one.port, "ben", "ben-password").call("GET", "/api/v1/conversations/\(c)/messages").json["messages"] as? [[String: Any]]
        #expect(stored?.map { "\($0["sender"] ?? ""):\($0["text"] ?? "")" } == ["ann:hello ben", "ben:hi ann"])

        // Ann invites from the page: a link that works once.
        try a.click("details.tool:has(#invite) summary")
        try a.click("#invite")
        let link =
            try a.wait(
                for: "the invitation link", timeout: 20,
                """
                const f = document.getElementById('invitelink'); return !f.hidden && f.value.includes('/invite/') ? f.value : false;
                """) as? String ?? ""
        let token = String(link.split(separator: "/").last ?? "")
        #expect(try HTTP.request(port: one.port, method: "GET", path: "/invite/\(token)").text.contains("<h1>Ann &amp; Ben</h1>"))

        // carl signs in too, and the conversation is not there for him.
        let carl = try WebDriver(width: 700, height: 640); browsers.append(carl)
        try Self.signIn(carl, base: "http://127.0.0.1:\(one.port)", path: "/", name: "carl", password: "carl-password")
        #expect(try carl.run("return document.querySelectorAll('#library a.chat').length") as? Int == 0)
        #expect(try Self.status(carl, "/c/\(c)") == 404)
        #expect(try Self.status(carl, "/api/v1/conversations/\(c)/messages") == 404)

        // Signing out: back to the sign-in page, and the conversation asks for it again.
        try a.click(".menu summary")
        try a.click("#signout")
        try a.wait(for: "the sign-in page after signing out", timeout: 20, "return location.pathname === '/login'")
        #expect(try Self.status(a, "/api/v1/conversations") == 401)
    }

    @Test(
        "unread and read on the server, per user: ben's list (two windows, no reload) shows ann's new message first with a badge of 1 within 2 s; ann's own never count; opening it in one window clears the badge in the other; ann sees Delivered, then Read; a non-member's /c/ID is a 404 page in the app",
        arguments: LiveBrowserTests.Nodes.allCases)
    func unreadOnTheServer(nodes: LiveBrowserTests.Nodes) throws {
        let store = try AccountsStore(nodes == .oneSQLite ? .sqlite : .postgres)
        var browsers: [WebDriver] = []
        defer {
            for b in browsers { b.quit() }
            store.stop()
        }
        let (one, two) = try Self.annBenCarl(store, nodes)
        let ann = try UserClient.signIn(one.port, "ann", "ann-password")
        let lunch = try #require(try ann.call("POST", "/api/v1/conversations", ["title": "Lunch", "participants": ["ann", "ben"]]).json["id"] as? Int)
        let trip = try #require(try ann.call("POST", "/api/v1/conversations", ["title": "Trip", "participants": ["ann", "ben"]]).json["id"] as? Int)
        #expect(try ann.call("POST", "/api/v1/conversations/\(trip)/messages", ["clientId": UUID().uuidString, "text": "tickets booked"]).status == 201)

        let a = try WebDriver(width: 900, height: 640); browsers.append(a)
        let b1 = try WebDriver(width: 900, height: 640); browsers.append(b1)
        let b2 = try WebDriver(width: 900, height: 640); browsers.append(b2)
        try Self.signIn(a, base: "http://127.0.0.1:\(one.port)", path: "/c/\(lunch)", name: "ann", password: "ann-password")
        try Self.signIn(b1, base: "http://127.0.0.1:\(two.port)", path: "/", name: "ben", password: "ben-password")
        try Self.signIn(b2, base: "http://127.0.0.1:\(one.port)", path: "/", name: "ben", password: "ben-password")
        try LiveBrowserTests.ready(a, "ann's window live")
        for b in [b1, b2] { try b.wait(for: "ben's feed", timeout: 20, "return !!window.bubbleFeed && window.bubbleFeed.connects > 0") }
        // Trip's message is unread for ben (1), not for ann (hers).
        let badge =
            "const a = document.querySelector('#library a.chat[data-id=\"' + arguments[0] + '\"]'); const u = a && a.querySelector('.unread'); return u ? u.textContent : '';"
        #expect(try b1.run(badge, [trip]) as? String == "1")
        #expect(try a.run(badge, [trip]) as? String == "", "ann's own message counts as unread for her")

        try a.type("#text", "lunch at noon?\u{E007}")
        let sent = Date()
        for (b, name) in [(b1, "ben's first window"), (b2, "ben's second window")] {
            try b.wait(
                for: "ann's message in \(name)'s list", timeout: max(0.5, 2 - Date().timeIntervalSince(sent)),
                """
                const a = document.querySelector('#library a.chat[data-id="\(lunch)"]');
                const u = a && a.querySelector('.unread');
                return !!a && a.querySelector('.p').textContent === 'lunch at noon?' && !!u && u.textContent === '1'
                  && document.querySelector('#library li').contains(a);
                """)
        }
        #expect(Date().timeIntervalSince(sent) < 2.5, "the lists took \(Date().timeIntervalSince(sent)) s")
        #expect(try a.run(badge, [lunch]) as? String == "", "ann's own message counts as unread for her")
        let benAPI = try UserClient.signIn(one.port, "ben", "ben-password")
        let listed = try #require(try benAPI.get("/api/v1/conversations").json() as? [[String: Any]])
        #expect(listed.first { $0["id"] as? Int == lunch }?["unread"] as? Int == 1 && listed.first { $0["id"] as? Int == trip }?["unread"] as? Int == 1)
        #expect((try ann.get("/api/v1/conversations").json() as? [[String: Any]])?.allSatisfy { $0["unread"] as? Int == 0 } == true)
        // Ben's feed delivered it: ann sees Delivered under her message.
        try a.wait(
            for: "Delivered under ann's message", timeout: 10,
            "const s = document.querySelector('.vm .st[data-receipt]'); return !!s && s.dataset.receipt === 'Delivered';")

        // Ben opens it in one window: the other window's badge goes, ann sees Read.
        try b1.click("#library a.chat[data-id=\"\(lunch)\"]")
        try LiveBrowserTests.ready(b1, "the conversation in ben's first window")
        try b2.wait(
            for: "the badge gone in ben's other window", timeout: 5,
            "const a = document.querySelector('#library a.chat[data-id=\"\(lunch)\"]'); return !a.querySelector('.unread');")
        #expect(try b2.run(badge, [trip]) as? String == "1", "the other conversation is still unread")
        try a.wait(
            for: "Read under ann's message", timeout: 10,
            "const s = document.querySelector('.vm .st[data-receipt]'); return !!s && s.dataset.receipt === 'Read';")
        #expect((try benAPI.get("/api/v1/conversations").json() as? [[String: Any]])?.first { $0["id"] as? Int == lunch }?["unread"] as? Int == 0)

        // Carl is not in it: the page says so, in the app, with a 404.
        let carl = try UserClient.signIn(one.port, "carl", "carl-password")
        let page = try HTTP.request(
            port: one.port, method: "GET", path: "/c/\(lunch)", headers: ["Cookie": carl.cookie ?? "", "Accept": "text/html,application/xhtml+xml"])
        #expect(page.status == 404 && page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(page.text.contains("This chat isn’t available") && page.text.contains("id=\"library\"") && !page.text.contains("Lunch"))
        let api = try HTTP.request(port: one.port, method: "GET", path: "/api/v1/conversations/\(lunch)/messages", headers: ["Cookie": carl.cookie ?? ""])
        #expect(api.status == 404 && api.headers["content-type"]?.hasPrefix("application/json") == true)
    }
}
