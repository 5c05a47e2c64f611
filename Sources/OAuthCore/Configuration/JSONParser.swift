import FoundationEssentials

/// A JSON parser that keeps object members in order and, for the outer object, the text around them.
struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    /// Nesting deeper than this is refused: a hostile file must not exhaust the stack.
    static let deepest = 64

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    enum Failure: Error {
        case notJSON
        case notUTF8
    }

    mutating func objectText() throws -> JSONObjectText {
        var object = JSONObjectText()
        object.prefix = spaces()
        try expect(UInt8(ascii: "{"))
        let afterBrace = spaces()
        if peek == UInt8(ascii: "}") {
            index += 1
            object.empty = afterBrace
        } else {
            var leading = afterBrace
            while true {
                let keyStart = index
                let key = try string()
                let keyText = text(from: keyStart)
                let beforeColon = spaces()
                try expect(UInt8(ascii: ":"))
                let separator = beforeColon + ":" + spaces()
                let valueStart = index
                let value = try self.value(depth: 1)
                let valueText = text(from: valueStart)
                let trailing = spaces()
                object.members.append(
                    .init(
                        leading: leading, key: key, keyText: keyText, separator: separator, value: value, valueText: valueText,
                        trailing: trailing))
                guard let next = peek else { throw Failure.notJSON }
                index += 1
                if next == UInt8(ascii: "}") { break }
                guard next == UInt8(ascii: ",") else { throw Failure.notJSON }
                leading = spaces()
            }
        }
        object.suffix = spaces()
        guard index == bytes.count else { throw Failure.notJSON }
        return object
    }

    /// One JSON value, with nothing but white space around it.
    mutating func document() throws -> JSONValue {
        _ = spaces()
        let value = try self.value(depth: 1)
        _ = spaces()
        guard index == bytes.count else { throw Failure.notJSON }
        return value
    }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func text(from start: Int) -> String { String(decoding: bytes[start..<index], as: UTF8.self) }

    private mutating func spaces() -> String {
        let start = index
        while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        return text(from: start)
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard peek == byte else { throw Failure.notJSON }
        index += 1
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard depth <= Self.deepest, let byte = peek else { throw Failure.notJSON }
        switch byte {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try number()
        }
    }

    private mutating func object(depth: Int) throws -> JSONValue {
        index += 1
        var members: [JSONValue.Member] = []
        _ = spaces()
        if peek == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            _ = spaces()
            let key = try string()
            _ = spaces()
            try expect(UInt8(ascii: ":"))
            _ = spaces()
            members.append(.init(key, try value(depth: depth + 1)))
            _ = spaces()
            guard let next = peek else { throw Failure.notJSON }
            index += 1
            if next == UInt8(ascii: "}") { return .object(members) }
            guard next == UInt8(ascii: ",") else { throw Failure.notJSON }
        }
    }

    private mutating func array(depth: Int) throws -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        _ = spaces()
        if peek == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            _ = spaces()
            items.append(try value(depth: depth + 1))
            _ = spaces()
            guard let next = peek else { throw Failure.notJSON }
            index += 1
            if next == UInt8(ascii: "]") { return .array(items) }
            guard next == UInt8(ascii: ",") else { throw Failure.notJSON }
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws -> JSONValue {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else { throw Failure.notJSON }
        index += utf8.count
        return value
    }

    private mutating func number() throws -> JSONValue {
        let start = index
        while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "+-.eE".utf8.contains(byte) { index += 1 }
        let text = text(from: start)
        guard Self.isJSONNumber(Array(text.utf8)) else { throw Failure.notJSON }
        return .number(text)
    }

    /// JSON's number grammar, which Double's parser is looser than (it takes "+1" and "1."):
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isJSONNumber(_ bytes: [UInt8]) -> Bool {
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - start
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == bytes.count
    }

    private mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ end: Int) { scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars) }
        while let byte = peek {
            switch byte {
            case UInt8(ascii: "\""):
                flush(index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush(index)
                index += 1
                scalars.append(try escaped())
                run = index
            case ..<0x20:
                throw Failure.notJSON
            default:
                index += 1
            }
        }
        throw Failure.notJSON
    }

    private mutating func escaped() throws -> Unicode.Scalar {
        guard let byte = peek else { throw Failure.notJSON }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try hex()
            guard (0xD800...0xDBFF).contains(first) else { return Unicode.Scalar(first) ?? "\u{FFFD}" }
            // A surrogate pair when the second half follows; a lone half is U+FFFD, and what follows it stays.
            let resume = index
            guard peek == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else { return "\u{FFFD}" }
            index += 2
            guard let second = try? hex(), (0xDC00...0xDFFF).contains(second) else {
                index = resume
                return "\u{FFFD}"
            }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) ?? "\u{FFFD}"
        default: throw Failure.notJSON
        }
    }

    private mutating func hex() throws -> UInt32 {
        guard index + 4 <= bytes.count, bytes[index..<index + 4].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
            let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw Failure.notJSON }
        index += 4
        return value
    }
}
