import Foundation

/// A real provider the sandbox can imitate (`latchkey-sandbox --behave-like …`),
/// so that Latchkey's presets are tested against what each provider really does
/// rather than against what the RFCs say it should.
///
/// Every difference is data here, each with the source it comes from; the
/// server reads these fields and never asks which provider it is imitating.
/// Paths are the provider's own, so a preset pointed at the sandbox differs
/// from the real one only in scheme, host and port.
public struct ProviderLikeness: Sendable {
    public enum Name: String, CaseIterable, Sendable {
        case standard, linkedin, github, gitlab, microsoft, google
    }

    /// When an authorization request must, may or must not carry a PKCE challenge.
    enum PKCERule: Sendable {
        /// Public clients must use it; confidential ones may (RFC 9700 §2.1.1 asks it of all).
        case requiredForPublicClients
        /// Accepted from anyone, required from nobody.
        case optional
        /// Not enabled for confidential clients: their challenge is ignored, and a verifier at the
        /// token endpoint fails client authentication (401 invalid_client), as LinkedIn's standard apps see.
        case refusedForConfidentialClients
    }

    /// Which clients get a refresh token.
    enum RefreshTokens: Sendable {
        case always
        case never
        /// Only when the authorization asked for this scope (Microsoft's `offline_access`).
        case withScope(String)
        /// Only when the authorization request carried this parameter (Google's `access_type=offline`).
        case withParameter(String, String)
    }

    /// How the token endpoint writes its answer.
    enum AnswerFormat: Sendable {
        case json
        /// `application/x-www-form-urlencoded` unless the client sends `Accept: application/json`.
        case formUnlessJSONAccepted
    }

    /// What the profile endpoint sends back, and where it lives.
    enum ProfileShape: Sendable {
        /// OpenID Connect UserInfo claims.
        case openIDConnect
        /// LinkedIn's UserInfo: `locale` is an object, `email_verified` a boolean.
        case linkedIn
        /// GitHub's `/user`: `login`, `html_url`, `avatar_url`; `name` and `email` may be null.
        case gitHub
        /// GitLab's `/api/v4/user`: `username`, `web_url`, `avatar_url`, `public_email`.
        case gitLab
    }

    public let name: Name
    let authorizePath: String
    let tokenPath: String
    let revokePath: String?
    let userinfoPath: String
    /// A second profile endpoint a client may try, and the status and body it gets.
    let closedEndpoint: (path: String, status: Int, body: String)?
    /// Where the discovery document is, if the provider publishes one.
    let discoveryPaths: [String]
    /// Appended to the base URL to make the issuer; `{tenantid}` is filled per token.
    let issuerPath: String
    /// The tenant named in Microsoft's ID tokens.
    let tenantID: String?
    let idTokenCarriesNonce: Bool
    /// Whether `email_verified` in the ID token is the string "true" rather than a boolean.
    let emailVerifiedAsString: Bool
    let pkce: PKCERule
    /// Whether a confidential client may authenticate with HTTP Basic (else only in the body).
    let acceptsBasicAuthentication: Bool
    /// Whether a client without a secret may sign in at all.
    let acceptsPublicClients: Bool
    /// Whether a client secret is refused from a client registered as public.
    let refusesSecretFromPublicClient: Bool
    /// Redirect URIs must be loopback (`http://127.0.0.1`, any port): no private-use scheme, no https.
    let loopbackRedirectOnly: Bool
    let answerFormat: AnswerFormat
    /// Token errors come with HTTP 200, and these names replace RFC 6749's.
    let errorsWithStatus200: Bool
    let errorNames: [String: String]
    let scopeSeparator: String
    let sendsTokenType: Bool
    /// nil: the access token lives until revoked, and the answer says no `expires_in`.
    public let accessTokenLifetime: Int?
    let refreshTokens: RefreshTokens
    /// Extra fields of the token answer.
    let extraTokenFields: [String: Int]
    /// The `error` of a redirect after Deny.
    let denyError: String
    /// The `error` of a redirect after Deny pressed before signing in, where the provider tells the two apart.
    var denyBeforeSignInError: String? = nil
    /// RFC 9207's `iss` on the redirect.
    let sendsIssuerInRedirect: Bool
    /// Whether API requests without `User-Agent` are refused (GitHub's REST API).
    let requiresUserAgent: Bool
    let profileShape: ProfileShape
    /// Where the public profile page of a user is: `{username}` is filled in.
    let profilePagePath: String
    let scopes: [String]
    /// Extra scope descriptions for the sign-in page.
    let scopeDescriptions: [String: String]
    /// The grant a token request without `grant_type` stands for (GitHub needs none for a code).
    var impliedGrantType: String? = nil
    /// Where its JWK Set is (`jwks_uri`), at the provider's own path.
    var jwksPath = "/jwks.json"
    /// What signs its ID tokens unless `--id-token-alg` says otherwise: the real ones use RS256.
    var idTokenAlgorithm = "ES256"

