/// Han, kana and Hangul: scripts written without spaces between words, which search indexes and
/// statistics count as overlapping two-character words.
public enum CJK {
    public static func contains(_ v: UInt32) -> Bool {
        (0x4E00...0x9FFF).contains(v) || (0x3400...0x4DBF).contains(v) || (0x3040...0x30FF).contains(v)
            || (0x31F0...0x31FF).contains(v) || (0xAC00...0xD7AF).contains(v) || (0xF900...0xFAFF).contains(v)
            || (0x20000...0x2FFFF).contains(v)
    }
}

/// The words, emoji and links of a message's text, as statistics count them.
enum StatsText {
    struct Words {
        /// Every word (CJK runs count one each), for the per-person totals.
        var all = 0
        /// Lower-cased words of two letters or more, without digits: what stop words apply to.
        var latin: [String] = []
        /// Two-character pieces of CJK runs ("明天见" → "明天", "天见"); a run of one is left out.
        var cjk: [String] = []
        var emoji: [String] = []
        var links = 0
    }

    static func words(in text: String) -> Words {
        var out = Words()
        for chunk in text.split(whereSeparator: { $0.isWhitespace }) {
            if isLink(chunk) { out.links += 1; out.all += 1; continue }
            var word = String.UnicodeScalarView()
            var hasDigit = false
            var cjkRun: [Unicode.Scalar] = []
            func endWord() {
                if !word.isEmpty {
                    out.all += 1
                    if !hasDigit, word.count >= 2 { out.latin.append(String(word).lowercased()) }
                }
                word = String.UnicodeScalarView()
                hasDigit = false
            }
            func endRun() {
                guard !cjkRun.isEmpty else { return }
                out.all += 1
                if cjkRun.count >= 2 {
                    for i in 0..<(cjkRun.count - 1) {
                        var pair = String.UnicodeScalarView()
                        pair.append(cjkRun[i]); pair.append(cjkRun[i + 1])
                        out.cjk.append(String(pair))
                    }
                }
                cjkRun.removeAll(keepingCapacity: true)
            }
            for c in chunk {
                let first = c.unicodeScalars.first!
                if isEmoji(c) {
                    endWord(); endRun()
                    out.emoji.append(String(c))
                } else if CJK.contains(first.value) {
                    endWord()
                    cjkRun.append(contentsOf: c.unicodeScalars.prefix(1))
                } else if c.isLetter || c.isNumber || ((c == "'" || c == "’" || c == "-") && !word.isEmpty) {
                    endRun()
                    if c.isNumber { hasDigit = true }
                    word.append(contentsOf: c.unicodeScalars)
                } else {
                    endWord(); endRun()
                }
            }
            // A word ends at its last letter: "don't" stays, "rock-" loses its dash.
            while let last = word.last, last == "'" || last == "’" || last == "-" { word.removeLast() }
            endWord(); endRun()
        }
        return out
    }

    /// `https://…`, `www.…`, `mailto:`, an e-mail address.
    static func isLink(_ chunk: Substring) -> Bool {
        chunk.contains("://") || chunk.hasPrefix("www.") || chunk.hasPrefix("mailto:")
            || (chunk.contains("@") && chunk.contains(".") && chunk.first != "@")
    }

    /// A character drawn as an emoji: one shown as emoji by default, one asking for it (U+FE0F),
    /// a flag, a keycap or a ZWJ sequence. Digits, `#` and `*` on their own are not.
    static func isEmoji(_ c: Character) -> Bool {
        let scalars = c.unicodeScalars
        guard let first = scalars.first, first.properties.isEmoji else { return false }
        if first.properties.isEmojiPresentation { return true }
        return scalars.count > 1 && scalars.contains { $0.value == 0xFE0F || $0.value == 0x200D || $0.value == 0x20E3 }
    }
}

/// Words too common to say anything about a conversation, per language; a message's language is
/// the one whose list holds most of its words (none: nothing is left out).
enum StopWords {
    static let lists: [(language: String, words: Set<String>)] = [
        ("en", Set("""
            a about after again all also am an and any are as at be because been before being but by can could did do does doing
            don't down for from had has have having he her here hers him his how i i'm if in into is it it's its just me more most my
            no not now of off on once only or other our ours out over own same she should so some such than that that's the their
            theirs them then there these they this those through to too under until up very was we were what when where which while
            who whom why will with would you you're your yours yourself im dont ive i've i'll ill youre thats
            """.split(whereSeparator: \.isWhitespace).map(String.init))),
        ("de", Set("""
            aber alle als also am an auch auf aus bei bin bis bist da damit dann das dass dein deine dem den der des dich die dir
            doch du durch ein eine einem einen einer es für hab habe hast hat hatte ich ihr im in ist ja jetzt kann kannst kein
            keine mal man mein meine mich mir mit muss nach nicht noch nur ob oder schon sehr sein seine sich sie sind so um und
            uns unser vom von vor war was weil wenn wer wie wir wird wo zu zum zur über
            """.split(whereSeparator: \.isWhitespace).map(String.init))),
        ("fr", Set("""
            ai au aux avec ce ces c'est dans de des du elle en est et eu il ils je j'ai la le les leur lui ma mais me mes moi mon
            ne nous on ou par pas pour qu que qui sa se ses son sont sur ta te tes toi ton tu un une vos votre vous y à ça été
            """.split(whereSeparator: \.isWhitespace).map(String.init))),
        ("es", Set("""
            al algo como con de del el ella en es esta está este eso esto fue ha hay la las le les lo los me mi muy más no nos o
            para pero por que qué se si sin su sus también te tu tú un una uno y ya yo
            """.split(whereSeparator: \.isWhitespace).map(String.init))),
        ("it", Set("""
            a ad al alla anche che chi ci come con da del della di e è gli ha ho i il in io la le lo ma mi mio ne nel non per più
            quando questo se si sono su ti tu un una uno
            """.split(whereSeparator: \.isWhitespace).map(String.init))),
        ("pt", Set("""
            a ao as com como da das de do dos e é ela ele em eu foi isso já lhe mais mas me meu minha muito na não nas no nos o os
            ou para pela pelo por que se sem seu sua também te tem tu um uma você
            """.split(whereSeparator: \.isWhitespace).map(String.init))),
        ("nl", Set("""
            aan al als bij dat de den der die dit doen door een en er had heb heeft het hij hoe ik in is je jij kan maar me met
            mij mijn na naar niet nog nu of om ook op te tot u uit van voor was wat we wel wij zal ze zij zijn zo
            """.split(whereSeparator: \.isWhitespace).map(String.init))),
        ("ru", Set("""
            а без бы был была были было в вам вас вот все всё вы да для до его ее её если есть еще ещё же за и из или им их к как
            когда кто ли мне мы на над не нет но ну о об он она они от по под при с со так там тебе то тоже ты у уже что это я
            """.split(whereSeparator: \.isWhitespace).map(String.init))),
    ]

    static let none: Set<String> = []

    /// The list of the language most of `words` belong to; empty when none of them is a stop word.
    static func list(for words: [String]) -> Set<String> {
        guard !words.isEmpty else { return none }
        var best = 0, bestHits = 0
        for (k, list) in lists.enumerated() {
            var hits = 0
            for w in words where list.words.contains(w) { hits += 1 }
            if hits > bestHits { best = k; bestHits = hits }
        }
        return bestHits > 0 ? lists[best].words : none
    }
}
