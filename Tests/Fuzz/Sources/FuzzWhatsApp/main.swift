// libFuzzer target: the WhatsApp reader (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .whatsapp, fileName: "chat.txt")
}

FuzzReader.drive(format: .whatsapp, fileName: "chat.txt")