    /// Whether clients may register themselves (RFC 7591): only the RFC-strict
    /// sandbox; none of the imitated providers offers it to the public.
    var offersRegistration: Bool { name == .standard }

    /// RFC-strict, as the sandbox always was: the default.
    public static let standard = ProviderLikeness(
        name: .standard, authorizePath: "/authorize", tokenPath: "/token", revokePath: "/revoke", userinfoPath: "/userinfo",
        closedEndpoint: nil,
        discoveryPaths: ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"],
        issuerPath: "", tenantID: nil, idTokenCarriesNonce: true, emailVerifiedAsString: false,
        pkce: .requiredForPublicClients, acceptsBasicAuthentication: true, acceptsPublicClients: true,
        refusesSecretFromPublicClient: true, loopbackRedirectOnly: false, answerFormat: .json, errorsWithStatus200: false,
        errorNames: [:], scopeSeparator: " ", sendsTokenType: true, accessTokenLifetime: 3600, refreshTokens: .always,
        extraTokenFields: [:], denyError: "access_denied", sendsIssuerInRedirect: true, requiresUserAgent: false,
        profileShape: .openIDConnect, profilePagePath: "/in/{username}",
        scopes: ["openid", "profile", "email", "offline_access"], scopeDescriptions: [:])

    /// "Sign In with LinkedIn using OpenID Connect", a standard (not native) app.
    /// Sources: learn.microsoft.com/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
    /// (endpoints, ID token claims without nonce, userinfo with `locale` as an object),
    /// learn.microsoft.com/linkedin/shared/authentication/authorization-code-flow (secret in the
    /// body, 60-day tokens, refresh tokens only for approved partners, `user_cancelled_login` /
    /// `user_cancelled_authorize`), …/programmatic-refresh-tokens, and
    /// www.linkedin.com/oauth/.well-known/openid-configuration (issuer `…/oauth`, no `nonce` in
    /// `claims_supported`). PKCE is for LinkedIn's native apps only (…/authorization-code-flow-native);
    /// a standard app that sends a code_verifier is reported to get 401 invalid_client "Client
    /// authentication failed". Answers seen from the real service carry `scope` comma-separated and
    /// `email_verified` as the string "true" (keycloak#28686 and logto#6843 show the same tokens).
    public static let linkedin = ProviderLikeness(
        name: .linkedin, authorizePath: "/oauth/v2/authorization", tokenPath: "/oauth/v2/accessToken", revokePath: nil,
        userinfoPath: "/v2/userinfo",
        closedEndpoint: (
            "/v2/me", 403,
            #"{"serviceErrorCode":100,"code":"ACCESS_DENIED","message":"Not enough permissions to access: me.GET.NO_VERSION","status":403}"#
        ),
        discoveryPaths: ["/oauth/.well-known/openid-configuration"], issuerPath: "/oauth", tenantID: nil,
        idTokenCarriesNonce: false, emailVerifiedAsString: true, pkce: .refusedForConfidentialClients,
        acceptsBasicAuthentication: false, acceptsPublicClients: false, refusesSecretFromPublicClient: true,
        loopbackRedirectOnly: false, answerFormat: .json, errorsWithStatus200: false, errorNames: [:],
        scopeSeparator: ",", sendsTokenType: true, accessTokenLifetime: 5_184_000, refreshTokens: .never,
        extraTokenFields: [:], denyError: "user_cancelled_authorize", denyBeforeSignInError: "user_cancelled_login",
        sendsIssuerInRedirect: false,
        requiresUserAgent: false, profileShape: .linkedIn, profilePagePath: "/in/{username}",
        scopes: ["openid", "profile", "email"], scopeDescriptions: [:],
        jwksPath: "/oauth/openid/jwks", idTokenAlgorithm: "RS256")

