import BubbleCore
import Foundation

/// A conversation at a glance: how many messages, who wrote them, when (months, weekday × hour
/// in a time zone, days, streaks), how fast people answer, their emoji and words, and media.
///
/// Made by `StatsAccumulator` (one pass over the messages in time order). The field names of
/// its JSON (`messages`, `people`, `months`, `hours`, `firstDate`, `lastDate`,
/// `longestStreakDays`…) are what scripts rely on: they stay.
package struct ConversationStats: Codable, Sendable, Equatable {
    package struct Person: Codable, Sendable, Equatable {
        /// The participant's name (their id when the conversation has no name for it).
        package var name: String
        package var id: String
        package var messages: Int
        /// Words written (every word, stop words included).
        package var words: Int
        /// Photos, videos, stickers, voice notes, files… sent.
        package var media: Int
        /// Messages that answered someone else (see `StatsAccumulator.replyWindow`).
        package var replies: Int
        /// Their mean time to answer, in seconds; nil without replies.
        package var averageReplySeconds: Double?
        /// Their median time to answer, in seconds; nil without replies.
        package var medianReplySeconds: Double?
    }
    package struct Month: Codable, Sendable, Equatable {
        /// "YYYY-MM" in the statistics' time zone.
        package var month: String
        package var messages: Int
        package init(month: String, messages: Int) { self.month = month; self.messages = messages }
    }
    package struct Day: Codable, Sendable, Equatable {
        /// "YYYY-MM-DD" in the statistics' time zone.
        package var date: String
        package var messages: Int
        package init(date: String, messages: Int) { self.date = date; self.messages = messages }
    }
    package struct Streak: Codable, Sendable, Equatable {
        package var days: Int
        package var from: String?
        package var to: String?
        package init(days: Int, from: String?, to: String?) { self.days = days; self.from = from; self.to = to }
    }
    package struct Count: Codable, Sendable, Equatable {
        package var value: String
        package var count: Int
        package init(value: String, count: Int) { self.value = value; self.count = count }
    }
    package struct PersonWords: Codable, Sendable, Equatable {
        package var name: String
        package var words: [Count]
        package init(name: String, words: [Count]) { self.name = name; self.words = words }
    }
    package struct Media: Codable, Sendable, Equatable {
        package var photos = 0, videos = 0, gifs = 0, stickers = 0, voice = 0, audio = 0, documents = 0
        package var locations = 0, contacts = 0, polls = 0, viewOnce = 0, deleted = 0, missing = 0
        /// Links in texts.
        package var links = 0
        package var total: Int { photos + videos + gifs + stickers + voice + audio + documents + locations + contacts + polls + viewOnce + missing }
    }

    package var title: String?
    /// The zone months, days and hours are counted in (an IANA name).
    package var timeZone: String
    /// Messages (system lines are not messages).
    package var messages: Int
    /// Most messages first (ties: the conversation's order of participants).
    package var people: [Person]
    /// Every month from the first message's to the last's, empty ones too.
    package var months: [Month]
    /// 7 rows, Monday first, × 24 hours: messages sent at that weekday and hour.
    package var hours: [[Int]]
    /// Days with at least one message.
    package var activeDays: Int
    /// The ten days with most messages, most first (ties: the earlier day).
    package var busiestDays: [Day]
    /// The first and last message's time, ISO 8601 with the zone's offset.
    package var firstDate: String?
    package var lastDate: String?
    /// The most days in a row with a message every day.
    package var longestStreakDays: Int
    package var longestStreak: Streak
    /// The 20 emoji used most in texts.
    package var topEmoji: [Count]
    /// Each person's 20 words used most: stop words of the message's language, numbers, links
    /// and one-letter words left out; Chinese, Japanese and Korean as two-character words (as
    /// search indexes them).
    package var topWords: [PersonWords]
    package var media: Media
}

extension ConversationStats {
    /// The statistics of `conversation` (its messages in time order), months, days and hours in
    /// `timeZone`.
    /// Texts are counted on every core (runs of messages, merged); the rest in one pass.
    package init(_ conversation: Conversation, timeZone: TimeZone) {
        var accumulator = StatsAccumulator(timeZone: timeZone)
        accumulator.countsTexts = false
        let messages = conversation.messages
        let ordered = zip(messages.dropFirst(), messages).allSatisfy { $0.date >= $1.date } ? messages : messages.sorted { $0.date < $1.date }
        for m in ordered { accumulator.add(m) }
        let parts = messages.count >= 20_000 ? UsableCores.count : 1
        let tallies = TallyBox(count: parts)
        DispatchQueue.concurrentPerform(iterations: parts) { k in
            var tally = TextTally()
            for i in (messages.count * k / parts)..<(messages.count * (k + 1) / parts) {
                let m = messages[i]
                if m.kind == .message, let text = m.text, !text.isEmpty { tally.add(text, sender: m.sender ?? "") }
            }
            tallies.set(k, tally)
        }
        for k in 0..<parts { accumulator.text.merge(tallies.get(k)) }
        self = accumulator.finish(title: conversation.title, participants: conversation.participants)
    }

