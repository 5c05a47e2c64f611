/// Bytes as lowercase hexadecimal, two digits each: file names from hashes.
enum Hex {
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]] }
        return String(decoding: out, as: UTF8.self)
    }
}
