import Foundation
import Logging
import OAuthCore
import TestSupport
import Testing

/// Every line OAuthCore logged during a test, to search for secrets.
final class CapturedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var text: String { lock.withLock { lines.joined(separator: "\n") } }
    var count: Int { lock.withLock { lines.count } }
    func append(_ line: String) { lock.withLock { lines.append(line) } }

    var logger: Logger {
        Logger(label: "OAuthCore.test") { label in CapturingLogHandler(label: label, log: self) }
    }
}

struct CapturingLogHandler: LogHandler {
    let label: String
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        log.append("\(event.level) \(label): \(event.message) \(all)")
    }
}

/// The real latchkey-sandbox with OAuthCore configured for it.
struct LiveSandbox {
    let sandbox: RunningSandbox
    let configuration: ProviderConfiguration
    let log = CapturedLog()
    let directory: URL

    /// `adjust`: what overrides (strings) cannot say, such as a flag.
    init(_ arguments: [String] = [], overrides: [String: String] = [:], adjust: (inout ProviderConfiguration) -> Void = { _ in })
        async throws
    {
        sandbox = try await RunningSandbox.start(arguments)
        var configuration = try ProviderCatalog(
            presetDirectories: [Fixtures.presetDirectory],
            userConfigDirectory: URL(fileURLWithPath: "/nonexistent"), environment: [:]
        ).configuration(named: "sandbox", overrides: ["issuer": sandbox.baseURL].merging(overrides) { _, new in new })
        adjust(&configuration)
        self.configuration = configuration
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString)")
    }

    var store: FileTokenStore { FileTokenStore(directory: directory, logger: log.logger) }

    func tokenClient(timeout: TimeInterval = 10) -> TokenClient {
        TokenClient(configuration: configuration, network: Network(timeout: timeout, logger: log.logger))
    }

    func session(now: @escaping @Sendable () -> Date = { Date() }) -> AuthSession {
        AuthSession(configuration: configuration, store: store, tokenClient: tokenClient(), logger: log.logger, now: now)
    }

    var profiles: ProfileClient { ProfileClient(configuration: configuration, network: Network(logger: log.logger)) }

    /// Presents the request to a user agent and waits for the checked response:
    /// the first half of a sign-in, for tests of the exchange itself.
    func authorize(
        _ agent: FormPostingUserAgent = FormPostingUserAgent(), redirectURI: URL? = nil
    ) async throws -> (AuthorizationRequest, AuthorizationResponse) {
        let flow = AuthorizationFlow(request: AuthorizationRequest(configuration: configuration, redirectURI: redirectURI))
        try await agent.present(flow)
        let response = try await flow.response()
        await agent.dismiss(flow)
        return (flow.request, response)
    }

    /// The whole sign-in as the app runs it: OAuthCore's own sequence.
    func signIn(_ session: AuthSession) async throws -> Token {
        try await session.signIn(using: FormPostingUserAgent()).token
    }

    /// A refresh of `session`'s token that the provider holds for `seconds`
    /// before answering; returns once the provider has the request, so the
    /// caller can sign in or out while it waits.
    func refreshHeldAtTheProvider(_ session: AuthSession, seconds: Double = 3) async throws -> Task<Token, any Error> {
        let before = try #require(try await sandbox.statistics()["token_requests"])
        try await sandbox.setFault("token", "delay", delaySeconds: seconds)
        let refreshing = Task { try await session.freshToken() }
        try await within(30) {
            while try await sandbox.statistics()["token_requests"] == before { try await Task.sleep(for: .milliseconds(20)) }
        }
        return refreshing
    }

    /// What the provider says of a refresh token, asked with curl.
    func refreshStatus(_ refreshToken: String) async throws -> String? {
        try await HTTPClient().postForm(
            "\(sandbox.baseURL)/token",
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", configuration.clientID)]
        ).error
    }

    func revokeAtProvider(_ token: String) async throws {
        _ = try await HTTPClient().postForm("\(sandbox.baseURL)/revoke", [("token", token), ("client_id", configuration.clientID)])
    }
}

/// Fails a test that would otherwise hang.
func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw SandboxTestError("no answer within \(seconds) s")
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

/// A moment an hour from now: every stored token looks expired.
let anHourLater: @Sendable () -> Date = { Date().addingTimeInterval(3600) }

/// A real file store whose saves fail while `failing` is set, as a locked keyring or a full disk would.
final class FailingStore: TokenStore, @unchecked Sendable {
    let inner: FileTokenStore
    private let lock = NSLock()
    private var _failing = false

    init(_ inner: FileTokenStore) { self.inner = inner }

    var failing: Bool {
        get { lock.withLock { _failing } }
        set { lock.withLock { _failing = newValue } }
    }

    var displayName: String { inner.displayName }
    func load(for provider: String) throws -> Token? { try inner.load(for: provider) }
    func save(_ token: Token, for provider: String) throws -> String? {
        if failing { throw OAuthError.storage("the disk is full") }
        return try inner.save(token, for: provider)
    }
    func remove(for provider: String) throws { try inner.remove(for: provider) }
    func refreshLock(for provider: String) -> ProcessLock? { inner.refreshLock(for: provider) }
}
