/// Counts in English with the noun in the right number ("1 day", "2 days", "1 reply",
/// "3 replies"): every message of the tool and the pages says a count through this, never
/// `n == 1 ? "" : "s"` by hand.
package enum Plural {
    /// `n` and the noun: `singular` for exactly one, else `plural` (default: the singular with
    /// "s", or "ies" for a consonant and "y").
    package static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) " + noun(n, singular, plural)
    }

    /// The noun alone, as `count` would say it after `n`.
    package static func noun(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        if n == 1 { return singular }
        if let plural { return plural }
        if let last = singular.last, last == "y", let before = singular.dropLast().last, !"aeiou".contains(before) {
            return singular.dropLast() + "ies"
        }
        return singular + "s"
    }
}
