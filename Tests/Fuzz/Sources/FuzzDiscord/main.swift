// libFuzzer target: the DiscordChatExporter reader (scripts/fuzz.sh; libFuzzer's flags as arguments).
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzReader.run(data, count, format: .discord, fileName: "channel.json")
}

FuzzReader.drive(format: .discord, fileName: "channel.json")
