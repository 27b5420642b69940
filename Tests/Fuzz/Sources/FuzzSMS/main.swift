// libFuzzer target: the SMS reader (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .smsBackup, fileName: "backup.xml")
}

FuzzReader.drive(format: .smsBackup, fileName: "backup.xml")