    /// Pretty-printed JSON, keys sorted.
    package func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

/// The tallies of `DispatchQueue.concurrentPerform`'s iterations, each written by its own.
private final class TallyBox: @unchecked Sendable {
    private var tallies: [TextTally]
    private let lock = NSLock()
    init(count: Int) { tallies = Array(repeating: TextTally(), count: count) }
    func set(_ k: Int, _ t: TextTally) { lock.lock(); tallies[k] = t; lock.unlock() }
    func get(_ k: Int) -> TextTally { lock.lock(); defer { lock.unlock() }; return tallies[k] }
}

/// Builds `ConversationStats` from messages handed over in time order, one at a time, so a
/// store can stream them. Local times come from the zone's offset, looked up once per
/// quarter of an hour (every zone's changes fall on one), not per message.
package struct StatsAccumulator {
    /// An answer later than this (seconds) after the message before is a new start, not a reply.
    package static let replyWindow: Double = 24 * 3600

    let timeZone: TimeZone
    private var offsetBucket = Int.min
    private var offset = 0
    private var count = 0
    private var perSender: [String: SenderTally] = [:]
    private var senderOrder: [String] = []
    private var months: [Int: Int] = [:]  // year * 12 + month - 1
    private var days: [Int: Int] = [:]  // days since 1970-01-01 (local)
    private var hours = Array(repeating: Array(repeating: 0, count: 24), count: 7)
    private var first: Date?
    private var last: Date?
    private var firstOffset = 0, lastOffset = 0
    private var previousSender: String?
    private var previousDate: Date?
    private var media = ConversationStats.Media()
    /// Words, emoji and links of the texts (`add` counts them unless `countsTexts` is off and
    /// they are counted apart and merged).
    var text = TextTally()
    var countsTexts = true

    struct SenderTally {
        var messages = 0, media = 0
        var replyTimes: [Double] = []
    }

    package init(timeZone: TimeZone) { self.timeZone = timeZone }

    /// The zone's offset at `seconds` since 1970, in seconds.
    private mutating func offset(at seconds: Int) -> Int {
        let bucket = seconds >= 0 ? seconds / 900 : (seconds - 899) / 900
        if bucket != offsetBucket {
            offsetBucket = bucket
            offset = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(bucket * 900)))
        }
        return offset
    }

    package mutating func add(_ m: Message) {
        guard m.kind == .message else { return }
        let sender = m.sender ?? ""
        let t = m.date.timeIntervalSince1970
        guard t.isFinite, abs(t) < 1e12 else { return }
        let seconds = Int(t.rounded(.down))
        let local = seconds + offset(at: seconds)
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let hour = (local - day * 86_400) / 3600
        let weekday = ((day + 3) % 7 + 7) % 7  // 1970-01-01 was a Thursday; Monday = 0
        count += 1
        hours[weekday][hour] += 1
        days[day, default: 0] += 1
        let civil = WallTime.civil(day)
        months[civil.year * 12 + civil.month - 1, default: 0] += 1
        if first == nil || m.date < first! { first = m.date; firstOffset = local - seconds }
        if last == nil || m.date >= last! { last = m.date; lastOffset = local - seconds }

        if perSender[sender] == nil { senderOrder.append(sender) }
        var tally = perSender[sender] ?? SenderTally()
        perSender[sender] = nil
        tally.messages += 1
        if let previousSender, let previousDate, previousSender != sender, !sender.isEmpty {
            let gap = m.date.timeIntervalSince(previousDate)
            if gap >= 0, gap <= Self.replyWindow { tally.replyTimes.append(gap) }
        }
        previousSender = sender
        previousDate = m.date
        tally.media += countMedia(m)
        if countsTexts, let t = m.text, !t.isEmpty { text.add(t, sender: sender) }
        perSender[sender] = tally
    }

    /// Media of `m` into `media`; how many.
    private mutating func countMedia(_ m: Message) -> Int {
        var n = 0
        for image in m.images {
            n += 1
            if image.sticker { media.stickers += 1 } else if image.videoFrame { media.videos += 1 } else { media.photos += 1 }
        }
        guard let a = m.attachment else { return n }
        switch a.kind {
        case .photo: media.photos += 1
        case .video: media.videos += 1
        case .gif: media.gifs += 1
        case .sticker: media.stickers += 1
        case .voice: media.voice += 1
        case .audio: media.audio += 1
        case .document: media.documents += 1
        case .location: media.locations += 1
        case .contact: media.contacts += 1
        case .poll: media.polls += 1
        case .viewOnce: media.viewOnce += 1
        case .media: media.missing += 1
        case .deleted: media.deleted += 1; return n
        }
        return n + 1
    }

    package func finish(title: String?, participants: [Participant]) -> ConversationStats {
        let names = Dictionary(participants.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        let position = Dictionary(participants.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        let order = senderOrder.sorted { a, b in
            let ca = perSender[a]!.messages, cb = perSender[b]!.messages
            if ca != cb { return ca > cb }
            return (position[a] ?? Int.max, senderOrder.firstIndex(of: a)!) < (position[b] ?? Int.max, senderOrder.firstIndex(of: b)!)
        }
        func name(_ id: String) -> String { id.isEmpty ? "?" : (names[id].flatMap { $0.isEmpty ? nil : $0 } ?? id) }
        let people = order.map { id -> ConversationStats.Person in
            let t = perSender[id]!
            let sorted = t.replyTimes.sorted()
            let median: Double? =
                sorted.isEmpty
                ? nil
                : sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
            return .init(
                name: name(id), id: id, messages: t.messages, words: text.senders[id]?.words ?? 0, media: t.media, replies: t.replyTimes.count,
                averageReplySeconds: t.replyTimes.isEmpty ? nil : t.replyTimes.reduce(0, +) / Double(t.replyTimes.count),
                medianReplySeconds: median)
        }
        var monthList: [ConversationStats.Month] = []
        if let lo = months.keys.min(), let hi = months.keys.max() {
            for k in lo...hi {
                let y = k >= 0 ? k / 12 : (k - 11) / 12
                monthList.append(.init(month: String(format: "%04d-%02d", y, k - y * 12 + 1), messages: months[k] ?? 0))
            }
        }
        let dayKeys = days.keys.sorted()
        var best = (days: 0, from: 0, to: 0), run = (days: 0, from: 0)
        var previous: Int?
        for d in dayKeys {
            run = previous == d - 1 ? (run.days + 1, run.from) : (1, d)
            if run.days > best.days { best = (run.days, run.from, d) }
            previous = d
        }
        let busiest = days.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(10)
        func top(_ counts: [String: Int], _ n: Int) -> [ConversationStats.Count] {
            counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(n).map { .init(value: $0.key, count: $0.value) }
        }

        return ConversationStats(
            title: title, timeZone: timeZone.identifier, messages: count, people: people, months: monthList, hours: hours,
            activeDays: days.count,
            busiestDays: busiest.map { .init(date: Self.dayString($0.key), messages: $0.value) },
            firstDate: first.map { Self.isoString($0, offset: firstOffset) }, lastDate: last.map { Self.isoString($0, offset: lastOffset) },
            longestStreakDays: best.days,
            longestStreak: .init(days: best.days, from: best.days > 0 ? Self.dayString(best.from) : nil, to: best.days > 0 ? Self.dayString(best.to) : nil),
            topEmoji: top(text.emoji, 20),
            topWords: order.compactMap { id in
                let words = (text.senders[id]?.vocabulary.top(20) ?? []).map { ConversationStats.Count(value: $0.word, count: $0.value) }
                return words.isEmpty ? nil : .init(name: name(id), words: words)
            },
            media: {
                var m = media; m.links += text.links; return m
            }())
    }

    static func dayString(_ day: Int) -> String {
        let c = WallTime.civil(day)
        return String(format: "%04d-%02d-%02d", c.year, c.month, c.day)
    }

    static func isoString(_ date: Date, offset: Int) -> String {
        let local = Int(date.timeIntervalSince1970.rounded(.down)) + offset
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let s = local - day * 86_400
        let sign = offset < 0 ? "-" : "+"
        return dayString(day) + String(format: "T%02d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
            + sign + String(format: "%02d:%02d", abs(offset) / 3600, abs(offset) / 60 % 60)
    }
}
