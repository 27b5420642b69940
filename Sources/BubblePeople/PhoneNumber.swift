import BubbleCore
import Foundation

/// A phone number as the phones compare them: in E.164 (`+` country code, national number)
/// when the number says its country or a region is known, else its digits, matched by their
/// trailing digits (at least 7, as Android's `PhoneNumberUtils.compare` does).
///
///     PhoneNumber("(555) 010-2000", region: "US")      // +15550102000
///     PhoneNumber("0151 2345 6789", region: "DE")      // +4915123456789
///     PhoneNumber("00 44 20 7946 0000", region: "FR")  // +442079460000
///     PhoneNumber("5550102000", region: nil)           // digits 5550102000, no E.164
///     PhoneNumber("kai@example.org", region: "US")     // nil: not a number
///
/// No lookups: the numbering-plan facts needed (country calling codes, trunk prefixes, the
/// international call prefix) are in `NumberingPlan`.
public struct PhoneNumber: Hashable, Sendable, CustomStringConvertible {
    /// "+15550102000" when the country is known.
    public let e164: String?
    /// Every digit as written (international prefix and trunk prefix dropped when `e164` is set,
    /// then the country code included): what trailing-digit matching compares.
    public let digits: String

    /// The fewest trailing digits two numbers must share to be taken as one when either has no
    /// country (Android's `MIN_MATCH`).
    public static let minimumMatch = 7

    /// A number from `text` as people write it ("+1 555-010-2000", "0151 2345678",
    /// "tel:+49…"); `region` gives the country of a number written without one. Nil when the text
    /// is not a phone number.
    public init?(_ text: String, region: String?) {
        var s = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        if s.lowercased().hasPrefix("tel:") { s = s.dropFirst(4) }
        // An extension or a pause ends the number: "…-2000 ext. 12", "…2000;ext=12", "…2000,,12".
        if let cut = s.firstIndex(where: { $0 == ";" || $0 == "," || $0 == "#" || $0 == "*" }) { s = s[..<cut] }
        if s.contains(where: { $0 == "x" || $0 == "X" }),
            let r = s.range(of: #"(?i)\s*(ext\.?|x)\s*\d+$"#, options: .regularExpression)
        {
            s = s[..<r.lowerBound]
        }
        var plus = false
        var digits = ""
        for ch in s {
            if let v = ch.wholeNumberValue, ch.isNumber, v < 10 {
                digits.append(Character(String(v)))
            } else if ch == "+" || ch == "＋" {
                // Only before the first digit.
                guard digits.isEmpty, !plus else { return nil }
                plus = true
            } else if ch == " " || ch == "-" || ch == "." || ch == "(" || ch == ")" || ch == "/" || ch == "\u{00A0}"
                || ch == "\u{2010}" || ch == "\u{2011}" || ch == "\u{2012}" || ch == "\u{2013}" || ch == "\u{202F}" || ch == "\u{2009}"
            {
                continue
            } else {
                // Letters ("AMAZON", an email, a name): not a number.
                return nil
            }
        }
        guard digits.count >= 3, digits.count <= 17 else { return nil }
        let plan = region.flatMap { NumberingPlan.region($0) }
        var international: String?
        if plus {
            international = digits
        } else if let plan, digits.hasPrefix(plan.internationalPrefix) {
            international = String(digits.dropFirst(plan.internationalPrefix.count))
        } else if plan == nil, digits.hasPrefix("00") {
            // No region: "00" is the international prefix nearly everywhere outside North America.
            international = String(digits.dropFirst(2))
        } else if let plan {
            international = plan.international(national: digits)
        }
        if let international, (7...15).contains(international.count), international.first != "0" {
            e164 = "+" + international
            self.digits = international
        } else {
            e164 = nil
            self.digits = digits
        }
    }

    /// The E.164 form, else the digits.
    public var description: String { e164 ?? digits }

    /// Whether the phones would take `self` and `other` for one number: equal E.164 forms; or, when
    /// either lacks its country (none given, or the number does not fit the region's plan), the
    /// shorter one's digits (at least `minimumMatch`) ending the longer one's, the shorter one's
    /// trunk prefix `0` aside when the longer has its country ("07700 900123" read with
    /// `--region US` is the contact's "+44 7700 900123"), as Android's `PhoneNumberUtils.compare`.
    public func matches(_ other: PhoneNumber) -> Bool {
        if let a = e164, let b = other.e164 { return a == b }
        let (short, long) = digits.count <= other.digits.count ? (self, other) : (other, self)
        guard short.digits.count >= Self.minimumMatch else { return short.digits == long.digits }
        if long.digits.hasSuffix(short.digits) { return true }
        // What is left of the number without a country once the shared trailing digits are
        // taken: only its trunk prefix, while the other says its country.
        let shared = zip(short.digits.reversed(), long.digits.reversed()).prefix { $0 == $1 }.count
        guard shared >= Self.minimumMatch else { return false }
        let rest = short.digits.dropLast(shared)
        let (national, international) = short.e164 == nil ? (rest, long) : (long.digits.dropLast(shared), short)
        return international.e164 != nil && !national.isEmpty && national.allSatisfy { $0 == "0" } && national.count <= 2
    }

    /// The last `minimumMatch` digits (the whole number when shorter): the key numbers that may
    /// match share.
    public var matchKey: String { String(digits.suffix(Self.minimumMatch)) }

    /// The region of this process's locale ("US" for en_US), when it has one.
    public static var localeRegion: String? {
        for name in ["LC_ALL", "LC_TELEPHONE", "LANG"] {
            if let value = ProcessInfo.processInfo.environment[name], let region = region(ofLocale: value) { return region }
        }
        return Locale.current.region.map(\.identifier).flatMap { NumberingPlan.region($0) != nil ? $0 : nil }
    }

    /// "en_US.UTF-8" → "US"; nil for "C", "POSIX" or a region the numbering plan does not know.
    static func region(ofLocale value: String) -> String? {
        let name = value.split(separator: ".").first.map(String.init) ?? value
        let parts = name.split(whereSeparator: { $0 == "_" || $0 == "-" })
        guard parts.count >= 2 else { return nil }
        let region = String(parts[1]).uppercased()
        return NumberingPlan.region(region) != nil ? region : nil
    }
}

/// What the normaliser knows of a country's numbering plan.
public struct NumberingPlan: Hashable, Sendable {
    /// ISO 3166 code ("DE").
    public let region: String
    /// Country calling code ("49").
    public let countryCode: String
    /// Dropped from a national number when the country code is added ("0"; "1" in North
    /// America; "8" in Russia; "" where there is none and the number is kept whole, as Italy's
    /// leading 0).
    public let trunkPrefix: String
    /// Dialled before a country code from this country ("00"; "011" in North America).
    public let internationalPrefix: String
    /// Digits of a national number without the trunk prefix (the usual lengths), for telling a
    /// national number from one already written with its country code.
    public let nationalLengths: ClosedRange<Int>

