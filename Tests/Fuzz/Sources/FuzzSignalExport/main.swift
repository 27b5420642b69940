// libFuzzer target: signal-export's chat.md reader (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .signalExport, fileName: "chat.md")
}

FuzzReader.drive(format: .signalExport, fileName: "chat.md")
