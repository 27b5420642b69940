import BubbleCore

/// The words WhatsApp writes in place of media left out of an export, and of deleted messages,
/// in the languages docs/IMPORT.md lists: each becomes a typed `MediaAttachment`.
///
///     <Media omitted>            Android, en      → .media
///     <Medien ausgeschlossen>    Android, de      → .media
///     image omitted              iOS, en          → .photo
///     Sticker weggelassen        iOS, de          → .sticker
///     This message was deleted   both             → .deleted
///
/// A message is a marker only when its whole text is one (bidi marks, spaces and a final full
/// stop aside; ASCII letters compared without case), so "my image omitted from the album" stays
/// text. The look-up runs for every message: a length check first, then one dictionary probe.
enum WhatsAppMarkers {
    static func placeholder(for body: String) -> MediaAttachment? {
        let utf8 = body.utf8
        guard utf8.count <= maxLength, utf8.count >= minLength else { return nil }
        let kind: MediaAttachment.Kind? = withBytes(body) { b in
            guard passesGate(b), hashes.contains(hash(b)) else { return nil }
            return table[key(b)]
        }
        guard let kind else { return nil }
        return MediaAttachment(kind: kind, label: TextCleanup.stripBidi(body).trimmingCharacters(in: .whitespaces))
    }

    /// Whether `label` is "You deleted this message" in one of the languages above: its author
    /// is the phone's owner.
    static func isDeletedByOwner(_ label: String) -> Bool {
        withBytes(label) { ownerDeletions.contains(key($0)) }
    }

    private static let ownerDeletions: Set<[UInt8]> = Set(
        [
            "You deleted this message", "Du hast diese Nachricht gelöscht", "Eliminaste este mensaje", "Vous avez supprimé ce message",
            "Você apagou esta mensagem", "Hai eliminato questo messaggio", "Je hebt dit bericht verwijderd", "Вы удалили данное сообщение",
            "Bu mesajı sildiniz", "Usunięto tę wiadomość", "Anda menghapus pesan ini", "你删除了此消息", "你已刪除此訊息", "لقد حذفت هذه الرسالة"
        ].map { withBytes($0, key) })

    /// The kind a WhatsApp attachment file name says (`IMG-`, `VID-`, `PTT-`, `AUD-`, `STK-`,
    /// `DOC-`, iOS `-PHOTO-`, `-VIDEO-`, `-AUDIO-`, `-STICKER-`, `-GIF-`, `-CONTACT-`), else by
    /// its extension.
    static func kind(ofFileName name: String) -> MediaAttachment.Kind {
        let upper = name.uppercased()
        let prefixes: [(String, MediaAttachment.Kind)] = [
            ("IMG-", .photo), ("VID-", .video), ("PTT-", .voice), ("AUD-", .audio),
            ("STK-", .sticker), ("DOC-", .document)
        ]
        for (prefix, kind) in prefixes where upper.hasPrefix(prefix) { return kind }
        let parts: [(String, MediaAttachment.Kind)] = [
            ("-PHOTO-", .photo), ("-VIDEO-", .video), ("-AUDIO-", .voice),
            ("-STICKER-", .sticker), ("-GIF-", .gif), ("-CONTACT-", .contact)
        ]
        for (part, kind) in parts where upper.contains(part) { return kind }
        let ext = (name.split(separator: ".").last.map(String.init) ?? "").lowercased()
        switch ext {
        case "webp": return .sticker  // WhatsApp sends photos as JPEG; a WebP is a sticker
        case _ where TextCleanup.photoExtensions.contains(ext): return .photo
        case "mp4", "3gp", "mov", "mkv", "webm", "avi", "m4v": return .video
        case "opus", "ogg", "amr", "m4a", "mp3", "aac", "wav", "oga": return .audio
        case "vcf": return .contact
        default: return .document
        }
    }

    // MARK: Table

    /// Hands the key bytes of `b` to `emit` one at a time, allocating nothing: direction marks
    /// (U+200E, U+200F, U+061C) out, runs of spaces as one, no space at either end, no final full
    /// stop, ASCII letters in lower case.
    @inline(__always)
    private static func fold(_ b: UnsafeBufferPointer<UInt8>, _ emit: (UInt8) -> Void) {
        var spaces = false, dot = false, started = false
        var i = 0
        while i < b.count {
            let c = b[i]
            if c == 0xE2, i + 2 < b.count, b[i + 1] == 0x80, b[i + 2] == 0x8E || b[i + 2] == 0x8F { i += 3; continue }
            if c == 0xD8, i + 1 < b.count, b[i + 1] == 0x9C { i += 2; continue }
            i += 1
            if c == 0x20 || c == 0x09 { if started { spaces = true }; continue }
            if dot { emit(UInt8(ascii: ".")); dot = false }
            if spaces { emit(0x20); spaces = false }
            started = true
            if c == UInt8(ascii: ".") { dot = true; continue }
            emit(c >= 0x41 && c <= 0x5A ? c | 0x20 : c)
        }
    }

