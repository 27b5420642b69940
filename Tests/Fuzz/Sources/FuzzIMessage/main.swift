// libFuzzer target: the IMessage reader (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .imessage, fileName: "chat.db")
}

FuzzReader.drive(format: .imessage, fileName: "chat.db")
