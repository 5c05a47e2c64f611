/// Reading what a server sent (discovery and registration answers, tokens, profiles, key sets,
/// ID-token claims) by member, each value as the type it must be or nil: a number is never taken
/// for a boolean, nor a string for a number, and a repeated member reads as its last value.
/// Parsed with `JSONParser` (OAuthCore's own, as provider files are), never JSONSerialization.
extension JSONValue {
    /// The JSON object `bytes` hold; nil when they hold anything else (or nest deeper than
    /// `JSONParser.deepest`, or are not JSON).
    public static func object(parsing bytes: some Collection<UInt8>) -> JSONValue? {
        guard let value = try? JSONValue(parsing: bytes), case .object = value else { return nil }
        return value
    }

    public var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    public var bool: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// A number as it was written (an identifier such as 12345678901234567890 kept exactly).
    public var numberText: String? {
        if case .number(let text) = self { return text }
        return nil
    }

    public var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// An array's strings, when every item is one.
    public var strings: [String]? {
        guard let items = array else { return nil }
        let texts = items.compactMap(\.string)
        return texts.count == items.count ? texts : nil
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(String(value)) }
    public init(floatLiteral value: Double) { self = .number(String(value)) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Members in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements.map { Member($0.0, $0.1) }) }
    public init(nilLiteral: ()) { self = .null }
}
