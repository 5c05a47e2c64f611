import FoundationEssentials

/// A JSON value with its object members in the order they were written.
public enum JSONValue: Sendable, Equatable {
    case string(String)
    /// The number as written, so that writing it back changes nothing.
    case number(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([Member])

    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue

        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The one JSON value `bytes` hold (UTF-8, nested at most 64 deep); throws when they hold anything else.
    public init(parsing bytes: some Collection<UInt8>) throws {
        var parser = JSONParser(bytes: Array(bytes))
        self = try parser.document()
    }

    /// The string this value is; nil for anything else.
    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// An object's members; none for anything else.
    public var members: [Member] {
        if case .object(let members) = self { return members }
        return []
    }

    /// The member `key` of an object; nil for anything else.
    public subscript(key: String) -> JSONValue? {
        members.last { $0.key == key }?.value
    }

    /// The value as it reads: of a key repeated in any object within, the last value, in the
    /// place where the key first was. Two texts that read the same compare equal this way.
    var readAsOne: JSONValue {
        switch self {
        case .array(let items): .array(items.map(\.readAsOne))
        case .object(let members):
            .object(ProviderFile.keyed(members.map { Member($0.key, $0.value.readAsOne) }, over: [], key: \.key))
        default: self
        }
    }

    /// On one line: `{"a": 1, "b": [true]}`, or without spaces when `spaced` is false.
    public func text(spaced: Bool = true) -> String {
        let (comma, colon) = spaced ? (", ", ": ") : (",", ":")
        switch self {
        case .string(let text): return Self.quoted(text)
        case .number(let text): return text
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map { $0.text(spaced: spaced) }.joined(separator: comma) + "]"
        case .object(let members):
            return "{" + members.map { Self.quoted($0.key) + colon + $0.value.text(spaced: spaced) }.joined(separator: comma) + "}"
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped, nothing else.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