    /// A GitHub OAuth app. Sources: docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
    /// (form-encoded answer unless `Accept: application/json`, `scope` comma-separated, `token_type=bearer`,
    /// loopback redirect with any port, PKCE S256, `bad_verification_code` / `incorrect_client_credentials` /
    /// `redirect_uri_mismatch` sent with HTTP 200, `error=access_denied` on Deny), docs.github.com/rest/users/users
    /// (`name` and `email` may be null), docs.github.com/rest/using-the-rest-api/getting-started-with-the-rest-api
    /// (requests without `User-Agent` are refused with 403). OAuth-app tokens do not expire and come
    /// without a refresh token; a client secret is required.
    public static let github = ProviderLikeness(
        name: .github, authorizePath: "/login/oauth/authorize", tokenPath: "/login/oauth/access_token", revokePath: nil,
        userinfoPath: "/user", closedEndpoint: nil, discoveryPaths: [], issuerPath: "", tenantID: nil,
        idTokenCarriesNonce: true, emailVerifiedAsString: false, pkce: .optional, acceptsBasicAuthentication: true,
        acceptsPublicClients: false, refusesSecretFromPublicClient: true, loopbackRedirectOnly: false,
        answerFormat: .formUnlessJSONAccepted, errorsWithStatus200: true,
        errorNames: ["invalid_grant": "bad_verification_code", "invalid_client": "incorrect_client_credentials"],
        scopeSeparator: ",", sendsTokenType: true, accessTokenLifetime: nil, refreshTokens: .never, extraTokenFields: [:],
        denyError: "access_denied", sendsIssuerInRedirect: false, requiresUserAgent: true, profileShape: .gitHub,
        profilePagePath: "/{username}", scopes: ["read:user", "user:email", "repo"],
        scopeDescriptions: ["read:user": "Read your profile data", "user:email": "See your e-mail addresses"],
        impliedGrantType: "authorization_code")

    /// gitlab.com. Sources: docs.gitlab.com/api/oauth2 (PKCE for non-confidential applications,
    /// 2-hour access tokens, rotating refresh tokens, `created_at` in the answer, `/oauth/revoke`),
    /// docs.gitlab.com/integration/openid_connect_provider (issuer `https://gitlab.com`, nonce echoed),
    /// docs.gitlab.com/api/users (`web_url`, `avatar_url`, `public_email`).
    public static let gitlab = ProviderLikeness(
        name: .gitlab, authorizePath: "/oauth/authorize", tokenPath: "/oauth/token", revokePath: "/oauth/revoke",
        userinfoPath: "/api/v4/user", closedEndpoint: nil, discoveryPaths: ["/.well-known/openid-configuration"],
        issuerPath: "", tenantID: nil, idTokenCarriesNonce: true, emailVerifiedAsString: false,
        pkce: .requiredForPublicClients, acceptsBasicAuthentication: true, acceptsPublicClients: true,
        refusesSecretFromPublicClient: true, loopbackRedirectOnly: false, answerFormat: .json, errorsWithStatus200: false,
        errorNames: [:], scopeSeparator: " ", sendsTokenType: true, accessTokenLifetime: 7200, refreshTokens: .always,
        extraTokenFields: ["created_at": 0], denyError: "access_denied", sendsIssuerInRedirect: false,
        requiresUserAgent: false, profileShape: .gitLab, profilePagePath: "/{username}",
        scopes: ["openid", "profile", "email", "read_user", "api"],
        scopeDescriptions: ["read_user": "Read your personal information"],
        jwksPath: "/oauth/discovery/keys", idTokenAlgorithm: "RS256")

