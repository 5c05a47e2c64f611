import Crypto
import FoundationEssentials
import Synchronization

/// One attempt to sign in: the URL to show, and the secrets that bind the
/// provider's answer to this attempt (state, PKCE verifier, nonce).
///
/// A request is completed at most once: the first genuine redirect consumes it,
/// so a replayed or second redirect cannot start a second exchange.
public final class AuthorizationRequest: Sendable, CustomStringConvertible {
    public let configuration: ProviderConfiguration
    /// 32 bytes from the system CSPRNG, base64url (RFC 6749 §10.12).
    public let state: String
    /// RFC 7636 code verifier: 43 unreserved characters; nil when PKCE is off.
    public let codeVerifier: String?
    /// OpenID Connect nonce, when `openid` is in scope and the provider echoes it.
    public let nonce: String?
    /// The redirect URI sent with this request (and again at the token endpoint).
    public let redirectURI: URL
    /// RFC 9449: the sign-in's DPoP key, where the provider binds tokens (`dpop_jkt` names it, §10).
    public let dpopKey: DPoPKey?
    /// The classic request: every parameter in the authorization endpoint's query.
    public let url: URL
    /// Those parameters, in order, for a request pushed instead (RFC 9126).
    let parameters: [(String, String)]

    private let completed = OnceFlag()

    /// - Parameter accountParameters: `prompt` and a login hint for choosing an account (see
    ///   `ProviderConfiguration.accountChoiceParameters`): a `prompt` the provider's own parameters
    ///   already have is kept, the account's added to it (OpenID Connect's prompt is a list).
    /// - Parameter dpopKey: the sign-in's DPoP key, where the provider binds tokens (default: one made in software).
    public init(
        configuration: ProviderConfiguration, redirectURI: URL? = nil, accountParameters: [String: String] = [:],
        dpopKey key: DPoPKey? = nil
    ) {
        self.configuration = configuration
        self.redirectURI = redirectURI ?? configuration.redirectURI
        state = Base64URL.random()
        codeVerifier = configuration.usePKCE ? Base64URL.random() : nil
        nonce = configuration.sendsNonce ? Base64URL.random() : nil
        dpopKey = configuration.dpop ? key ?? DPoPKey() : nil

        var parameters: [(String, String)] = [
            ("response_type", "code"),
            ("client_id", configuration.clientID),
            ("redirect_uri", self.redirectURI.absoluteString),
        ]
        if !configuration.scopes.isEmpty {
            parameters.append(("scope", configuration.scopes.joined(separator: " ")))
        }
        parameters.append(("state", state))
        if let codeVerifier {
            parameters.append(("code_challenge", Self.codeChallenge(for: codeVerifier)))
            parameters.append(("code_challenge_method", "S256"))
        }
        if let nonce { parameters.append(("nonce", nonce)) }
        if let dpopKey { parameters.append(("dpop_jkt", dpopKey.thumbprint)) }
        if let resource = configuration.resource { parameters.append(("resource", resource.absoluteString)) }
        var extra = configuration.authorizationParameters
        for (key, value) in accountParameters {
            extra[key] =
                key == "prompt"
                ? extra[key].map { $0.split(separator: " ").contains(Substring(value)) ? $0 : "\($0) \(value)" } ?? value : value
        }
        parameters += extra.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        self.parameters = parameters

        // Keep any query the endpoint already has; add ours, each value fully percent-encoded.
        var components = URLComponents(url: configuration.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + FormCoding.encode(parameters)
        url = components.url!
    }

    /// The address that shows a request pushed to the provider (RFC 9126 §4): the authorization
    /// endpoint (any query it has kept) with only `client_id` and the `request_uri` it answered.
    public func pushedURL(requestURI: String) -> URL {
        var components = URLComponents(url: configuration.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + FormCoding.encode([("client_id", configuration.clientID), ("request_uri", requestURI)])
        return components.url!
    }

    /// S256: base64url(SHA-256(ASCII(verifier))).
    public static func codeChallenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
    }

    /// Marks the request used; false if it already was.
    func complete() -> Bool { completed.take() }

    public var isCompleted: Bool { completed.isTaken }

    /// No state, verifier or nonce: only where it goes and what it asks for.
    public var description: String {
        "AuthorizationRequest(\(configuration.displayName) at \(configuration.authorizationEndpoint.host ?? "?"), "
            + "scopes: \(configuration.scopes.joined(separator: " ")), PKCE: \(codeVerifier == nil ? "off" : "S256"))"
    }
}
