import BubbleCore
import Foundation

/// What the texts of a conversation hold, per sender: words, their vocabulary (stop words of
/// each message's language left out), emoji and links. Tallies of separate runs of messages
/// merge, so texts can be counted on several cores.
struct TextTally {
    struct Sender {
        var words = 0
        var vocabulary = WordTable()
    }
    var senders: [String: Sender] = [:]
    var emoji: [String: Int] = [:]
    var links = 0
    /// The message being counted: its words (lower-cased) and the languages whose stop words
    /// each one is (`StopWords.mask`); reused from message to message.
    private var pending: [(start: Int, length: Int, hash: UInt64, languages: UInt8)] = []
    private var pendingBytes: [UInt8] = []
    /// Scratch space for a word's bytes and a CJK run, kept from chunk to chunk.
    private var wordBytes: [UInt8] = []
    private var cjkRun: [Unicode.Scalar] = []

    mutating func merge(_ other: TextTally) {
        for (id, s) in other.senders {
            var mine = senders[id] ?? Sender()
            senders[id] = nil
            mine.words += s.words
            mine.vocabulary.merge(s.vocabulary)
            senders[id] = mine
        }
        emoji.merge(other.emoji, uniquingKeysWith: +)
        links += other.links
    }

    /// Counts `text`, written by `sender`.
    mutating func add(_ text: String, sender: String) {
        pending.removeAll(keepingCapacity: true)
        pendingBytes.removeAll(keepingCapacity: true)
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
                if ascii { words += asciiWords(chunk) } else { words += scalarWords(String(decoding: chunk, as: UTF8.self)) }
            }
        }
        // The message's language: the one whose stop words it uses most.
        var any: UInt8 = 0
        for p in pending { any |= p.languages }
        var language = -1, best = 0
        if any != 0 {
            for k in 0..<StopWords.languages.count where any & (1 << k) != 0 {
                var hits = 0
                for p in pending where p.languages & (1 << k) != 0 { hits += 1 }
                if hits > best { best = hits; language = k }
            }
        }
        let stop: UInt8 = language >= 0 ? 1 << language : 0
        var tally = senders[sender] ?? Sender()
        senders[sender] = nil
        tally.words += words
        pendingBytes.withUnsafeBufferPointer { bytes in
            for p in pending where p.languages & stop == 0 {
                tally.vocabulary.add(UnsafeBufferPointer(rebasing: bytes[p.start..<(p.start + p.length)]), hash: p.hash, count: 1)
            }
        }
        senders[sender] = tally
    }

    /// A CJK run as its overlapping two-character words ("明天见" → "明天", "天见"; one character
    /// alone is none); emptied. 1 when there was a run (it counts as a word), else 0.
    private mutating func pushRun(_ run: inout [Unicode.Scalar]) -> Int {
        guard !run.isEmpty else { return 0 }
        if run.count >= 2 {
            for i in 0..<(run.count - 1) {
                var pair = String.UnicodeScalarView()
                pair.append(run[i]); pair.append(run[i + 1])
                push(String(pair))
            }
        }
        run.removeAll(keepingCapacity: true)
        return 1
    }

    /// A word of the message (UTF-8), with the languages it is a stop word of.
    private mutating func push(_ word: UnsafeBufferPointer<UInt8>) {
        let hash = WordTable.hash(word)
        pending.append((pendingBytes.count, word.count, hash, StopWords.table.value(of: word, hash: hash).map(UInt8.init) ?? 0))
        pendingBytes.append(contentsOf: word)
    }

    private mutating func push(_ word: String) {
        var w = word
        w.withUTF8 { push($0) }
    }

    @inline(__always) static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }

    /// Words of an ASCII chunk: letters and digits, an apostrophe or dash inside a word; the
    /// count of words, those of two letters or more without digits kept.
    private mutating func asciiWords(_ chunk: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        var word = wordBytes
        wordBytes = []
        defer { word.removeAll(keepingCapacity: true); wordBytes = word }
        var digit = false
        func end() {
            while let last = word.last, last == 0x27 || last == 0x2D { word.removeLast() }
            if !word.isEmpty {
                count += 1
                if !digit, word.count >= 2 {
                    word.withUnsafeBufferPointer { push($0) }
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
            case 0x27 where !word.isEmpty, 0x2D where !word.isEmpty: word.append(b)
            default: end()
            }
        }
        end()
        return count
    }

    /// Words of a chunk with other scripts, scalar by scalar: a scalar that is no space,
    /// punctuation, symbol, digit or CJK is part of a word (letters and their marks in every
    /// script); digits of any script mark a number; Latin-1, Greek and Cyrillic capitals are
    /// lower-cased; CJK runs become two-character pieces. A chunk with an emoji (or another
    /// pictographic symbol) is read by characters instead (`otherWords`), so sequences stay whole.
    private mutating func scalarWords(_ chunk: String) -> Int {
        for u in chunk.unicodeScalars where StatsText.mayBeEmoji(u.value) { return otherWords(chunk) }
        var count = 0
        var word = String.UnicodeScalarView()
        var length = 0
        var digit = false
        var run = cjkRun
        cjkRun = []
        defer { run.removeAll(keepingCapacity: true); cjkRun = run }
        func endWord() {
            while let last = word.last, last == "'" || last == "’" || last == "-" { word.removeLast(); length -= 1 }
            if length > 0 {
                count += 1
                if !digit, length >= 2 {
                    push(String(word))
                }
            }
            word = String.UnicodeScalarView()
            length = 0
            digit = false
        }
        func endRun() { count += pushRun(&run) }
        for u in chunk.unicodeScalars {
            let v = u.value
            if CJK.contains(v) {
                endWord()
                run.append(u)
                continue
            }
            switch StatsText.kind(v) {
            case .letter:
                endRun()
                word.append(Unicode.Scalar(StatsText.lowered(v)) ?? u); length += 1
            case .digit:
                endRun()
                word.append(u); length += 1; digit = true
            case .joiner where length > 0:
                word.append(u); length += 1
            default:
                endWord(); endRun()
            }
        }
        endWord(); endRun()
        return count
    }

    /// Words of a chunk with emoji, by characters and their Unicode properties.
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
                    push(String(word).lowercased())
                }
            }
            word = String.UnicodeScalarView()
            digit = false
        }
        func endRun() { count += pushRun(&run) }
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

