import FoundationEssentials
import Synchronization

/// One OAuth 1.0a sign-in attempt: the temporary credentials the provider gave
/// (RFC 5849 §2.1) and the authorization page to show (§2.2). The request token
/// is OAuth 1.0a's counterpart of OAuth 2's `state`: the answer must name it.
/// Completed at most once, so a verifier is taken once.
public final class OAuth1Authorization: Sendable, CustomStringConvertible {
    public let configuration: ProviderConfiguration
    /// Where the provider sends the person back: sent as `oauth_callback` in §2.1.
    public let callback: URL
    let temporaryToken: String
    let temporarySecret: String
    /// The resource-owner authorization page: the endpoint with `oauth_token` and the provider's own extras.
    public let url: URL
    private let completed = OnceFlag()

    public init(configuration: ProviderConfiguration, callback: URL, token: String, secret: String) {
        self.configuration = configuration
        self.callback = callback
        temporaryToken = token
        temporarySecret = secret
        var components = URLComponents(url: configuration.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        let parameters =
            [("oauth_token", token)] + configuration.authorizationParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        components.percentEncodedQuery = existing + FormCoding.encode(parameters)
        url = components.url!
    }

    /// Whether `candidate` is this attempt's request token (compared in constant time).
    func isOurs(_ candidate: String) -> Bool { constantTimeEquals(candidate, temporaryToken) }

    /// Marks the attempt used; false if it already was.
    func complete() -> Bool { completed.take() }

    public var isCompleted: Bool { completed.isTaken }

    /// No token, no secret.
    public var description: String {
        "OAuth1Authorization(\(configuration.displayName) at \(configuration.authorizationEndpoint.host ?? "?"))"
    }
}

/// The verifier the person brought back (§2.2), checked against the attempt it belongs to.
public struct OAuth1Verifier: Sendable, CustomStringConvertible {
    let value: String

    /// Reads the callback. The answer must name this attempt's request token, once;
    /// one that names another, or none, is not ours. A refusal naming it — `denied=`
    /// (X's), `oauth_problem=user_refused` or `permission_denied`, or our token with no
    /// verifier — ends as cancelled.
    public init(callbackURL url: URL, for authorization: OAuth1Authorization) throws {
        guard RedirectMatcher(redirectURI: authorization.callback).matches(url) else { throw OAuthError.notOurRedirect }
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let pairs = FormCoding.decode(components?.percentEncodedQuery ?? "") ?? []
        var values: [String: String] = [:]
        for (name, value) in pairs where Self.read.contains(name) {
            guard values[name] == nil else { throw OAuthError.repeatedParameter(name) }
            values[name] = value
        }
        // A refusal that names no request token at all (`oauth_problem=user_refused`, as the
        // Problem Reporting extension has providers say no): the sign-in ends as cancelled, in our
        // words, never the page's. A page that merely knows the callback can do no more than Cancel can.
        if Self.isBareRefusal(values) {
            _ = authorization.complete()
            throw OAuthError.cancelled
        }
        // The request token first, as OAuth 2's state: without ours — as `oauth_token`, or as
        // `denied` for a refusal — nothing else in the address is read, so a page that merely
        // knows the callback can neither end the sign-in nor put words on screen.
        let named = [values["oauth_token"], values["denied"]].compactMap { $0 }
        guard named.count == 1, let token = named.first, !token.isEmpty, authorization.isOurs(token) else {
            throw OAuthError.stateMismatch
        }
        if values["denied"] != nil {
            _ = authorization.complete()
            throw OAuthError.cancelled
        }
        if let problem = values["oauth_problem"] {
            _ = authorization.complete()
            if Self.refusals.contains(problem) { throw OAuthError.cancelled }
            let secrets = [authorization.temporaryToken, authorization.temporarySecret]
            throw OAuthError.oauth1Problem(Redaction.safeCode(problem, removing: secrets), advice: nil, endpoint: .authorization)
        }
        guard let verifier = values["oauth_verifier"], !verifier.isEmpty else {
            // Sent back with our token and nothing to show for it: the provider's way of saying no.
            _ = authorization.complete()
            throw OAuthError.cancelled
        }
        guard authorization.complete() else { throw OAuthError.requestAlreadyCompleted }
        value = verifier
    }

    /// The parameters of a callback this code reads.
    static let read: Set<String> = ["oauth_token", "oauth_verifier", "denied", "oauth_problem"]

    /// The Problem Reporting extension's ways of saying the person said no.
    static let refusals: Set<String> = ["user_refused", "permission_denied"]

    /// A callback that says no and nothing else: a refusal, no token, no verifier.
    static func isBareRefusal(_ values: [String: String]) -> Bool {
        values["oauth_token"] == nil && values["denied"] == nil && values["oauth_verifier"] == nil
            && values["oauth_problem"].map(refusals.contains) == true
    }

    public var description: String { "OAuth1Verifier(<redacted>)" }
}

/// An OAuth 1.0a sign-in in progress between OAuthCore and a user agent: the
/// same page, window and callback handling as OAuth 2, ending once with a
/// checked verifier or an error.
public final class OAuth1Flow: SignInFlow {
    public let authorization: OAuth1Authorization
    private let outcome = FlowOutcome<OAuth1Verifier>()

    public init(authorization: OAuth1Authorization) {
        self.authorization = authorization
    }

    public var authorizationURL: URL { authorization.url }
    public var redirectURI: URL { authorization.callback }
    public var isFinished: Bool { outcome.isFinished }
    public var succeeded: Bool? { outcome.succeeded }

    @discardableResult
    public func resume(with url: URL, method: String = "GET") -> Bool {
        outcome.resume(with: url, method: method, redirectURI: authorization.callback) {
            try OAuth1Verifier(callbackURL: url, for: authorization)
        }
    }

    /// Only a GET to the callback naming this attempt's request token, once (as
    /// `oauth_token`, or as `denied` for a refusal), or a bare refusal (`oauth_problem=user_refused`,
    /// which ends as cancelled); anything else is refused and the flow waits on.
    public func resumeFromListener(with url: URL, method: String) -> Bool {
        (outcome.listenerMayOffer(url, method: method, redirectURI: authorization.callback, names: ["oauth_token", "denied"]) {
            authorization.isOurs($0)
        } || isBareRefusal(outcome.listenerQuery(url, method: method, redirectURI: authorization.callback)))
            && resume(with: url, method: method)
    }

    /// Whether a listener's query says no and nothing else (see `OAuth1Verifier.isBareRefusal`);
    /// a name given twice is no plain refusal.
    private func isBareRefusal(_ pairs: [(name: String, value: String)]?) -> Bool {
        guard let pairs, Set(pairs.map(\.name)).count == pairs.count else { return false }
        return OAuth1Verifier.isBareRefusal(Dictionary(uniqueKeysWithValues: pairs.map { ($0.name, $0.value) }))
    }

    public func cancel() { outcome.finish(.failure(.cancelled)) }

    public func fail(_ error: OAuthError) { outcome.finish(.failure(error)) }

    /// Waits for the outcome.
    public func verifier() async throws -> OAuth1Verifier { try await outcome.value() }
}
