import BubbleCore
import Foundation
import Testing

@Suite("Dates: wall-clock times, instants in the native JSON, DateTexts")
struct DateTests {
    let madrid = TimeZone(identifier: "Europe/Madrid")!

    @Test("a wall-clock time in a daylight-saving gap survives JSON → model → JSON, whatever the zone")
    func gapRoundTrip() throws {
        // 2025-03-30 02:30 does not exist in Madrid (02:00 → 03:00).
        let json = """
            {"participants": [{"id": "a", "name": "A"}], "messages": [
              {"from": "a", "date": "2025-03-30T02:30:00", "text": "in the gap"},
              {"from": "a", "date": "2025-03-30T01:59:59", "text": "before"}]}
            """
        let (c, _) = try ConversationFile.decode(Data(json.utf8), path: "g.json", timeZone: madrid)
        #expect(c.messages[0].wallTime?.description == "2025-03-30T02:30:00")
        // Read with the offset before the gap (+01:00): 01:30 UTC, one second after "before" is 00:59:59 UTC + 1801 s.
        #expect(c.messages[0].date == Date(timeIntervalSince1970: 1_743_298_200))
        #expect(c.messages[1].date == Date(timeIntervalSince1970: 1_743_296_399))
        let text = String(decoding: try ConversationFile.encode(c), as: UTF8.self)
        #expect(text.contains("\"date\": \"2025-03-30T02:30:00\""), "\(text)")
        let (again, _) = try ConversationFile.decode(Data(text.utf8), path: "again.json", timeZone: .gmt)
        #expect(try ConversationFile.encode(again) == (try ConversationFile.encode(c)))
        #expect(again.messages[0].date == Date(timeIntervalSince1970: 1_743_298_200 + 3600), "read in UTC now")
    }

    @Test(
        "instants: milliseconds and microseconds are written and read back exactly; offsets are read",
        arguments: [
            (1_700_000_000.0, "2023-11-14T22:13:20Z"),
            (1_700_000_000.123, "2023-11-14T22:13:20.123Z"),
            (1_700_000_000.000_25, "2023-11-14T22:13:20.000250Z"),
            (-86_400.5, "1969-12-30T23:59:59.500Z")
        ])
    func instants(seconds: Double, text: String) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let c = Conversation(messages: [Message(sender: nil, direction: .incoming, date: date, text: "x")])
        let json = String(decoding: try ConversationFile.encode(c), as: UTF8.self)
        #expect(json.contains("\"date\": \"\(text)\""), "\(json)")
        let (back, _) = try ConversationFile.decode(Data(json.utf8), path: "i.json")
        #expect(back.messages[0].date == date)
        #expect(back.messages[0].wallTime == nil)
        let withOffset = #"{"messages": [{"date": "2023-11-15T03:43:20+05:30", "text": "x"}]}"#
        #expect(try ConversationFile.decode(Data(withOffset.utf8), path: "o.json").0.messages[0].date == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test("strings with quotes, backslashes, control characters and emoji survive the writer")
    func strings() throws {
        let text = "a \"quote\" \\ back\nnew\ttab \u{1} ctl 🎄 \u{202A}bidi\u{202C}"
        let c = Conversation(
            title: "T \"x\"", participants: [Participant(id: "a", name: "Ä \"b\"")],
            messages: [Message(sender: "a", direction: .outgoing, date: Date(timeIntervalSince1970: 0), text: text)])
        let data = try ConversationFile.encode(c, me: "a")
        #expect(try JSONSerialization.jsonObject(with: data) is [String: Any], "valid JSON")
        let (back, hints) = try ConversationFile.decode(data, path: "s.json")
        #expect(back == c)
        #expect(hints.me == "a")
    }

    @Test("DateTexts: fixed English defaults; a locale's own names and clock")
    func texts() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)  // Tue 14 Nov 2023 22:13:20 UTC
        let plain = DateTexts(timeZone: .gmt)
        #expect(plain.day(date) == "Tuesday, 14 November 2023")
        #expect(plain.time(date) == "22:13")
        #expect(plain.shortDay(date) == "14 November 2023")
        let tokyo = DateTexts(timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        #expect(tokyo.day(date) == "Wednesday, 15 November 2023")
        #expect(tokyo.time(date) == "07:13")
        let german = DateTexts(timeZone: .gmt, locale: Locale(identifier: "de_DE"))
        #expect(german.day(date) == "Dienstag, 14. November 2023")
        #expect(german.time(date) == "22:13")
        let us = DateTexts(timeZone: .gmt, locale: Locale(identifier: "en_US"))
        #expect(us.time(date).replacingOccurrences(of: "\u{202F}", with: " ") == "10:13 PM")
        #expect(us.day(date) == "Tuesday, November 14, 2023")
        // Relative names only with a `now`, for that day and the one before, in the zone's days.
        let later = Date(timeIntervalSince1970: 1_700_000_000 + 86_400)
        let french = DateTexts(timeZone: .gmt, locale: Locale(identifier: "fr_FR"), now: later)
        #expect(french.day(date) == "Hier")
        #expect(french.day(later) == "Aujourd’hui")
        #expect(french.day(Date(timeIntervalSince1970: 1_700_000_000 - 86_400)) == "lundi 13 novembre 2023")
        #expect(DateTexts(timeZone: .gmt, now: date).day(date) == "Today")
        #expect(DateTexts(timeZone: TimeZone(identifier: "Asia/Tokyo")!, now: date).day(date) == "Today")
        #expect(DateTexts(timeZone: .gmt, now: later).day(date) == "Yesterday")
    }
}
