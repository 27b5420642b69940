import BubbleTestSupport
import Foundation
import Testing
@testable import BubbleCore

@Suite("Native conversation JSON")
struct ConversationFileTests {
    let json = """
        {"format": "bubblekit-conversation", "version": 1, "title": "T", "me": "Me",
         "participants": [{"id": "me", "name": "Me"}, {"id": "ann", "name": "Ann"}],
         "messages": [
           {"from": "ann", "date": "2026-11-22T09:40:00Z", "text": "Hi"},
           {"from": "me", "date": "2026-11-22T09:41:00.500+01:00", "text": "Hey\\nthere"},
           {"from": "ann", "date": "2026-11-22T09:42:00Z", "image": {"path": "p.jpg", "width": 40, "height": 30}},
           {"type": "system", "date": "2026-11-22T09:43:00Z", "text": "Ann left"}
         ]}
        """

    @Test("fields, directions from `me` (by name), dates with zones and fractions")
    func decode() throws {
        let (c, hints) = try ConversationFile.decode(Data(json.utf8), path: "t.json")
        #expect(hints.me == "me")
        #expect(c.title == "T")
        #expect(c.messages.count == 4)
        #expect(c.messages.map(\.direction) == [.incoming, .outgoing, .incoming, .incoming])
        #expect(c.messages[1].text == "Hey\nthere")
        #expect(c.messages[1].date == Date(timeIntervalSince1970: 1_795_336_860.5))
        #expect(c.messages[2].image == ImageAttachment(path: "p.jpg", width: 40, height: 30))
        #expect(c.messages[3].kind == .system && c.messages[3].sender == nil)
        // --me overrides the file.
        let (d, _) = try ConversationFile.decode(Data(json.utf8), path: "t.json", me: "ann")
        #expect(d.messages.map(\.direction) == [.outgoing, .incoming, .outgoing, .incoming])
    }

    @Test("photo grids, ids, reactions, replies and delivery status are read, checked and written back")
    func featureFields() throws {
        let text = """
            {"participants": [{"id": "me", "name": "Me"}, {"id": "ann", "name": "Ann", "avatar": "ann.png"}], "me": "me",
             "messages": [
               {"id": "m1", "from": "ann", "date": "2026-11-22T09:40:00Z", "text": "Look",
                "images": [{"path": "a.jpg", "width": 40, "height": 30}, {"path": "b.jpg"}],
                "reactions": [{"emoji": "❤️", "count": 2, "senders": ["me", "ann"]}]},
               {"from": "me", "date": "2026-11-22T09:41:00Z", "text": "Nice",
                "reply": {"id": "m1", "sender": "ann", "text": "Look"},
                "status": "read", "statusDate": "2026-11-22T09:42:00Z"}
             ]}
            """
        let (c, _) = try ConversationFile.decode(Data(text.utf8), path: "f.json")
        #expect(c.participants[1].avatar == "ann.png")
        #expect(c.messages[0].images.map(\.path) == ["a.jpg", "b.jpg"])
        #expect(c.messages[0].id == "m1")
        #expect(c.messages[0].reactions == [Reaction(emoji: "❤️", count: 2, senders: ["me", "ann"])])
        #expect(c.messages[1].reply == ReplyReference(id: "m1", sender: "ann", text: "Look"))
        #expect(c.messages[1].status == .read)
        #expect(c.messages[1].statusDate == Date(timeIntervalSince1970: 1_795_340_520))
        let again = try ConversationFile.decode(ConversationFile.encode(c, me: "me"), path: "again.json").0
        #expect(again == c)

        let badReaction = text.replacingOccurrences(of: "\"count\": 2", with: "\"count\": 0")
        #expect(
            throws: ConversationFileError(
                path: "f.json", location: "messages[0].reactions[0]",
                reason: "needs a non-empty emoji and a count ≥ 1")
        ) {
            _ = try ConversationFile.decode(Data(badReaction.utf8), path: "f.json")
        }
        let badStatus = text.replacingOccurrences(of: "\"read\"", with: "\"lost\"")
        #expect(throws: ConversationFileError.self) { _ = try ConversationFile.decode(Data(badStatus.utf8), path: "f.json") }
    }

    @Test("encode then decode gives the same conversation")
    func roundTrip() throws {
        let (c, _) = try ConversationFile.decode(Data(json.utf8), path: "t.json")
        let again = try ConversationFile.decode(ConversationFile.encode(c, me: "me"), path: "again.json").0
        #expect(again == c)
        let synthetic = SyntheticConversation.make(count: 200, seed: 5)
        let back = try ConversationFile.decode(ConversationFile.encode(synthetic), path: "s.json").0
        #expect(back.messages == synthetic.messages)
    }

    @Test(
        "errors name the file and the place",
        arguments: [
            ("{\"messages\": [}", "x.json: line 1, column 15: is not valid JSON, expected a value"),
            ("{\"messages\": [{\"from\": \"a\", \"date\": 5, \"text\": \"t\"}]}", "x.json: messages[0].date: has the wrong type; expected a string"),
            ("{\"messages\": [{\"from\": \"a\", \"text\": \"t\"}]}", "x.json: messages[0].date: is missing"),
            ("{\"messages\": [{\"from\": \"a\", \"date\": \"2026-11-22T09:40:00Z\"}]}", "x.json: messages[0]: has neither text, image nor attachment"),
            ("{\"version\": 3, \"messages\": []}", "x.json: version: is 3; this BubbleKit reads versions 1 to 2"),
            (
                "{\"participants\": [{\"id\": \"a\", \"name\": \"A\"}], \"messages\": [{\"from\": \"b\", \"date\": \"2026-11-22T09:40:00Z\", \"text\": \"t\"}]}",
                "x.json: messages[0].from: \"b\" is not a participant id; expected one of a"
            ),
            (
                "{\"messages\": [{\"from\": \"a\", \"date\": \"2026-11-22T09:40:00Z\", \"image\": {\"width\": -3}}]}",
                "x.json: messages[0].image: size -3.0×0.0 is not usable; expected sizes ≥ 0 (0 = read from the file)"
            ),
            (
                "{\"messages\": [{\"from\": \"a\", \"date\": \"2026-11-22T09:40:00Z\", \"text\": \"t\", \"status\": \"seen\"}]}",
                "x.json: messages[0].status: is \"seen\"; expected one of sending, sent, delivered, read, failed"
            ),
            (
                "{\"messages\": [{\"from\": \"a\", \"date\": \"2026-11-22T09:40:00Z\", \"text\": \"t\", \"direction\": \"left\"}]}",
                "x.json: messages[0].direction: is \"left\"; expected one of incoming, outgoing"
            ),
            (
                "{\"messages\": [{\"type\": \"note\", \"date\": \"2026-11-22T09:40:00Z\", \"text\": \"t\"}]}",
                "x.json: messages[0].type: is \"note\"; expected one of message, system"
            )
        ])
    func errors(input: String, message: String) {
        do {
            _ = try ConversationFile.decode(Data(input.utf8), path: "x.json")
            Issue.record("accepted: \(input)")
        } catch {
            #expect(error.description == message)
        }
    }
}

