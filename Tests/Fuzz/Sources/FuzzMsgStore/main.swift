// libFuzzer target: WhatsApp's msgstore.db reader (both schemas) (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .whatsappDatabase, fileName: "msgstore.db")
}

FuzzReader.drive(format: .whatsappDatabase, fileName: "msgstore.db")
