import FoundationEssentials

/// What a protected resource said when it refused a token (RFC 6750 §3): its `WWW-Authenticate`
/// Bearer challenge, as a script hands it on. A 403 `insufficient_scope` asks for more scopes (a
/// step up, RFC 6750 §3.1); anything else (401, `invalid_token`, no error) says the token was
/// refused, which is also how a resource that moved to another authorization server is noticed.
public struct ResourceChallenge: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case insufficientScope
        case refused
    }

    public let kind: Kind
    /// The scopes the resource names (`scope`), in its order.
    public let scopes: [String]
    public let challenge: AuthenticateChallenge

    /// Reads a `WWW-Authenticate` header's value (`Bearer error="insufficient_scope", scope="…"`);
    /// a sentence when it holds no Bearer challenge.
    public init(header: String) throws {
        let challenges: [AuthenticateChallenge]
        do { challenges = try AuthenticateChallenge.parse(header) } catch {
            throw OAuthError.invalidConfiguration("the challenge cannot be read as a WWW-Authenticate header: \(error.reason).")
        }
        // A resource that takes DPoP-bound tokens alone challenges with DPoP (RFC 9449 §7.1), with the same parameters.
        guard let bearer = challenges.first(where: { $0.is("Bearer") }) ?? challenges.first(where: { $0.is("DPoP") }) else {
            throw OAuthError.invalidConfiguration(
                "the challenge holds no Bearer or DPoP challenge (RFC 6750 §3, RFC 9449 §7.1), so there is no token to answer it with.")
        }
        challenge = bearer
        kind = bearer["error"] == "insufficient_scope" ? .insufficientScope : .refused
        scopes = bearer["scope"].map { $0.split(separator: " ").map(String.init) } ?? []
        // RFC 6749 §3.3's scope-tokens, of a size a consent page and a provider file can hold: a
        // script hands on whatever the server sent, and these end up in both.
        guard scopes.count <= Self.mostScopes, scopes.allSatisfy(Self.isScopeToken) else {
            throw OAuthError.invalidConfiguration(
                "the challenge asks for scopes that are not scope names (RFC 6749 §3.3), or for more than \(Self.mostScopes) of them.")
        }
    }

    /// At most this many scopes asked at once, and in a sign-in's union.
    static let mostScopes = 32

    /// A scope-token (RFC 6749 §3.3: %x21 / %x23-5B / %x5D-7E), at most 128 characters.
    static func isScopeToken(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.count <= 128
            && scope.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }
}

/// What answering a challenge takes (see `ZeroConfiguration.answer`).
public enum ChallengeAnswer: Sendable {
    /// A token the resource will take, renewed without asking the person (a refresh).
    case renewed(Token)
    /// A new sign-in with this configuration: wider scopes, or the server the resource moved to.
    /// `reason` says why, for the person.
    case signIn(ProviderConfiguration, reason: String)
}

/// Step-ups and renewals asked for each resource lately: a server that keeps refusing is followed
/// a few times per resource and scope set, then refused with a sentence, instead of sending the
/// person to one consent page after another. One 0600 file per provider in a 0700 directory.
public struct ChallengeRecords: Sendable {
    public let directory: URL
    /// How many answers to one resource and scope set within `window` seconds.
    public let limit: Int
    /// How many answers to one resource within `window` seconds, whatever the scopes: a server
    /// asking for a new scope each time is not followed for ever either.
    public let resourceLimit: Int
    public let window: TimeInterval

    public init(directory: URL, limit: Int = 3, resourceLimit: Int = 6, window: TimeInterval = 600) {
        self.directory = directory
        self.limit = limit
        self.resourceLimit = resourceLimit
        self.window = window
    }

    struct Entry: Codable, Equatable {
        var scopes: String
        var at: Double
    }

    /// Counts one more answer for `provider` and `scopes`; throws the sentence when it would be
    /// more than `limit` within `window`.
    public func note(provider: String, scopes: [String], resource: String, now: Date = Date()) throws {
        guard ProviderCatalog.isPlainName(provider) else { return }
        let key = Set(scopes).sorted().joined(separator: " ")
        let file = directory.appendingPathComponent("\(provider).json")
        var entries = PrivateFile.ownContents(file, in: directory).flatMap { try? JSONDecoder().decode([Entry].self, from: $0) } ?? []
        entries.removeAll { now.timeIntervalSince1970 - $0.at > window || $0.at > now.timeIntervalSince1970 + 60 }
        guard entries.filter({ $0.scopes == key }).count < limit, entries.count < resourceLimit else {
            throw OAuthError.invalidConfiguration(
                "\(resource) kept refusing its token\(key.isEmpty ? "" : " (asking for \(key))"), answered \(min(entries.count, limit)) times in "
                    + "\(Int(window / 60)) minutes and stops here, so as not to ask you for one consent after another. "
                    + "The server may want something a sign-in cannot give; try again later.")
        }
        entries.append(Entry(scopes: key, at: now.timeIntervalSince1970))
        if let data = try? JSONEncoder().encode(entries) { PrivateFile.writeOwn(data, to: file, in: directory) }
    }
}