@Suite("Theme files")
struct ThemeFileTests {
    static let base = """
        {"name": "t", "font": {"family": "BubbleKit Sans", "size": 16},
         "background": {"gradient": ["#ff0000", "#0000ff80"]},
         "incoming": {"fill": "#eee", "textColor": "#000", "padding": [7, 18, 8, 12], "shape": {"vector": {"radius": 17}}},
         "outgoing": {"fill": "#0b84fe", "textColor": "#fff", "padding": [7, 12, 8, 18],
                      "shape": {"art": {"image": "a.png", "legacyCaps": [24, 13], "mirror": true}}},
         "labels": {"separator": "#888", "system": "#888", "time": "#888"},
         "layout": {"maxWidthShare": 0.7, "sideMargin": 10, "widthMode": "balanced", "rowSpacing": 10,
                    "groupedSpacing": 2, "groupingInterval": 300},
         "timestamps": "inside"}
        """

    @Test("decodes into the layout numbers")
    func decode() throws {
        let theme = try Theme.decode(Data(Self.base.utf8), path: "t.json")
        #expect(theme.background == .gradient(Color(r8: 255, g8: 0, b8: 0), Color(r8: 0, g8: 0, b8: 255, a8: 128)))
        #expect(theme.incoming.shape == .vector(radius: 17, tail: true, outline: false, outlineWidth: 1))
        let style = theme.layoutStyle
        #expect(style.maxWidthShare == 0.7)
        #expect(style.widthMode == .balanced)
        #expect(style.timeInsideBubble)
        #expect(style.outgoingPadding == EdgeInsets(top: 7, left: 12, bottom: 8, right: 18))
        #expect(style.separatorText.size == 12)
    }

    @Test(
        "bad values are refused with their path",
        arguments: [
            ("\"maxWidthShare\": 0.7", "\"maxWidthShare\": 7", "t.json: layout.maxWidthShare: is 7.0; expected a share of the row between 0 and 1 (e.g. 0.7)"),
            ("\"fill\": \"#eee\"", "\"fill\": \"blue\"", "t.json: incoming.fill: \"blue\" is not a colour; expected #rgb, #rrggbb or #rrggbbaa"),
            (
                "\"legacyCaps\": [24, 13]", "\"legacyCaps\": [24, 13], \"insets\": [1, 1, 1, 1]",
                "t.json: outgoing.shape.art: give exactly one of \"insets\", \"legacyCaps\" or \"ninePatch\": true"
            ),
            ("\"padding\": [7, 18, 8, 12]", "\"padding\": [7, 18, 8]", "t.json: incoming.padding: expected [top, left, bottom, right], four numbers ≥ 0"),
            ("\"size\": 16", "\"size\": 0", "t.json: font.size: is 0.0; expected a size in points between 0 and 500"),
            ("\"widthMode\": \"balanced\"", "\"widthMode\": \"wide\"", "t.json: layout.widthMode: is \"wide\"; expected one of fit, balanced")
        ])
    func errors(find: String, replace: String, message: String) {
        let text = Self.base.replacingOccurrences(of: find, with: replace)
        do {
            _ = try Theme.decode(Data(text.utf8), path: "t.json")
            Issue.record("accepted")
        } catch {
            #expect(error.description == message)
        }
    }
}