    /// The first check, in constant time: is there a marker that starts with `b`'s first byte
    /// and ends with its last (after marks, spaces and a final full stop; ASCII letters folded),
    /// and is as long, or up to 3 bytes shorter (marks, spaces)? Almost every message is refused
    /// here, before a byte of it is hashed.
    @inline(__always)
    private static func passesGate(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0, n = b.count
        while i < n {
            let c = b[i]
            if c == 0x20 { i += 1; continue }
            if c == 0xE2, i + 2 < n, b[i + 1] == 0x80, b[i + 2] == 0x8E || b[i + 2] == 0x8F { i += 3; continue }
            if c == 0xD8, i + 1 < n, b[i + 1] == 0x9C { i += 2; continue }
            break
        }
        while n > i, b[n - 1] == 0x20 { n -= 1 }
        if n > i, b[n - 1] == UInt8(ascii: ".") { n -= 1 }
        guard n > i, n - i < 128 else { return false }
        let first = Int(fold(b[i])), last = Int(fold(b[n - 1])), length = n - i
        return pairs[first << 2 | last >> 6] & (1 << UInt64(last & 63)) != 0
            && lengths[first << 1 | length >> 6] & (1 << UInt64(length & 63)) != 0
    }

    @inline(__always)
    private static func fold(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c | 0x20 : c }

    /// Bit sets, read without hashing: which (first, last) byte pairs start and end a marker, and
    /// which lengths (the key's, up to 3 bytes more) a marker starting with a byte has.
    private static let (pairs, lengths): ([UInt64], [UInt64]) = {
        var pairs = [UInt64](repeating: 0, count: 256 * 4), lengths = [UInt64](repeating: 0, count: 256 * 2)
        for (text, _) in entries {
            let k = withBytes(text, key)
            let first = Int(k[0]), last = Int(k[k.count - 1])
            pairs[first << 2 | last >> 6] |= 1 << UInt64(last & 63)
            for n in k.count...(k.count + 3) where n < 128 { lengths[first << 1 | n >> 6] |= 1 << UInt64(n & 63) }
        }
        return (pairs, lengths)
    }()

    /// FNV-1a of the folded bytes: probed first, so most messages are refused without a copy.
    private static func hash(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf29ce484222325
        fold(b) { h = (h ^ UInt64($0)) &* 0x100000001b3 }
        return h
    }

    private static func key(_ b: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        fold(b) { out.append($0) }
        return out
    }

    private static func withBytes<R>(_ s: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var s = s
        return s.withUTF8(body)
    }