    /// The Microsoft identity platform through the `/common` authority, a public
    /// "mobile and desktop" client. Sources: learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow
    /// (PKCE, refresh tokens with `offline_access`, `ext_expires_in`, public clients send no secret:
    /// AADSTS700025), learn.microsoft.com/entra/identity-platform/id-token-claims-reference (`iss`
    /// is `https://login.microsoftonline.com/{tid}/v2.0` with the user's tenant, `tid`, nonce echoed),
    /// learn.microsoft.com/entra/identity-platform/userinfo (`/oidc/userinfo`),
    /// learn.microsoft.com/entra/identity-platform/reply-url (loopback redirect, any port).
    public static let microsoft = ProviderLikeness(
        name: .microsoft, authorizePath: "/common/oauth2/v2.0/authorize", tokenPath: "/common/oauth2/v2.0/token",
        revokePath: nil, userinfoPath: "/oidc/userinfo", closedEndpoint: nil,
        discoveryPaths: ["/common/v2.0/.well-known/openid-configuration"], issuerPath: "/{tenantid}/v2.0",
        tenantID: "9188040d-6c67-4c5b-b112-36a304b66dad", idTokenCarriesNonce: true, emailVerifiedAsString: false,
        pkce: .requiredForPublicClients, acceptsBasicAuthentication: true, acceptsPublicClients: true,
        refusesSecretFromPublicClient: true, loopbackRedirectOnly: false, answerFormat: .json, errorsWithStatus200: false,
        errorNames: [:], scopeSeparator: " ", sendsTokenType: true, accessTokenLifetime: 3599,
        refreshTokens: .withScope("offline_access"), extraTokenFields: ["ext_expires_in": 3599],
        denyError: "access_denied", sendsIssuerInRedirect: false, requiresUserAgent: false, profileShape: .openIDConnect,
        profilePagePath: "/in/{username}", scopes: ["openid", "profile", "email", "offline_access", "User.Read"],
        scopeDescriptions: [:],
        jwksPath: "/common/discovery/v2.0/keys", idTokenAlgorithm: "RS256")

    /// Google, for a "Desktop app" client. Sources: developers.google.com/identity/protocols/oauth2/native-app
    /// (loopback redirect only — the out-of-band and custom-scheme options are gone for desktop clients —,
    /// PKCE S256, the client secret sent at the token endpoint, `access_type=offline` for a refresh token),
    /// developers.google.com/identity/openid-connect/openid-connect (issuer `https://accounts.google.com`,
    /// nonce echoed, userinfo claims with `email_verified`). Google refuses embedded web views
    /// (`disallowed_useragent`); the sandbox cannot tell a web view from a browser, so it refuses what
    /// an embedded view needs instead: any redirect that is not loopback.
    public static let google = ProviderLikeness(
        name: .google, authorizePath: "/o/oauth2/v2/auth", tokenPath: "/token", revokePath: "/revoke",
        userinfoPath: "/v1/userinfo", closedEndpoint: nil, discoveryPaths: ["/.well-known/openid-configuration"],
        issuerPath: "", tenantID: nil, idTokenCarriesNonce: true, emailVerifiedAsString: false, pkce: .optional,
        acceptsBasicAuthentication: true, acceptsPublicClients: false, refusesSecretFromPublicClient: true,
        loopbackRedirectOnly: true, answerFormat: .json, errorsWithStatus200: false, errorNames: [:],
        scopeSeparator: " ", sendsTokenType: true, accessTokenLifetime: 3599,
        refreshTokens: .withParameter("access_type", "offline"), extraTokenFields: [:], denyError: "access_denied",
        sendsIssuerInRedirect: false, requiresUserAgent: false, profileShape: .openIDConnect,
        profilePagePath: "/in/{username}", scopes: ["openid", "profile", "email"], scopeDescriptions: [:],
        jwksPath: "/oauth2/v3/certs", idTokenAlgorithm: "RS256")

    public static func named(_ name: Name) -> ProviderLikeness {
        switch name {
        case .standard: .standard
        case .linkedin: .linkedin
        case .github: .github
        case .gitlab: .gitlab
        case .microsoft: .microsoft
        case .google: .google
        }
    }

    /// What the sign-in page says it imitates; nil for the standard sandbox.
    var displayName: String? {
        switch name {
        case .standard: nil
        case .linkedin: "LinkedIn"
        case .github: "GitHub"
        case .gitlab: "GitLab"
        case .microsoft: "Microsoft"
        case .google: "Google"
        }
    }

    /// The issuer for a base URL; `tenant` fills `{tenantid}` (the discovery document keeps the placeholder).
    func issuer(base: String, tenant: String? = nil) -> String {
        let path = tenant.map { issuerPath.replacingOccurrences(of: "{tenantid}", with: $0) } ?? issuerPath
        return base + path
    }

    /// Whether this authorization earns a refresh token.
    func grantsRefreshToken(scopes: [String], parameters: [String: String]) -> Bool {
        switch refreshTokens {
        case .always: true
        case .never: false
        case .withScope(let scope): scopes.contains(scope)
        case .withParameter(let name, let value): parameters[name] == value
        }
    }

    /// RFC 6749 §5.2's error name, or what this provider calls it.
    func errorName(_ standard: String) -> String { errorNames[standard] ?? standard }
}
