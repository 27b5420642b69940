// libFuzzer target: the WhatsAppZip reader (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .whatsapp, fileName: "chat.zip")
}

FuzzReader.drive(format: .whatsapp, fileName: "chat.zip")
