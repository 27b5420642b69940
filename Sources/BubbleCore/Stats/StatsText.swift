/// Han, kana and Hangul: scripts written without spaces between words, which search indexes and
/// statistics count as overlapping two-character words.
public enum CJK {
    public static func contains(_ v: UInt32) -> Bool {
        (0x4E00...0x9FFF).contains(v) || (0x3400...0x4DBF).contains(v) || (0x3040...0x30FF).contains(v)
            || (0x31F0...0x31FF).contains(v) || (0xAC00...0xD7AF).contains(v) || (0xF900...0xFAFF).contains(v)
            || (0x20000...0x2FFFF).contains(v)
    }
}

/// What the texts of a conversation hold, per sender: words, their vocabulary (stop words of
/// each message's language left out), emoji and links. Tallies of separate runs of messages
/// merge, so texts can be counted on several cores.
struct TextTally {
    struct Sender {
        var words = 0
        var vocabulary: [String: Int] = [:]
    }
    var senders: [String: Sender] = [:]
    var emoji: [String: Int] = [:]
    var links = 0
    /// The message being counted: its words (lower-cased) and the languages whose stop words
    /// each one is (`StopWords.mask`); reused from message to message.
    private var pending: [(word: String, languages: UInt8)] = []
    private var pendingCJK: [String] = []

    mutating func merge(_ other: TextTally) {
        for (id, s) in other.senders {
            var mine = senders[id] ?? Sender()
            senders[id] = nil
            mine.words += s.words
            mine.vocabulary.merge(s.vocabulary, uniquingKeysWith: +)
            senders[id] = mine
        }
        emoji.merge(other.emoji, uniquingKeysWith: +)
        links += other.links
    }

    /// Counts `text`, written by `sender`.
    mutating func add(_ text: String, sender: String) {
        pending.removeAll(keepingCapacity: true)
        pendingCJK.removeAll(keepingCapacity: true)
        var words = 0
        var copy = text
        copy.withUTF8 { bytes in
            var i = 0
            let n = bytes.count
            while i < n {
                // A chunk: up to the next ASCII whitespace.
                while i < n, Self.isSpace(bytes[i]) { i += 1 }
                let start = i
                var ascii = true
                while i < n, !Self.isSpace(bytes[i]) { if bytes[i] >= 0x80 { ascii = false }; i += 1 }
                guard i > start else { break }
                let chunk = UnsafeBufferPointer(rebasing: bytes[start..<i])
                if StatsText.isLink(chunk) { links += 1; words += 1; continue }
                if ascii { words += asciiWords(chunk) } else { words += otherWords(String(decoding: chunk, as: UTF8.self)) }
            }
        }
        // The message's language: the one whose stop words it uses most.
        var hits = [Int](repeating: 0, count: StopWords.languages.count)
        for p in pending where p.languages != 0 {
            for k in hits.indices where p.languages & (1 << k) != 0 { hits[k] += 1 }
        }
        var language = -1, best = 0
        for k in hits.indices where hits[k] > best { best = hits[k]; language = k }
        let stop: UInt8 = language >= 0 ? 1 << language : 0
        var tally = senders[sender] ?? Sender()
        senders[sender] = nil
        tally.words += words
        for p in pending where p.languages & stop == 0 { tally.vocabulary[p.word, default: 0] += 1 }
        for w in pendingCJK { tally.vocabulary[w, default: 0] += 1 }
        senders[sender] = tally
    }

    @inline(__always) static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }

    /// Words of an ASCII chunk: letters and digits, an apostrophe or dash inside a word; the
    /// count of words, those of two letters or more without digits kept.
    private mutating func asciiWords(_ chunk: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        var word: [UInt8] = []
        word.reserveCapacity(24)
        var digit = false
        func end() {
            while let last = word.last, last == 0x27 || last == 0x2D { word.removeLast() }
            if !word.isEmpty {
                count += 1
                if !digit, word.count >= 2 {
                    let w = String(decoding: word, as: UTF8.self)
                    pending.append((w, StopWords.mask[w] ?? 0))
                }
            }
            word.removeAll(keepingCapacity: true)
            digit = false
        }
        for b in chunk {
            switch b {
            case 0x41...0x5A: word.append(b | 0x20)
            case 0x61...0x7A: word.append(b)
            case 0x30...0x39: word.append(b); digit = true
            case 0x27, 0x2D where !word.isEmpty: word.append(b)
            default: end()
            }
        }
        end()
        return count
    }

    /// Words of a chunk with other scripts, by Unicode properties: letters (any script), CJK
    /// runs as two-character pieces, emoji.
    private mutating func otherWords(_ chunk: String) -> Int {
        var count = 0
        var word = String.UnicodeScalarView()
        var digit = false
        var run: [Unicode.Scalar] = []
        func endWord() {
            while let last = word.last, last == "'" || last == "’" || last == "-" { word.removeLast() }
            if !word.isEmpty {
                count += 1
                if !digit, word.count >= 2 {
                    let w = String(word).lowercased()
                    pending.append((w, StopWords.mask[w] ?? 0))
                }
            }
            word = String.UnicodeScalarView()
            digit = false
        }
        func endRun() {
            guard !run.isEmpty else { return }
            count += 1
            if run.count >= 2 {
                for i in 0..<(run.count - 1) {
                    var pair = String.UnicodeScalarView()
                    pair.append(run[i]); pair.append(run[i + 1])
                    pendingCJK.append(String(pair))
                }
            }
            run.removeAll(keepingCapacity: true)
        }
        for c in chunk {
            let first = c.unicodeScalars.first!
            if StatsText.isEmoji(c) {
                endWord(); endRun()
                emoji[String(c), default: 0] += 1
            } else if CJK.contains(first.value) {
                endWord()
                run.append(first)
            } else if c.isLetter || c.isNumber || ((c == "'" || c == "’" || c == "-") && !word.isEmpty) {
                endRun()
                if c.isNumber { digit = true }
                word.append(contentsOf: c.unicodeScalars)
            } else {
                endWord(); endRun()
            }
        }
        endWord(); endRun()
        return count
    }
}

enum StatsText {
    /// `https://…`, `www.…`, `mailto:`, an e-mail address.
    static func isLink(_ chunk: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = chunk.count
        func has(_ prefix: StaticString) -> Bool {
            let p = prefix.utf8Start, m = prefix.utf8CodeUnitCount
            guard n >= m else { return false }
            for k in 0..<m where chunk[k] | 0x20 != p[k] | 0x20 { return false }
            return true
        }
        if has("www.") || has("mailto:") { return true }
        var at = -1, dot = false
        for k in 0..<n {
            let b = chunk[k]
            if b == 0x3A, k + 2 < n, chunk[k + 1] == 0x2F, chunk[k + 2] == 0x2F { return true }
            if b == 0x40 { at = k } else if b == 0x2E, at > 0 { dot = true }
        }
        return at > 0 && dot
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

    static let languages = lists.map(\.language)

    /// Each stop word and the languages (bit k: `lists[k]`) it is one of: one lookup per word.
    static let mask: [String: UInt8] = {
        var out: [String: UInt8] = [:]
        for (k, list) in lists.enumerated() {
            for w in list.words { out[w, default: 0] |= 1 << k }
        }
        return out
    }()
}
