// libFuzzer target: the Messenger and Instagram reader (one thread file) (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .messenger, fileName: "message_1.json")
}

FuzzReader.drive(format: .messenger, fileName: "message_1.json")
