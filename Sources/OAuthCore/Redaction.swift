import Foundation

/// Keeps secrets out of text that leaves OAuthCore: error messages, logs.
enum Redaction {
    static let placeholder = "‹redacted›"

    /// Replaces every occurrence of each secret (ignoring short ones, which
    /// would only mangle ordinary words), in every encoding this client itself
    /// sends it in and a server might echo back: as it is, form- or
    /// percent-encoded (either case of hex digit), JSON-escaped, and base64.
    static func redact(_ text: String, removing secrets: [String?]) -> String {
        var result = text
        for case let secret? in secrets where secret.count >= 8 {
            // Longest first, so an encoded form is not half-replaced by a shorter one.
            for form in encodings(of: secret).sorted(by: { $0.count > $1.count }) {
                result = result.replacingOccurrences(of: form, with: placeholder, options: .caseInsensitive)
            }
        }
        return result
    }

    static func encodings(of secret: String) -> Set<String> {
        var forms: Set<String> = [secret, FormCoding.escape(secret)]
        forms.insert(FormCoding.escape(secret).replacingOccurrences(of: "%20", with: "+"))
        // JSON: a string's characters as JSONSerialization and others write them.
        var json = ""
        for scalar in secret.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "/": json += "\\/"
            default: json.unicodeScalars.append(scalar)
            }
        }
        forms.insert(json)
        forms.insert(json.replacingOccurrences(of: "\\/", with: "/"))
        let base64 = Data(secret.utf8).base64EncodedString()
        forms.insert(base64)
        forms.insert(base64.replacingOccurrences(of: "=", with: ""))
        forms.insert(Base64URL.encode(Data(secret.utf8)))
        return forms.filter { $0.count >= 8 }
    }

    /// A provider's text, one line, of a length a status line can show.
    static func clip(_ text: String) -> String {
        let line = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }.filter { !($0.asciiValue.map { $0 < 32 } ?? false) }
        let clipped = String(line.prefix(300))
        return clipped.count < line.count ? clipped + "…" : clipped
    }

    /// An error code (or a name such as a token type) fit to show: a short word
    /// of the characters RFC 6749 uses for codes, holding none of `secrets` —
    /// not even glued to other letters, where no placeholder could stand in
    /// for it — or else a stand-in.
    static func safeCode(_ code: String, removing secrets: [String?] = []) -> String {
        let allowed = code.count <= 64 && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") }
        guard allowed, !code.isEmpty, redact(code, removing: secrets) == code else { return "unrecognised_error" }
        return code
    }
}