    private static let entries: [(String, MediaAttachment.Kind)] = [
        // Android: the one marker for all media, per language.
        ("<Media omitted>", .media), ("<Medien ausgeschlossen>", .media), ("<Multimedia omitido>", .media),
        ("<Multimedia omitidos>", .media), ("<Médias omis>", .media), ("<Fichier omis>", .media),
        ("<Mídia oculta>", .media), ("<Arquivo de mídia oculto>", .media), ("<Multimédia omitido>", .media),
        ("<Media omessi>", .media), ("<Media weggelaten>", .media), ("<Без медиафайлов>", .media),
        ("<Medya dahil edilmedi>", .media), ("<Medya atlandı>", .media), ("<Pominięto multimedia>", .media),
        ("<Media tidak disertakan>", .media), ("<미디어 파일 제외됨>", .media), ("<미디어 생략>", .media),
        ("<メディアなし>", .media), ("<メディアは含まれていません>", .media), ("<省略影音内容>", .media),
        ("<媒体文件已省略>", .media), ("<已忽略媒體檔案>", .media), ("<省略多媒體>", .media),
        ("<الوسائط غير مضمنة>", .media), ("<تم استبعاد الوسائط>", .media), ("<رسانه حذف شد>", .media),
        ("<رسانه گنجانده نشده است>", .media), ("<המדיה לא נכללה>", .media), ("<מדיה הושמטה>", .media),
        ("<मीडिया छोड़ दिया गया>", .media), ("<मीडिया हटा दिया गया>", .media), ("<ไม่รวมสื่อ>", .media),
        ("<สื่อถูกข้าม>", .media),
        ("<View once voice message omitted>", .viewOnce), ("<View once media omitted>", .viewOnce),
        ("null", .viewOnce),
        // iOS: one marker per kind.
        ("image omitted", .photo), ("video omitted", .video), ("audio omitted", .voice), ("sticker omitted", .sticker),
        ("GIF omitted", .gif), ("document omitted", .document), ("Contact card omitted", .contact),
        ("Bild weggelassen", .photo), ("Video weggelassen", .video), ("Audio weggelassen", .voice),
        ("Sticker weggelassen", .sticker), ("GIF weggelassen", .gif), ("Dokument weggelassen", .document),
        ("Kontaktkarte weggelassen", .contact),
        ("imagen omitida", .photo), ("video omitido", .video), ("audio omitido", .voice), ("sticker omitido", .sticker),
        ("GIF omitido", .gif), ("documento omitido", .document), ("tarjeta de contacto omitida", .contact),
        ("image absente", .photo), ("vidéo absente", .video), ("audio omis", .voice), ("autocollant omis", .sticker),
        ("GIF retiré", .gif), ("document omis", .document), ("fiche contact omise", .contact),
        ("imagem ocultada", .photo), ("vídeo omitido", .video), ("áudio ocultado", .voice), ("figurinha omitida", .sticker),
        ("GIF omitido", .gif), ("documento omitido", .document), ("cartão de contato omitido", .contact),
        ("immagine omessa", .photo), ("video omesso", .video), ("audio omesso", .voice), ("sticker omesso", .sticker),
        ("GIF omessa", .gif), ("documento omesso", .document), ("scheda contatto omessa", .contact),
        ("afbeelding weggelaten", .photo), ("video weggelaten", .video), ("audio weggelaten", .voice),
        ("sticker weggelaten", .sticker), ("GIF weggelaten", .gif), ("document weggelaten", .document),
        ("изображение отсутствует", .photo), ("видео отсутствует", .video), ("аудиофайл отсутствует", .voice),
        ("стикер отсутствует", .sticker), ("GIF отсутствует", .gif), ("документ отсутствует", .document),
        ("görüntü dahil edilmedi", .photo), ("video dahil edilmedi", .video), ("ses dahil edilmedi", .voice),
        ("çıkartma dahil edilmedi", .sticker),
        ("pominięto obraz", .photo), ("pominięto wideo", .video), ("pominięto audio", .voice),
        ("pominięto naklejkę", .sticker),
        ("gambar tidak disertakan", .photo), ("video tidak disertakan", .video), ("audio tidak disertakan", .voice),
        ("stiker tidak disertakan", .sticker),
        ("사진 생략됨", .photo), ("동영상 생략됨", .video), ("오디오 생략됨", .voice), ("스티커 생략됨", .sticker),
        ("画像は含まれていません", .photo), ("ビデオは含まれていません", .video), ("音声は含まれていません", .voice),
        ("スタンプは含まれていません", .sticker), ("画像なし", .photo), ("動画なし", .video),
        ("图片已忽略", .photo), ("视频已忽略", .video), ("音频已忽略", .voice), ("贴图已忽略", .sticker),
        ("圖片已略去", .photo), ("影片已略去", .video), ("音訊已略去", .voice), ("貼圖已略去", .sticker),
        ("تم استبعاد الصورة", .photo), ("تم استبعاد الفيديو", .video), ("تم استبعاد الصوت", .voice),
        ("הושמטה תמונה", .photo), ("הושמט סרטון", .video),
        // Deleted messages.
        ("This message was deleted", .deleted), ("You deleted this message", .deleted),
        ("Diese Nachricht wurde gelöscht", .deleted), ("Du hast diese Nachricht gelöscht", .deleted),
        ("Se eliminó este mensaje", .deleted), ("Eliminaste este mensaje", .deleted), ("Este mensaje fue eliminado", .deleted),
        ("Ce message a été supprimé", .deleted), ("Vous avez supprimé ce message", .deleted),
        ("Mensagem apagada", .deleted), ("Você apagou esta mensagem", .deleted), ("Esta mensagem foi apagada", .deleted),
        ("Questo messaggio è stato eliminato", .deleted), ("Hai eliminato questo messaggio", .deleted),
        ("Dit bericht is verwijderd", .deleted), ("Je hebt dit bericht verwijderd", .deleted),
        ("Данное сообщение удалено", .deleted), ("Вы удалили данное сообщение", .deleted), ("Это сообщение удалено", .deleted),
        ("Bu mesaj silindi", .deleted), ("Bu mesajı sildiniz", .deleted),
        ("Ta wiadomość została usunięta", .deleted), ("Usunięto tę wiadomość", .deleted),
        ("Pesan ini telah dihapus", .deleted), ("Anda menghapus pesan ini", .deleted),
        ("삭제된 메시지입니다", .deleted), ("このメッセージは削除されました", .deleted),
        ("此消息已删除", .deleted), ("你删除了此消息", .deleted), ("此訊息已刪除", .deleted), ("你已刪除此訊息", .deleted),
        ("تم حذف هذه الرسالة", .deleted), ("لقد حذفت هذه الرسالة", .deleted), ("این پیام حذف شد", .deleted),
        ("הודעה זו נמחקה", .deleted), ("यह मैसेज हटा दिया गया था", .deleted), ("ข้อความนี้ถูกลบแล้ว", .deleted)
    ]

    private static let table: [[UInt8]: MediaAttachment.Kind] = {
        var t: [[UInt8]: MediaAttachment.Kind] = [:]
        for (text, kind) in entries { t[withBytes(text, key)] = kind }
        return t
    }()
    private static let hashes = Set(entries.map { withBytes($0.0, hash) })
    private static let maxLength = entries.map { $0.0.utf8.count }.max()! + 12
    private static let minLength = entries.map { $0.0.utf8.count }.min()!
}
