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
    /// What speaks for this provider's client: made anew when a registration is made again.
    private struct Clients: Sendable {
        let configuration: ProviderConfiguration
        let tokenClient: TokenClient
        let profileClient: ProfileClient
        /// One session per account, by key, made at its first use.
        var sessions: [String: AuthSession] = [:]
    }

    private let clients: Mutex<Clients>
    private let store: any TokenStore
    /// The provider's accounts (see `Provider+Accounts`); nil: one sign-in, under the provider's id.
    public let accountList: AccountList?
    /// The accounts as last read, and the file's stamp then: read again when the file changes.
    let listed = Mutex<(stamp: FileStamp?, entry: AccountList.Entry)?>(nil)
    /// How this provider is reached: every request made for it goes this way.
    public let network: Network
    private let registrations: ZeroConfiguration?
    private let reachable: @Sendable () async throws -> Void
    /// A provider by id, as the program finds one: with the `id_jag` grant, how the organisation's
    /// identity provider (`ProviderConfiguration.identityProvider`), whose sign-in gives the ID-JAGs, is had.
    public typealias Lookup = @Sendable (_ id: String) async throws -> Provider
    private let identityProviders: Lookup?
    /// The identity provider as first found (`identityProviders`): one lookup (files, keyring, perhaps
    /// discovery) for every token and every check of who is signed in there, not one each.
    private let identityProviderFound = FoundOnce<Provider>()

    /// - Parameters:
    ///   - accounts: where the provider's accounts are listed; nil: one sign-in, kept under its id.
    ///   - registrations: the service that registered this provider, if one did; nil: its client
    ///     id is the person's own, and never checked.
    ///   - reachable: returns once the provider can be reached, or throws the sentence why it cannot.
    public init(
        configuration: ProviderConfiguration, store: any TokenStore, network: Network = Network(),
        accounts: AccountList? = nil, registrations: ZeroConfiguration? = nil,
        reachable: @escaping @Sendable () async throws -> Void = {}, identityProviders: Lookup? = nil
    ) {
        self.identityProviders = identityProviders
        self.store = store
        accountList = accounts
        self.network = network
        self.registrations = registrations
        self.reachable = reachable
        clients = Mutex(Self.clients(for: configuration, network: network))
    }

    private static func clients(for configuration: ProviderConfiguration, network: Network) -> Clients {
        Clients(
            configuration: configuration, tokenClient: TokenClient(configuration: configuration, network: network),
            profileClient: ProfileClient(configuration: configuration, network: network))
    }

    /// The configuration in use: after a registration made again, the new client's.
    public var configuration: ProviderConfiguration { clients.withLock { $0.configuration } }

    /// The session that keeps the tokens of the account in use (see `Provider+Accounts`).
    public var session: AuthSession { session(key: accountInUseKey) }

    /// The session that keeps account `key`'s tokens: one per account for as long as this provider lives.
    public func session(key: String) -> AuthSession {
        let (store, logger) = (store, network.logger)
        return clients.withLock { clients in
            if let made = clients.sessions[key] { return made }
            var enterprise: EnterpriseSource?
            if let lookup = identityProviders, let id = clients.configuration.identityProvider {
                // Held by the session, which may outlive this provider: what it needs, not the provider.
                let found = identityProviderFound
                let identityProvider: @Sendable () async throws -> Provider = { try await found.value { try await lookup(id) } }
                enterprise = EnterpriseSource(
                    assertion: { audience, resource, scopes in
                        try await identityProvider().idJAG(audience: audience, resource: resource, scopes: scopes)
                    },
                    person: { try? await identityProvider().personSignedIn() })
            }
            let made = AuthSession(
                configuration: clients.configuration, store: store, tokenClient: clients.tokenClient, logger: logger, accountKey: key,
                enterprise: enterprise)
            clients.sessions[key] = made
            return made
        }
    }

    /// The sessions made so far (one per account used), none made for this.
    public var sessionsMade: [AuthSession] { clients.withLock { Array($0.sessions.values) } }

    var profileClient: ProfileClient { clients.withLock { $0.profileClient } }
    var tokenClient: TokenClient { clients.withLock { $0.tokenClient } }

    /// Returns once the provider can be reached; throws the sentence why it cannot.
    public func waitUntilReachable() async throws {
        try await reachable()
    }

    /// Signs in through `agent` (see `AuthSession.authorize`), after making sure the provider can be
    /// reached and still knows this client, and keeps the tokens as the account they turn out to be
    /// (see `Provider+Accounts`): the one `choice` meant, another found again, or a new one.
    public func signIn(
        using agent: some ExternalUserAgent, for choice: AccountChoice = .inUse,
        progress: @escaping @Sendable (AuthSession.SignInStep) -> Void = { _ in }
    ) async throws -> AuthSession.SignInOutcome {
        try await reachable()
        let id = configuration.id
        // The registration read back (and made again if the server forgot it): its client as kept now,
        // which may be a new one, or the same with a secret the server rotated.
        if let registrations, let kept = try await registrations.checkedRegistration(of: id, forBrowser: agent.listensOnLoopback) {
            if kept.clientID != configuration.clientID {
                network.logger.notice("\(Redaction.printable(kept.displayName)) had forgotten this client: registered again")
            }
            let made = Self.clients(for: kept, network: network)
            clients.withLock { $0 = made }
        }
        return try await signInAsAccount(using: agent, for: choice, progress: progress)
    }

    /// Signs in on another device (RFC 8628): a code is asked for and handed to `show` (say where to
    /// type it), then the token endpoint is asked at the provider's pace until the person answers
    /// there; the tokens are kept as the account they turn out to be (see `signIn(using:for:progress:)`).
    /// Cancelling the task ends the wait.
    public func signInOnDevice(
        for choice: AccountChoice = .inUse, show: @Sendable (DeviceAuthorization) async -> Void,
        wait: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) async throws -> AuthSession.SignInOutcome {
        try await reachable()
        // The registration read back, as for a sign-in in a browser: a new client, or a secret the server rotated.
        if let registrations, let kept = try await registrations.checkedRegistration(of: configuration.id, forBrowser: false) {
            let made = Self.clients(for: kept, network: network)
            clients.withLock { $0 = made }
        }
        return try await keepSignIn(for: choice) { session, _ in
            let client = session.tokenClient
            let authorization = try await client.startDeviceAuthorization()
            // Cancelled while the code was asked for: nothing to show.
            guard !Task.isCancelled else { throw OAuthError.cancelled }
            await show(authorization)
            return try await client.deviceToken(for: authorization, wait: wait)
        }
    }

    /// A fresh access token of the account in use: the stored one, renewed when due.
    public func freshToken() async throws -> Token {
        try await reachable()
        return try await session.freshToken()
    }

    /// A token good for at least `seconds` more, renewed when less remains (see `AuthSession.freshToken(validFor:)`).
    public func freshToken(validFor seconds: TimeInterval) async throws -> Token {
        try await reachable()
        return try await session.freshToken(validFor: seconds)
    }

    /// The profile of the account in use, or of account `key`; what it says of the person is kept in the account list.
    public func profile(account key: String? = nil) async throws -> Profile {
        try await reachable()
        let key = key ?? accountInUseKey
        let profile = try await profileClient.fetch(using: session(key: key))
        noteProfile(profile, of: key)
        return profile
    }

    /// Signs out of the account in use, or of account `key` (see `AuthSession.signOut`), and takes it off
    /// the list: the stored sign-in is forgotten even when the provider cannot be reached to revoke it.
    @discardableResult
    public func signOut(account key: String? = nil) async -> String? {
        do { try await reachable() } catch {
            network.logger.notice("Signing out without telling the provider", metadata: ["error": "\(error)"])
        }
        let key = key ?? accountInUseKey
        let outcome = await session(key: key).signOut()
        forgetAccount(key)
        return outcome
    }
}

/// A value found once by async work and kept; work that failed is tried again at the next ask.
final class FoundOnce<Value: Sendable>: Sendable {
    private let finding = Mutex<Task<Value, any Error>?>(nil)

    func value(_ find: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = finding.withLock { held in
            if let held { return held }
            let task = Task { try await find() }
            held = task
            return task
        }
        do { return try await task.value } catch {
            finding.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }
}