extension ZeroConfiguration {
    /// Answers `challenge`, which `resource` sent for the token last given out: the resource's
    /// metadata is read again (its authorization server may have changed: then the old grant is
    /// revoked where the old server allows, Latchkey registers anew at the new one and signs in
    /// there, and nothing of the old server's — client id, tokens — goes to the new one). Then:
    /// - more scopes (`insufficient_scope`): a new sign-in for the union of the scopes it had and
    ///   those asked, kept in the provider file; a refresh never widens a grant;
    /// - a refused token: renewed with the refresh token where there is one, never the refused one
    ///   again; else a new sign-in.
    /// `records` bounds how often one resource and scope set is answered.
    public func answer(
        _ challenge: ResourceChallenge, for resource: URL, tokens store: any TokenStore, records: ChallengeRecords?
    ) async throws -> ChallengeAnswer {
        let identifier = try ResourceDiscovery.identifier(of: resource)
        let id = try Self.id(for: identifier)
        var configuration = try await configuration(for: identifier, checkRegistration: false).configuration
        let session = AuthSession(
            configuration: configuration, store: store,
            tokenClient: TokenClient(configuration: configuration, network: network))
        let held = await session.currentToken()
        let had = configuration.scopes + (held?.allowedScopes(asked: configuration.scopes) ?? [])
        var wanted: [String] = []
        for scope in had + challenge.scopes where !wanted.contains(scope) { wanted.append(scope) }
        guard wanted.count <= ResourceChallenge.mostScopes else {
            throw OAuthError.invalidConfiguration(
                "\(identifier.absoluteString) asks for more scopes than a sign-in takes (\(wanted.count)); they are not asked for.")
        }
        try records?.note(provider: id, scopes: wanted, resource: identifier.absoluteString)

        // Where the resource sends its clients now, asked of the resource itself: the header a script
        // hands on is not trusted to say where its metadata is, nor so to end a sign-in.
        let metadata = try await ResourceDiscovery.metadata(for: identifier, network: network)
        let servers = metadata.authorizationServers.map(\.absoluteString)
        // Still named (in any order, a slash more or less), it has not moved.
        if let issuer = configuration.issuer?.absoluteString,
            !servers.contains(where: { Issuer.normalised($0) == Issuer.normalised(issuer) })
        {
            configuration = try await moved(identifier, id: id, to: metadata, from: session)
            return .signIn(
                try widened(configuration, to: wanted, id: id),
                reason:
                    "\(identifier.absoluteString) now takes tokens from \(configuration.issuer?.absoluteString ?? servers[0]): signing in there."
            )
        }
        switch challenge.kind {
        case .insufficientScope:
            return .signIn(
                try widened(configuration, to: wanted, id: id),
                reason: "\(identifier.absoluteString) asks for more: \(challenge.scopes.joined(separator: " ")).")
        case .refused:
            let widenedConfiguration = try widened(configuration, to: wanted, id: id)
            if widenedConfiguration.scopes == configuration.scopes, let held, held.canRefresh {
                do {
                    let renewed = try await session.replacement(forRejected: held)
                    if renewed.accessToken != held.accessToken { return .renewed(renewed) }
                } catch OAuthError.signedOut, OAuthError.invalidGrant {
                    // The grant is over: a new sign-in.
                }
            }
            return .signIn(widenedConfiguration, reason: "\(identifier.absoluteString) refused its token.")
        }
    }

    /// `configuration` asking for `scopes` from now on, kept in the provider's file.
    private func widened(_ configuration: ProviderConfiguration, to scopes: [String], id: String) throws -> ProviderConfiguration {
        guard scopes != configuration.scopes else { return configuration }
        try catalog.updateUserFile(for: id) { $0.scopes = .value(scopes) }
        var widened = configuration
        widened.scopes = scopes
        return widened
    }

    /// The resource moved to the authorization server `issuer`: Latchkey registers at the new
    /// server (RFC 7591 or a client metadata document) first; only once that is done is the old
    /// grant revoked where the old server allows and forgotten here, so a move that cannot be
    /// completed loses nothing. A client id the person gave by hand was for the old server: that
    /// is said, not sent to the new one.
    private func moved(_ identifier: URL, id: String, to metadata: ProtectedResourceMetadata, from old: AuthSession) async throws
        -> ProviderConfiguration
    {
        let issuer = metadata.authorizationServers[0].absoluteString
        let file = try ProviderCatalog.readFile(catalog.userFile(for: id))
        let registered = file.registrationEndpoint.value != nil || file.clientID.value.map { $0.hasPrefix("https://") } == true
        if let oldIssuer = old.configuration.issuer?.absoluteString, !(file.clientID.value ?? "").isEmpty, !registered {
            throw OAuthError.invalidConfiguration(
                "\(identifier.absoluteString) now takes tokens from \(issuer), but the client id in \(catalog.userFile(for: id).path) "
                    + "was given for \(oldIssuer). Register \(clientName) at \(issuer) and put its client id there.")
        }
        // The new server's provider, registered there and written (its secrets replacing the old
        // registration's), or an error with the old one untouched.
        let (configuration, _) = try await discoverAndRegister(identifier, id: id, saved: file, known: metadata)
        _ = await old.signOut()
        return configuration
    }
}
