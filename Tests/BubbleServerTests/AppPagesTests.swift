import BubbleStore
import Foundation
import Hummingbird
import Testing
@testable import BubbleServer

/// The app's pages as a reader meets them (issue 63), in-process: settings kept per user and
/// applied to the pages, the invitation page, the app's menu.
@Suite("bubbles serve in-process: the app's settings and pages")
struct AppPagesTests {
    @Test(
        "settings are each user's: ann's theme and dark apply to her pages on any device, not to ben's; ?theme= still wins for one visit; bad bodies are 400s naming the field and store nothing",
        arguments: Backend.allCases)
    func settingsPerUser(backend: Backend) async throws {
        let server = try InProcessServer(backend)
        defer { server.stop() }
        try await server.addUser("ann", admin: true)
        try await server.addUser("ben")
        let ann = try await server.signIn("ann"), ben = try await server.signIn("ben")
        let c = try await server.conversation(by: ann, members: [("ben", .write)])
        let sheet = { (r: InProcessServer.Reply) -> String in
            String(r.text.firstMatch(of: #/href="/assets/(theme-[a-z]+)\.[0-9a-f]{16}\.css"/#)?.1 ?? "none")
        }
        #expect(try await ann.get("/api/v1/settings").json.isEmpty)
        let set = try await ann.call(.post, "/api/v1/settings", ["theme": "whatsapp", "scheme": "dark"])
        #expect(set.status == 200 && set.json["theme"] as? String == "whatsapp" && set.json["scheme"] as? String == "dark", "\(set.status) \(set.text)")

        // Another session of ann's (another device) has them; ben does not.
        let annPhone = try await server.signIn("ann", address: "127.0.0.2")
        let page = try await annPhone.get("/c/\(c)")
        #expect(page.status == 200 && sheet(page) == "theme-whatsapp", "\(sheet(page))")
        #expect(page.text.contains("<html lang=\"en\" data-scheme=\"dark\">"))
        #expect(page.text.contains("data-theme=\"whatsapp\""))
        let bens = try await ben.get("/c/\(c)")
        #expect(sheet(bens) != "theme-whatsapp" && !bens.text.contains("data-scheme="), "\(sheet(bens))")
        #expect(try await ben.get("/api/v1/settings").json.isEmpty)
        // One visit in another theme does not change what is kept.
        #expect(sheet(try await ann.get("/c/\(c)?theme=classic")) == "theme-classic")
        #expect(sheet(try await ann.get("/c/\(c)")) == "theme-whatsapp")
        // The list page carries the scheme too (no flash of light before the script).
        #expect(try await ann.get("/").text.contains("data-scheme=\"dark\""))

        // Hostile bodies: each a 400 that names the field; nothing changes.
        let bad: [(Any, String)] = [
            (["theme": "nope"], "theme:"), (["theme": "../imessage"], "theme:"), (["theme": 5], "theme: expected a string"),
            (["scheme": "DARK"], "scheme:"), (["scheme": "dark\"><script>"], "scheme:"), (["scheme": NSNull()], ""), ([1, 2], "expected a JSON object")
        ]
        for (body, says) in bad {
            let r = try await ann.call(.post, "/api/v1/settings", body)
            if says.isEmpty { #expect(r.status == 200, "null leaves it as it is: \(r.text)"); continue }
            #expect(r.status == 400 && (r.json["error"] as? String ?? "").contains(says), "\(body): \(r.status) \(r.text)")
        }
        let notJSON = try await server.request(
            .post, "/api/v1/settings", headers: ann.headers.merging(["X-CSRF-Token": ann.csrf ?? ""]) { a, _ in a },
            body: Data([0xFF, 0xFE, 0x7B]))
        #expect(notJSON.status == 400, "\(notJSON.text)")
        #expect(try await ann.get("/api/v1/settings").json as NSDictionary == ["theme": "whatsapp", "scheme": "dark"] as NSDictionary)
        // Without the CSRF token, or signed out, nothing is set.
        var forged = ann
        forged.csrf = nil
        #expect(try await forged.call(.post, "/api/v1/settings", ["theme": "sms"]).status == 403)
        #expect(try await server.request(.post, "/api/v1/settings", body: InProcessServer.json(["theme": "sms"])).status == 401)
        // "" and "system" go back to the server's choice.
        let reset = try await ann.call(.post, "/api/v1/settings", ["theme": "", "scheme": "system"])
        #expect(reset.status == 200 && reset.json.isEmpty, "\(reset.text)")
        #expect(!(try await ann.get("/c/\(c)").text.contains("data-scheme=")))
    }

    @Test(
        "the invitation page names who invites, the conversation, its people and size, and what joining allows; a used or made-up one says it is not valid and names nothing"
    )
    func invitationPage() async throws {
        let server = try InProcessServer(.sqlite)
        defer { server.stop() }
        try await server.addUser("ann", admin: true)
        let ann = try await server.signIn("ann")
        let c = try await server.conversation(by: ann, title: "Dinner <b>plans</b>")
        let token = try #require(try await ann.call(.post, "/api/v1/conversations/\(c)/invites", [String: Any]()).json["token"] as? String)
        let page = try await server.request(.get, "/invite/\(token)")
        #expect(page.status == 200)
        #expect(page.text.contains("Ann invites you to"), "\(page.text)")
        #expect(page.text.contains("<h1>Dinner &lt;b&gt;plans&lt;/b&gt;</h1>"))
        #expect(page.text.contains("read and write") && page.text.contains("The link works once"))
        #expect(page.text.contains("<title>Invitation to Dinner &lt;b&gt;plans&lt;/b&gt;</title>"))
        for wrong in ["nope", token + "x", String(token.dropLast())] {
            let r = try await server.request(.get, "/invite/\(wrong)")
            #expect(r.text.contains("This invitation isn’t valid") && !r.text.contains("Dinner") && !r.text.contains("Ann invites"), "\(wrong)")
        }
    }

    @Test("the list's menu: the signed-in user's name and avatar, light/dark and sign-out in one ⋮ menu, a + for adding; no bar of buttons above the list")
    func sidebarMenu() async throws {
        let server = try InProcessServer(.sqlite)
        defer { server.stop() }
        try await server.addUser("ann", admin: true)
        let ann = try await server.signIn("ann")
        let page = try await ann.get("/").text
        let head = try #require(page.firstMatch(of: #/<div class="sidehead">.*?</form>/#.dotMatchesNewlines()).map { String($0.0) })
        let menu = try #require(head.firstMatch(of: #/<details class="tool menu".*?</details>/#).map { String($0.0) })
        for id in ["scheme", "signout", "signoutall"] { #expect(menu.contains("id=\"\(id)\""), "\(id) in the menu") }
        #expect(menu.contains(">Ann<") && menu.contains("aria-label=\"Menu\""))
        #expect(head.contains("class=\"av self ") && head.contains("href=\"/?add=1\""))
        #expect(!page.contains("class=\"me\" id=\"me\""), "the old bar of buttons is gone")
        // The add page: the forms alone on a phone (the list hidden by CSS), a way back.
        let add = try await ann.get("/?add=1").text
        #expect(add.contains("<body class=\"app lib solo\">") && add.contains("id=\"upload\"") && add.contains("class=\"back\""))
    }
}
