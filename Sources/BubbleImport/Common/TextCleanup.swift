import BubbleCore
import BubbleMedia
import Foundation

/// Text helpers shared by the importers.
enum TextCleanup {
    /// "1 message", "2 messages": `n` and the noun in the number it takes.
    static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? singular : plural ?? singular + "s")
    }

    /// Bidirectional marks WhatsApp and Telegram wrap names and phone numbers in.
    static func isBidiControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }

    static func stripBidi(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isBidiControl) else { return s }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: s.unicodeScalars.filter { !isBidiControl($0) })
        return String(out)
    }

    /// Strips bidi marks, then spaces (without Foundation: this runs once per message).
    static func cleanName(_ s: String) -> String {
        // Fast path: plain ASCII without spaces at either end is already clean.
        let u = s.utf8
        if let f = u.first, let l = u.last, f > 0x20, l > 0x20, !u.contains(where: { $0 >= 0x80 }) { return s }
        let scalars = stripBidi(s).unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\u{00A0}" || $0 == "\u{202F}" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[first...last])
    }

    /// Digits of a phone number ("+1 (555) 010-2000" → "15550102000"); nil when it has letters or
    /// fewer than 5 digits (then it is a name or a short code, compared as text).
    static func phoneDigits(_ s: String) -> String? {
        var digits = ""
        for c in s.unicodeScalars {
            switch c {
            case "0"..."9": digits.unicodeScalars.append(c)
            case "+", " ", "-", "(", ")", ".", "\u{00A0}", "\u{2011}", "\u{202A}", "\u{202C}", "\u{200E}": continue
            default: return nil
            }
        }
        return digits.count >= 5 ? digits : nil
    }

    /// Same person? Names compare case-insensitively; phone numbers by digits, allowing one to
    /// lack the country code ("+1 555 010 2000" and "5550102000").
    static func sameContact(_ a: String, _ b: String) -> Bool {
        if a.caseInsensitiveCompare(b) == .orderedSame { return true }
        if cleanName(a).caseInsensitiveCompare(cleanName(b)) == .orderedSame { return true }
        guard let da = phoneDigits(a), let db = phoneDigits(b) else { return false }
        if da == db { return true }
        let (short, long) = da.count < db.count ? (da, db) : (db, da)
        return short.count >= 7 && long.hasSuffix(short)
    }

    /// "Call · 2:05", "Call · 1:02:03": a call's system line.
    static func callLine(seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        let clock = h > 0 ? "\(h):" + String(format: "%02d:%02d", m, s) : "\(m):" + String(format: "%02d", s)
        return "Call · " + clock
    }

    /// "Ann, Ben, Cy and 4 more" for error messages.
    static func list(_ names: [String], limit: Int = 30) -> String {
        let shown = names.prefix(limit).joined(separator: "; ")
        return names.count > limit ? shown + "; and \(names.count - limit) more" : shown
    }

    /// Lowercased file extension when it is a photo format the renderer (gdk-pixbuf) reads.
    static func photoExtension(ofFileName name: String) -> String? {
        let ext = PathText.fileExtension(name).lowercased()
        return photoExtensions.contains(ext) ? ext : nil
    }

    static let photoExtensions: Set<String> = ["jpg", "jpeg", "png", "gif", "webp", "bmp", "heic", "heif", "tif", "tiff"]

    /// File extension for an image MIME type the renderer reads; nil for others (HEIC, TIFF…).
    static func photoExtension(ofMIMEType mime: String) -> String? {
        switch mime.lowercased() {
        case "image/jpeg", "image/jpg", "image/pjpeg": "jpg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/bmp", "image/x-ms-bmp": "bmp"
        case "image/heic", "image/heif": "heic"
        case "image/tiff": "tiff"
        default: nil
        }
    }
}

extension MediaAttachment {
    /// An attachment of `kind` named `fileName`, at `path` when the export holds it, with what
    /// the file's own headers say (size, duration, pages, a video's size, a contact's name).
    static func described(kind: Kind, fileName: String?, path: String?, mimeType: String? = nil) -> MediaAttachment {
        var a = MediaAttachment(kind: kind, fileName: fileName, path: path, mimeType: mimeType)
        if let path { a.fill(from: MediaProbe.probe(path: path)) }
        return a
    }
}

extension [Reaction] {
    /// Adds `sender`'s `emoji` (once per sender), or with `remove` takes it back.
    mutating func apply(emoji: String, sender: String, remove: Bool) {
        if let k = firstIndex(where: { $0.emoji == emoji }) {
            if remove {
                self[k].count -= 1
                self[k].senders.removeAll { $0 == sender }
                if self[k].count < 1 { self.remove(at: k) }
            } else if !self[k].senders.contains(sender) {
                self[k].count += 1
                self[k].senders.append(sender)
            }
        } else if !remove {
            append(Reaction(emoji: emoji, count: 1, senders: [sender]))
        }
    }
}
