/// Keeps secrets out of text that leaves OAuthCore: error messages, logs.
enum Redaction {
    static let placeholder = "‹redacted›"

    /// Replaces every occurrence of each secret (ignoring short ones, which
    /// would only mangle ordinary words).
    static func redact(_ text: String, removing secrets: [String?]) -> String {
        var result = text
        for case let secret? in secrets where secret.count >= 8 {
            result = result.replacingOccurrences(of: secret, with: placeholder)
        }
        return result
    }

    /// A provider's text, one line, of a length a status line can show.
    static func clip(_ text: String) -> String {
        let line = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }.filter { !($0.asciiValue.map { $0 < 32 } ?? false) }
        let clipped = String(line.prefix(300))
        return clipped.count < line.count ? clipped + "…" : clipped
    }

    /// An error code as RFC 6749 allows it (%x20-21 / %x23-5B / %x5D-7E), or a stand-in.
    static func safeCode(_ code: String) -> String {
        let allowed = code.count <= 64 && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") }
        return allowed && !code.isEmpty ? code : "unrecognised_error"
    }
}
