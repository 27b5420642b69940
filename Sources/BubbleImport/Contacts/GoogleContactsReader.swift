import BubbleCore
import BubblePeople
import Foundation

/// Reads a Google Contacts export (CSV, "Google CSV"): the older columns (`Name`, `Given Name`,
/// `Family Name`, `E-mail 1 - Value`, `Phone 1 - Value`…) and the newer ones (`First Name`,
/// `Last Name`, `File As`, `Phone 1 - Label`…). A cell may hold several values separated by
/// " ::: ". Photos are links there (nothing is fetched).
struct GoogleContactsReader {
    let path: String
    private(set) var contacts: [Contact] = []
    private(set) var warnings: [ImportWarning] = []

    init(path: String) { self.path = path }

    /// Whether `header` (the first row) is a Google Contacts header.
    static func looksLikeHeader(_ header: [String]) -> Bool {
        let names = Set(header.map { $0.trimmingCharacters(in: .whitespaces) })
        let hasName = names.contains("Given Name") || names.contains("First Name") || names.contains("Name")
        let hasValue = header.contains { $0.hasPrefix("Phone 1 - Value") || $0.hasPrefix("E-mail 1 - Value") }
        return hasName && hasValue
    }

    mutating func read(_ text: String) throws(ImportError) {
        let rows = CSVRows.parse(text)
        guard let header = rows.first?.fields, Self.looksLikeHeader(header) else {
            throw ImportError(
                path: path, location: "line 1", reason: "is not a Google Contacts CSV header (expected columns such as \"First Name\" and \"Phone 1 - Value\")")
        }
        let column = Dictionary(header.enumerated().map { ($1.trimmingCharacters(in: .whitespaces), $0) }, uniquingKeysWith: { a, _ in a })
        let phoneColumns = header.indices.filter { header[$0].hasPrefix("Phone ") && header[$0].hasSuffix(" - Value") }
        let emailColumns = header.indices.filter { header[$0].hasPrefix("E-mail ") && header[$0].hasSuffix(" - Value") }
        for (n, row) in rows.enumerated().dropFirst() {
            func field(_ name: String) -> String {
                guard let i = column[name], i < row.fields.count else { return "" }
                return row.fields[i].trimmingCharacters(in: .whitespacesAndNewlines)
            }
            func values(_ columns: [Int]) -> [String] {
                columns.flatMap { i -> [String] in
                    guard i < row.fields.count else { return [] }
                    return row.fields[i].components(separatedBy: ":::").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                }
            }
            let composed = [
                field("Name Prefix"), field("Given Name"), field("First Name"), field("Additional Name"), field("Middle Name"),
                field("Family Name"), field("Last Name"), field("Name Suffix")
            ].filter { !$0.isEmpty }.joined(separator: " ")
            let candidates = [field("Name"), composed, field("File As"), field("Nickname"), field("Organization 1 - Name"), field("Organization Name")]
            let phones = values(phoneColumns), emails = values(emailColumns)
            guard let name = candidates.first(where: { !PeopleDirectory.isPlaceholder($0) }) else {
                if !phones.isEmpty || !emails.isEmpty {
                    warnings.append(ImportWarning(path: path, location: "line \(row.line)", what: "row \(n)", why: "has no name; skipped"))
                }
                continue
            }
            contacts.append(Contact(name: name, phones: phones, emails: emails, origin: "\(path): line \(row.line)"))
        }
    }
}

/// RFC 4180 rows: quoted fields may hold commas, quotes ("") and line breaks.
enum CSVRows {
    struct Row { var fields: [String]; var line: Int }

    static func parse(_ text: String) -> [Row] {
        var rows: [Row] = []
        var fields: [String] = [], field = "", quoted = false, line = 1, rowLine = 1, afterQuote = false
        var chars = text.makeIterator()
        var pending: Character? = nil
        if text.first == "\u{FEFF}" { _ = chars.next() }
        func endRow() {
            fields.append(field); field = ""
            if !(fields.count == 1 && fields[0].isEmpty) { rows.append(Row(fields: fields, line: rowLine)) }
            fields = []
        }
        while let ch = pending ?? chars.next() {
            pending = nil
            if quoted {
                if ch == "\"" {
                    if let next = chars.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; afterQuote = true; pending = next }
                    } else {
                        quoted = false
                    }
                } else {
                    if ch == "\n" || ch == "\r\n" { line += 1 }
                    field.append(ch)
                }
                continue
            }
            switch ch {
            case "\"" where field.isEmpty && !afterQuote: quoted = true
            case ",": fields.append(field); field = ""; afterQuote = false
            case "\n", "\r\n", "\r":
                endRow(); afterQuote = false
                line += 1; rowLine = line
            default: field.append(ch)
            }
        }
        if !field.isEmpty || !fields.isEmpty { endRow() }
        return rows
    }
}
