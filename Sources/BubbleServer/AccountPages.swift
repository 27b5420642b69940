import BubbleCore
import BubbleStore
import Foundation
import Hummingbird

/// The pages of accounts: signing in, and an invitation (join it signed in, or make an account
/// with it). Their forms are sent by the script as JSON to `/api/v1/login` and
/// `/api/v1/invites/{token}/accept`.
extension Pages {
    func signIn(_ query: Parameters) async -> Response {
        let next = Self.localPath(query["next"].map(String.init))
        let body: HTML =
            "<main class=\"bk signin\"><p class=\"logo\" aria-hidden=\"true\">💬</p><h1>BubbleKit</h1><p class=\"hint\">Sign in to your conversations.</p>"
            + "<form id=\"signin\" data-next=\"\(next)\"><label>Name <input name=\"name\" id=\"signname\" autocomplete=\"username\" required></label>"
            + "<label>Password <input type=\"password\" name=\"password\" id=\"signpassword\" autocomplete=\"current-password\" required></label>"
            + "<button id=\"signbutton\">Sign in</button> <span id=\"signerr\" class=\"err\" role=\"alert\"></span></form>"
            + "<p><small>No account? Ask someone here for an invitation link, or an admin to run <code>bubbles users add NAME --password-stdin</code>.</small></p></main>"
        return await page(title: "Sign in", body: body, script: true)
    }

    /// `/invite/{token}`: what the invitation opens (only while it can be used; nothing is said
    /// about one that cannot), and a way in.
    func invitation(_ token: String, for identity: Identity) async throws -> Response {
        guard let invite = try await accounts.invitation(hash: AccountSecret.hash(token), now: Date()),
            let c = try await store.conversation(id: invite.conversation)
        else {
            return await page(
                title: "Invitation",
                body: "<main class=\"bk signin\"><p class=\"logo\" aria-hidden=\"true\">💬</p><h1>This invitation isn’t valid</h1>"
                    + "<p>It was used already, has expired or never existed. Ask for a new link.</p>"
                    + "<p><a href=\"/\">Your conversations</a></p></main>", for: identity)
        }
        // Who invites to what, as the peers' invitation pages say it.
        let inviter = invite.invitedBy.isEmpty ? "Someone" : invite.invitedBy
        let can =
            switch invite.access {
            case .read: "read";
            case .write: "read and write";
            case .owner: "read, write and invite others to"
            }
        let people = c.participants.map(\.name).filter { !$0.isEmpty }
        let shown = people.prefix(6).joined(separator: ", ") + (people.count > 6 ? " and \(people.count - 6) more" : "")
        let size: HTML = "\(Self.number(c.messageCount)) \(Plural.noun(c.messageCount, "message"))"
        let avatar: HTML = "<span class=\"av \(Self.colourClass(c.title))\" aria-hidden=\"true\">\(Self.initials(c.title))</span>"
        var body: HTML = "<main class=\"bk signin invitation\"><p class=\"logo\" aria-hidden=\"true\">💬</p><p class=\"hint\">\(inviter) invites you to</p>"
        body += "<div class=\"ichat\">" + avatar + "<div><h1>\(c.title)</h1><small>\(shown)\(people.isEmpty ? "" : " · ")" + size + "</small></div></div>"
        body += "<p><small>You’ll be able to \(can) this conversation. The link works once, until " + Self.time(invite.expires) + ".</small></p>"
        if let user = identity.user {
            body +=
                "<form id=\"join\" data-token=\"\(token)\"><button id=\"joinbutton\">Join as \(user.displayName)</button>"
                + " <span id=\"signerr\" class=\"err\" role=\"alert\"></span></form>"
        } else {
            body +=
                "<form id=\"join\" data-token=\"\(token)\"><p>Make an account to join:</p>"
                + "<label>Name <input name=\"name\" id=\"joinname\" autocomplete=\"username\" required pattern=\"[\\p{L}\\p{N}][\\p{L}\\p{N}._\\-]*\" maxlength=\"64\"></label>"
                + "<label>Shown as <input name=\"displayName\" id=\"joindisplay\" maxlength=\"200\"></label>"
                + "<label>Password <input type=\"password\" name=\"password\" id=\"joinpassword\" autocomplete=\"new-password\" minlength=\"8\" required></label>"
                + "<button id=\"joinbutton\">Join</button> <span id=\"signerr\" class=\"err\" role=\"alert\"></span></form>"
                + "<p><small>Have an account? <a href=\"/login?next=\(("/invite/" + token).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")\">Sign in</a> first.</small></p>"
        }
        return await page(title: "Invitation to \(c.title)", body: body + "</main>", script: true, for: identity)
    }

    /// A path of this site to go back to after signing in, else `/` (no open redirect): a single
    /// leading `/` followed by neither `/` nor `\`, and no control character or space anywhere —
    /// URL parsers drop tab, CR and LF, so `/\t/evil.example` would become `//evil.example`.
    static func localPath(_ raw: String?) -> String {
        guard let raw, raw.hasPrefix("/"),
            !raw.unicodeScalars.contains(where: { $0.value < 0x21 || (0x7F...0x9F).contains($0.value) || $0.properties.isWhitespace })
        else { return "/" }
        let second = raw.dropFirst().first
        guard second != "/" && second != "\\" else { return "/" }
        return raw
    }
}
