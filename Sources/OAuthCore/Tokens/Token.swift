import FoundationEssentials

/// What the token endpoint issued, with its expiry made absolute at receipt
/// (`expires_in` is relative to a moment the client must pin down itself).
public struct Token: Codable, Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var accessToken: String
    public var tokenType: String
    public var refreshToken: String?
    /// The scopes granted, space-separated, when the provider says.
    public var scope: String?
    public var idToken: String?
    public var expiresAt: Date?
    public var receivedAt: Date
    /// Who issued it: the client id and token endpoint it came from
    /// (`ProviderConfiguration.tokenBinding`). A token is only ever sent back there.
    public var issuedBy: String?
    /// OAuth 1.0a: the token secret that signs every request made with `accessToken`
    /// (RFC 5849 §2.3). Such a token has no expiry and no refresh: it lasts until revoked.
    public var tokenSecret: String?
    /// RFC 9449: the DPoP key its tokens are bound to (`DPoPKey.stored`), kept where the refresh token
    /// is; never sent, never shown.
    public var dpopKey: String?
    /// When the refresh token ends, where the provider said (`refresh_token_expires_in`, GitHub Apps'
    /// user tokens among others); nil: it did not say.
    public var refreshExpiresAt: Date?
    /// When the person signed in (the code, or the device code, exchanged): kept across renewals, so
    /// that a session lifetime (`ProviderConfiguration.sessionLifetime`) counts from it. Nil for a
    /// sign-in kept by an earlier release.
    public var signedInAt: Date?
    /// With the `id_jag` grant: the identity provider's sign-in it was had through (`Provider.personSignedIn`):
    /// served only while that sign-in is the one there, never after a sign-out or to the next person.
    public var heldFor: String?

    public init(
        accessToken: String, tokenType: String = "Bearer", refreshToken: String? = nil, scope: String? = nil,
        idToken: String? = nil, expiresAt: Date? = nil, receivedAt: Date = Date(), tokenSecret: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.scope = scope
        self.idToken = idToken
        self.expiresAt = expiresAt.map(Self.wholeSecond)
        self.receivedAt = Self.wholeSecond(receivedAt)
        self.tokenSecret = tokenSecret
    }

    /// Times are kept to the second: a stored token then reads back equal to itself.
    static func wholeSecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    /// True when the token has expired or will within `margin` seconds. A token
    /// whose lifetime the provider did not state is taken as valid until refused.
    public func expires(within margin: TimeInterval, now: Date = Date()) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= margin
    }

    /// Half of what the provider said the token lives (from when it came to when it expires); nil
    /// when it did not say, or said nothing that makes sense.
    public var halfLifetime: TimeInterval? {
        guard let expiresAt else { return nil }
        let lifetime = expiresAt.timeIntervalSince(receivedAt)
        return lifetime > 0 ? lifetime / 2 : nil
    }

    /// The granted scopes one by one.
    public var scopes: [String] { scope?.split(separator: " ").map(String.init) ?? [] }

    /// What this token allows: the scopes the provider said it granted, or, where it said none,
    /// those asked for (RFC 6749 §5.1: an answer without `scope` granted what was asked).
    public func allowedScopes(asked: [String]) -> [String] { scope == nil ? asked : scopes }

    public var canRefresh: Bool { refreshToken?.isEmpty == false }

    /// No secret: the kind of token, when it expires, whether it can be refreshed.
    public var description: String {
        // Seconds, not a formatted date: a date formatter loads ICU on the sign-in path.
        // Clamped: a stored file may hold any date, and Int(_:) traps past its range.
        let expiry =
            expiresAt.map { "expires in \(Int(min(max($0.timeIntervalSinceNow, -1e15), 1e15).rounded())) s" } ?? "no stated expiry"
        return "Token(\(tokenType), \(expiry), \(canRefresh ? "refreshable" : "not refreshable"), scope: \(scope ?? "unstated"))"
    }

    /// Mirrors (`dump`, debuggers) see the same redacted summary.
    public var customMirror: Mirror {
        Mirror(self, children: ["summary": description], displayStyle: .struct)
    }

    public var debugDescription: String { description }

    enum CodingKeys: String, CodingKey {
        case scope
        case accessToken = "access_token"
        case tokenType = "token_type"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case expiresAt = "expires_at"
        case receivedAt = "received_at"
        case issuedBy = "issued_by"
        case tokenSecret = "token_secret"
        case dpopKey = "dpop_key"
        case refreshExpiresAt = "refresh_expires_at"
        case signedInAt = "signed_in_at"
        case heldFor = "held_for"
    }

    // Dates as seconds since 1970, whatever the encoder's strategy, so stored files stay readable.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try c.decode(String.self, forKey: .accessToken)
        tokenType = try c.decodeIfPresent(String.self, forKey: .tokenType) ?? "Bearer"
        refreshToken = try c.decodeIfPresent(String.self, forKey: .refreshToken)
        scope = try c.decodeIfPresent(String.self, forKey: .scope)
        idToken = try c.decodeIfPresent(String.self, forKey: .idToken)
        // To the second, as a new token is: what is read back is then what was written.
        expiresAt = try c.decodeIfPresent(Double.self, forKey: .expiresAt).map { Self.wholeSecond(Date(timeIntervalSince1970: $0)) }
        receivedAt = Self.wholeSecond(
            try c.decodeIfPresent(Double.self, forKey: .receivedAt).map(Date.init(timeIntervalSince1970:)) ?? Date())
        issuedBy = try c.decodeIfPresent(String.self, forKey: .issuedBy)
        tokenSecret = try c.decodeIfPresent(String.self, forKey: .tokenSecret)
        dpopKey = try c.decodeIfPresent(String.self, forKey: .dpopKey)
        refreshExpiresAt = try c.decodeIfPresent(Double.self, forKey: .refreshExpiresAt).map { Date(timeIntervalSince1970: $0) }
        signedInAt = try c.decodeIfPresent(Double.self, forKey: .signedInAt).map { Date(timeIntervalSince1970: $0) }
        heldFor = try c.decodeIfPresent(String.self, forKey: .heldFor)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(accessToken, forKey: .accessToken)
        try c.encode(tokenType, forKey: .tokenType)
        try c.encodeIfPresent(refreshToken, forKey: .refreshToken)
        try c.encodeIfPresent(scope, forKey: .scope)
        try c.encodeIfPresent(idToken, forKey: .idToken)
        try c.encodeIfPresent(expiresAt?.timeIntervalSince1970, forKey: .expiresAt)
        try c.encode(receivedAt.timeIntervalSince1970, forKey: .receivedAt)
        try c.encodeIfPresent(issuedBy, forKey: .issuedBy)
        try c.encodeIfPresent(tokenSecret, forKey: .tokenSecret)
        try c.encodeIfPresent(dpopKey, forKey: .dpopKey)
        try c.encodeIfPresent(refreshExpiresAt?.timeIntervalSince1970, forKey: .refreshExpiresAt)
        try c.encodeIfPresent(signedInAt?.timeIntervalSince1970, forKey: .signedInAt)
        try c.encodeIfPresent(heldFor, forKey: .heldFor)
    }
}