    /// The international form (country code + national number) of a number written as dialled
    /// inside the country, or nil when it does not fit the plan.
    func international(national n: String) -> String? {
        if !trunkPrefix.isEmpty, n.hasPrefix(trunkPrefix), nationalLengths.contains(n.count - trunkPrefix.count) {
            return countryCode + n.dropFirst(trunkPrefix.count)
        }
        // Written with the country code but no "+" ("4915123456789", as WhatsApp names numbers).
        if n.hasPrefix(countryCode), nationalLengths.contains(n.count - countryCode.count),
            !trunkPrefix.isEmpty || !nationalLengths.contains(n.count)
        {
            return n
        }
        // Where there is no trunk prefix the national number is dialled whole (Italy keeps its
        // 0); North America's ten digits go without their 1. A number that should start with the
        // trunk prefix but does not is a short code or foreign: no country for it.
        if trunkPrefix.isEmpty || countryCode == "1", nationalLengths.contains(n.count) { return countryCode + n }
        return nil
    }

    /// The plan of `code` (ISO 3166 region, any case); nil for a region not in the table.
    public static func region(_ code: String) -> NumberingPlan? { byRegion[code.uppercased()] }

    /// The region of a number written with its country code ("+44 7700 900123" → "GB"): the
    /// longest country code it starts with (of regions sharing one, the first by name); nil
    /// without a "+" or for a code the table does not know.
    package static func region(ofInternational number: String) -> String? {
        let trimmed = number.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("+") || trimmed.hasPrefix("00") else { return nil }
        let digits = String(trimmed.filter(\.isNumber).dropFirst(trimmed.hasPrefix("00") ? 2 : 0))
        return byRegion.values.filter { digits.hasPrefix($0.countryCode) && digits.count > $0.countryCode.count }
            .sorted { ($0.countryCode.count, $1.region) > ($1.countryCode.count, $0.region) }.first?.region
    }

