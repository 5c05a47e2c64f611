import FoundationEssentials

/// Everything that can go wrong in OAuthCore, each with a sentence a person
/// understands. No case carries a token, code, secret, verifier or state, and
/// text that came from a provider has those removed before it is kept.
public enum OAuthError: Error, Equatable, Sendable, CustomStringConvertible {
    // Configuration
    case invalidConfiguration(String)
    case unknownProvider(String)

    // The redirect back from the provider
    case cancelled
    case provider(code: String, description: String?)
    case notOurRedirect
    case stateMismatch
    case missingState
    case missingCode
    case repeatedParameter(String)
    /// The provider posted its answer to the redirect URI (`response_mode=form_post`).
    case answerPosted
    case issuerMismatch
    /// A discovery document names its issuer as `named`, which differs from the `asked` one by a
    /// trailing slash alone: another issuer all the same (RFC 8414 §3.3), but one a person may have
    /// meant, or a file written before issuers were compared exactly may hold.
    case issuerSpelledOtherwise(asked: String, named: String)
    /// The provider says it names itself in every answer (`iss`, RFC 9207), and this one did not.
    case issuerMissing
    case requestAlreadyCompleted
    /// OAuth 1.0a: the provider did not confirm the callback (`oauth_callback_confirmed`).
    case oauth1CallbackNotConfirmed
    /// OAuth 1.0a: a signed request refused by a provider whose clock is this far ahead (negative: behind).
    case clockOff(seconds: Int)
    /// OAuth 1.0a: the provider's `oauth_problem` (the Problem Reporting extension), with its advice.
    case oauth1Problem(String, advice: String?, endpoint: Endpoint)

    // The user agent
    case userAgent(String)
    /// The system browser could not be opened, or its answer never came.
    case browser(String)

    // Token and profile endpoints
    case invalidGrant(description: String?)
    case invalidClient(description: String?)
    case tokenEndpoint(code: String, description: String?)
    case httpStatus(Int, endpoint: Endpoint)
    case htmlInsteadOfJSON(endpoint: Endpoint)
    case emptyResponse(endpoint: Endpoint)
    case malformedResponse(endpoint: Endpoint, reason: String)
    case invalidIDToken(String)
    case profileOfSomeoneElse
    /// A sign-in whose person could not be found out (the profile did not answer), meant for an
    /// account whose person is known: nothing was kept, so that no one's tokens go over another's.
    case accountUnknown(reason: String)
    /// RFC 8628: the person refused the sign-in on the other device.
    case deviceSignInDenied
    /// RFC 8628: the code expired before the person answered on the other device.
    case deviceCodeExpired
    /// RFC 8628: the provider asks to wait longer between checks than its code lives.
    case deviceWaitOutlivesCode(interval: Int, lifetime: Int)
    /// A sign-in on another device that would send the person to a host that is none of the provider's.
    case deviceVerificationElsewhere(host: String, provider: String)

    // The network
    case timedOut(endpoint: Endpoint)
    case cannotConnect(endpoint: Endpoint)
    case connectionLost(endpoint: Endpoint)
    case network(endpoint: Endpoint, reason: String)

    // Session
    case signedOut(reason: String)
    case storage(String)
    /// A token narrower than the sign-in could not be had; the sentence says why (the sign-in is untouched).
    case narrowing(String)
    /// A resource refused the proof of the sign-in's DPoP key that went with its token (RFC 9449
    /// `invalid_dpop_proof`): the server's problem or a clock far off, not the token's; kept.
    case dpopProofRefused(endpoint: Endpoint, description: String?)

    /// Which of the provider's endpoints an error came from, for the sentence.
    public enum Endpoint: String, Sendable {
        case discovery = "discovery document"
        case resource = "protected resource"
        case resourceMetadata = "protected resource metadata"
        case registration = "registration endpoint"
        case keys = "signing keys (JWKS)"
        case authorization = "authorization page"
        case requestToken = "request token endpoint"
        case token = "token endpoint"
        case deviceAuthorization = "device authorization endpoint"
        case pushedAuthorization = "pushed authorization request endpoint"
        case revocation = "revocation endpoint"
        case profile = "profile endpoint"
    }

    /// The sentence, one line, with no control or format character: server text inside it
    /// (a description, a resource's name, a URL) reaches no window or terminal as anything but text.
    public var description: String { Redaction.printable(words) }

