import Foundation
import Testing
@testable import BubbleCore

@Suite("Scene: what gets drawn where")
struct SceneTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    var theme: Theme { vectorTestTheme(labelSize: 12, outgoingTail: false, outgoingOutline: true) }

    func scene(_ messages: [Message]) throws -> [SceneItem] {
        let engine = MonospaceTextEngine()
        let conv = Conversation(messages: messages)
        let layout = try ConversationLayouter(style: theme.layoutStyle, engine: engine, timeZone: TimeZone(identifier: "UTC")!)
            .layout(conv, width: 375)
        let pages = try SceneBuilder(theme: theme, engine: engine, timeZone: TimeZone(identifier: "UTC")!)
            .pages(for: conv, layout: layout, setup: PageSetup(width: 375))
        guard case .clipped(_, let items) = pages[0].items.last! else { return [] }
        return items
    }

    @Test("tails only on the last bubble of a group; outline bubbles are stroked, not filled")
    func tailsAndOutline() throws {
        let items = try scene([
            Message(sender: "a", direction: .incoming, date: t0, text: "one"),
            Message(sender: "a", direction: .incoming, date: t0.addingTimeInterval(10), text: "two"),
            Message(sender: "me", direction: .outgoing, date: t0.addingTimeInterval(20), text: "three")
        ])
        let paths = items.compactMap { item -> ([PathElement], Color?, Color?, Double)? in
            if case let .path(p, fill, stroke, width) = item { return (p, fill, stroke, width) }
            return nil
        }
        #expect(paths.count == 3)
        // A rounded rectangle has 4 lines + 4 corner curves; a tail adds curves.
        let curves = paths.map { $0.0.filter { if case .curve = $0 { return true } else { return false } }.count }
        #expect(curves == [4, 6, 4])
        #expect(paths[0].1 == theme.incoming.fill && paths[0].2 == nil)
        #expect(paths[2].1 == nil && paths[2].2 == theme.outgoing.fill && paths[2].3 == 2)
        // Text items carry the colour of their side.
        let texts = items.compactMap { item -> SceneText? in if case .text(let t) = item { return t } else { return nil } }
        #expect(texts.map(\.string) == ["Tuesday, 14 November 2023", "one", "two", "three"])
        #expect(texts.last?.color == theme.outgoing.textColor)
    }

    @Test("the tail's body is inset by the tail strip on its side")
    func tailStrip() {
        let rect = Rect(x: 10, y: 0, width: 100, height: 40)
        let incoming = BubbleShape.path(in: rect, radius: 10, tailSide: .incoming, drawsTail: true)
        let xs = incoming.compactMap { e -> Double? in
            switch e {
            case .move(let p), .line(let p): return p.x;
            case .curve(_, _, let p): return p.x;
            case .close: return nil
            }
        }
        #expect(xs.min() == 10)  // the tail reaches the rect's left edge
        #expect(xs.max() == 110)
        let plain = BubbleShape.path(in: rect, radius: 10, tailSide: .incoming, drawsTail: false)
        let plainXs = plain.compactMap { e -> Double? in
            switch e {
            case .move(let p), .line(let p): return p.x;
            case .curve(_, _, let p): return p.x;
            case .close: return nil
            }
        }
        #expect(plainXs.min() == 16)  // no tail: the body still starts after the 6-pt strip
    }
}

/// A vector theme for scene and layout tests: grey incoming bubbles with tails, blue outgoing
/// ones (with a tail, or an outline without), label colours 1/2/3 to tell labels apart.
func vectorTestTheme(labelSize: Double, outgoingTail: Bool, outgoingOutline: Bool) -> Theme {
    Theme(
        name: "t", description: nil, font: .init(family: "x", size: 16, labelSize: labelSize),
        background: .color(Color(r8: 255, g8: 255, b8: 255)),
        incoming: .init(
            fill: Color(r8: 230, g8: 230, b8: 230), textColor: Color(r8: 0, g8: 0, b8: 0),
            padding: EdgeInsets(top: 7, left: 18, bottom: 8, right: 12),
            shape: .vector(radius: 17, tail: true, outline: false, outlineWidth: 1)),
        outgoing: .init(
            fill: Color(r8: 11, g8: 132, b8: 254), textColor: Color(r8: 255, g8: 255, b8: 255),
            padding: EdgeInsets(top: 7, left: 12, bottom: 8, right: 18),
            shape: .vector(radius: 17, tail: outgoingTail, outline: outgoingOutline, outlineWidth: outgoingOutline ? 2 : 1)),
        labels: .init(separator: Color(r8: 1, g8: 1, b8: 1), system: Color(r8: 2, g8: 2, b8: 2), time: Color(r8: 3, g8: 3, b8: 3)),
        layout: .init(
            maxWidthShare: 0.75, maxBubbleWidth: nil, sideMargin: 10, widthMode: .fit, rowSpacing: 10,
            groupedSpacing: 2, groupingInterval: 300, minimumBubbleSize: nil, imageCornerRadius: 5),
        timestamps: .none, dark: nil)
}
