import FoundationEssentials

/// JSON a server sent (discovery and registration answers, tokens, profiles, key
/// sets, ID-token claims) as Swift values to read by member: `String`, `Bool`,
/// `JSONDocument.Number`, `JSONDocument.Null`, `[Any]` and `[String: Any]`.
///
/// Read with `JSONParser` (OAuthCore's own, as provider files are), not
/// Foundation's JSONSerialization: it keeps OAuthCore on FoundationEssentials,
/// and a number is never mistaken for a boolean, as NSNumber's 0 and 1 were.
enum JSONDocument {
    /// A JSON number as written, so that an identifier such as 12345678901234567890 is kept exactly.
    struct Number: Sendable, Equatable, CustomStringConvertible {
        let text: String
        var double: Double? { Double(text) }
        var description: String { text }
    }

    /// JSON's `null`: a member that is there but holds nothing.
    struct Null: Sendable, Equatable {}

    /// The object `bytes` hold, or nil when they are not one JSON object.
    static func object(_ bytes: some Collection<UInt8>) -> [String: Any]? {
        value(bytes) as? [String: Any]
    }

    /// The JSON value `bytes` hold, or nil when they are not JSON (or nest deeper than `JSONParser.deepest`).
    static func value(_ bytes: some Collection<UInt8>) -> Any? {
        var parser = JSONParser(bytes: Array(bytes))
        return (try? parser.document()).map(swiftValue)
    }

    /// A later member of the same name wins, as with most JSON readers.
    static func swiftValue(_ value: JSONValue) -> Any {
        switch value {
        case .string(let text): text
        case .number(let text): Number(text: text)
        case .bool(let flag): flag
        case .null: Null()
        case .array(let items): items.map(swiftValue)
        case .object(let members):
            Dictionary(members.map { ($0.key, swiftValue($0.value)) }, uniquingKeysWith: { _, last in last }) as [String: Any]
        }
    }
}