    private var words: String {
        switch self {
        case .invalidConfiguration(let reason): "The provider configuration is not usable: \(reason)"
        case .unknownProvider(let name): "There is no provider called “\(name)”."
        case .cancelled: "Sign-in cancelled."
        case .provider(let code, let description):
            "The provider refused the sign-in: \(description ?? Self.meaning(of: code)) (\(code))."
        case .notOurRedirect: "The sign-in page sent you to an address that is not this app's redirect URI."
        case .stateMismatch:
            "The answer from the provider does not belong to this sign-in, so it was ignored. Try signing in again."
        case .missingState: "The provider's answer had no state parameter, so it cannot be trusted. Try signing in again."
        case .missingCode: "The provider's answer had no authorization code. Try signing in again."
        case .repeatedParameter(let name):
            "The provider's answer named “\(name)” more than once, so it cannot be trusted. Try signing in again."
        case .answerPosted:
            "The provider sent its answer as a posted form (response_mode=form_post), which the sign-in window cannot read. "
                + "Remove response_mode from the provider file so the answer comes in the address."
        case .issuerMismatch: "The answer came from a different provider than the one asked. Try signing in again."
        case .issuerSpelledOtherwise(let asked, let named):
            "The discovery document of \(asked) names another issuer (\(Redaction.clip(named))), so it cannot be trusted "
                + "(RFC 8414 §3.3, OpenID Connect Discovery §4.3; an issuer is compared exactly, a slash more or less included)."
        case .issuerMissing:
            "The provider's answer did not say which server sent it (iss), though the provider says it always does, "
                + "so it cannot be trusted. Try signing in again."
        case .requestAlreadyCompleted: "This sign-in has already finished. Start a new one."
        case .oauth1CallbackNotConfirmed:
            "The provider did not confirm where to send you back after signing in (oauth_callback_confirmed), "
                + "so it may speak the older, unsafe OAuth 1.0. Only OAuth 1.0a is signed in with."
        case .clockOff(let seconds):
            "The provider refused a signed request, and its clock is \(Self.span(abs(seconds))) \(seconds > 0 ? "ahead of" : "behind") this computer's. "
                + "Signed requests carry the time: set this computer's clock right and try again. Your sign-in is kept."
        case .oauth1Problem(let problem, let advice, let endpoint):
            "The provider's \(endpoint.rawValue) refused the request: \(Self.oauth1Meaning(of: problem)) (\(problem))."
                + (Self.clause(advice).isEmpty ? "" : " It said: “\(Self.clause(advice).dropFirst(2))”.")
        case .userAgent(let reason): "The sign-in window failed: \(reason)"
        case .browser(let reason): "Signing in through your browser failed: \(reason)"
        case .invalidGrant(let description):
            "The provider no longer accepts this sign-in\(Self.clause(description)). Sign in again."
        case .invalidClient(let description):
            "The provider did not accept this app's client credentials\(Self.clause(description)). Check the client id and secret."
        case .tokenEndpoint(let code, let description):
            "The provider refused to issue tokens: \(description ?? Self.meaning(of: code)) (\(code))."
        case .httpStatus(let status, let endpoint):
            status >= 500
                ? "The provider's \(endpoint.rawValue) had a problem (HTTP \(status)). Try again in a moment."
                : "The provider's \(endpoint.rawValue) answered HTTP \(status)."
        case .htmlInsteadOfJSON(let endpoint):
            "The provider's \(endpoint.rawValue) answered with a web page instead of data. It may be down, or a network login page may be in the way."
        case .emptyResponse(let endpoint): "The provider's \(endpoint.rawValue) answered with nothing. Try again in a moment."
        case .malformedResponse(let endpoint, let reason):
            "The provider's \(endpoint.rawValue) answered with something that cannot be read (\(reason)). Try again in a moment."
        case .invalidIDToken(let reason): "The provider's identity token is not valid: \(reason)."
        case .profileOfSomeoneElse:
            "The provider's profile endpoint answered about someone other than the person who signed in, so it is not shown."
        case .deviceSignInDenied: "The sign-in was refused on the other device."
        case .deviceCodeExpired: "The code expired before the sign-in was finished on the other device. Start again for a new code."
        case .deviceVerificationElsewhere(let host, let provider):
            "The provider's sign-in on another device would have you type its code at \(host), which is none of \(provider)'s own "
                + "addresses, so it is not shown: a code typed there could sign someone else in as you. If \(host) is "
                + "really \(provider)'s, name it in the provider's file (\"device_verification_hosts\")."
        case .deviceWaitOutlivesCode(let interval, let lifetime):
            "The provider asks to wait \(interval) seconds between checks, longer than its code lasts (\(lifetime) seconds): "
                + "that sign-in could never finish. Try again later, or sign in another way."
        case .accountUnknown(let reason):
            "It could not be found out whose sign-in this was (\(reason.hasSuffix(".") ? String(reason.dropLast()) : reason)), so nothing was kept: "
                + "your accounts are as they were. Try again."
        case .timedOut(let endpoint): "The provider's \(endpoint.rawValue) took too long to answer. Check your connection and try again."
        case .cannotConnect(let endpoint):
            "Could not reach the provider's \(endpoint.rawValue). Check your connection and try again."
        case .connectionLost(let endpoint):
            "The connection to the provider's \(endpoint.rawValue) broke off mid-answer. Try again."
        case .network(let endpoint, let reason): "Could not talk to the provider's \(endpoint.rawValue): \(reason)."
        case .signedOut(let reason): reason
        case .storage(let reason): "Trouble with the saved sign-in: \(reason)"
        case .narrowing(let sentence): sentence
        case .dpopProofRefused(let endpoint, let description):
            "The provider's \(endpoint.rawValue) refused this computer's proof of the key the sign-in is bound to"
                + (description.flatMap { $0.isEmpty ? nil : " (\(Redaction.printable($0)))" } ?? "")
                + ". Your sign-in is kept; check that the clock is right and try again."
        }
    }

