import CAgentAnswer
import FoundationEssentials
import OAuthCore

/// A provider as programs name it: its id, or `provider/account` for one of its accounts (oidc-agent's
/// account names, the D-Bus interface's provider argument, `latchkey agent allow`'s), read here alone.
/// The provider part may also be one of its accounts' storage keys (`github@0a1b2c3d4e5f`), as the
/// agent's own sentences name an account.
public struct ProviderAccount: Sendable, Equatable, CustomStringConvertible {
    /// What names the provider: its id, or an account's storage key.
    public let provider: String
    /// The account after the slash (an e-mail address or a name); nil when none, or empty.
    public let account: String?

    public init(_ text: String) {
        guard let slash = text.firstIndex(of: "/") else {
            (provider, account) = (text, nil)
            return
        }
        let account = String(text[text.index(after: slash)...])
        (provider, self.account) = (String(text[..<slash]), account.isEmpty ? nil : account)
    }

    /// The provider's id, whether `provider` is the id or one of its accounts' storage keys.
    public var providerID: String { String(provider.prefix { $0 != "@" }) }

    /// As a program would write it.
    public var description: String { account.map { "\(provider)/\($0)" } ?? provider }
}

/// What a program asks the agent for, whichever way it asked (oidc-agent's
/// socket protocol, D-Bus, Latchkey's own commands).
public struct AgentRequest: Sendable, Equatable {
    /// Whose token.
    public enum Target: Sendable, Equatable {
        /// A provider's id (an "account" in oidc-agent's words).
        case provider(String)
        /// The provider whose issuer this is (oidc-agent's `issuer`).
        case issuer(String)
        /// A protected resource's URL: its provider, found as `latchkey token --resource` finds it.
        case resource(URL)
    }

    public var target: Target
    /// Which of the provider's accounts (an e-mail address or a name, as Latchkey shows it); nil: the one in use.
    public var account: String?
    /// The account by its key, once the agent has found it (and asked the person about it): the
    /// token is that account's, whichever is in use by the time it is fetched. Never read from a program.
    var accountKey: String?
    /// Seconds the token must still be good for. `renewNow` (oidc-agent's `-f`, sent as -1): renewed whatever is left.
    public var minimumValidity: Int
    /// `minimumValidity` is a wish, not a need (the git helper's default): for a provider whose tokens
    /// live less than twice as long, it is half their lifetime, as the renewal margin is, so that a
    /// fresh token counts and not every call spends a renewal. An explicit ask (`--min-valid`) is kept.
    public var minimumWithinLifetime = false
    /// Scopes the token must carry; empty: whatever the sign-in allows.
    public var scopes: [String]
    /// oidc-agent's `audience`: a token for this audience only (a resource's URL, as `resource` is).
    public var audience: String?
    /// The resource (RFC 8707) the token is for alone; nil: the sign-in's own.
    public var resource: URL?
    /// What the program calls itself (oidc-agent's `application_hint`): shown to the person, never trusted.
    public var applicationHint: String?
    /// Whether the person may be asked about it (the agent's question): false for a program that runs
    /// where nobody can answer (`--no-interaction`, `CI=true`, git's `credential.interactive=false`),
    /// which is then told at once what the person would have had to allow.
    public var interactive = true
    /// The request a DPoP proof is wanted for, to go with the token (RFC 9449 §7): the agent signs it
    /// with the sign-in's key, which the program never gets.
    public var proof: ProofRequest?

    /// What a DPoP proof is signed for: the method and URL of the program's request to a resource,
    /// and the nonce that resource gave, if any.
    public struct ProofRequest: Sendable, Equatable {
        public var method: String
        public var url: URL
        public var nonce: String?

        public init(method: String, url: URL, nonce: String? = nil) {
            (self.method, self.url, self.nonce) = (method, url, nonce)
        }

