@testable import BubbleCore
@testable import BubblePeople
import Foundation
import Testing

@Suite("People: phone numbers, identities, naming")
struct PeopleTests {
    @Test("numbers to E.164: national with and without the trunk prefix, international prefixes, punctuation, tel: URIs")
    func e164() {
        func e(_ text: String, _ region: String?) -> String? { PhoneNumber(text, region: region)?.e164 }
        #expect(e("(555) 010-2000", "US") == "+15550102000")
        #expect(e("1-555-010-2000", "US") == "+15550102000")
        #expect(e("+1 555 010 2000", nil) == "+15550102000")
        #expect(e("011 44 20 7946 0000", "US") == "+442079460000")
        #expect(e("00 44 20 7946 0000", "FR") == "+442079460000")
        #expect(e("00 44 20 7946 0000", nil) == "+442079460000")
        #expect(e("0151 2345 6789", "DE") == "+4915123456789")
        #expect(e("4915123456789", "DE") == "+4915123456789")
        #expect(e("020 7946 0000", "GB") == "+442079460000")
        #expect(e("06 12 34 56 78", "FR") == "+33612345678")
        // Italy keeps its leading 0; Spain has no trunk prefix; Russia's is 8; Hungary's 06.
        #expect(e("06 1234 5678", "IT") == "+390612345678")
        #expect(e("612 345 678", "ES") == "+34612345678")
        #expect(e("8 912 345 67 89", "RU") == "+79123456789")
        #expect(e("06 30 123 4567", "HU") == "+36301234567")
        #expect(e("tel:+1-212-555-0199", nil) == "+12125550199")
        #expect(e("+1 555 010 2000 ext. 12", nil) == "+15550102000")
        #expect(e("５５５０１０２０００", "US") == "+15550102000")  // full-width digits
        // Without a region a national number has no country: its digits match.
        #expect(e("5550102000", nil) == nil)
        #expect(PhoneNumber("5550102000", region: nil)?.digits == "5550102000")
        // A German number without its trunk 0 is not a German number.
        #expect(e("15123456789", "DE") == nil)
        // Not numbers.
        #expect(PhoneNumber("kai@example.org", region: "US") == nil)
        #expect(PhoneNumber("AMAZON", region: "US") == nil)
        #expect(PhoneNumber("12", region: "US") == nil)
        #expect(PhoneNumber("Ann Lee", region: nil) == nil)
    }

    @Test("matching: E.164 equal; else the shorter's digits (at least 7) end the longer's; two countries never match")
    func matching() {
        let us = PhoneNumber("+1 555 010 2000", region: nil)!
        #expect(us.matches(PhoneNumber("5550102000", region: nil)!))
        #expect(us.matches(PhoneNumber("010-2000", region: nil)!) == true)  // 7 trailing digits
        #expect(!us.matches(PhoneNumber("02000", region: nil)!))  // too few
        #expect(!us.matches(PhoneNumber("+44 555 010 2000", region: nil)!))  // both have countries
        // A national number that does not fit the region's plan (a UK mobile read with --region
        // US) keeps its digits and matches by them, its trunk 0 aside, both ways round.
        let uk = PhoneNumber("+44 7700 900123", region: nil)!
        for region in ["US", "CA", nil] as [String?] {
            let national = PhoneNumber("07700 900123", region: region)!
            #expect(national.e164 == nil, "\(region ?? "no region")")
            #expect(national.matches(uk) && uk.matches(national), "\(region ?? "no region")")
        }
        #expect(!PhoneNumber("07700 900124", region: "US")!.matches(uk))  // another number
        #expect(!PhoneNumber("17700 900123", region: nil)!.matches(uk))  // a leftover digit that is no trunk prefix
        #expect(PhoneNumber.region(ofLocale: "en_US.UTF-8") == "US")
        #expect(PhoneNumber.region(ofLocale: "de_DE") == "DE")
        #expect(PhoneNumber.region(ofLocale: "C.UTF-8") == nil)
        #expect(PhoneNumber.region(ofLocale: "POSIX") == nil)
    }

