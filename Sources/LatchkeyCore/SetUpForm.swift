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

    /// What the add-provider dialog asks for first: which kind of thing is added.
    public enum SourceKind: String, CaseIterable, Equatable, Sendable {
        case issuer, resource, file
    }

    /// The add-provider form, one thing at a time: the kind chosen, then its one value.
    public static func source(_ kind: SourceKind, _ rawText: String) -> Result<Source, Problem> {
        let text = trim(rawText)
        func problem(_ sentence: String) -> Result<Source, Problem> { .failure(Problem(field: .source, sentence: sentence)) }
        let isWebAddress = text.lowercased().hasPrefix("https://") || text.lowercased().hasPrefix("http://")
        switch kind {
        case .issuer:
            guard !text.isEmpty else { return problem("Give the provider's issuer URL, such as https://accounts.example.com.") }
            guard isWebAddress else { return problem("An issuer URL starts with https://, such as https://accounts.example.com.") }
            return .success(.issuer(text))
        case .resource:
            guard !text.isEmpty else { return problem("Give the URL of what you want to reach, such as https://api.example.com/mcp.") }
            guard isWebAddress else { return problem("A resource URL starts with https://, such as https://api.example.com/mcp.") }
            return .success(.resource(text))
        case .file:
            guard !text.isEmpty else { return problem("Choose a provider file, or give its path.") }
            return .success(.file(text))
        }
    }

    private static func trim(_ text: String) -> String { text.trimmed() }
}
