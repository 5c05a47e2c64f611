import FoundationEssentials

/// Keeps secrets out of text that leaves OAuthCore: error messages, logs.
public enum Redaction {
    static let placeholder = "‹redacted›"

    /// Replaces every occurrence of each secret (ignoring short ones, which
    /// would only mangle ordinary words), in every encoding this client itself
    /// sends it in and a server might echo back: as it is, form- or
    /// percent-encoded (either case of hex digit), JSON-escaped, and base64.
    ///
    /// The text is made printable first: characters dropped only afterwards (a DEL, an escape, a
    /// zero-width space inside the secret) would hide it from the match and then put it back together.
    static func redact(_ text: String, removing secrets: [String?]) -> String {
        var result = printable(text)
        for case let secret? in secrets where secret.count >= 8 {
            // Longest first, so an encoded form is not half-replaced by a shorter one.
            for form in encodings(of: secret).sorted(by: { $0.count > $1.count }) {
                result = result.replacingIgnoringCase(form, with: placeholder)
            }
        }
        return result
    }

    static func encodings(of secret: String) -> Set<String> {
        var forms: Set<String> = [secret, FormCoding.escape(secret)]
        forms.insert(FormCoding.escape(secret).replacing("%20", with: "+"))
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
        forms.insert(json.replacing("\\/", with: "/"))
        let base64 = Data(secret.utf8).base64EncodedString()
        forms.insert(base64)
        forms.insert(base64.replacing("=", with: ""))
        forms.insert(Base64URL.encode(Data(secret.utf8)))
        return forms.filter { $0.count >= 8 }
    }

    /// A provider's text, one line, of a length a status line can show.
    static func clip(_ text: String) -> String {
        let line = printable(text)
        let clipped = String(line.prefix(300))
        return clipped.count < line.count ? clipped + "…" : clipped
    }

    /// `text` fit to show in a window or a terminal: line and paragraph breaks and tabs become
    /// spaces, and every other character of Unicode general category Cc (C0 and C1 controls, DEL:
    /// U+009B alone starts a terminal's control sequence) or Cf (format characters: the bidi
    /// overrides that reorder "(host)" so one name passes for another, zero-width characters)
    /// is dropped.
    public static func printable(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n", "\r", "\t", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}": out.append(" ")
            case _ where isControlOrFormat(scalar): continue
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether `text` holds nothing `printable` would change.
    public static func isPrintable(_ text: String) -> Bool {
        !text.unicodeScalars.contains { isControlOrFormat($0) || $0 == "\u{2028}" || $0 == "\u{2029}" }
    }

    static func isControlOrFormat(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format: true
        default: false
        }
    }

    /// An error code (or a name such as a token type) fit to show: a short word
    /// of the characters RFC 6749 uses for codes, holding none of `secrets` —
    /// not even glued to other letters, where no placeholder could stand in
    /// for it — or else a stand-in.
    static func safeCode(_ code: String, removing secrets: [String?] = []) -> String {
        let allowed =
            code.count <= 64 && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == ".") }
        guard allowed, !code.isEmpty, redact(code, removing: secrets) == code else { return "unrecognised_error" }
        return code
    }
}
