/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): its scheme
/// and either a token68 or parameters. A header may hold several challenges,
/// and commas separate both challenges and their parameters, so the header is
/// read as a whole (`AuthenticateChallenge.parse`), never split on commas.
public struct AuthenticateChallenge: Equatable, Sendable {
    /// As sent; compare with `is(_:)`, which ignores case (§11.1).
    public var scheme: String
    public var token68: String?
    /// Names in lower case (§11.2: case-insensitive), in the order sent; quoted values unescaped.
    public var parameters: [(name: String, value: String)]

    public static func == (a: Self, b: Self) -> Bool {
        a.scheme == b.scheme && a.token68 == b.token68 && a.parameters.map(\.name) == b.parameters.map(\.name)
            && a.parameters.map(\.value) == b.parameters.map(\.value)
    }

    public func `is`(_ scheme: String) -> Bool { self.scheme.lowercased() == scheme.lowercased() }

    /// The value of parameter `name` (any case).
    public subscript(_ name: String) -> String? {
        parameters.first { $0.name == name.lowercased() }?.value
    }

    /// Why a header could not be read, and where.
    public struct Malformed: Error, Equatable, Sendable {
        public var reason: String
        public var offset: Int
    }

    /// Every challenge in `header`. Throws on anything RFC 9110 does not allow:
    /// an unterminated quoted string, a parameter without a value, the same
    /// parameter twice in one challenge (§11.2), a control character. A header
    /// longer than `limit` bytes is refused before it is read.
    public static func parse(_ header: String, limit: Int = 16_384) throws(Malformed) -> [AuthenticateChallenge] {
        let bytes = Array(header.utf8)
        guard bytes.count <= limit else { throw Malformed(reason: "longer than \(limit) bytes", offset: limit) }
        var reader = Reader(bytes: bytes)
        var challenges: [AuthenticateChallenge] = []
        while true {
            reader.skipListSeparators()
            if reader.atEnd { break }
            challenges.append(try reader.challenge())
        }
        return challenges
    }

    /// A cursor over the header's bytes.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index >= bytes.count }
        var current: UInt8? { atEnd ? nil : bytes[index] }

        func fail(_ reason: String) -> Malformed { Malformed(reason: reason, offset: index) }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 { index += 1 }
        }

        /// `OWS "," OWS`, any number of times (§5.6.1 lets empty list elements be).
        mutating func skipListSeparators() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x2C { index += 1 }
        }

        static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
            default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }

        static func isToken68Byte(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
            default: Array("-._~+/".utf8).contains(byte)
            }
        }

        mutating func token() -> String? {
            let start = index
            while let byte = current, Self.isTokenByte(byte) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        mutating func challenge() throws(Malformed) -> AuthenticateChallenge {
            guard let scheme = token() else { throw fail("expected an authentication scheme") }
            var challenge = AuthenticateChallenge(scheme: scheme, token68: nil, parameters: [])
            guard let next = current, next == 0x20 || next == 0x09 else {
                // The scheme alone, then the end of the header or the next challenge.
                if let next = current, next != 0x2C { throw fail("unexpected character after the scheme") }
                return challenge
            }
            skipWhitespace()
            if atEnd || current == 0x2C { return challenge }
            if let token68 = token68IfHere() {
                challenge.token68 = token68
                return challenge
            }
            // auth-params, comma-separated, until something that is not `name =` (the next challenge).
            while true {
                let mark = index
                guard let name = token() else { throw fail("expected a parameter name") }
                skipWhitespace()
                guard current == 0x3D else {
                    // Not a parameter: a new challenge starts here (it needed a comma before it).
                    guard !challenge.parameters.isEmpty else { throw fail("expected \"=\" after \(name)") }
                    index = mark
                    return challenge
                }
                index += 1
                skipWhitespace()
                let value: String
                if current == 0x22 {
                    value = try quotedString()
                } else if let plain = token() {
                    value = plain
                } else {
                    throw fail("parameter \(name) has no value")
                }
                let lowered = name.lowercased()
                if challenge.parameters.contains(where: { $0.name == lowered }) {
                    throw fail("parameter \(lowered) appears twice in one challenge")
                }
                challenge.parameters.append((lowered, value))
                skipWhitespace()
                if atEnd { return challenge }
                guard current == 0x2C else { throw fail("expected a comma between parameters") }
                skipListSeparators()
                if atEnd { return challenge }
                // After a comma, `name =` continues this challenge; anything else starts the next.
                let lookahead = index
                _ = token()
                skipWhitespace()
                let continues = current == 0x3D && index > lookahead
                index = lookahead
                if !continues { return challenge }
            }
        }

        /// A token68 when the rest of this challenge is one: its characters, any
        /// `=` padding, then the end or a comma. Otherwise nothing is consumed.
        mutating func token68IfHere() -> String? {
            let start = index
            var end = index
            while end < bytes.count, Self.isToken68Byte(bytes[end]) { end += 1 }
            guard end > start else { return nil }
            var padded = end
            while padded < bytes.count, bytes[padded] == 0x3D { padded += 1 }
            var after = padded
            while after < bytes.count, bytes[after] == 0x20 || bytes[after] == 0x09 { after += 1 }
            // `name=value` is a parameter: padding must not be followed by more of a value.
            guard after == bytes.count || bytes[after] == 0x2C else { return nil }
            // `name=` with nothing after it is read as a token68 only if no `=` sits inside: it has none by construction.
            index = after
            return String(decoding: bytes[start..<padded], as: UTF8.self)
        }

        /// `"…"` with `\` escapes (§5.6.4), unescaped; no control characters but tab.
        mutating func quotedString() throws(Malformed) -> String {
            index += 1
            var value: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case 0x22: return String(decoding: value, as: UTF8.self)
                case 0x5C:
                    guard let escaped = current, escaped == 0x09 || escaped >= 0x20, escaped != 0x7F else {
                        throw fail("a backslash at the end of a quoted string")
                    }
                    value.append(escaped)
                    index += 1
                case 0x09, 0x20...0x7E, 0x80...0xFF: value.append(byte)
                default: throw fail("a control character in a quoted string")
                }
            }
            throw fail("a quoted string that never ends")
        }
    }
}