    @Test("identities: emails case-insensitive, WhatsApp jids as numbers, app ids, \"me\" has none")
    func identities() {
        let ids = PersonIdentity.of(participantID: "4915123456789@s.whatsapp.net", name: "4915123456789@s.whatsapp.net", app: "whatsapp-db", region: nil)
        #expect(ids.map(\.key) == ["whatsapp-db:4915123456789@s.whatsapp.net", "+4915123456789"])
        #expect(
            PersonIdentity.of(participantID: "Kai@Example.ORG", name: "Kai@Example.ORG", app: "imessage", region: nil).map(\.key)
                == ["imessage:Kai@Example.ORG", "kai@example.org"])
        #expect(PersonIdentity.of(participantID: "me", name: "Me", app: "sms", region: nil).isEmpty)
        #expect(PersonIdentity(key: "whatsapp:Ann", region: nil) == .app("whatsapp", "Ann"))
        #expect(PersonIdentity(key: "mailto:Ann@Example.org", region: nil) == .email("ann@example.org"))
        #expect(PersonIdentity(key: "Ann Lee", region: nil) == nil)
        // An app's id that is an email stays the app's id (a link made by hand finds it).
        #expect(PersonIdentity(key: "imessage:Kai@Example.ORG", region: nil) == .app("imessage", "Kai@Example.ORG"))
        let linked = PeopleDirectory(persons: [Person(name: "Kai Weber", identities: ["imessage:Kai@Example.ORG"])], region: nil)
        #expect(linked.person(participantID: "Kai@Example.ORG", name: "Kai@Example.ORG", app: "imessage") == 0)
    }

    static let directory = PeopleDirectory(
        persons: [
            Person(name: "Ann Lee", avatar: "/pics/ann.jpg", identities: ["+15550102000", "ann.lee@example.org"]),
            Person(name: "Kai Weber", identities: ["kai@example.org", "+15550103000"]),
            Person(name: "Zoë Martin", identities: ["+15550104000"]),
            Person(name: "Priya Natarajan", identities: ["+12125550199"]),
            Person(name: "Oliver Brooks", identities: ["+442075550199"])
        ], region: "US")

    @Test("a conversation named: numbers in any spelling and emails become names and avatars, (Unknown) never a name, a chat77 group titled by its people")
    func naming() {
        var c = Conversation(
            title: "chat77",
            participants: [
                Participant(id: "me", name: "Me"),
                Participant(id: "(555) 010-2000", name: "(Unknown)"),
                Participant(id: "KAI@example.org", name: "KAI@example.org"),
                Participant(id: "5550104000", name: ""),
                Participant(id: "+1 555 010 9999", name: "(Unknown)")
            ])
        let notes = Self.directory.name(&c, app: "imessage", me: "me")
        #expect(notes.isEmpty)
        #expect(c.participants.map(\.name) == ["Me", "Ann Lee", "Kai Weber", "Zoë Martin", "+1 555 010 9999"])
        #expect(c.participants[1].avatar == "/pics/ann.jpg")
        #expect(c.title == "+1 555 010 9999, Ann Lee, Kai Weber & Zoë Martin")

        var group = Conversation(
            title: nil,
            participants: [
                Participant(id: "me", name: "Me"), Participant(id: "+15550104000", name: "+15550104000"),
                Participant(id: "+15550102000", name: "+15550102000"), Participant(id: "kai@example.org", name: "kai@example.org")
            ])
        Self.directory.name(&group, app: "imessage", me: "me")
        #expect(group.title == "Ann Lee, Kai Weber & Zoë Martin")

        // A one-to-one chat titled with the number: the name.
        var one = Conversation(
            title: "(555) 010-2000", participants: [Participant(id: "me", name: "Me"), Participant(id: "(555) 010-2000", name: "(555) 010-2000")])
        Self.directory.name(&one, app: "sms", me: "me")
        #expect(one.title == "Ann Lee")
        // A group with a name of its own keeps it.
        var named = Conversation(title: "Climbing", participants: [Participant(id: "me", name: "Me"), Participant(id: "+15550102000", name: "+15550102000")])
        Self.directory.name(&named, app: "imessage", me: "me")
        #expect(named.title == "Climbing")
    }

    @Test("a number whose last 7 digits match two persons stays a number, with a note naming both")
    func ambiguous() {
        var c = Conversation(title: "555-0199", participants: [Participant(id: "me", name: "Me"), Participant(id: "555-0199", name: "555-0199")])
        let notes = Self.directory.name(&c, app: "sms", me: "me")
        #expect(c.participants[1].name == "555-0199")
        #expect(c.title == "555-0199")
        #expect(notes == ["555-0199: matches Priya Natarajan and Oliver Brooks by its last 7 digits; kept as a number"])
        // Without a region, the national spelling matches its one person by its digits.
        let noRegion = PeopleDirectory(persons: Self.directory.persons, region: nil)
        #expect(noRegion.person(participantID: "5550102000", name: "5550102000", app: "sms") == 0)
        #expect(noRegion.person(participantID: "555 010 2000", name: "", app: "sms") == 0)
        // An app id linked by hand wins.
        let linked = PeopleDirectory(persons: [Person(name: "Ann Lee", identities: ["whatsapp:Annie 🌻"])], region: nil)
        #expect(linked.person(participantID: "Annie 🌻", name: "Annie 🌻", app: "whatsapp") == 0)
        #expect(linked.person(participantID: "Annie 🌻", name: "Annie 🌻", app: "telegram") == nil)
    }
}

@Suite("Counts in words")
struct PluralTests {
    @Test("one is singular, zero and many plural; -y after a consonant is -ies; an irregular plural as given")
    func counts() {
        #expect(Plural.count(1, "day") == "1 day")
        #expect(Plural.count(0, "day") == "0 days")
        #expect(Plural.count(2, "photo") == "2 photos")
        #expect(Plural.count(3, "reply") == "3 replies")
        #expect(Plural.count(3, "day") == "3 days")  // a vowel before the y
        #expect(Plural.count(1, "person", "people") == "1 person")
        #expect(Plural.count(4, "person", "people") == "4 people")
        #expect(Plural.noun(-1, "message") == "messages")
    }
}
