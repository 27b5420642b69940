import BubbleCore
import BubbleStats
import Foundation
import Testing

/// `ConversationStats` on a conversation whose answers are worked out by hand (in the comments):
/// counts per person, month, weekday × hour in three zones, streaks, reply times, words, emoji.
@Suite struct StatsTests {
    static func at(_ iso: String) -> Date { ISO8601DateFormatter().date(from: iso)! }

    /// 2026-01-30 is a Friday, 2026-02-02 a Monday, 2026-04-01 a Wednesday.
    static let conversation: Conversation = {
        func m(_ sender: String, _ iso: String, _ text: String? = nil, images: [ImageAttachment] = [], attachment: MediaAttachment? = nil) -> Message {
            Message(sender: sender, direction: sender == "me" ? .outgoing : .incoming, date: at(iso), text: text, images: images, attachment: attachment)
        }
        return Conversation(
            title: "Stats",
            participants: [
                Participant(id: "me", name: "Me"), Participant(id: "ann", name: "Ann Lee"),
                Participant(id: "ben", name: "Ben Ode")
            ],
            messages: [
                m("ann", "2026-01-30T23:30:00Z", "Hello there, see you at the station 🎉"),
                m("ben", "2026-01-30T23:40:00Z", "Das ist gut und ich komme morgen"),  // answers Ann after 600 s
                m("ann", "2026-01-31T00:10:00Z", "明天见 https://example.com 42 ok"),  // answers Ben after 1,800 s
                m("me", "2026-01-31T09:00:00Z", images: [ImageAttachment(path: "a.jpg", width: 4, height: 3)]),  // 31,800 s
                Message(kind: .system, sender: nil, direction: .incoming, date: at("2026-01-31T10:00:00Z"), text: "Ann changed the title"),
                m("ben", "2026-02-02T12:00:00Z", "station station 🎉🎉 👍🏽"),  // 51 h later: no reply
                m("ann", "2026-04-01T08:00:00Z", attachment: MediaAttachment(kind: .voice, duration: 12)),
                m("ann", "2026-04-01T08:05:00Z", "ok")  // her own again: no reply
            ])
    }()

