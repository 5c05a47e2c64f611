import Foundation

/// `application/x-www-form-urlencoded`, written for the server side alone.
///
/// The sandbox deliberately shares no code with OAuthCore: if both sides used
/// one parser, a bug in it would agree with itself and no test would notice.
enum FormEncoding {
    /// Decodes `a=1&b=two+words` into ordered pairs, keeping duplicates so that
    /// the caller can reject a parameter sent twice (RFC 6749 §3.1).
    static func decode(_ text: Substring) -> [(name: String, value: String)]? {
        var pairs: [(String, String)] = []
        for part in text.split(separator: "&", omittingEmptySubsequences: true) {
            let nameAndValue = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = unescape(nameAndValue[0]) else { return nil }
            let value = nameAndValue.count > 1 ? unescape(nameAndValue[1]) : ""
            guard let value else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    static func decode(_ text: String) -> [(name: String, value: String)]? {
        decode(text[...])
    }

    /// Percent-encodes everything except RFC 3986 unreserved characters.
    static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    private static func unescape(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Parameters of one request, with the "sent at most once" rule built in.
struct Parameters {
    private(set) var values: [String: String] = [:]
    private(set) var repeated: Set<String> = []

    init(_ pairs: [(name: String, value: String)]) {
        for (name, value) in pairs {
            if values[name] != nil { repeated.insert(name) }
            values[name] = value
        }
    }

    /// A parameter's value; an empty value counts as absent (RFC 6749 §3.1).
    subscript(name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }
}

enum Base64URL {
    static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func randomToken(bytes count: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return encode((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}

/// Compares secrets without leaking, through timing, how many leading bytes matched.
func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    var difference: UInt8 = 0
    for i in x.indices { difference |= x[i] ^ y[i] }
    return difference == 0
}