        /// Why a proof cannot be signed for this (an HTTP method is a token of letters, RFC 9110
        /// §9.1; the URL an absolute http(s) one; a nonce visible ASCII, RFC 9449 §8); nil when it can.
        public var problem: String? {
            guard (1...32).contains(method.utf8.count), method.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else {
                return "A DPoP proof's method is an HTTP method in capitals (GET, POST, …)."
            }
            guard url.host?.isEmpty == false, url.user == nil, url.password == nil, ProviderConfiguration.isSecureOrLoopback(url) else {
                return "A DPoP proof's URL is an absolute https URL (http only on this computer), without a user name or password."
            }
            if let nonce,
                nonce.isEmpty || nonce.utf8.count > 1024
                    || !nonce.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C })
            {
                return "A DPoP nonce is what the resource sent in its DPoP-Nonce header: up to 1024 visible ASCII characters."
            }
            return nil
        }

        /// Why no proof of `configuration`'s sign-in key is signed for this: the provider's own endpoints
        /// (a proof there would let a program act as Latchkey: exchange, refresh, push), or a URL outside
        /// the resource its token was narrowed to; nil when one may be.
        public func problem(for configuration: ProviderConfiguration, resource: URL?) -> String? {
            if let problem { return problem }
            let own = [
                configuration.tokenEndpoint, configuration.authorizationEndpoint, configuration.deviceAuthorizationEndpoint,
                configuration.pushedAuthorizationRequestEndpoint, configuration.revocationEndpoint,
            ].compactMap { $0 }
            if own.contains(where: { Self.place($0) == Self.place(url) }) {
                return
                    "Latchkey signs no proof for \(configuration.displayName)'s own endpoints (\(Redaction.printable(Self.place(url)))): only for requests to resources."
            }
            if let resource,
                !Self.place(url).hasPrefix(Self.place(resource).hasSuffix("/") ? Self.place(resource) : Self.place(resource) + "/"),
                Self.place(url) != Self.place(resource)
            {
                return
                    "This token is for \(Redaction.printable(Self.place(resource))) alone: Latchkey signs no proof for a request elsewhere."
            }
            return nil
        }

        /// Scheme, host and port as RFC 3986 compares them, and the path: where a request goes.
        static func place(_ url: URL) -> String {
            var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) ?? URLComponents()
            (parts.query, parts.fragment, parts.user, parts.password) = (nil, nil, nil, nil)
            parts.scheme = parts.scheme?.lowercased()
            parts.host = parts.host?.lowercased()
            if (parts.scheme, parts.port) == ("https", 443) || (parts.scheme, parts.port) == ("http", 80) { parts.port = nil }
            if parts.path.isEmpty { parts.path = "/" }
            return parts.string ?? url.absoluteString
        }
    }

    /// What the program asked for, in its own words (never what the agent found for it): what a
    /// refusal may name before the person allowed the program anything.
    public var asked: String {
        let words =
            switch target {
            case .provider(let id): account.map { "\(id)/\($0)" } ?? id
            case .issuer(let issuer): issuer
            case .resource(let url): url.absoluteString
            }
        return Redaction.printable(String(words.prefix(160)))
    }

    /// What the program asked of the sign-in: its scopes, and the resource (or the audience, when a URL).
    public var narrowing: Narrowing {
        Narrowing(scopes: scopes, resource: resource ?? audience.flatMap(Self.resourceURL))
    }

    /// An audience Latchkey can narrow to: an absolute http(s) URL without a fragment (RFC 8707 §2).
    public static func resourceURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            url.host?.isEmpty == false, url.fragment == nil
        else { return nil }
        return url
    }

    /// Why the scopes asked for cannot be (RFC 6749 §3.3: visible ASCII but `"` and `\`; here at most
    /// 32 of them, of 128 characters each); nil when they can.
    public var scopesProblem: String? {
        guard scopes.count <= 32 else { return "At most 32 scopes may be asked for at once." }
        for scope in scopes
        where scope.isEmpty || scope.utf8.count > 128 || !scope.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C })
        {
            return
                "“\(Redaction.printable(String(scope.prefix(64))))” is not a scope: a scope is up to 128 visible ASCII characters, without spaces, quotes or backslashes."
        }
        return nil
    }

    public static let renewNow = -1
    /// The most a caller may ask a token to stay good for: a day.
    public static let longestValidity = 86_400

    public init(
        target: Target, account: String? = nil, minimumValidity: Int = 0, scopes: [String] = [], audience: String? = nil,
        resource: URL? = nil, applicationHint: String? = nil, proof: ProofRequest? = nil
    ) {
        self.proof = proof
        self.resource = resource
        self.target = target
        self.account = account.flatMap { $0.isEmpty ? nil : $0 }
        self.minimumValidity = minimumValidity
        self.scopes = scopes
        self.audience = audience
        self.applicationHint = applicationHint
    }
}

/// The agent's answer: a token, with what a caller needs to use it (never a refresh token).
public struct AgentToken: Sendable, Equatable {
    public var accessToken: String
    public var tokenType: String
    public var expiresAt: Date?
    public var scopes: [String]
    /// The provider's id and issuer (oidc-agent's answer names the issuer).
    public var provider: String
    public var issuer: String
    /// The DPoP proof asked for (`AgentRequest.proof`), for a token bound to the sign-in's key; nil otherwise.
    public var proof: String?

    /// Whether a resource takes the token only with a DPoP proof (`token_type` DPoP).
    public var needsProof: Bool { tokenType.lowercased() == "dpop" }

    public init(accessToken: String, tokenType: String, expiresAt: Date?, scopes: [String], provider: String, issuer: String) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.provider = provider
        self.issuer = issuer
    }
}

extension AgentToken: CustomStringConvertible {
    /// Never the token itself.
    public var description: String { "AgentToken(\(provider), \(tokenType), expires \(expiresAt.map { "\($0)" } ?? "unknown"))" }
}

/// Why the agent gave no token, in a sentence for the person (and its kind, for protocols that have error names).
public struct AgentRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Its name on the socket (`kind`) and on D-Bus (the error's name) is latchkey_token.h's, the
    /// header the C front reads the same answers with.
    public enum Kind: Sendable, CaseIterable {
        /// The person said no, or could not be asked.
        case denied
        /// The person would have had to be asked, and the program said nobody may be (`interactive` false).
        case needsPerson
        /// No sign-in, or the provider no longer accepts it: sign in again.
        case signedOut
        /// The request itself is wrong: no such provider, an unknown request, a malformed message.
        case invalid
        /// Anything else: the network, the provider, the store.
        case failed

        public var name: String {
            switch self {
            case .denied: LATCHKEY_REFUSAL_DENIED
            case .needsPerson: LATCHKEY_REFUSAL_NEEDS_PERSON
            case .signedOut: LATCHKEY_REFUSAL_SIGNED_OUT
            case .invalid: LATCHKEY_REFUSAL_INVALID
            case .failed: LATCHKEY_REFUSAL_FAILED
            }
        }

        public init?(name: String) {
            guard let kind = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = kind
        }
    }

    public let kind: Kind
    public let sentence: String

    public init(_ kind: Kind, _ sentence: String) {
        self.kind = kind
        self.sentence = sentence
    }

    public var description: String { sentence }

    /// What a failure of OAuthCore's means to a caller: no sign-in (or one the provider no longer
    /// accepts) is `signedOut`, anything else `failed`; the error's own sentence either way.
    public init(_ error: any Error) {
        if let refusal = error as? AgentRefusal {
            self = refusal
        } else if case .signedOut? = error as? OAuthError {
            self.init(.signedOut, "\(error)")
        } else {
            self.init(.failed, "\(error)")
        }
    }
}
