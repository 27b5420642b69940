import BubbleCore
import Foundation

/// Whose messages are outgoing, for every export that does not mark them itself (WhatsApp's text,
/// Telegram, Discord, Messenger and Instagram): one rule, with the clues each export offers.
///
/// - `me` names an author by id or name: exactly first, then as the same contact (any case,
///   decorations dropped, the same phone number).
/// - Without `me`, the clues are tried in the order given; the first that names one author
///   decides, and a note says how ("me: "Ben", the author who is not "Ann", whom the export is
///   named after (`me` chooses another)").
/// - A `me` that names nobody here decides nothing, except that an export naming its own owner
///   (a `profile`) is still believed.
/// - Nothing decided: every message is incoming, and a "directions" warning lists the authors
///   (the result's `unknownOwner` says so, and `bubbles import` refuses such a chat unless asked).
struct OwnerInference {
    /// One author as the rule sees them.
    struct Author {
        /// What messages name as their sender (returned as "me"), then other ids that mean it
        /// (Telegram's `user4` is also `4`).
        var ids: [String]
        /// Names and handles it answers to.
        var names: [String]
        /// How warnings list it ("Leo Park (user4)").
        var listed: String

        init(id: String, also: [String] = [], names: [String], listed: String? = nil) {
            ids = [id] + also
            self.names = names
            self.listed = listed ?? names.first ?? id
        }
        var id: String { ids[0] }
        /// How a note names it: the name in quotes, and the id when it differs.
        var shown: String {
            let name = names.first ?? id
            return "\"\(name)\"" + (name == id ? "" : " (\(id))")
        }
    }

    /// What an export says about its owner, one named strategy each.
    enum Clue {
        /// The account that made the export (Meta's profile, Telegram's `personal_information`).
        /// An id is believed even when its owner wrote nothing here; a name must be an author's.
        case profile(id: String?, name: String?, how: String)
        /// The one author of lines only the owner's own phone writes ("You deleted this message").
        case soleAuthor(of: Set<String>, how: String)
        /// The one person present in every chat of the download.
        case everywhere([String], how: String)
        /// A one-to-one chat named after the other person (its file name, chat name, thread title):
        /// the one author left besides them.
        case namedAfter(String?, how: String)
        /// A one-to-one chat whose id is the other person's: the one author left besides them.
        case chatID(String?, how: String)
    }

    var authors: [Author]
    /// "author" or "person", as the export calls them, and its plural.
    var noun = "author"
    var nouns = "authors"
    /// What the "directions" warning says is missing ("no `me` given").
    var unsaid = "no `me` given"

    /// The owner's id, or nil (with the warning given).
    func resolve(me: String?, clues: [Clue], context: ImportContext, file: String? = nil) -> String? {
        let list = TextCleanup.list(authors.map(\.listed))
        if let me {
            if let hit = match(me) { return hit.id }
            for case .profile(let id, let name, _) in clues {
                if let owner = fromProfile(id: id, name: name) {
                    context.warn(nil, "me \"\(me)\"", "is not \(article) \(noun) here; the export's owner is \(owner); \(nouns): \(list)", file: file)
                    return owner
                }
            }
            context.warnUnknownOwner("me \"\(me)\"", "is not \(article) \(noun) here, so every message is incoming; \(nouns): \(list)", file: file)
            return nil
        }
        for clue in clues {
            guard let (owner, how) = decide(clue) else { continue }
            let shown = authors.first { $0.id == owner }?.shown ?? "\"\(owner)\""
            context.note("me: \(shown), \(how) (`me` chooses another)")
            return owner
        }
        if !authors.isEmpty {
            context.warnUnknownOwner("directions", "\(unsaid), so every message is incoming; \(nouns): \(list)", file: file)
        }
        return nil
    }

    private var article: String { noun.first.map { "aeiou".contains($0) } == true ? "an" : "a" }

    /// The author `given` names: by an id or a name exactly, else as the same contact.
    private func match(_ given: String) -> Author? {
        authors.first { $0.ids.contains(given) || $0.names.contains(given) }
            ?? authors.first { $0.names.contains { TextCleanup.sameContact($0, given) } }
    }

    private func fromProfile(id: String?, name: String?) -> String? {
        if let id { return authors.first { $0.ids.contains(id) }?.id ?? id }
        return name.flatMap(match)?.id
    }

    /// The one author besides those `isOther` picks, when there is exactly one and the other is here.
    private func other(besides isOther: (Author) -> Bool) -> (Author, Author)? {
        guard let named = authors.first(where: isOther) else { return nil }
        let rest = authors.filter { !isOther($0) }
        return rest.count == 1 ? (rest[0], named) : nil
    }

    private func decide(_ clue: Clue) -> (String, String)? {
        switch clue {
        case .profile(let id, let name, let how):
            return fromProfile(id: id, name: name).map { ($0, how) }
        case .soleAuthor(let set, let how):
            guard set.count == 1, let owner = set.first else { return nil }
            return (authors.first { $0.ids.contains(owner) }?.id ?? owner, how)
        case .everywhere(let everywhere, let how):
            guard everywhere.count == 1, let hit = authors.first(where: { $0.names.contains(everywhere[0]) || $0.ids.contains(everywhere[0]) })
            else { return nil }
            return (hit.id, how)
        case .namedAfter(let title, let how):
            guard let title, !title.isEmpty,
                let (owner, named) = other(besides: { $0.names.contains { TextCleanup.sameContact($0, title) } })
            else { return nil }
            return (owner.id, "the \(noun) who is not \"\(named.names.first ?? named.id)\", \(how)")
        case .chatID(let id, let how):
            guard let id, let (owner, named) = other(besides: { $0.ids.contains(id) }) else { return nil }
            return (owner.id, "the \(noun) who is not \(named.id), \(how)")
        }
    }
}
