import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Everything the sandbox has issued, and the faults it was asked to inject.
/// One actor, so that "a code is used once" holds under concurrent requests.
actor SandboxState {
    /// A sign-in page that was shown and not yet answered.
    struct PendingAuthorization {
        let client: SandboxClient
        let redirectURI: String
        let state: String
        let scopes: [String]
        let codeChallenge: String?
        let nonce: String?
        /// Whether the provider being imitated gives this authorization a refresh token.
        let grantsRefreshToken: Bool
        /// The protected resource its tokens are for (RFC 8707), nil for the provider's own API.
        let resource: String?
        let expiresAt: Date
        /// The username the page starts with: the user a `login_hint` named (OIDC Core §3.1.2.1).
        var username = ""
        /// `prompt=select_account`: the page says it is for choosing an account.
        var choosingAccount = false
        /// RFC 9449 §10 `dpop_jkt`: the key the code's exchange must prove.
        var dpopKey: String? = nil
    }

    struct AuthorizationCode {
        let clientID: String
        let redirectURI: String
        let codeChallenge: String?
        let scopes: [String]
        let nonce: String?
        let grantsRefreshToken: Bool
        let resource: String?
        let username: String
        let expiresAt: Date
        var used = false
        /// RFC 9449 §10: the key its exchange must prove (`dpop_jkt`).
        var dpopKey: String? = nil
        /// The grant its exchange created, revoked if the code is replayed.
        var grantID: String?
    }

    /// Everything that descends from one authorization: revoking it kills all its tokens.
    struct Grant: Codable {
        let clientID: String
        let username: String
        let scopes: [String]
        /// The audience of its access tokens (RFC 8707): one protected resource, or
        /// nil for the provider's own UserInfo, which no protected resource accepts.
        var resource: String? = nil
        /// The authorization server that issued it: the sandbox's own, or its second one (`/as2`).
        var issuer: String? = nil
        var revoked = false
        /// RFC 9449: the thumbprint of the key its tokens are bound to (`cnf.jkt`); nil: bearer tokens.
        var dpopKey: String? = nil
    }

    /// A client that registered itself (RFC 7591), and the token that lets it read
    /// its registration (RFC 7592), kept as a hash.
    struct Registration: Codable {
        let client: SandboxClient
        var accessTokenHash: String
        let issuedAt: Date
        let applicationType: String
        let authenticationMethod: String
        let grantTypes: [String]
        /// The authorization server it was made at: a client of one is unknown at the other.
        var issuer: String? = nil
    }

    struct AccessToken: Codable {
        let grantID: String
        let scopes: [String]
        let expiresAt: Date
        var revoked = false
        /// The resource a narrowing (a refresh or a token exchange naming `resource`) made it for,
        /// where that is not its grant's; nil: the grant's.
        var audience: String? = nil
    }

    struct RefreshToken: Codable {
        let grantID: String
        var rotated = false
        /// When it stops working (`SandboxConfiguration.refreshTokenTTL`); nil: never.
        var expiresAt: Date?
    }

    private var pending: [String: PendingAuthorization] = [:]
    private var codes: [String: AuthorizationCode] = [:]
    private var grants: [String: Grant] = [:]
    private var accessTokens: [String: AccessToken] = [:]
    private var refreshTokens: [String: RefreshToken] = [:]
    private var registrations: [String: Registration] = [:]
    /// OAuth 1.0a: temporary credentials, the sign-in pages showing them, token
    /// credentials, and the nonces seen within the timestamp window.
    var oauth1Temporary: [String: OAuth1Temporary] = [:]
    var oauth1Pages: [String: String] = [:]
    var oauth1Access: [String: OAuth1Access] = [:]
    var oauth1Nonces: [String: Date] = [:]
    /// RFC 8628: device authorizations by device code (see SandboxState+Device).
    var devices: [String: DeviceAuthorization] = [:]
    /// RFC 9126: pushed authorization requests by request_uri (see SandboxServer+Pushed).
    var pushed: [String: PushedRequest] = [:]
    private var faults: [Fault]
    private(set) var statistics = Statistics()
    /// RFC 9449 §8: the nonce every DPoP proof must carry (with `--dpop nonce`), new on demand.
    var dpopNonce = Base64URL.randomToken(bytes: 16)
    /// Every DPoP proof's `jti` seen (§11.1), with its `iat`: a proof is used once, and is forgotten only
    /// once it is too old to be taken anyway.
    var dpopProofsSeen: [String: Double] = [:]
    /// Every client assertion's and ID-JAG's `jti` seen, with its `exp`: each is used once (RFC 7523 §3).
    var assertionsSeen: [String: Double] = [:]
    /// As an organisation's identity provider: who may have an ID-JAG for which server (`POST /_admin/id-jag-policy`).
    var idJAGPolicy: [IDJAGPolicy] = []
    /// Where grants and tokens survive a restart, so a client's stored tokens
    /// still work after the sandbox (started afresh with each app launch) comes back.
    private let stateFile: URL?

    /// What is written to the state file.
    struct Snapshot: Codable {
        var grants: [String: Grant]
        var accessTokens: [String: AccessToken]
        var refreshTokens: [String: RefreshToken]
        /// Absent in files written before registration existed.
        var registrations: [String: Registration]?
        /// OAuth 1.0a token credentials; absent in files written before they existed.
        var oauth1Tokens: [String: OAuth1Access]?
    }

    init(faults: [Fault], stateFile: URL? = nil) throws {
        self.faults = faults
        self.stateFile = stateFile
        if let stateFile, let data = FileManager.default.contents(atPath: stateFile.path) {
            let snapshot = try JSONDecoder().decode(Snapshot.self, from: data)
            grants = snapshot.grants
            accessTokens = snapshot.accessTokens
            refreshTokens = snapshot.refreshTokens
            registrations = snapshot.registrations ?? [:]
            oauth1Access = snapshot.oauth1Tokens ?? [:]
        }
    }

    /// Writes the grants and tokens that can still be used — not expired access
    /// tokens, not revoked grants, so the file does not grow with every launch —
    /// 0600, to a temporary file renamed into place.
    func persist(now: Date = Date()) {
        guard let stateFile else { return }
        let live = grants.filter { !$0.value.revoked }
        let snapshot = Snapshot(
            grants: live,
            accessTokens: accessTokens.filter { live[$0.value.grantID] != nil && !$0.value.revoked && $0.value.expiresAt > now },
            refreshTokens: refreshTokens.filter { live[$0.value.grantID] != nil },
            registrations: registrations,
            oauth1Tokens: oauth1Access.filter { !$0.value.revoked })
        guard let data = try? JSONEncoder().encode(snapshot) else { return }
        let temporary = stateFile.path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == data.count { rename(temporary, stateFile.path) } else { unlink(temporary) }
    }

    // MARK: Sign-in pages

    func addPending(_ authorization: PendingAuthorization) -> String {
        let id = Base64URL.randomToken()
        pending[id] = authorization
        return id
    }

    func pending(_ id: String, now: Date = Date()) -> PendingAuthorization? {
        guard let authorization = pending[id] else { return nil }
        guard authorization.expiresAt > now else {
            pending[id] = nil
            return nil
        }
        return authorization
    }

    func removePending(_ id: String) {
        pending[id] = nil
    }

    // MARK: Codes

    func issueCode(_ code: AuthorizationCode) -> String {
        let value = "sbx_code_" + Base64URL.randomToken()
        codes[value] = code
        return value
    }

    enum CodeRedemption {
        case redeemed(AuthorizationCode)
        case unknown, expired, replayed
    }

    /// Marks a code used. A second use revokes what the first one issued
    /// (RFC 6749 §4.1.2: the code may have been stolen).
    func redeemCode(_ value: String, now: Date = Date()) -> CodeRedemption {
        guard var code = codes[value] else { return .unknown }
        if code.used {
            if let grantID = code.grantID { revokeGrant(grantID) }
            return .replayed
        }
        code.used = true
        codes[value] = code
        return code.expiresAt > now ? .redeemed(code) : .expired
    }

    /// The DPoP key a code's exchange must prove (§10), without spending the code.
    func dpopKey(ofCode value: String) -> String? { codes[value]?.dpopKey }

    func attach(grantID: String, toCode value: String) {
        codes[value]?.grantID = grantID
    }

    // MARK: Tokens

    struct IssuedTokens {
        let accessToken: String
        let refreshToken: String
        let grantID: String
        /// What the access token carries: the grant's scopes, or fewer where a refresh asked for fewer.
        let scopes: [String]
    }

    /// An access token and a refresh token of `grant` (a new grant unless `grantID` names one). The
    /// refresh token always stands for the whole grant (RFC 6749 §6); the access token for `scopes`
    /// and `audience` where a refresh narrowed it.
    func issueTokens(
        for grant: Grant, reusing grantID: String? = nil, ttl: Int, refreshTTL: Int? = nil, scopes: [String]? = nil,
        audience: String? = nil, now: Date = Date()
    ) -> IssuedTokens {
        let id = grantID ?? Base64URL.randomToken(bytes: 16)
        if grantID == nil { grants[id] = grant }
        let access = "sbx_at_" + Base64URL.randomToken()
        let refresh = "sbx_rt_" + Base64URL.randomToken()
        let scopes = scopes ?? grant.scopes
        accessTokens[access] = AccessToken(
            grantID: id, scopes: scopes, expiresAt: now.addingTimeInterval(TimeInterval(ttl)), audience: audience)
        refreshTokens[refresh] = RefreshToken(grantID: id, expiresAt: refreshTTL.map { now.addingTimeInterval(TimeInterval($0)) })
        persist()
        return IssuedTokens(accessToken: access, refreshToken: refresh, grantID: id, scopes: scopes)
    }

    /// RFC 8693: an access token alone, of the grant `subject` belongs to (revoked with it), for
    /// `scopes` and `audience`, living no longer than `subject` does.
    func exchange(_ subject: String, scopes: [String], audience: String?, ttl: Int, now: Date = Date()) -> (
        token: String, expiresAt: Date
    )? {
        guard let held = accessTokens[subject] else { return nil }
        let access = "sbx_at_" + Base64URL.randomToken()
        let expiresAt = min(held.expiresAt, now.addingTimeInterval(TimeInterval(ttl)))
        accessTokens[access] = AccessToken(grantID: held.grantID, scopes: scopes, expiresAt: expiresAt, audience: audience)
        persist()
        return (access, expiresAt)
    }

    enum RefreshRedemption {
        case redeemed(grantID: String, Grant)
        case unknown, revoked, replayed, expired
    }

    /// Rotates a refresh token: the presented one stops working. Presenting a
    /// rotated-out token again revokes the whole grant (OAuth 2.0 Security BCP §4.14).
    func redeemRefreshToken(_ value: String, now: Date = Date()) -> RefreshRedemption {
        guard var token = refreshTokens[value], let grant = grants[token.grantID] else { return .unknown }
        if grant.revoked { return .revoked }
        if let expiresAt = token.expiresAt, expiresAt <= now { return .expired }
        if token.rotated {
            revokeGrant(token.grantID)
            return .replayed
        }
        token.rotated = true
        refreshTokens[value] = token
        persist()
        return .redeemed(grantID: token.grantID, grant)
    }

    enum AccessCheck {
        /// `resource`: the token's audience (RFC 8707), nil for the provider's own UserInfo.
        case valid(Grant, scopes: [String], resource: String?, expiresAt: Date)
        case unknown, expired, revoked
    }

    /// The grant a refresh token belongs to, without redeeming it: what its refresh must prove first.
    func grant(ofRefreshToken value: String) -> Grant? {
        refreshTokens[value].flatMap { grants[$0.grantID] }
    }

    func checkAccessToken(_ value: String, now: Date = Date()) -> AccessCheck {
        guard let token = accessTokens[value], let grant = grants[token.grantID] else { return .unknown }
        if token.revoked || grant.revoked { return .revoked }
        if token.expiresAt <= now { return .expired }
        return .valid(grant, scopes: token.scopes, resource: token.audience ?? grant.resource, expiresAt: token.expiresAt)
    }

    enum RevocationTarget {
        case accessToken(grantID: String)
        case refreshToken(grantID: String)
    }

    func find(token value: String) -> (RevocationTarget, clientID: String)? {
        if let token = accessTokens[value], let grant = grants[token.grantID] {
            return (.accessToken(grantID: token.grantID), grant.clientID)
        }
        if let token = refreshTokens[value], let grant = grants[token.grantID] {
            return (.refreshToken(grantID: token.grantID), grant.clientID)
        }
        return nil
    }

    /// RFC 7009 §2.1: revoking a refresh token ends the whole grant; revoking an
    /// access token ends that token alone.
    func revoke(token value: String) {
        if accessTokens[value] != nil {
            accessTokens[value]?.revoked = true
            persist()
        } else if let token = refreshTokens[value] {
            revokeGrant(token.grantID)
        }
    }

    private func revokeGrant(_ id: String) {
        grants[id]?.revoked = true
        persist()
    }

    // MARK: Registered clients (RFC 7591, RFC 7592)

    func register(_ registration: Registration) {
        registrations[registration.client.clientID] = registration
        statistics.registrations += 1
        persist()
    }

    func registration(_ clientID: String) -> Registration? { registrations[clientID] }

    /// The registration access token is used up by a read, as Keycloak's is (RFC 7592 §3 allows it):
    /// the answer carries the next one.
    func replaceRegistrationToken(of clientID: String, hash: String) {
        registrations[clientID]?.accessTokenHash = hash
        persist()
    }

    /// Forgets every registered client, as a server that lost its registrations would.
    func forgetRegistrations() {
        registrations.removeAll()
        persist()
    }

    // MARK: Faults and statistics

    func setFault(_ fault: Fault) {
        faults.removeAll { $0.endpoint == fault.endpoint }
        faults.append(fault)
    }

    func clearFaults() {
        faults.removeAll()
    }

    /// Takes one pending fault for this endpoint, if any.
    func takeFault(for endpoint: FaultEndpoint) -> Fault? {
        guard let index = faults.firstIndex(where: { $0.endpoint == endpoint }) else { return nil }
        let fault = faults[index]
        if fault.count <= 1 {
            faults.remove(at: index)
        } else {
            faults[index].count -= 1
        }
        return fault
    }

    /// Whether the protected resources have moved to the second authorization server.
    private(set) var resourcesMoved = false

    func moveResources() { resourcesMoved = true }

    func count(_ keyPath: WritableKeyPath<Statistics, Int>) {
        statistics[keyPath: keyPath] += 1
    }

    func note(_ value: String, in keyPath: WritableKeyPath<Statistics, [String]>) {
        statistics[keyPath: keyPath].append(value)
    }
}
