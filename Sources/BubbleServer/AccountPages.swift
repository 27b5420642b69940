import BubbleStore
import Foundation
import Hummingbird

/// The pages of accounts: signing in, and an invitation (join it signed in, or make an account
/// with it). Their forms are sent by the script as JSON to `/api/v1/login` and
/// `/api/v1/invites/{token}/accept`.
extension Pages {
    func signIn(_ query: Parameters) -> Response {
        let next = Self.localPath(query["next"].map(String.init))
        let body: HTML = "<main class=\"bk signin\"><p class=\"logo\" aria-hidden=\"true\">💬</p><h1>BubbleKit</h1><p class=\"hint\">Sign in to your conversations.</p>"
            + "<form id=\"signin\" data-next=\"\(next)\"><label>Name <input name=\"name\" id=\"signname\" autocomplete=\"username\" required></label>"
            + "<label>Password <input type=\"password\" name=\"password\" id=\"signpassword\" autocomplete=\"current-password\" required></label>"
            + "<button id=\"signbutton\">Sign in</button> <span id=\"signerr\" class=\"err\" role=\"alert\"></span></form>"
            + "<p><small>No account? Ask someone here for an invitation link, or an admin to run <code>bubbles users add NAME --password-stdin</code>.</small></p></main>"
        return page(title: "Sign in", body: body, script: true)
    }

    /// `/invite/{token}`: what the invitation opens (only while it can be used; nothing is said
    /// about one that cannot), and a way in.
    func invitation(_ token: String, for identity: Identity) async throws -> Response {
        guard let id = try await accounts.invitation(hash: AccountSecret.hash(token), now: Date()),
              let c = try await store.conversation(id: id) else {
            return page(title: "Invitation", body: "<div class=\"bk\"><h1>Invitation</h1><p>This invitation is not valid: it was used already, has expired or never existed.</p>"
                             + "<p><a href=\"/\">Your conversations</a></p></div>", for: identity)
        }
        var body: HTML = "<div class=\"bk signin\"><h1>Join “\(c.title)”</h1>"
        if let user = identity.user {
            body += "<form id=\"join\" data-token=\"\(token)\"><button id=\"joinbutton\">Join as \(user.displayName)</button>"
                + " <span id=\"signerr\" class=\"err\" role=\"alert\"></span></form>"
        } else {
            body += "<form id=\"join\" data-token=\"\(token)\"><p>Make an account to join:</p>"
                + "<label>Name <input name=\"name\" id=\"joinname\" autocomplete=\"username\" required pattern=\"[\\p{L}\\p{N}][\\p{L}\\p{N}._\\-]*\" maxlength=\"64\"></label>"
                + "<label>Shown as <input name=\"displayName\" id=\"joindisplay\" maxlength=\"200\"></label>"
                + "<label>Password <input type=\"password\" name=\"password\" id=\"joinpassword\" autocomplete=\"new-password\" minlength=\"8\" required></label>"
                + "<button id=\"joinbutton\">Join</button> <span id=\"signerr\" class=\"err\" role=\"alert\"></span></form>"
                + "<p><small>Have an account? <a href=\"/login?next=\(("/invite/" + token).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")\">Sign in</a> first.</small></p>"
        }
        return page(title: "Invitation", body: body + "</div>", script: true, for: identity)
    }

    /// A path of this site to go back to after signing in, else `/` (no open redirect): a single
    /// leading `/` followed by neither `/` nor `\`, and no control character or space anywhere —
    /// URL parsers drop tab, CR and LF, so `/\t/evil.example` would become `//evil.example`.
    static func localPath(_ raw: String?) -> String {
        guard let raw, raw.hasPrefix("/"),
              !raw.unicodeScalars.contains(where: { $0.value < 0x21 || (0x7F...0x9F).contains($0.value) || $0.properties.isWhitespace }) else { return "/" }
        let second = raw.dropFirst().first
        guard second != "/" && second != "\\" else { return "/" }
        return raw
    }
}
