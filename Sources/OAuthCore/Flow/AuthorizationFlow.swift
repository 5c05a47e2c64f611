import FoundationEssentials

/// One OAuth 2.0 sign-in in progress between OAuthCore and a user agent. It
/// ends once: with a checked `AuthorizationResponse`, or with an error.
public final class AuthorizationFlow: SignInFlow {
    public let request: AuthorizationRequest
    private let outcome = FlowOutcome<AuthorizationResponse>()

    /// The address the user agent opens: the request's own, or the one naming it once pushed (RFC 9126).
    public let authorizationURL: URL

    public init(request: AuthorizationRequest, authorizationURL: URL? = nil) {
        self.request = request
        self.authorizationURL = authorizationURL ?? request.url
    }

    public var redirectURI: URL { request.redirectURI }
    public var isFinished: Bool { outcome.isFinished }
    public var succeeded: Bool? { outcome.succeeded }

    /// Offers a navigation. True means it was the redirect URI: the flow has
    /// taken it (successfully or not) and the agent must not load it.
    /// `method` is the navigation's HTTP method: an answer posted as a form
    /// (`response_mode=form_post`) ends the flow with a sentence that says so,
    /// since a user agent that sees only addresses cannot read its fields.
    @discardableResult
    public func resume(with url: URL, method: String = "GET") -> Bool {
        outcome.resume(with: url, method: method, redirectURI: request.redirectURI) {
            try AuthorizationResponse(redirectURL: url, for: request)
        }
    }

    /// For a listener anyone on this computer can reach, such as a loopback port
    /// (RFC 8252 §8.3): a request ends the flow only when it is a GET to the
    /// redirect URI carrying this attempt's state, exactly once. Anything else —
    /// another path, no state, a wrong or repeated one, another method — is
    /// refused and the flow waits on, so a page that only knows the port can
    /// neither end the sign-in nor put words in front of the person.
    /// True: the flow took the request (successfully or not).
    public func resumeFromListener(with url: URL, method: String) -> Bool {
        outcome.listenerMayOffer(url, method: method, redirectURI: request.redirectURI, names: ["state"]) {
            constantTimeEquals($0, request.state)
        } && resume(with: url, method: method)
    }

    public func cancel() { outcome.finish(.failure(.cancelled)) }

    public func fail(_ error: OAuthError) { outcome.finish(.failure(error)) }

    /// Waits for the outcome.
    public func response() async throws -> AuthorizationResponse { try await outcome.value() }
}
