import CGio

/// A D-Bus value as Swift holds it: what a method call brings (read from its
/// GVariant) and what a reply carries (made into one). Only the kinds the
/// agent's interface uses, plus what a caller may put in an `a{sv}`.
public indirect enum DBusValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case variant(DBusValue)
    case tuple([DBusValue])
    /// `elementType` in D-Bus notation ("s", "(ss)", "{sv}"): an empty array still has one.
    case array(elementType: String, [DBusValue])
    case entry(DBusValue, DBusValue)
    /// A kind not listed here (a byte, a file descriptor, a maybe): read, never made.
    case other(String)

    /// An `as`.
    public static func strings(_ values: [String]) -> DBusValue { .array(elementType: "s", values.map(DBusValue.string)) }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// A whole number of any of the integer kinds, as Int64 (a `u` or `t` beyond it: nil).
    public var integer: Int64? {
        switch self {
        case .int32(let value): Int64(value)
        case .uint32(let value): Int64(value)
        case .int64(let value): value
        case .uint64(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
        case .variant(let inner): inner.integer
        default: nil
        }
    }

    /// The strings of an `as` (or of a variant holding one); nil for anything else.
    public var strings: [String]? {
        switch self {
        case .array(_, let items): items.allSatisfy { $0.string != nil } ? items.compactMap(\.string) : nil
        case .variant(let inner): inner.strings
        default: nil
        }
    }

    /// The children of a tuple or an array.
    public var children: [DBusValue] {
        switch self {
        case .tuple(let items), .array(_, let items): items
        default: []
        }
    }

    /// The value of `key` in an `a{sv}` (unwrapped from its variant).
    public subscript(key: String) -> DBusValue? {
        for case .entry(.string(let name), let value) in children where name == key {
            if case .variant(let inner) = value { return inner }
            return value
        }
        return nil
    }

    // MARK: GVariant

    /// A new floating GVariant of this value (nil for `.other`).
    func makeVariant() -> OpaquePointer? {
        switch self {
        case .string(let text): return g_variant_new_string(text)
        case .bool(let flag): return g_variant_new_boolean(flag ? 1 : 0)
        case .int32(let value): return g_variant_new_int32(value)
        case .uint32(let value): return g_variant_new_uint32(value)
        case .int64(let value): return g_variant_new_int64(gint64(value))
        case .uint64(let value): return g_variant_new_uint64(guint64(value))
        case .double(let value): return g_variant_new_double(value)
        case .variant(let inner): return inner.makeVariant().map { g_variant_new_variant($0) }
        case .tuple(let items):
            var children = items.map { $0.makeVariant() }
            return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        case .array(let element, let items):
            var children = items.map { $0.makeVariant() }
            let type = g_variant_type_new(element)
            defer { g_variant_type_free(type) }
            return children.withUnsafeMutableBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize($0.count)) }
        case .entry(let key, let value):
            guard let key = key.makeVariant(), let value = value.makeVariant() else { return nil }
            return g_variant_new_dict_entry(key, value)
        case .other: return nil
        }
    }

    /// What `variant` holds (not consumed).
    init(reading variant: OpaquePointer) {
        let type = String(cString: g_variant_get_type_string(variant))
        switch type.first {
        case "s", "o", "g": self = .string(String(cString: g_variant_get_string(variant, nil)))
        case "b": self = .bool(g_variant_get_boolean(variant) != 0)
        case "i": self = .int32(g_variant_get_int32(variant))
        case "u": self = .uint32(g_variant_get_uint32(variant))
        case "x": self = .int64(Int64(g_variant_get_int64(variant)))
        case "t": self = .uint64(UInt64(g_variant_get_uint64(variant)))
        case "d": self = .double(g_variant_get_double(variant))
        case "v":
            let inner = g_variant_get_variant(variant)!
            defer { g_variant_unref(inner) }
            self = .variant(DBusValue(reading: inner))
        case "(", "a", "{":
            var items: [DBusValue] = []
            for index in 0..<g_variant_n_children(variant) {
                let child = g_variant_get_child_value(variant, index)!
                defer { g_variant_unref(child) }
                items.append(DBusValue(reading: child))
            }
            switch type.first {
            case "(": self = .tuple(items)
            case "a": self = .array(elementType: String(type.dropFirst()), items)
            default: self = items.count == 2 ? .entry(items[0], items[1]) : .other(type)
            }
        default: self = .other(type)
        }
    }
}
