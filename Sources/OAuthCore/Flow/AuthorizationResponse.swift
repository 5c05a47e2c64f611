import FoundationEssentials

/// The provider's answer on the redirect URI, checked: it is our redirect, its
/// state is ours, it carries exactly one code. Errors come first.
public struct AuthorizationResponse: Sendable, CustomStringConvertible {
    public let code: String
    /// The `iss` parameter (RFC 9207), when the provider sends it.
    public let issuer: String?

    public init(redirectURL: URL, for request: AuthorizationRequest) throws {
        guard RedirectMatcher(redirectURI: request.redirectURI).matches(redirectURL) else {
            throw OAuthError.notOurRedirect
        }
        // Providers answer in the query; a few (response_mode=fragment) in the fragment.
        let components = URLComponents(url: redirectURL, resolvingAgainstBaseURL: false)
        var pairs = FormCoding.decode(components?.percentEncodedQuery ?? "") ?? []
        if pairs.isEmpty, let fragment = components?.percentEncodedFragment {
            pairs = FormCoding.decode(fragment) ?? []
        }
        var values: [String: String] = [:]
        for (name, value) in pairs where Self.read.contains(name) {
            // RFC 6749 §3.1: no parameter twice. Two codes or two states cannot be trusted.
            // Only the parameters read here count, so the sentence names one of them and
            // never a name the URL made up (which could be anything, the state included).
            guard values[name] == nil else { throw OAuthError.repeatedParameter(name) }
            values[name] = value
        }
        // RFC 6749 §4.1.2 and §4.1.2.1: the state comes back with an answer and with an
        // error alike. Without ours nothing else in the URL is read, so a page that
        // merely knows the redirect URI cannot end the sign-in or put words on screen.
        guard let state = values["state"] else { throw OAuthError.missingState }
        guard constantTimeEquals(state, request.state) else { throw OAuthError.stateMismatch }
        // RFC 9207 §2.4, before anything else is read, errors included: an iss is compared octet for
        // octet with the issuer the metadata named (no case folding, no default port, no slash more
        // or less), and a server that says it always sends one (authorization_response_iss_parameter_supported)
        // must have sent one.
        if let sent = values["iss"], let expected = request.configuration.issuer, sent != expected.absoluteString {
            throw OAuthError.issuerMismatch
        }
        if values["iss"] == nil, request.configuration.requiresIssuerInResponse {
            throw OAuthError.issuerMissing
        }
        if let error = values["error"] {
            guard request.complete() else { throw OAuthError.requestAlreadyCompleted }
            // A provider's own name for a refusal counts as that refusal (LinkedIn's
            // user_cancelled_authorize is access_denied): the preset says so, not this code.
            switch request.configuration.errorAliases[error] ?? error {
            case "access_denied":
                throw OAuthError.cancelled
            default:
                // The provider's words are shown, but never this attempt's own secrets in them.
                let secrets = [request.state, request.codeVerifier, request.nonce]
                throw OAuthError.provider(
                    code: Redaction.safeCode(error, removing: secrets),
                    description: values["error_description"].map { Redaction.clip(Redaction.redact($0, removing: secrets)) })
            }
        }
        guard let code = values["code"], !code.isEmpty else { throw OAuthError.missingCode }
        guard request.complete() else { throw OAuthError.requestAlreadyCompleted }
        self.code = code
        self.issuer = values["iss"]
    }

    /// The parameters of an answer this code reads (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207).
    static let read: Set<String> = ["code", "state", "error", "error_description", "error_uri", "iss"]

    public var description: String { "AuthorizationResponse(code: <redacted>)" }
}
