import BubbleStore
import Foundation
import Hummingbird

/// Each user's settings in the web app, kept by the server so every device has them (the
/// peers keep them with the account): the bubbles' theme and light or dark.
///
/// - `GET /api/v1/settings` → `{"theme": "whatsapp", "scheme": "dark"}` (what is set).
/// - `POST /api/v1/settings {"theme"?, "scheme"?}`: sets what the body names — a theme of the
///   server, or "" for the server's; `light`, `dark`, or `system` for the system's choice —
///   and answers the settings as they are then.
struct SettingsRoutes {
    let accounts: any ReadStateStore
    /// The themes one can pick.
    let themes: Set<String>

    /// What the page sends.
    struct Change: Decodable {
        var theme: String?
        var scheme: String?
    }

    static let schemes: Set<String> = ["light", "dark", "system"]

    func register(_ groups: RouteGroups) {
        let accounts = self.accounts, themes = self.themes
        groups.api.get("settings") { _, context in
            try await Self.json(accounts.settings(of: ReadMarks.account(context.identity)))
        }
        groups.api.post("settings") { request, context in
            let change = try await LiveAPI.decode(Change.self, request, limit: 4_096)
            if let theme = change.theme, !theme.isEmpty, !themes.contains(theme) {
                throw APIError.badRequest("theme: \"\(theme.prefix(80))\" is not one of \(themes.sorted().joined(separator: ", "))")
            }
            if let scheme = change.scheme, !Self.schemes.contains(scheme) {
                throw APIError.badRequest("scheme: \"\(scheme.prefix(80))\" is not one of light, dark, system")
            }
            let user = ReadMarks.account(context.identity)
            if let theme = change.theme { try await accounts.setSetting("theme", to: theme.isEmpty ? nil : theme, of: user) }
            if let scheme = change.scheme { try await accounts.setSetting("scheme", to: scheme == "system" ? nil : scheme, of: user) }
            return try await Self.json(accounts.settings(of: user))
        }
    }

    static func json(_ settings: [String: String]) -> Response {
        Pages.json { out in
            if let theme = settings["theme"] { out.field("theme", theme) }
            if let scheme = settings["scheme"] { out.field("scheme", scheme) }
        }
    }
}
