import BubbleCore
import Foundation
import Testing
@testable import BubbleImport

/// One short export per locale WhatsApp writes (Android and iOS where they differ), each read
/// whole: a system line, a message, a two-line message and a message after midnight, with the
/// same instants in every language (13 June 2020 09:05 and 15:55, 14 June 00:08, read in UTC).
@Suite("WhatsApp exports from every locale")
struct WhatsAppLocaleTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var locale: String
        var ios: Bool
        /// The four lines' date-time prefixes, each up to where the author starts.
        var stamps: [String]
        var system: String
        var names: (String, String) = ("Ann", "Ben")
        /// Seconds the stamps carry (iOS writes them).
        var seconds = 0
        var testDescription: String { "\(locale) \(ios ? "iOS" : "Android")" }

        var export: String {
            let (a, b) = names
            let first = ios ? stamps[0] + "\(a): \u{200E}" + system : stamps[0] + system
            return [first, stamps[1] + "\(a): Hi 👋", stamps[2] + "\(b): line one\nline two", stamps[3] + "\(a): late"]
                .joined(separator: "\n") + "\n"
        }
    }

    static func android(_ locale: String, _ s: [String], _ system: String, names: (String, String) = ("Ann", "Ben")) -> Case {
        Case(locale: locale, ios: false, stamps: s.map { $0 + " - " }, system: system, names: names)
    }
    static func ios(_ locale: String, _ s: [String], _ system: String, names: (String, String) = ("Ann", "Ben")) -> Case {
        Case(locale: locale, ios: true, stamps: s.map { "[" + $0 + "] " }, system: system, names: names, seconds: 12)
    }

    static let nnbsp = "\u{202F}"
    static let cases: [Case] = [
        android(
            "en-US", ["6/13/20, 9:05\(nnbsp)AM", "6/13/20, 9:05\(nnbsp)AM", "6/13/20, 3:55\(nnbsp)PM", "6/14/20, 12:08\(nnbsp)AM"],
            "Ann created group \"Trip\""),
        // Hour 00 written with a.m., as real Android exports do.
        android(
            "en-US 00 a.m.", ["06/13/2020, 09:05 a.m.", "06/13/2020, 09:05 a.m.", "06/13/2020, 03:55 p.m.", "06/14/2020, 00:08 a.m."],
            "+1 234 5578 created group \"Groupname\""),
        ios(
            "en-US", ["6/13/20, 9:05:12\(nnbsp)AM", "6/13/20, 9:05:12\(nnbsp)AM", "6/13/20, 3:55:12\(nnbsp)PM", "6/14/20, 12:08:12\(nnbsp)AM"],
            "Ann created group “Trip”"),
        android("en-GB", ["13/06/2020, 09:05", "13/06/2020, 09:05", "13/06/2020, 15:55", "14/06/2020, 00:08"], "Ann created group \"Trip\""),
        ios("en-GB", ["13/06/2020, 09:05:12", "13/06/2020, 09:05:12", "13/06/2020, 15:55:12", "14/06/2020, 00:08:12"], "Ann created group “Trip”"),
        android("en-IN", ["13/06/20, 9:05 am", "13/06/20, 9:05 am", "13/06/20, 3:55 pm", "14/06/20, 12:08 am"], "Ann created group \"Trip\""),
        android("de", ["13.06.20, 09:05", "13.06.20, 09:05", "13.06.20, 15:55", "14.06.20, 00:08"], "Ann hat die Gruppe „Trip“ erstellt"),
        ios("de", ["13.06.20, 09:05:12", "13.06.20, 09:05:12", "13.06.20, 15:55:12", "14.06.20, 00:08:12"], "Ann hat die Gruppe „Trip“ erstellt."),
        android("fr", ["13/06/2020 à 09:05", "13/06/2020 à 09:05", "13/06/2020 à 15:55", "14/06/2020 à 00:08"], "Ann a créé le groupe « Trip »"),
        ios("fr", ["13/06/2020 09:05:12", "13/06/2020 09:05:12", "13/06/2020 15:55:12", "14/06/2020 00:08:12"], "Ann a créé le groupe « Trip »"),
        android("es", ["13/6/20, 9:05 a. m.", "13/6/20, 9:05 a. m.", "13/6/20, 3:55 p. m.", "14/6/20, 12:08 a. m."], "Ann creó el grupo \"Trip\""),
        ios("es", ["13/6/20, 9:05:12 a. m.", "13/6/20, 9:05:12 a. m.", "13/6/20, 3:55:12 p. m.", "14/6/20, 12:08:12 a. m."], "Ann creó el grupo “Trip”"),
        android("pt-BR", ["13/06/2020 09:05", "13/06/2020 09:05", "13/06/2020 15:55", "14/06/2020 00:08"], "Ann criou o grupo \"Trip\""),
        android("it", ["13/06/20, 09:05", "13/06/20, 09:05", "13/06/20, 15:55", "14/06/20, 00:08"], "Ann ha creato il gruppo \"Trip\""),
        android("nl", ["13-06-2020 09:05", "13-06-2020 09:05", "13-06-2020 15:55", "14-06-2020 00:08"], "Ann heeft groep 'Trip' aangemaakt"),
        android(
            "ru", ["13.06.2020, 09:05", "13.06.2020, 09:05", "13.06.2020, 15:55", "14.06.2020, 00:08"], "Ann создал(-а) группу \"Trip\"",
            names: ("Анна", "Борис")),
        ios(
            "ru", ["13.06.2020, 09:05:12", "13.06.2020, 09:05:12", "13.06.2020, 15:55:12", "14.06.2020, 00:08:12"], "Анна создал(-а) группу «Trip»",
            names: ("Анна", "Борис")),
        android("tr", ["13.06.2020 09:05", "13.06.2020 09:05", "13.06.2020 15:55", "14.06.2020 00:08"], "Ann \"Trip\" grubunu oluşturdu"),
        android("pl", ["13.06.2020, 09:05", "13.06.2020, 09:05", "13.06.2020, 15:55", "14.06.2020, 00:08"], "Ann utworzył(a) grupę \"Trip\""),
        android("id", ["13/06/20 09.05", "13/06/20 09.05", "13/06/20 15.55", "14/06/20 00.08"], "Ann membuat grup \"Trip\""),
        android(
            "ko", ["2020. 6. 13. 오전 9:05", "2020. 6. 13. 오전 9:05", "2020. 6. 13. 오후 3:55", "2020. 6. 14. 오전 12:08"],
            "Ann님이 그룹 \"Trip\"을(를) 만들었습니다", names: ("민수", "지은")),
        android(
            "ko 2-digit year", ["20. 6. 13. 오전 9:05", "20. 6. 13. 오전 9:05", "20. 6. 13. 오후 3:55", "20. 6. 14. 오전 12:08"],
            "민수님이 그룹을 만들었습니다", names: ("민수", "지은")),
        ios(
            "ko", ["2020. 6. 13. 오전 9:05:12", "2020. 6. 13. 오전 9:05:12", "2020. 6. 13. 오후 3:55:12", "2020. 6. 14. 오전 12:08:12"],
            "민수님이 그룹을 만들었습니다", names: ("민수", "지은")),
        android(
            "ja 24 h", ["2020/06/13 9:05", "2020/06/13 9:05", "2020/06/13 15:55", "2020/06/14 0:08"], "Annがグループ「Trip」を作成しました",
            names: ("花子", "太郎")),
        android(
            "ja 12 h", ["2020/06/13 午前9:05", "2020/06/13 午前9:05", "2020/06/13 午後3:55", "2020/06/14 午前0:08"], "花子がグループを作成しました",
            names: ("花子", "太郎")),
        ios(
            "ja", ["2020/06/13 9:05:12", "2020/06/13 9:05:12", "2020/06/13 15:55:12", "2020/06/14 0:08:12"], "花子がグループを作成しました",
            names: ("花子", "太郎")),
        android(
            "zh-CN", ["2020/6/13 上午9:05", "2020/6/13 上午9:05", "2020/6/13 下午3:55", "2020/6/14 上午12:08"], "Ann创建了群组“Trip”",
            names: ("小明", "小红")),
        ios(
            "zh-TW", ["2020/6/13 上午9:05:12", "2020/6/13 上午9:05:12", "2020/6/13 下午3:55:12", "2020/6/14 上午12:08:12"], "小明建立了群組「Trip」",
            names: ("小明", "小紅")),
        android(
            "ar",
            [
                "١٣\u{200F}/٦\u{200F}/٢٠٢٠، ٩:٠٥ ص", "١٣\u{200F}/٦\u{200F}/٢٠٢٠، ٩:٠٥ ص", "١٣\u{200F}/٦\u{200F}/٢٠٢٠، ٣:٥٥ م",
                "١٤\u{200F}/٦\u{200F}/٢٠٢٠، ١٢:٠٨ ص"
            ], "أنشأت سارة المجموعة", names: ("سارة", "علي")),
        ios(
            "ar",
            [
                "١٣\u{200F}/٦\u{200F}/٢٠٢٠، ٩:٠٥:١٢ ص", "١٣\u{200F}/٦\u{200F}/٢٠٢٠، ٩:٠٥:١٢ ص", "١٣\u{200F}/٦\u{200F}/٢٠٢٠، ٣:٥٥:١٢ م",
                "١٤\u{200F}/٦\u{200F}/٢٠٢٠، ١٢:٠٨:١٢ ص"
            ], "أنشأت سارة المجموعة", names: ("سارة", "علي")),
        android(
            "fa", ["۲۰۲۰/۶/۱۳، ۹:۰۵ ق.ظ.", "۲۰۲۰/۶/۱۳، ۹:۰۵ ق.ظ.", "۲۰۲۰/۶/۱۳، ۳:۵۵ ب.ظ.", "۲۰۲۰/۶/۱۴، ۱۲:۰۸ ق.ظ."],
            "سارا گروه را ساخت", names: ("سارا", "رضا")),
        android(
            "he", ["13.6.2020, 9:05", "13.6.2020, 9:05", "13.6.2020, 15:55", "14.6.2020, 0:08"], "Ann יצר/ה את הקבוצה",
            names: ("נועה", "דוד")),
        android(
            "he 12 h", ["13.6.2020, 9:05 לפנה״צ", "13.6.2020, 9:05 לפנה״צ", "13.6.2020, 3:55 אחה״צ", "14.6.2020, 12:08 לפנה״צ"],
            "נועה יצרה את הקבוצה", names: ("נועה", "דוד")),
        android(
            "hi", ["13/6/20, 9:05 am", "13/6/20, 9:05 am", "13/6/20, 3:55 pm", "14/6/20, 12:08 am"], "Ann ने समूह बनाया",
            names: ("प्रिया", "राहुल")),
        android(
            "hi Devanagari", ["१३/६/२०, ९:०५ पूर्वाह्न", "१३/६/२०, ९:०५ पूर्वाह्न", "१३/६/२०, ३:५५ अपराह्न", "१४/६/२०, १२:०८ पूर्वाह्न"],
            "प्रिया ने समूह बनाया", names: ("प्रिया", "राहुल")),
        android(
            "th Buddhist era", ["13/6/2563 09:05", "13/6/2563 09:05", "13/6/2563 15:55", "14/6/2563 00:08"], "Ann สร้างกลุ่ม",
            names: ("สมชาย", "สมหญิง")),
        android(
            "th 2-digit Buddhist era", ["13/6/63 9:05", "13/6/63 9:05", "13/6/63 15:55", "14/6/63 0:08"], "สมชาย สร้างกลุ่ม",
            names: ("สมชาย", "สมหญิง"))
    ]

    @Test(arguments: cases)
    func reads(_ c: Case) throws {
        let scratch = ScratchFolder()
        let path = scratch.write("chat.txt", c.export)
        let r = try Importer.load(path: path, format: .whatsapp, options: ImportOptions(me: c.names.1, timeZone: zone("UTC")))
        let m = r.conversation.messages
        try #require(m.count == 4, "\(m.map { $0.text ?? "-" })\n\(r.warnings)")
        let s = String(format: "%02d", c.seconds)
        #expect(m.map(\.kind) == [.system, .message, .message, .message])
        #expect(m.map(\.sender) == [nil, c.names.0, c.names.1, c.names.0])
        #expect(m.map(\.direction) == [.incoming, .incoming, .outgoing, .incoming])
        #expect(m.map(\.text) == [c.system, "Hi 👋", "line one\nline two", "late"])
        #expect(wallTimes(m) == ["2020-06-13T09:05:\(s)", "2020-06-13T09:05:\(s)", "2020-06-13T15:55:\(s)", "2020-06-14T00:08:\(s)"])
        #expect(m[3].date == instant("2020-06-14T00:08:\(s)Z"))
        #expect(!r.warnings.contains { $0.location?.hasPrefix("line") == true }, "\(r.warnings)")
    }

    @Test("a malformed header in the middle of a file: a warning naming the line, the message before it unchanged, the line kept on its own")
    func malformedHeaderIsNotGlued() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "chat.txt",
            """
            06/19/2020, 11:58 p.m. - Ann: See you tomorrow
            and bring the map
            06/20/2020, 0O:08 a.m. - +12345578 created group "Groupname"
            06/20/2020, 09:15 a.m. - Ben: Morning!
            """)
        let r = try Importer.load(path: path, format: .whatsapp, options: ImportOptions(me: "Ben", timeZone: zone("UTC")))
        let m = r.conversation.messages
        #expect(
            m.map(\.text) == [
                "See you tomorrow\nand bring the map", "06/20/2020, 0O:08 a.m. - +12345578 created group \"Groupname\"",
                "Morning!"
            ])
        #expect(m.map(\.kind) == [.message, .system, .message])
        #expect(m[1].date == m[0].date)
        #expect(
            r.warnings.map(\.description) == [
                "\(path): line 3: \"06/20/2020, 0O:08 a.m. - +12345578 created group \"Groupname\"\": looks like the start of a message "
                    + "but its date and time cannot be read; kept as a line of its own at the time of the message before it, not added to that message"
            ])

        // --strict: the same line is an error naming it.
        let error = importError { () throws(ImportError) in
            try Importer.load(path: path, format: .whatsapp, options: ImportOptions(me: "Ben", timeZone: zone("UTC"), strict: true))
        }
        #expect(error?.location == "line 3")
        #expect(error?.reason.contains("cannot be read (--strict)") == true)
    }

    @Test("a line that only starts with a date stays part of the message: no header shape, no warning")
    func continuationWithADate() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "chat.txt",
            """
            13/06/2020, 09:05 - Ann: Plan:
            14/06 breakfast
            15.06.2020 hike-day
            """)
        let r = try Importer.load(path: path, format: .whatsapp, options: ImportOptions(me: "Ann", timeZone: zone("UTC")))
        #expect(r.conversation.messages.map(\.text) == ["Plan:\n14/06 breakfast\n15.06.2020 hike-day"])
        #expect(r.warnings.isEmpty)
    }

    struct Marker: Sendable, CustomTestStringConvertible {
        var text: String
        var kind: MediaAttachment.Kind
        var testDescription: String { text }
    }

    static let markers: [Marker] = [
        Marker(text: "<Media omitted>", kind: .media), Marker(text: "<Medien ausgeschlossen>", kind: .media),
        Marker(text: "<Multimedia omitido>", kind: .media), Marker(text: "<Médias omis>", kind: .media),
        Marker(text: "<Mídia oculta>", kind: .media), Marker(text: "<Media omessi>", kind: .media),
        Marker(text: "<Media weggelaten>", kind: .media), Marker(text: "<Без медиафайлов>", kind: .media),
        Marker(text: "<Medya dahil edilmedi>", kind: .media), Marker(text: "<Pominięto multimedia>", kind: .media),
        Marker(text: "<Media tidak disertakan>", kind: .media),
        Marker(text: "\u{200E}image omitted", kind: .photo), Marker(text: "video omitted", kind: .video),
        Marker(text: "sticker omitted", kind: .sticker), Marker(text: "Video omitted", kind: .video),
        Marker(text: "GIF omitted", kind: .gif), Marker(text: "audio omitted", kind: .voice),
        Marker(text: "Contact card omitted", kind: .contact), Marker(text: "Bild weggelassen", kind: .photo),
        Marker(text: "imagen omitida", kind: .photo), Marker(text: "This message was deleted", kind: .deleted),
        Marker(text: "You deleted this message.", kind: .deleted), Marker(text: "Diese Nachricht wurde gelöscht.", kind: .deleted),
        Marker(text: "Se eliminó este mensaje.", kind: .deleted)
    ]

    @Test(arguments: markers)
    func mediaMarkersArePlaceholders(_ marker: Marker) throws {
        let scratch = ScratchFolder()
        let path = scratch.write("chat.txt", "13/06/2020, 09:05 - Ann: \(marker.text)\n13/06/2020, 09:06 - Ann: my image omitted from the album\n")
        let r = try Importer.load(path: path, format: .whatsapp, options: ImportOptions(me: "Ann", timeZone: zone("UTC")))
        let m = r.conversation.messages
        #expect(m.first?.attachment?.kind == marker.kind)
        #expect(m.first?.attachment?.label == marker.text.replacingOccurrences(of: "\u{200E}", with: ""))
        #expect(m.first?.text == nil)
        #expect(m.last?.attachment == nil && m.last?.text == "my image omitted from the album")
    }

    @Test("a file named but left out of the export (video, voice note, sticker, document) is a placeholder with its kind and name")
    func attachedFilesThatAreNotPhotos() throws {
        let scratch = ScratchFolder()
        let path = scratch.write(
            "chat.txt",
            """
            14/10/2021, 09:05 - Ann: VID-20211014-WA0003.mp4 (file attached)
            14/10/2021, 09:06 - Ann: PTT-20211014-WA0004.opus (file attached)
            14/10/2021, 09:07 - Ann: STK-20211014-WA0005.webp (file attached)
            14/10/2021, 09:08 - Ann: Trip plan.pdf (file attached)
            Trip plan for Saturday
            """)
        let r = try Importer.load(path: path, format: .whatsapp, options: ImportOptions(me: "Ann", timeZone: zone("UTC")))
        let m = r.conversation.messages
        #expect(m.map { $0.attachment?.kind } == [.video, .voice, .sticker, .document])
        #expect(
            m.map { $0.attachment?.fileName } == [
                "VID-20211014-WA0003.mp4", "PTT-20211014-WA0004.opus",
                "STK-20211014-WA0005.webp", "Trip plan.pdf"
            ])
        #expect(m.map(\.text) == [nil, nil, nil, "Trip plan for Saturday"])
        #expect(m[0].shownText == "🎬 Video: VID-20211014-WA0003.mp4 (not in the export)")
        #expect(m[3].shownText == "📄 Document: Trip plan.pdf (not in the export)\nTrip plan for Saturday")
        #expect(r.warnings.count == 4 && r.warnings.allSatisfy { $0.why.hasPrefix("not in the export folder") })
    }

    @Test("day/month order that cannot be told is reported; a whole-file decision reads every line the same way")
    func ambiguousOrderIsReported() throws {
        let scratch = ScratchFolder()
        let path = scratch.write("chat.txt", "03/04/2020, 09:05 - Ann: a\n04/05/2020, 09:06 - Ann: b\n")
        let r = try Importer.load(path: path, format: .whatsapp, options: ImportOptions(me: "Ann", timeZone: zone("UTC")))
        #expect(wallTimes(r.conversation.messages) == ["2020-04-03T09:05:00", "2020-05-04T09:06:00"])
        #expect(r.warnings.contains { $0.what == "dates" && $0.why.contains("cannot be told") })
    }
}
