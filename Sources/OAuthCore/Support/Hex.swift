import Crypto
import FoundationEssentials

/// Bytes as lowercase hexadecimal, two digits each: file names from hashes.
package enum Hex {
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]] }
        return String(decoding: out, as: UTF8.self)
    }

    /// The SHA-256 of `text`'s UTF-8, in hexadecimal: what is kept of a secret that must be recognised, not known.
    package static func sha256(_ text: String) -> String {
        encode(SHA256.hash(data: Data(text.utf8)))
    }
}