    /// True for failures worth retrying as they are: the network, a server
    /// having a bad moment. For a caller deciding whether to try again later.
    /// (It does not decide what AuthSession keeps: a refresh keeps the refresh
    /// token after every failure but `invalid_grant`, transient or not.)
    public var isTransient: Bool {
        switch self {
        case .timedOut, .cannotConnect, .connectionLost, .network, .htmlInsteadOfJSON, .emptyResponse, .malformedResponse:
            true
        case .httpStatus(let status, _): status >= 500 || status == 429 || status == 408
        case .tokenEndpoint(let code, _): code == "temporarily_unavailable" || code == "server_error"
        default: false
        }
    }

    /// A provider's description as the end of our sentence (": …"), without the full
    /// stop it may bring, which ours already has.
    static func clause(_ description: String?) -> String {
        guard var text = description?.trimmed(newlines: false), !text.isEmpty else { return "" }
        while text.hasSuffix(".") { text.removeLast() }
        return ": " + text
    }

    /// A reason written to follow "…: " as a sentence of its own: its first letter
    /// capitalised, unless it begins with a URL or a path, which stay as written
    /// (`http://…` is not `Http://…`).
    /// Printable, as every sentence of OAuthCore's is (see `description`).
    public static func sentence(_ reason: String) -> String {
        let reason = Redaction.printable(reason)
        let firstWord = reason.prefix { $0 != " " }
        guard !firstWord.contains("://"), !firstWord.hasPrefix("/"), !firstWord.hasPrefix("~") else { return reason }
        return reason.prefix(1).uppercased() + reason.dropFirst()
    }

    /// A length of time in words: "3 minutes", "2 hours".
    static func span(_ seconds: Int) -> String {
        let (count, unit) = seconds >= 7200 ? (seconds / 3600, "hour") : seconds >= 120 ? (seconds / 60, "minute") : (seconds, "second")
        return "\(count) \(unit)\(count == 1 ? "" : "s")"
    }

    /// The OAuth 1.0 Problem Reporting extension's problems in words.
    static func oauth1Meaning(of problem: String) -> String {
        switch problem {
        case "signature_invalid": "it did not accept the request's signature; check the consumer secret or private key"
        case "timestamp_refused": "it did not accept the request's time; check that this computer's clock is right"
        case "nonce_used": "it saw this request's one-time value before; try again"
        case "signature_method_rejected": "it does not accept this signature method; check signature_method"
        case "version_rejected": "it does not accept OAuth 1.0a"
        case "parameter_absent", "parameter_rejected": "it found a parameter missing or not allowed"
        case "consumer_key_unknown", "consumer_key_rejected", "consumer_key_refused":
            "it does not accept this app's consumer key; check the client id"
        case "token_used", "token_expired", "token_revoked", "token_rejected": "it no longer accepts the token; sign in again"
        case "verifier_invalid": "it did not accept the verification code; sign in again"
        case "permission_denied", "permission_unknown", "user_refused": "access was not granted"
        case "additional_authorization_required": "it needs further permission; sign in again"
        default: "an unexplained problem"
        }
    }

    /// Whether an OAuth 1.0a problem says the token itself is dead, so the sign-in is over;
    /// any other (a clock, a signature, a nonce) leaves the stored sign-in as it is.
    public static func oauth1ProblemEndsSignIn(_ problem: String) -> Bool {
        ["token_used", "token_expired", "token_revoked", "token_rejected", "permission_denied", "permission_unknown"].contains(problem)
    }

    /// RFC 6749 §4.1.2.1 and §5.2 in words, for providers that send no description.
    static func meaning(of code: String) -> String {
        switch code {
        case "invalid_request": "the request was malformed"
        case "unauthorized_client": "this app may not use this kind of sign-in"
        case "access_denied": "access was denied"
        case "unsupported_response_type": "the provider does not support this kind of sign-in"
        case "invalid_scope": "the app asked for permissions the provider does not know"
        case "server_error": "the provider had an internal error"
        case "temporarily_unavailable": "the provider is busy or down for maintenance"
        case "invalid_grant": "the sign-in is no longer valid"
        case "invalid_client": "the app's client credentials were not accepted"
        case "unsupported_grant_type": "the provider does not support this kind of token request"
        case "invalid_target": "the provider does not issue tokens for that resource"
        case "invalid_redirect_uri": "it does not accept the app's redirect URI"
        case "invalid_client_metadata": "it does not accept the app's description of itself"
        default: "an unexplained error"
        }
    }
}
