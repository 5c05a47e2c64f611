import Foundation

/// Telling JSON's `true`/`false` from its numbers in what JSONSerialization returns.
///
/// Not `value is Bool`: on Linux every NSNumber of 0 or 1 passes that test, so
/// `"expires_in": 1` would read as a boolean. A parsed JSON boolean is the
/// NSNumber whose Objective-C type is "c".
enum JSONBoolean {
    static func isBoolean(_ value: Any?) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    /// The boolean `value` is, or nil when it is not a JSON boolean (a number, a string, nothing).
    static func value(_ value: Any?) -> Bool? {
        isBoolean(value) ? (value as? NSNumber)?.boolValue : nil
    }
}
