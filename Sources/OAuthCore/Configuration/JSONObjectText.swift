import FoundationEssentials

/// A JSON object's text kept as written: each member's key, value and the spaces
/// around them. Members set or removed change only their own text; everything
/// else (order, indentation, a value laid out over several lines) is written
/// back byte for byte. A member added takes the layout of the last one.
struct JSONObjectText: Sendable, Equatable {
    struct Member: Sendable, Equatable {
        /// From the `{` or `,` before it to the key.
        var leading: String
        var key: String
        var keyText: String
        /// From the key to the value: `": "`.
        var separator: String
        var value: JSONValue
        var valueText: String
        /// From the value to the `,` or `}` after it.
        var trailing: String
    }

    var prefix = ""
    var members: [Member] = []
    /// Between `{` and `}` when there are no members.
    var empty = ""
    var suffix = "\n"

    /// A new object, laid out as the presets are: a member per line, indented two spaces.
    init() {}

    /// Parses `data`, which must hold one JSON object in UTF-8 (a byte-order mark before it is kept).
    init(parsing data: Data) throws {
        let bytes = [UInt8](data)
        guard String(validating: bytes, as: UTF8.self) != nil else { throw JSONParser.Failure.notUTF8 }
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let marked = bytes.starts(with: mark)
        var parser = JSONParser(bytes: marked ? Array(bytes.dropFirst(3)) : bytes)
        self = try parser.objectText()
        if marked { prefix = "\u{FEFF}" + prefix }
    }

    var value: JSONValue { .object(members.map { JSONValue.Member($0.key, $0.value) }) }

    var text: String {
        guard !members.isEmpty else { return prefix + "{" + empty + "}" + suffix }
        let inner = members.map { $0.leading + $0.keyText + $0.separator + $0.valueText + $0.trailing }
        return prefix + "{" + inner.joined(separator: ",") + "}" + suffix
    }

    /// The object holding `wanted`, in one pass: a member whose key is wanted keeps its text
    /// when its value is unchanged (of a repeated key, the last counts), gets a new value text
    /// otherwise; a member not wanted goes; a wanted key not there is added at the end, laid
    /// out as the last member is.
    mutating func update(to wanted: [JSONValue.Member]) {
        var value: [String: JSONValue] = [:]
        for member in wanted { value[member.key] = member.value }
        var lastIndex: [String: Int] = [:]
        for (index, member) in members.enumerated() { lastIndex[member.key] = index }
        let spaced = self.spaced
        // What stood before `}` (a line break) stays there; between members, what the file has there.
        let closing = members.last?.trailing ?? "\n"
        let between = members.count > 1 ? members[members.count - 2].trailing : ""
        var kept: [Member] = []
        var placed = Set<String>()
        for (index, var member) in members.enumerated() {
            guard let new = value[member.key] else { continue }
            // An earlier member of a repeated key stays as written: the last one counts.
            if lastIndex[member.key] == index, new.readAsOne != member.value.readAsOne {
                member.value = new
                member.valueText = new.text(spaced: spaced)
            }
            if index == members.count - 1 { member.trailing = between }
            kept.append(member)
            placed.insert(member.key)
        }
        let model = members.last
        for member in wanted where !placed.contains(member.key) {
            kept.append(
                Member(
                    leading: model?.leading ?? "\n  ", key: member.key, keyText: JSONValue.quoted(member.key),
                    separator: model?.separator ?? ": ", value: member.value, valueText: member.value.text(spaced: spaced),
                    trailing: between))
            placed.insert(member.key)
        }
        if !kept.isEmpty { kept[kept.count - 1].trailing = closing }
        members = kept
    }

    /// Whether the file writes `", "` and `": "`, as the presets do, or no spaces at all.
    private var spaced: Bool { members.first.map { $0.separator.hasSuffix(" ") } ?? true }

}
