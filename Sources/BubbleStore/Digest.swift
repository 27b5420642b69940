import Crypto
import Foundation

/// The hex form the store keeps of swift-crypto's SHA-256: media files are named by it, session and
/// API tokens are kept as it, and a copy's checksum is printed as it.
extension Crypto.SHA256 {
    /// Lower-case hex of the digest (64 characters).
    mutating func hex() -> String {
        finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// The hex SHA-256 of `bytes` at once.
    static func hex(of bytes: some DataProtocol) -> String {
        var hash = Self()
        hash.update(data: bytes)
        return hash.hex()
    }
}
