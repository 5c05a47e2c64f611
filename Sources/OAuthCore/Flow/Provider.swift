import FoundationEssentials
import Logging
import Synchronization

/// One provider, ready to use: its configuration, the session that keeps its
/// tokens and the client that fetches its profile, made once, with one
/// program's network settings.
///
/// An app holds one while the provider is shown, and signs in the way AppAuth's
/// `OIDAuthState` does: it hands over a user agent and gets a signed-in session
/// back. What must happen first happens here: the provider is waited for until
/// it can be reached (a server the program starts itself), and a provider the
/// zero-configuration service registered has its registration read back, and
/// made again when the server forgot it (RFC 7592): the session and profile
/// client are then made anew for the new client, and everything after the
/// sign-in speaks as it.
public final class Provider: Sendable {
    private struct Clients: Sendable {
        let session: AuthSession
        let profileClient: ProfileClient
    }

    private let clients: Mutex<Clients>
    private let store: any TokenStore
    private let accounts: AccountRecords?
    /// How this provider is reached: every request made for it goes this way.
    public let network: Network
    private let registrations: ZeroConfiguration?
    private let reachable: @Sendable () async throws -> Void

    /// - Parameters:
    ///   - accounts: who was signed in before, so that another person is said (see `AccountRecords`).
    ///   - registrations: the service that registered this provider, if one did; nil: its client
    ///     id is the person's own, and never checked.
    ///   - reachable: returns once the provider can be reached, or throws the sentence why it cannot.
    public init(
        configuration: ProviderConfiguration, store: any TokenStore, network: Network = Network(),
        accounts: AccountRecords? = nil, registrations: ZeroConfiguration? = nil,
        reachable: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.store = store
        self.accounts = accounts
        self.network = network
        self.registrations = registrations
        self.reachable = reachable
        clients = Mutex(Self.clients(for: configuration, store: store, accounts: accounts, network: network))
    }

    private static func clients(
        for configuration: ProviderConfiguration, store: any TokenStore, accounts: AccountRecords?, network: Network
    ) -> Clients {
        let logger = network.logger
        let tokenClient = TokenClient(configuration: configuration, network: network)
        return Clients(
            session: AuthSession(
                configuration: configuration, store: store, tokenClient: tokenClient, logger: logger, accounts: accounts),
            profileClient: ProfileClient(configuration: configuration, network: network))
    }

    /// The configuration in use: after a registration made again, the new client's.
    public var configuration: ProviderConfiguration { session.configuration }

    /// The session that keeps this provider's tokens.
    public var session: AuthSession { clients.withLock { $0.session } }

    /// Returns once the provider can be reached; throws the sentence why it cannot.
    public func waitUntilReachable() async throws {
        try await reachable()
    }

    /// Signs in through `agent` (see `AuthSession.signIn(using:request:progress:)`), after
    /// making sure the provider can be reached and still knows this client.
    public func signIn(
        using agent: some ExternalUserAgent, progress: @escaping @Sendable (AuthSession.SignInStep) -> Void = { _ in }
    ) async throws -> AuthSession.SignInOutcome {
        try await reachable()
        let id = configuration.id
        // The registration read back (and made again if the server forgot it): its client as kept now,
        // which may be a new one, or the same with a secret the server rotated.
        if let registrations, let kept = try await registrations.checkedRegistration(of: id, forBrowser: agent.listensOnLoopback) {
            if kept.clientID != configuration.clientID {
                network.logger.notice("\(Redaction.printable(kept.displayName)) had forgotten this client: registered again")
            }
            let made = Self.clients(for: kept, store: store, accounts: accounts, network: network)
            clients.withLock { $0 = made }
        }
        return try await session.signIn(using: agent, progress: progress)
    }

    /// A fresh access token: the stored one, renewed when due.
    public func freshToken() async throws -> Token {
        try await reachable()
        return try await session.freshToken()
    }

    /// A token good for at least `seconds` more, renewed when less remains (see `AuthSession.freshToken(validFor:)`).
    public func freshToken(validFor seconds: TimeInterval) async throws -> Token {
        try await reachable()
        return try await session.freshToken(validFor: seconds)
    }

    /// The signed-in person's profile.
    public func profile() async throws -> Profile {
        try await reachable()
        let (session, profileClient) = clients.withLock { ($0.session, $0.profileClient) }
        return try await profileClient.fetch(using: session)
    }

    /// Signs out (see `AuthSession.signOut`): the stored sign-in is forgotten even
    /// when the provider cannot be reached to revoke it.
    @discardableResult
    public func signOut() async -> String? {
        do { try await reachable() } catch {
            network.logger.notice("Signing out without telling the provider", metadata: ["error": "\(error)"])
        }
        return await session.signOut()
    }
}
