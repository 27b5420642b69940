import BubbleCore
import Foundation

/// Deterministic synthetic conversations for benchmarks and property tests: two to four
/// people, bursts and pauses across days, short and long messages in several scripts (Latin,
/// emoji with ZWJ sequences and flags, CJK, Arabic, Hebrew), over-long words, some photos
/// (a few with unusable sizes), some system lines. The same `seed` always gives the same messages.
package enum SyntheticConversation {
    static let words = [
        "ok", "sure", "see", "you", "tomorrow", "haha", "what", "time", "is", "the", "train", "coffee?",
        "yes!", "no", "maybe", "later", "I'm", "on", "my", "way", "meeting", "ran", "late", "again",
        "dinner", "at", "eight", "sounds", "good", "thanks", "love", "it", "call", "me", "when", "free",
        "😀", "👍", "❤️", "👨‍👩‍👧‍👦", "🇩🇪", "🎉",
        "今日は", "天気", "ですね", "好的", "明天见", "감사합니다",
        "مرحبا", "كيف", "حالك", "שלום", "מה", "נשמע",
        "Andnormallyaddlinebreaksonlyinbetween", "https://example.com/a/long/path?with=query", "+49 170 1234567"
    ]

    package static func make(count: Int, seed: UInt64, start: Date = Date(timeIntervalSince1970: 1_700_000_000)) -> Conversation {
        var rng = SplitMix64(seed: seed)
        var date = start
        var messages: [Message] = []
        messages.reserveCapacity(count)
        let people = [
            Participant(id: "me", name: "Me"), Participant(id: "alice", name: "Alice"),
            Participant(id: "bob", name: "Bob")
        ]
        for i in 0..<count {
            // Mostly seconds to minutes apart, now and then hours or a day.
            date = date.addingTimeInterval(Double(rng.next() % 8 == 0 ? rng.next() % 90_000 : rng.next() % 240))
            let roll = rng.next() % 40
            if roll == 0 {
                messages.append(.system("\(people[1 + Int(rng.next() % 2)].name) changed the group name", date: date))
                continue
            }
            // Lengths: many short, some medium, a few long.
            let lengthRoll = rng.next() % 10
            let n = lengthRoll < 5 ? 1 + Int(rng.next() % 5) : lengthRoll < 9 ? 5 + Int(rng.next() % 20) : 25 + Int(rng.next() % 60)
            let text = (0..<n).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ")
            var image: ImageAttachment?
            if roll == 1 || roll == 2 {
                image =
                    i % 50 == 1
                    ? ImageAttachment(path: "photo-\(i).jpg", width: 0, height: 0)
                    : ImageAttachment(path: "photo-\(i).jpg", width: Double(200 + rng.next() % 3000), height: Double(200 + rng.next() % 3000))
            }
            let outgoing = rng.next() % 2 == 0
            let sender = outgoing ? "me" : (rng.next() % 3 == 0 ? "bob" : "alice")
            messages.append(
                Message(
                    sender: sender, direction: outgoing ? .outgoing : .incoming, date: date,
                    text: image != nil && roll == 2 ? nil : text, image: image))
        }
        return Conversation(title: "Synthetic \(seed)", participants: people, messages: messages)
    }
}

/// SplitMix64: a tiny, fast, deterministic generator (not for cryptography).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
