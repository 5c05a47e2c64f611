/// One event, one line: text that reaches the log has its control characters
/// (and format characters) written out, so a navigation path holding `%0A` (decoded to a line break)
/// cannot forge a line of its own, and no escape sequence reaches a terminal.
public enum LogLine {
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\\": out += "\\\\"
            // Controls (C0, DEL, C1), format characters (bidi overrides reorder what a terminal shows), line separators.
            case _
            where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                || scalar.properties.generalCategory == .format || scalar == "\u{2028}" || scalar == "\u{2029}":
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
