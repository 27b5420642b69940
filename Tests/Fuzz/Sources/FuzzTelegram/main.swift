// libFuzzer target: the Telegram reader (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .telegram, fileName: "result.json")
}

FuzzReader.drive(format: .telegram, fileName: "result.json")
