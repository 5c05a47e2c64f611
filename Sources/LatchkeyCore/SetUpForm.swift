import FoundationEssentials

/// What the set-up dialog checks before it keeps anything: the mistakes a
/// person makes copying credentials from a provider's console, each named in a
/// sentence beside the field. Pure, so the tests need no display.
public enum SetUpForm {
    /// Whether the provider takes a client secret from Latchkey.
    public enum SecretNeed: Equatable, Sendable {
        /// A public client (RFC 8252 §8.4): a secret would be refused, or mean the registration is wrong.
        case none
        /// The provider requires one at its token endpoint; `stored`: one is kept already.
        case required(stored: Bool)
        /// The person's own provider: their registration decides.
        case optional
    }

    public enum Field: Equatable, Sendable { case clientID, secret, source }

    public struct Problem: Error, Equatable, Sendable {
        public var field: Field
        public var sentence: String
    }

    /// The client id, trimmed, and the secret to keep (nil: keep what is there, or none).
    public struct Answer: Equatable, Sendable {
        public var clientID: String
        public var secret: String?
    }

    public static func check(clientID raw: String, secret rawSecret: String, need: SecretNeed, providerName: String)
        -> Result<Answer, Problem>
    {
        let clientID = raw.trimmed()
        let secret = rawSecret.trimmed()
        func problem(_ field: Field, _ sentence: String) -> Result<Answer, Problem> { .failure(Problem(field: field, sentence: sentence)) }

        if clientID.isEmpty {
            return problem(.clientID, "Enter the client id \(providerName) gave you when you registered the app.")
        }
        if clientID.contains(where: { $0.isWhitespace || $0.isNewline || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } == true }) {
            return problem(.clientID, "A client id has no spaces or line breaks: check what was pasted.")
        }
        if !secret.isEmpty, secret == clientID {
            return problem(.secret, "The client secret is the same as the client id: one of them was pasted twice.")
        }
        switch need {
        case .none where !secret.isEmpty:
            return problem(
                .secret,
                "\(providerName) takes no client secret from a desktop app. Register it as a public client, and leave this empty.")
        case .required(stored: false) where secret.isEmpty:
            return problem(.secret, "\(providerName) needs the client secret too: it is shown beside the client id.")
        default:
            return .success(Answer(clientID: clientID, secret: secret.isEmpty ? nil : secret))
        }
    }

    /// Where a provider being added comes from.
    public enum Source: Equatable, Sendable {
        /// An authorization server's issuer URL: its discovery document says the rest.
        case issuer(String)
        /// A protected resource's URL: it names its authorization server (RFC 9728).
        case resource(String)
        case file(String)
    }

    /// The add-provider form: exactly one of an issuer URL, a resource URL and a provider file.
    public static func source(issuer rawIssuer: String, resource rawResource: String = "", file rawFile: String) -> Result<Source, Problem>
    {
        let (issuer, resource, file) = (trim(rawIssuer), trim(rawResource), trim(rawFile))
        func problem(_ sentence: String) -> Result<Source, Problem> { .failure(Problem(field: .source, sentence: sentence)) }
        func isWebAddress(_ text: String) -> Bool { text.lowercased().hasPrefix("https://") || text.lowercased().hasPrefix("http://") }
        switch [issuer, resource, file].filter({ !$0.isEmpty }).count {
        case 0: return problem("Give the provider's issuer URL, the URL of what you want to reach, or choose a provider file.")
        case 1: break
        default: return problem("Give one of an issuer URL, a resource URL and a provider file, not more.")
        }
        if !issuer.isEmpty {
            guard isWebAddress(issuer) else { return problem("An issuer URL starts with https://, such as https://accounts.example.com.") }
            return .success(.issuer(issuer))
        }
        if !resource.isEmpty {
            guard isWebAddress(resource) else {
                return problem("A resource URL starts with https://, such as https://api.example.com/mcp.")
            }
            return .success(.resource(resource))
        }
        return .success(.file(file))
    }

    private static func trim(_ text: String) -> String { text.trimmed() }
}