/// Words (UTF-8 bytes) and a number for each: an open-addressing table with FNV-1a hashes,
/// the words kept once in one byte arena. Words are compared by their bytes, not by Unicode
/// canonical equivalence (a String's hashing normalises non-ASCII text first, and a String per
/// word and two dictionary lookups were most of the statistics' time); the tokenizer makes
/// words from scalars, so one spelling is one key.
struct WordTable: Sendable {
    private var hashes: [UInt64] = []
    private var starts: [Int] = []
    private var lengths: [Int] = []
    private(set) var values: [Int] = []
    private var slots = [Int32](repeating: -1, count: 64)
    private var arena: [UInt8] = []

    var count: Int { values.count }

    @inline(__always) static func hash(_ word: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in word { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }

    /// The entry of `word`, nil when it has none.
    func index(of word: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int? {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while true {
            let e = Int(slots[i])
            if e < 0 { return nil }
            if hashes[e] == hash, lengths[e] == word.count, same(e, word) { return e }
            i = (i + 1) & mask
        }
    }

    @inline(__always) private func same(_ e: Int, _ word: UnsafeBufferPointer<UInt8>) -> Bool {
        word.count == 0 || arena.withUnsafeBufferPointer { memcmp($0.baseAddress! + starts[e], word.baseAddress!, word.count) == 0 }
    }

    func value(of word: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int? { index(of: word, hash: hash).map { values[$0] } }

    /// Adds `count` to `word`'s number (a new word starts at 0).
    mutating func add(_ word: UnsafeBufferPointer<UInt8>, hash: UInt64, count: Int) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while true {
            let e = Int(slots[i])
            if e < 0 { break }
            if hashes[e] == hash, lengths[e] == word.count, same(e, word) { values[e] += count; return }
            i = (i + 1) & mask
        }
        slots[i] = Int32(values.count)
        hashes.append(hash); starts.append(arena.count); lengths.append(word.count); values.append(count)
        arena.append(contentsOf: word)
        if values.count * 2 > slots.count { grow() }
    }

    mutating func add(_ word: String, count: Int) {
        var w = word
        w.withUTF8 { add($0, hash: Self.hash($0), count: count) }
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for e in 0..<values.count {
            var i = Int(truncatingIfNeeded: hashes[e]) & mask
            while slots[i] >= 0 { i = (i + 1) & mask }
            slots[i] = Int32(e)
        }
    }

    func word(_ e: Int) -> String { String(decoding: arena[starts[e]..<(starts[e] + lengths[e])], as: UTF8.self) }

    mutating func merge(_ other: WordTable) {
        other.arena.withUnsafeBufferPointer { bytes in
            for e in 0..<other.values.count {
                add(UnsafeBufferPointer(rebasing: bytes[other.starts[e]..<(other.starts[e] + other.lengths[e])]), hash: other.hashes[e], count: other.values[e])
            }
        }
    }

    /// The `n` words with the highest numbers (ties: by the words' bytes, ascending — the order
    /// of their scalars).
    func top(_ n: Int) -> [(word: String, value: Int)] {
        guard n > 0, !values.isEmpty else { return [] }
        var order = Array(values.indices)
        order.sort { values[$0] > values[$1] }
        let cut = values[order[min(n, order.count) - 1]]
        var head = order.filter { values[$0] >= cut }
        arena.withUnsafeBufferPointer { bytes in
            head.sort { a, b in
                if values[a] != values[b] { return values[a] > values[b] }
                let c = memcmp(bytes.baseAddress! + starts[a], bytes.baseAddress! + starts[b], min(lengths[a], lengths[b]))
                return c != 0 ? c < 0 : lengths[a] < lengths[b]
            }
        }
        return head.prefix(n).map { (word($0), values[$0]) }
    }
}

enum StatsText {
    enum ScalarKind { case letter, digit, joiner, other }

    /// What a scalar is to a word, from its code point alone (no Unicode property tables):
    /// ASCII by its class; Latin-1 and general punctuation, symbols, spaces, Arabic, Hebrew and
    /// Devanagari punctuation are no part of words; digits of several scripts are digits;
    /// everything else (letters and marks of any script) is a letter.
    @inline(__always) static func kind(_ v: UInt32) -> ScalarKind {
        switch v {
        case 0x30...0x39, 0x660...0x669, 0x6F0...0x6F9, 0x966...0x96F, 0xFF10...0xFF19: return .digit
        case 0x41...0x5A, 0x61...0x7A: return .letter
        case 0x27, 0x2D, 0x2019: return .joiner
        case 0...0x7F, 0x80...0xBF, 0xD7, 0xF7, 0x2000...0x2BFF, 0x3000...0x303F, 0xFE30...0xFE4F, 0xFF00...0xFF0F, 0xFF1A...0xFF20,
            0xFF3B...0xFF40, 0xFF5B...0xFF65, 0x60C, 0x61B, 0x61F, 0x66A...0x66D, 0x6D4, 0x5BE, 0x5C0, 0x5C3, 0x5C6, 0x5F3, 0x5F4,
            0x964, 0x965, 0xFE00...0xFE0F, 0x200B...0x200F, 0xE000...0xF8FF:
            return .other
        default: return .letter
        }
    }

    /// Capitals of ASCII, Latin-1, Greek and Cyrillic in lower case; other scalars as they are.
    @inline(__always) static func lowered(_ v: UInt32) -> UInt32 {
        switch v {
        case 0x41...0x5A, 0xC0...0xD6, 0xD8...0xDE, 0x391...0x3A1, 0x3A3...0x3AB, 0x410...0x42F: return v + 0x20
        case 0x400...0x40F: return v + 0x50
        default: return v
        }
    }

    /// Scalars that may be (part of) an emoji: pictographs, symbols, dingbats, arrows, flags'
    /// letters, keycaps, variation selector 16, ZWJ; © ® ‼ ⁉ ™ ℹ.
    @inline(__always) static func mayBeEmoji(_ v: UInt32) -> Bool {
        v >= 0x1F000 || (0x2190...0x2BFF).contains(v) || v == 0xFE0F || v == 0x200D || v == 0x20E3 || v == 0xA9 || v == 0xAE
            || v == 0x203C || v == 0x2049 || v == 0x2122 || v == 0x2139 || v == 0x3030 || v == 0x303D || v == 0x3297 || v == 0x3299
    }

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
        (
            "en",
            Set(
                """
                a about after again all also am an and any are as at be because been before being but by can could did do does doing
                don't down for from had has have having he her here hers him his how i i'm if in into is it it's its just me more most my
                no not now of off on once only or other our ours out over own same she should so some such than that that's the their
                theirs them then there these they this those through to too under until up very was we were what when where which while
                who whom why will with would you you're your yours yourself im dont ive i've i'll ill youre thats
                """.split(whereSeparator: \.isWhitespace).map(String.init))
        ),
        (
            "de",
            Set(
                """
                aber alle als also am an auch auf aus bei bin bis bist da damit dann das dass dein deine dem den der des dich die dir
                doch du durch ein eine einem einen einer es für hab habe hast hat hatte ich ihr im in ist ja jetzt kann kannst kein
                keine mal man mein meine mich mir mit muss nach nicht noch nur ob oder schon sehr sein seine sich sie sind so um und
                uns unser vom von vor war was weil wenn wer wie wir wird wo zu zum zur über
                """.split(whereSeparator: \.isWhitespace).map(String.init))
        ),
        (
            "fr",
            Set(
                """
                ai au aux avec ce ces c'est dans de des du elle en est et eu il ils je j'ai la le les leur lui ma mais me mes moi mon
                ne nous on ou par pas pour qu que qui sa se ses son sont sur ta te tes toi ton tu un une vos votre vous y à ça été
                """.split(whereSeparator: \.isWhitespace).map(String.init))
        ),
        (
            "es",
            Set(
                """
                al algo como con de del el ella en es esta está este eso esto fue ha hay la las le les lo los me mi muy más no nos o
                para pero por que qué se si sin su sus también te tu tú un una uno y ya yo
                """.split(whereSeparator: \.isWhitespace).map(String.init))
        ),
        (
            "it",
            Set(
                """
                a ad al alla anche che chi ci come con da del della di e è gli ha ho i il in io la le lo ma mi mio ne nel non per più
                quando questo se si sono su ti tu un una uno
                """.split(whereSeparator: \.isWhitespace).map(String.init))
        ),
        (
            "pt",
            Set(
                """
                a ao as com como da das de do dos e é ela ele em eu foi isso já lhe mais mas me meu minha muito na não nas no nos o os
                ou para pela pelo por que se sem seu sua também te tem tu um uma você
                """.split(whereSeparator: \.isWhitespace).map(String.init))
        ),
        (
            "nl",
            Set(
                """
                aan al als bij dat de den der die dit doen door een en er had heb heeft het hij hoe ik in is je jij kan maar me met
                mij mijn na naar niet nog nu of om ook op te tot u uit van voor was wat we wel wij zal ze zij zijn zo
                """.split(whereSeparator: \.isWhitespace).map(String.init))
        ),
        (
            "ru",
            Set(
                """
                а без бы был была были было в вам вас вот все всё вы да для до его ее её если есть еще ещё же за и из или им их к как
                когда кто ли мне мы на над не нет но ну о об он она они от по под при с со так там тебе то тоже ты у уже что это я
                """.split(whereSeparator: \.isWhitespace).map(String.init))
        )
    ]

    static let languages = lists.map(\.language)

    /// Each stop word and the languages (bit k: `lists[k]`) it is one of: one lookup per word.
    static let table: WordTable = {
        var out = WordTable()
        for (k, list) in lists.enumerated() {
            for w in list.words { out.add(w, count: 1 << k) }
        }
        return out
    }()
}
