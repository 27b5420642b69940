import Foundation

/// Cores this process may run on: the CPU affinity mask where the system shows one
/// (`Cpus_allowed` in /proc/self/status on Linux: `taskset`, container cpusets), which
/// `ProcessInfo.activeProcessorCount` does not read; never more than the active processors.
/// Work is split in this many parts.
package enum UsableCores {
    package static let count: Int = count(
        status: (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? "",
        active: ProcessInfo.processInfo.activeProcessorCount)

    /// The cores allowed by the `Cpus_allowed:` mask (hex, comma-separated groups) of a
    /// /proc status text, at most `active`; `active` when there is no such line.
    static func count(status: String, active: Int) -> Int {
        let active = max(1, active)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return active }
        var bits = 0
        for c in line.dropFirst("Cpus_allowed:".count) {
            if let digit = c.hexDigitValue { bits += digit.nonzeroBitCount }
        }
        return bits > 0 ? min(bits, active) : active
    }
}