    private static let byRegion: [String: NumberingPlan] = {
        var map: [String: NumberingPlan] = [:]
        func add(_ regions: String, _ cc: String, _ trunk: String, _ intl: String, _ lengths: ClosedRange<Int>) {
            for r in regions.split(separator: " ") {
                map[String(r)] = NumberingPlan(region: String(r), countryCode: cc, trunkPrefix: trunk, internationalPrefix: intl, nationalLengths: lengths)
            }
        }
        // North American Numbering Plan.
        add("US CA PR GU VI AS MP BS BB AG AI VG KY BM DM DO GD JM MS KN LC VC TT TC SX", "1", "1", "011", 10...10)
        // Europe.
        add("GB GG JE IM", "44", "0", "00", 9...10)
        add("DE", "49", "0", "00", 6...13)
        add("AT", "43", "0", "00", 4...13)
        add("CH LI", "41", "0", "00", 9...9)
        add("FR", "33", "0", "00", 9...9)
        add("BE", "32", "0", "00", 8...9)
        add("NL", "31", "0", "00", 9...9)
        add("LU", "352", "", "00", 4...11)
        add("IE", "353", "0", "00", 7...9)
        add("IT SM VA", "39", "", "00", 6...11)
        add("ES", "34", "", "00", 9...9)
        add("PT", "351", "", "00", 9...9)
        add("DK", "45", "", "00", 8...8)
        add("NO", "47", "", "00", 8...8)
        add("SE", "46", "0", "00", 7...9)
        add("FI", "358", "0", "00", 5...10)
        add("IS", "354", "", "00", 7...9)
        add("PL", "48", "", "00", 9...9)
        add("CZ", "420", "", "00", 9...9)
        add("SK", "421", "0", "00", 9...9)
        add("HU", "36", "06", "00", 8...9)
        add("RO", "40", "0", "00", 9...9)
        add("BG", "359", "0", "00", 8...9)
        add("GR", "30", "", "00", 10...10)
        add("HR", "385", "0", "00", 8...9)
        add("SI", "386", "0", "00", 8...8)
        add("RS", "381", "0", "00", 8...9)
        add("UA", "380", "0", "00", 9...9)
        add("RU KZ", "7", "8", "810", 10...10)
        add("TR", "90", "0", "00", 10...10)
        add("EE", "372", "", "00", 7...8)
        add("LV", "371", "", "00", 8...8)
        add("LT", "370", "8", "00", 8...8)
        // Elsewhere.
        add("AU", "61", "0", "0011", 9...9)
        add("NZ", "64", "0", "00", 8...10)
        add("JP", "81", "0", "010", 9...10)
        add("KR", "82", "0", "001", 8...10)
        add("CN", "86", "0", "00", 10...11)
        add("HK", "852", "", "001", 8...8)
        add("TW", "886", "0", "002", 8...9)
        add("SG", "65", "", "000", 8...8)
        add("IN", "91", "0", "00", 10...10)
        add("IL", "972", "0", "00", 8...9)
        add("AE", "971", "0", "00", 8...9)
        add("ZA", "27", "0", "00", 9...9)
        add("NG", "234", "0", "009", 8...10)
        add("EG", "20", "0", "00", 9...10)
        add("BR", "55", "0", "00", 10...11)
        add("AR", "54", "0", "00", 10...11)
        add("MX", "52", "", "00", 10...10)
        add("CL", "56", "", "00", 9...9)
        add("CO", "57", "", "00", 10...10)
        add("PH", "63", "0", "00", 9...10)
        add("ID", "62", "0", "001", 8...12)
        add("TH", "66", "0", "001", 8...9)
        add("VN", "84", "0", "00", 9...10)
        add("MY", "60", "0", "00", 8...10)
        add("PK", "92", "0", "00", 9...10)
        return map
    }()
}
