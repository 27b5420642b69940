/// 64-bit FNV-1a: the same value on every run and machine (Swift's `Hasher` is seeded per
/// process), for what is stored or compared across runs: the store's message identities, the
/// `--all` manifest, names of files by their content.
package struct StableHash: Sendable {
    package var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    @inlinable @inline(__always)
    package mutating func add(_ byte: UInt8) { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }

    @inlinable
    package mutating func add(_ bytes: some Sequence<UInt8>) { for b in bytes { add(b) } }

    /// One part of several: its UTF-8 (nothing for nil), then a unit separator (0x1F), so that
    /// "ab" + "c" and "a" + "bc" differ.
    @inlinable
    package mutating func add(part s: String?) {
        if let s { add(s.utf8) }
        add(0x1F)
    }
}
