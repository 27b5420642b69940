import BubbleCore
import BubbleImport
import BubblePeople
import BubbleStore
import Foundation

/// Names for numbers (issue 43): what resolving names when the store is read costs. A store of
/// 1,000 one-to-one SMS conversations (numbers spelled as phones write them) read with no
/// contacts — the baseline — and with 10,000 cards (a thousand of them the conversations'
/// people): `list`, a search with its senders named, a conversation opened; and the cards'
/// import, and naming the same conversations in memory (what `--contacts` does to a file).
let peopleConversations = 1_000
let peopleCards = 10_000

var peopleCases: [BenchCase] { [("people-names", { _ in try await peopleCase() })] }

func peopleCase() async throws -> Figures {
    let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("bubblekit-bench-people-\(getpid()).sqlite")
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let store = try SQLiteStore(path: path)
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    func number(_ i: Int) -> String { String(format: "(555) %03d-%04d", 100 + i / 10_000, i % 10_000) }
    for i in 0..<peopleConversations {
        let id = number(i)
        let c = Conversation(
            title: id, participants: [Participant(id: id, name: "(Unknown)"), Participant(id: "me", name: "Me")],
            messages: [
                Message(sender: id, direction: .incoming, date: t0.addingTimeInterval(Double(i * 3)), text: "hello number \(i) dinner"),
                Message(sender: "me", direction: .outgoing, date: t0.addingTimeInterval(Double(i * 3 + 1)), text: "hi \(i)"),
                Message(sender: id, direction: .incoming, date: t0.addingTimeInterval(Double(i * 3 + 2)), text: "see you")
            ])
        _ = try await store.add(c, sourceFormat: "sms", chatKey: id, title: nil, mediaFolder: NSTemporaryDirectory())
    }
    var figures: [String: Double] = [:]
    func measure(_ label: String, _ n: Int, _ body: () async throws -> Void) async rethrows {
        figures[label] = percentiles(try await timedAsync(n, body)).p50
    }
    try await measure("list plain", 20) { _ = try await store.conversations() }
    try await measure("search plain", 50) { _ = try await store.search(StoreSearch("dinner", limit: 50)) }
    try await measure("open plain", 200) { _ = try await store.load(Int64.random(in: 1...Int64(peopleConversations))) }

    // 10,000 cards: every tenth the number of a conversation, written as +1 and digits.
    let cards = (0..<peopleCards).map { i in
        let phone =
            i % 10 == 0
            ? "+1 555 \(100 + (i / 10) / 10_000) \(String(format: "%04d", (i / 10) % 10_000))" : String(format: "+44 20 7%03d %04d", i / 10_000, i % 10_000)
        return Contact(name: "Person \(i)", phones: [phone], emails: ["person\(i)@example.org"], origin: "bench")
    }
    let start = now()
    _ = try await store.importContacts(cards, region: "US")
    figures["contacts import"] = (now() - start) * 1000
    try await measure("list named", 20) { _ = try await store.conversations() }
    try await measure("search named", 50) { _ = try await store.search(StoreSearch("dinner", limit: 50)) }
    try await measure("open named", 200) { _ = try await store.load(Int64.random(in: 1...Int64(peopleConversations))) }
    let named = try await store.conversations().filter { $0.title.hasPrefix("Person ") }.count

    // In memory, as `--contacts` names a file's conversations.
    let directory = ContactsReader.directory(cards, region: "US", pictures: nil)
    let raw = (0..<peopleConversations).map { i in
        Conversation(title: number(i), participants: [Participant(id: number(i), name: "(Unknown)"), Participant(id: "me", name: "Me")])
    }
    let memoryStart = now()
    for var c in raw { directory.name(&c, app: "sms", me: "me") }
    figures["name in memory"] = (now() - memoryStart) * 1e6 / Double(peopleConversations)
    return Figures(
        name: "people-names", messages: peopleConversations * 3, microsPerMessage: figures, peakMemoryMB: peakMemoryMB(),
        notes: ["named": String(named)])
}

func printPeople(_ results: [String: Figures]) {
    guard let p = results["people-names"] else { return }
    let f = p.microsPerMessage
    print("")
    print("People: \(peopleConversations) one-to-one SMS conversations, then \(peopleCards) contact cards (names resolved when read)")
    print(pad("store read (ms, p50)", 24) + lpad("no cards", 10) + lpad("named", 10) + lpad("÷ plain", 9))
    for (label, key) in [("list all", "list"), ("search, top 50", "search"), ("open one", "open")] {
        let plain = f["\(key) plain"] ?? .nan, named = f["\(key) named"] ?? .nan
        print(
            pad(label, 24) + lpad(String(format: "%.2f", plain), 10) + lpad(String(format: "%.2f", named), 10)
                + lpad(String(format: "%.2f×", named / plain), 9))
    }
    print(
        String(
            format: "contacts import: %.0f ms for %d cards (%.0f cards/s); naming in memory: %.1f µs a conversation; %@ of %d conversations named",
            f["contacts import"] ?? .nan, peopleCards, Double(peopleCards) / ((f["contacts import"] ?? .nan) / 1000),
            f["name in memory"] ?? .nan, p.notes["named"] ?? "?", peopleConversations))
}
