import FoundationEssentials

/// How to read a person's profile out of a provider's JSON.
///
/// Each field lists JSON keys tried in order (dotted paths reach into nested
/// objects), because providers differ: GitHub's `name` may be null and `login`
/// never is. The profile URL is either a field (GitHub's `html_url`) or a
/// template filled from a second endpoint (LinkedIn's
/// `https://www.linkedin.com/in/{vanityName}` from `/v2/me`).
public struct ProfileMapping: Sendable, Equatable {
    public var name: [String]
    public var email: [String]
    /// Where the provider says whether it checked the e-mail address.
    public var emailVerified: [String]
    public var picture: [String]
    public var url: [String]
    /// Where the provider says who the person is, for telling one account from another (`sub`, GitHub's `id`).
    public var id: [String]
    /// Where the provider says what it takes as a login hint for the person (an e-mail address,
    /// a user name, GitHub's `login`).
    public var loginHint: [String]
    public var urlTemplate: String?
    /// Where the template's fields come from; the userinfo endpoint when absent.
    public var urlTemplateEndpoint: URL?
    /// Said next to the profile when the provider gives no profile URL.
    public var missingURLNote: String?

    public init(
        name: [String] = ["name"], email: [String] = ["email"], emailVerified: [String] = ["email_verified"],
        picture: [String] = ["picture"],
        url: [String] = ["profile"], id: [String] = ["sub", "id"], urlTemplate: String? = nil, urlTemplateEndpoint: URL? = nil,
        missingURLNote: String? = nil, loginHint: [String] = ["email", "preferred_username", "login"]
    ) {
        self.id = id
        self.loginHint = loginHint
        self.name = name
        self.email = email
        self.emailVerified = emailVerified
        self.picture = picture
        self.url = url
        self.urlTemplate = urlTemplate
        self.urlTemplateEndpoint = urlTemplateEndpoint
        self.missingURLNote = missingURLNote
    }

    /// The first non-empty string found under any of `keys`.
    static func first(_ keys: [String], in object: JSONValue) -> String? {
        for key in keys {
            var value: JSONValue? = object
            for part in key.split(separator: ".") {
                value = value?[String(part)]
            }
            if let text = value?.string, !text.isEmpty { return text }
            if let number = value?.numberText { return number }
        }
        return nil
    }

    /// The first yes-or-no found under any of `keys`: a JSON boolean, or the
    /// strings "true" and "false" (LinkedIn has been seen sending those).
    /// Anything else, including a value of another type, says nothing.
    static func flag(_ keys: [String], in object: JSONValue) -> Bool? {
        for key in keys {
            var value: JSONValue? = object
            for part in key.split(separator: ".") {
                value = value?[String(part)]
            }
            if let flag = value?.bool { return flag }
            switch value?.string?.lowercased() {
            case "true": return true
            case "false": return false
            default: continue
            }
        }
        return nil
    }

    /// Fills `{field}` placeholders from `object`, percent-encoding each value as
    /// one path segment; nil if a field is missing.
    static func fill(_ template: String, from object: JSONValue) -> String? {
        var result = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { return nil }
            result += rest[..<open]
            let key = String(rest[rest.index(after: open)..<close])
            guard let value = first([key], in: object) else { return nil }
            result += FormCoding.escape(value)
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }
}
