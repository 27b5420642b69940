// libFuzzer target: the Native reader (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .native, fileName: "chat.json")
}

FuzzReader.drive(format: .native, fileName: "chat.json")