    @Test("counts per person and month (an empty month included), first and last, media, links")
    func counts() throws {
        let s = ConversationStats(Self.conversation, timeZone: TimeZone(identifier: "UTC")!)
        #expect(s.messages == 7)
        #expect(s.people.map(\.name) == ["Ann Lee", "Ben Ode", "Me"])
        #expect(s.people.map(\.messages) == [4, 2, 1])
        #expect(s.people.map(\.words) == [12, 9, 0])
        #expect(s.people.map(\.media) == [1, 0, 1])
        #expect(
            s.months == [
                .init(month: "2026-01", messages: 4), .init(month: "2026-02", messages: 1),
                .init(month: "2026-03", messages: 0), .init(month: "2026-04", messages: 2)
            ])
        #expect(s.firstDate == "2026-01-30T23:30:00+00:00" && s.lastDate == "2026-04-01T08:05:00+00:00")
        #expect(s.media.photos == 1 && s.media.voice == 1 && s.media.links == 1 && s.media.total == 2)
        #expect(s.activeDays == 4)
    }

    @Test("weekday × hour, days and streaks in UTC, New York (DST in April) and Kolkata (+5:30)")
    func hoursInZones() throws {
        func grid(_ cells: [(Int, Int, Int)]) -> [[Int]] {
            var g = Array(repeating: Array(repeating: 0, count: 24), count: 7)
            for (day, hour, n) in cells { g[day][hour] = n }
            return g
        }
        let utc = ConversationStats(Self.conversation, timeZone: TimeZone(identifier: "UTC")!)
        // Fri 23 h ×2, Sat 0 h, Sat 9 h, Mon 12 h, Wed 8 h ×2 (Monday = row 0).
        #expect(utc.hours == grid([(4, 23, 2), (5, 0, 1), (5, 9, 1), (0, 12, 1), (2, 8, 2)]))
        #expect(utc.longestStreakDays == 2 && utc.longestStreak.from == "2026-01-30" && utc.longestStreak.to == "2026-01-31")
        #expect(utc.busiestDays.map(\.date) == ["2026-01-30", "2026-01-31", "2026-04-01", "2026-02-02"])

        let ny = ConversationStats(Self.conversation, timeZone: TimeZone(identifier: "America/New_York")!)
        // UTC−5 in winter: Fri 18 h ×2, Fri 19 h, Sat 4 h, Mon 7 h; UTC−4 in April: Wed 4 h ×2.
        #expect(ny.hours == grid([(4, 18, 2), (4, 19, 1), (5, 4, 1), (0, 7, 1), (2, 4, 2)]))
        #expect(ny.busiestDays.first == .init(date: "2026-01-30", messages: 3))
        #expect(ny.firstDate == "2026-01-30T18:30:00-05:00" && ny.lastDate == "2026-04-01T04:05:00-04:00")
        #expect(ny.timeZone == "America/New_York")

        let kolkata = ConversationStats(Self.conversation, timeZone: TimeZone(identifier: "Asia/Kolkata")!)
        // +5:30: 23:30Z Friday is 05:00 Saturday; 23:40Z is 05:10; 00:10Z is 05:40; 09:00Z is 14:30.
        #expect(kolkata.hours[5][5] == 3 && kolkata.hours[5][14] == 1)
        #expect(kolkata.months.first == .init(month: "2026-01", messages: 4))
        #expect(kolkata.longestStreakDays == 1)
    }

    @Test("reply times: answers to someone else within 24 h, per person (mean and median)")
    func replies() throws {
        let s = ConversationStats(Self.conversation, timeZone: TimeZone(identifier: "UTC")!)
        let byName = Dictionary(uniqueKeysWithValues: s.people.map { ($0.name, $0) })
        #expect(byName["Ann Lee"]?.replies == 1 && byName["Ann Lee"]?.averageReplySeconds == 1_800)
        #expect(byName["Ben Ode"]?.replies == 1 && byName["Ben Ode"]?.averageReplySeconds == 600)
        #expect(byName["Me"]?.replies == 1 && byName["Me"]?.medianReplySeconds == 31_800)
    }

    @Test("words without the stop words of the message's language, numbers and links; CJK as bigrams; emoji")
    func words() throws {
        let s = ConversationStats(Self.conversation, timeZone: TimeZone(identifier: "UTC")!)
        let ann = try #require(s.topWords.first { $0.name == "Ann Lee" })
        #expect(ann.words.map(\.value) == ["ok", "hello", "see", "station", "天见", "明天"])
        #expect(ann.words.first?.count == 2)
        let ben = try #require(s.topWords.first { $0.name == "Ben Ode" })
        #expect(ben.words.map(\.value) == ["station", "gut", "komme", "morgen"])
        #expect(!s.topWords.contains { $0.name == "Me" })
        #expect(s.topEmoji == [.init(value: "🎉", count: 3), .init(value: "👍🏽", count: 1)])
    }

    @Test("words in other scripts: lower-cased, their language's stop words left out, digits of any script left out")
    func otherScripts() throws {
        let c = Conversation(
            participants: [Participant(id: "a", name: "A")],
            messages: [
                Message(sender: "a", direction: .incoming, date: Self.at("2026-01-01T10:00:00Z"), text: "Привет, как дела? Это я, Привет ١٢٣ 😀"),
                Message(sender: "a", direction: .incoming, date: Self.at("2026-01-01T10:01:00Z"), text: "Grüße aus MÜNCHEN, grüße!")
            ])
        let s = ConversationStats(c, timeZone: TimeZone(identifier: "UTC")!)
        #expect(
            s.topWords.first?.words == [
                .init(value: "grüße", count: 2), .init(value: "привет", count: 2),
                .init(value: "münchen", count: 1), .init(value: "дела", count: 1)
            ])
        #expect(s.people.first?.words == 11)
        #expect(s.topEmoji == [.init(value: "😀", count: 1)])
    }

    @Test("messages out of order are counted in time order; an empty conversation has zeros")
    func orderAndEmpty() throws {
        var shuffled = Self.conversation
        shuffled.messages.reverse()
        #expect(
            ConversationStats(shuffled, timeZone: TimeZone(identifier: "UTC")!)
                == ConversationStats(Self.conversation, timeZone: TimeZone(identifier: "UTC")!))
        let empty = ConversationStats(Conversation(), timeZone: TimeZone(identifier: "UTC")!)
        #expect(empty.messages == 0 && empty.months.isEmpty && empty.firstDate == nil && empty.longestStreakDays == 0)
        #expect(empty.hours.count == 7 && empty.hours.allSatisfy { $0.count == 24 && $0.allSatisfy { $0 == 0 } })
    }

    @Test("a long conversation's texts are counted on several cores: the same statistics as one pass")
    func parallelEqualsSequential() throws {
        var long = Conversation(title: "Long", participants: Self.conversation.participants)
        for k in 0..<3_000 {
            for m in Self.conversation.messages {
                var copy = m
                copy.date = m.date.addingTimeInterval(Double(k) * 86_400 * 7)
                long.messages.append(copy)
            }
        }
        #expect(long.messages.count == 24_000)
        let zone = TimeZone(identifier: "Europe/Berlin")!
        var one = StatsAccumulator(timeZone: zone)
        for m in long.messages { one.add(m) }
        let sequential = one.finish(title: "Long", participants: long.participants)
        let parallel = ConversationStats(long, timeZone: zone)
        #expect(parallel == sequential)
        #expect(parallel.topEmoji.first == .init(value: "🎉", count: 9_000))
        #expect(parallel.people.first?.words == 36_000)
    }

    @Test("the JSON has the field names scripts rely on")
    func jsonNames() throws {
        let s = ConversationStats(Self.conversation, timeZone: TimeZone(identifier: "UTC")!)
        let object = try #require(try JSONSerialization.jsonObject(with: s.json()) as? [String: Any])
        for key in ["messages", "people", "months", "hours", "firstDate", "lastDate", "longestStreakDays"] {
            #expect(object[key] != nil, "\(key)")
        }
        let people = try #require(object["people"] as? [[String: Any]])
        #expect(people.first?["name"] as? String == "Ann Lee" && people.first?["messages"] as? Int == 4)
        #expect((object["months"] as? [[String: Any]])?.first?["month"] as? String == "2026-01")
        #expect((object["hours"] as? [[Int]])?.count == 7)
    }
}
