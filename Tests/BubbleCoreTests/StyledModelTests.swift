import Foundation
import Testing
@testable import BubbleCore

@Suite("Styled text in the model and in native JSON (version 2)")
struct StyledModelTests {
    @Test("spans, edits, forwards and poll answers are written and read back byte for byte")
    func roundTrip() throws {
        var poll = MediaAttachment(kind: .poll, title: "Dinner?")
        poll.answers = [PollAnswer(text: "Pizza", votes: 3, chosen: true), PollAnswer(text: "Sushi", votes: 1)]
        poll.voters = 4
        let t0 = Date(timeIntervalSince1970: 1_700_000_000)
        let c = Conversation(
            participants: [Participant(id: "a", name: "Ann")],
            messages: [
                Message(
                    sender: "a", direction: .incoming, date: t0, text: "Look at this link",
                    spans: [TextSpan(.bold, 8..<12), TextSpan(.link, 13..<17, url: "https://example.com/\"q\"")],
                    forwardedFrom: "Bob", edited: t0.addingTimeInterval(90)),
                Message(sender: "a", direction: .incoming, date: t0, attachment: poll)
            ])
        let data = try ConversationFile.encode(c)
        let json = String(decoding: data, as: UTF8.self)
        #expect(json.contains("\"version\": 2"))
        #expect(
            json.contains(
                "\"spans\": [{\"style\": \"bold\", \"start\": 8, \"end\": 12}, {\"style\": \"link\", \"start\": 13, \"end\": 17, \"url\": \"https://example.com/\\\"q\\\"\"}]"
            ))
        #expect(json.contains("\"forwardedFrom\": \"Bob\""))
        #expect(json.contains("\"edited\": \"2023-11-14T22:14:50Z\""))
        #expect(json.contains("\"answers\": [{\"text\": \"Pizza\", \"votes\": 3, \"chosen\": true}, {\"text\": \"Sushi\", \"votes\": 1}], \"voters\": 4"))
        let (back, _) = try ConversationFile.decode(data, path: "x.json", timeZone: TimeZone(identifier: "UTC")!)
        #expect(back.messages == c.messages)
        #expect(try ConversationFile.encode(back) == data)
    }

    @Test("a version 1 file (no spans) still reads")
    func versionOne() throws {
        let v1 = #"{"format": "bubblekit-conversation", "version": 1, "messages": [{"from": "a", "date": "2026-11-22T09:40:00Z", "text": "*hi*"}]}"#
        let (c, _) = try ConversationFile.decode(Data(v1.utf8), path: "v1.json")
        #expect(c.messages[0].text == "*hi*")
        #expect(c.messages[0].spans.isEmpty)
    }

    @Test(
        "spans outside the text or inside a character are errors naming the span",
        arguments: [
            (#"{"style": "bold", "start": 0, "end": 9}"#, "v.json: messages[0].spans[0]: ends at byte 9, past the text's 5 UTF-8 bytes"),
            (
                #"{"style": "bold", "start": 1, "end": 2}"#,
                "v.json: messages[0].spans[0]: byte 1 is inside a character; expected offsets of whole UTF-8 characters"
            ),
            (
                #"{"style": "shout", "start": 0, "end": 1}"#,
                "v.json: messages[0].spans[0].style: is \"shout\"; expected one of bold, italic, underline, strike, code, pre, spoiler, quote, link, mention"
            ),
            (#"{"style": "bold", "start": 3, "end": 1}"#, "v.json: messages[0].spans[0].end: start 3, end 1: expected 0 ≤ start ≤ end")
        ])
    func badSpans(_ span: String, _ message: String) throws {
        let json = #"{"version": 2, "messages": [{"from": "a", "date": "2026-11-22T09:40:00Z", "text": "é ok", "spans": ["# + span + "]}]}"
        do {
            _ = try ConversationFile.decode(Data(json.utf8), path: "v.json")
            Issue.record("accepted \(span)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("face runs: overlapping spans merge into runs of combined faces; decorations are no faces")
    func faceRuns() {
        let text = "bold and both here"
        let runs = TextSpan.faceRuns(
            [TextSpan(.bold, 0..<13), TextSpan(.italic, 9..<18), TextSpan(.spoiler, 0..<4), TextSpan(.code, 14..<18)],
            in: text.utf8)
        #expect(
            runs == [
                FaceRun(0..<9, .bold), FaceRun(9..<13, [.bold, .italic]), FaceRun(13..<14, .italic),
                FaceRun(14..<18, [.italic, .monospace])
            ])
        #expect(TextSpan.faceRuns([TextSpan(.strike, 0..<4)], in: text.utf8).isEmpty)
    }

    @Test("shown text: the forwarded line and the attachment's label come first, the spans move with the text")
    func shownSpans() {
        var m = Message(sender: "a", direction: .incoming, date: Date(), text: "hi there", spans: [TextSpan(.bold, 3..<8)], forwardedFrom: "Bob")
        #expect(m.shownText == "Forwarded from Bob\nhi there")
        #expect(m.shownSpans == [TextSpan(.italic, 0..<18), TextSpan(.bold, 22..<27)])
        m.forwardedFrom = ""
        #expect(m.shownText == "Forwarded\nhi there")
        m.forwardedFrom = nil
        m.attachment = MediaAttachment(kind: .voice, duration: 7)
        #expect(m.shownText == "🎤 Voice message · 0:07\nhi there")
        let offset = "🎤 Voice message · 0:07\n".utf8.count
        #expect(m.shownSpans == [TextSpan(.bold, (3 + offset)..<(8 + offset))])
    }

    @Test("a poll shows its answers with votes, the chosen one marked, and the voters")
    func poll() {
        var a = MediaAttachment(kind: .poll, title: "Dinner?")
        a.answers = [PollAnswer(text: "Pizza", votes: 3, chosen: true), PollAnswer(text: "Sushi", votes: 1)]
        #expect(a.displayText == "📊 Poll: Dinner?\n✓ Pizza · 3\n○ Sushi · 1\n4 votes")
        a.voters = 5  // one voter may pick several answers
        #expect(a.displayText.hasSuffix("5 votes"))
    }
}
