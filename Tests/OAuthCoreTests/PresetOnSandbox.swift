import Foundation
import OAuthCore
import TestSupport

/// A shipped preset, unchanged but for its hosts, against the sandbox behaving
/// like that preset's provider (`latchkey-sandbox --behave-like`).
///
/// The hosts are moved the way a person would move them: a user file in the
/// config directory that names the same endpoints on another origin, layered
/// over the preset by `ProviderCatalog`. Client authentication, PKCE, nonce,
/// scopes and the profile mapping are the preset's own.
struct PresetOnSandbox {
    let sandbox: RunningSandbox
    let configuration: ProviderConfiguration
    let log = CapturedLog()
    let directory: TemporaryDirectory
    /// The user file that moved the preset: what docs/sandbox.md tells a person to write.
    let userFile: [String: Any]

    /// The sandbox's registered clients: a confidential one for presets that authenticate, a public one otherwise.
    static let confidential = ["client_id": "latchkey-confidential", "client_secret": "sandbox-secret"]
    static let publicClient = ["client_id": "latchkey-desktop"]

    init(_ preset: String, behavingLike provider: String? = nil, credentials: [String: String], sandboxArguments: [String] = [])
        async throws
    {
        sandbox = try await RunningSandbox.start(["--behave-like", provider ?? preset] + sandboxArguments)
        directory = try TemporaryDirectory()
        let original = try Self.presetObject(preset)
        var user = Self.rehosted(original, to: sandbox.baseURL)
        for (key, value) in credentials { user[key] = value }
        userFile = user
        let data = try JSONSerialization.data(withJSONObject: user, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: directory.url.appendingPathComponent("\(preset).json"))
        configuration = try Fixtures.catalog(userDirectory: directory.url).configuration(named: preset)
    }

    static func presetObject(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: Fixtures.presetDirectory.appendingPathComponent("\(name).json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// Every absolute URL of the preset that names an endpoint or issuer, with its
    /// scheme, host and port replaced by `base`; paths, queries and placeholders kept.
    static func rehosted(_ preset: [String: Any], to base: String) -> [String: Any] {
        func move(_ value: Any?) -> String? {
            guard let text = value as? String, let schemeEnd = text.range(of: "://") else { return nil }
            let rest = text[schemeEnd.upperBound...]
            let path = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? ""
            return base + path
        }
        var user: [String: Any] = [:]
        for key in [
            "issuer", "id_token_issuer", "authorization_endpoint", "token_endpoint", "revocation_endpoint", "userinfo_endpoint", "jwks_uri",
        ] {
            if let moved = move(preset[key]) { user[key] = moved }
        }
        if let profile = preset["profile"] as? [String: Any], let moved = move(profile["url_template_endpoint"]) {
            user["profile"] = ["url_template_endpoint": moved]
        }
        return user
    }

    func tokenClient() -> TokenClient { TokenClient(configuration: configuration, network: Network(timeout: 10, logger: log.logger)) }

    var store: FileTokenStore { FileTokenStore(directory: directory.url.appendingPathComponent("tokens"), logger: log.logger) }

    func session(now: @escaping @Sendable () -> Date = { Date() }) -> AuthSession {
        AuthSession(configuration: configuration, store: store, tokenClient: tokenClient(), logger: log.logger, now: now)
    }

    /// A provider keeping its accounts beside the tokens, as the app does.
    func provider() -> Provider {
        Provider(
            configuration: configuration, store: store, network: Network(timeout: 10, logger: log.logger),
            accounts: AccountList(directory: directory.url.appendingPathComponent("accounts")))
    }

    var profiles: ProfileClient { ProfileClient(configuration: configuration, network: Network(logger: log.logger)) }

    /// The sign-in page answered as a person would, then the checked redirect:
    /// the first half of a sign-in, for tests of the exchange itself.
    func authorize(_ agent: FormPostingUserAgent = FormPostingUserAgent(), redirectURI: URL? = nil) async throws
        -> (AuthorizationRequest, AuthorizationResponse)
    {
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: configuration, redirectURI: redirectURI))
        try await agent.present(flow)
        let response = try await flow.response()
        await agent.dismiss(flow)
        return (flow.request, response)
    }

    /// The whole sign-in as the app runs it: OAuthCore's own sequence.
    func signIn(
        _ agent: FormPostingUserAgent = FormPostingUserAgent(), redirectURI: URL? = nil, into session: AuthSession
    ) async throws -> Token {
        let request = AuthorizationRequest(configuration: configuration, redirectURI: redirectURI)
        return try await session.signIn(using: agent, request: request).token
    }
}
