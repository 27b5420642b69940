// libFuzzer target: the WhatsApp crypt14/crypt15 reader (header, decryption, inflate) with the fixtures' key (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(
        data, count, format: .whatsappDatabase, fileName: "msgstore.db.crypt15", key: .text("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"))
}

FuzzReader.drive(format: .whatsappDatabase, fileName: "msgstore.db.crypt15", key: .text("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"))
