// The store and the server: built with the `Server` trait (on by default; off in `make demo`).
#if Server
import ArgumentParser
import BubbleServer
import BubbleStore
import BubbleCore
import Foundation

/// `bubbles users`: the people who sign in to `bubbles serve` (docs/SERVER.md, "Accounts").
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "The people who sign in to `bubbles serve`: add, list, disable, reset a password.",
        discussion: """
            A store without users is served to its one owner (on this machine, or with --token). Once \
            a user exists, every page and API call of `bubbles serve` needs a signed-in user, and each \
            sees the conversations they are a member of. Passwords are read from standard input \
            (--password-stdin), never from the command line; they are kept as bcrypt hashes.
            """,
        subcommands: [UsersAdd.self, UsersList.self, UsersDisable.self, UsersEnable.self, UsersResetPassword.self, UsersSignOut.self])
}

/// `--password-stdin`, required: the password is the first line of standard input (at least 8
/// characters, at most 72 bytes), never an argument.
struct PasswordOptions: ParsableArguments {
    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input (required).") var passwordStdin = false

    func validate() throws {
        guard passwordStdin else {
            throw ValidationError("--password-stdin is required: the password is read from standard input, never from the command line")
        }
    }

    func read() throws -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw CLIError(
                "--password-stdin: standard input is empty; expected the password on its first line (e.g. `printf '%s\\n' \"$PW\" | bubbles users add ann --password-stdin`)"
            )
        }
        if let why = Passwords.problem(line) { throw CLIError("the password: \(why)") }
        return line
    }
}

/// `--db` and the name of a user who exists.
struct ExistingUser: ParsableArguments {
    @OptionGroup var store: StoreOptions
    @Argument(help: "The user's name.") var name: String

    /// The store and the user (a `CLIError` naming the name when there is none).
    func open() async throws -> (any ConversationStore & AccountStore, StoredUser) {
        let db = try await store.openExisting()
        guard let user = try await db.user(named: name)?.user else { throw CLIError("no user named \"\(name)\" (see `bubbles users list`)") }
        return (db, user)
    }
}

struct UsersAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a user (the password on standard input).")
    @OptionGroup var store: StoreOptions
    @Argument(help: "The name they sign in with: letters, digits, '.', '_', '-' (unique in any case).") var name: String
    @Flag(help: "An admin: imports archives, creates conversations for others, manages members.") var admin = false
    @Option(name: .customLong("display-name"), help: "The name shown on their messages (default: NAME).") var displayName: String?
    @OptionGroup var password: PasswordOptions

    func validate() throws {
        if let why = UserName.problem(name) { throw ValidationError("NAME \"\(name)\": \(why)") }
        if let d = displayName, d.trimmingCharacters(in: .whitespaces).isEmpty || d.count > 200 {
            throw ValidationError("--display-name: expected 1 to 200 characters")
        }
    }

    func run() async throws {
        let password = try password.read()
        let db = try await store.open()
        let hash = try await Passwords.hash(password)
        do {
            let user = try await db.addUser(
                name: name, displayName: displayName?.trimmingCharacters(in: .whitespaces) ?? name,
                role: admin ? .admin : .member, passwordHash: hash)
            print("added \(user.role.rawValue) \(user.name)" + (user.displayName != user.name ? " (\(user.displayName))" : "") + " to \(db.path)")
        } catch let e as LiveError { throw CLIError(e.reason) } catch let e as StoreError { throw CLIError(e.description) }
    }
}

struct UsersList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the users.")
    @OptionGroup var store: StoreOptions
    @Flag(help: "As JSON.") var json = false

    func run() async throws {
        let users = try await store.openExisting().users()
        if json {
            let list = users.map { ["name": $0.name, "displayName": $0.displayName, "role": $0.role.rawValue, "disabled": $0.disabled] as [String: Any] }
            let data = try JSONSerialization.data(withJSONObject: list, options: [.prettyPrinted, .sortedKeys])
            FileHandle.standardOutput.write(data + Data("\n".utf8))
            return
        }
        if users.isEmpty { print("no users: the server is for its one owner (add one with `bubbles users add NAME --password-stdin`)") }
        for u in users {
            print(
                [u.name, u.displayName == u.name ? "" : "(\(u.displayName))", u.role.rawValue, u.disabled ? "disabled" : ""].filter { !$0.isEmpty }
                    .joined(separator: " "))
        }
    }
}

struct UsersDisable: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable", abstract: "Disable a user: they cannot sign in, their sessions end, their tokens stop working.")
    @OptionGroup var user: ExistingUser

    func run() async throws {
        let (db, user) = try await self.user.open()
        try await db.setDisabled(user.id, true)
        print("disabled \(user.name)")
    }
}

struct UsersEnable: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "enable", abstract: "Enable a user disabled before.")
    @OptionGroup var user: ExistingUser

    func run() async throws {
        let (db, user) = try await self.user.open()
        try await db.setDisabled(user.id, false)
        print("enabled \(user.name)")
    }
}

struct UsersResetPassword: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password", abstract: "Set a user's password (from standard input); their sessions and API tokens end, their open sockets close.")
    @OptionGroup var user: ExistingUser
    @OptionGroup var password: PasswordOptions

    func run() async throws {
        let password = try password.read()
        let (db, user) = try await self.user.open()
        try await db.setPassword(of: user.id, hash: try await Passwords.hash(password))
        let ended = try await db.signOutEverywhere(user.id)
        print("set the password of \(user.name); \(Self.describe(ended)) ended")
    }
}

extension UsersResetPassword {
    /// "2 sessions and 1 API token".
    static func describe(_ ended: EndedCredentials) -> String {
        "\(Plural.count(ended.sessions, "session")) and \(Plural.count(ended.tokens, "API token"))"
    }
}

struct UsersSignOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-out", abstract: "End every session and API token of a user, on every server of the store; their open sockets close.")
    @OptionGroup var user: ExistingUser

    func run() async throws {
        let (db, user) = try await self.user.open()
        let ended = try await db.signOutEverywhere(user.id)
        print("\(UsersResetPassword.describe(ended)) of \(user.name) ended")
    }
}
#endif
