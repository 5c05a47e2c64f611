import FoundationEssentials

/// What is known of a kept sign-in's future, read from its token and its provider's file alone
/// (nothing is asked of the provider): when its access token ends, whether it is renewed, when the
/// sign-in itself ends where that is known, and what its tokens are bound to. Never a secret.
public struct SignInFuture: Sendable, Equatable {
    /// Why the sign-in ends when `endsAt` says.
    public enum End: String, Sendable, Equatable {
        /// The provider said when its refresh token ends (`refresh_token_expires_in`).
        case provider
        /// The provider file's `idle_lifetime`, counted from the last renewal (or the sign-in).
        case idleLifetime = "idle_lifetime"
        /// The provider file's `session_lifetime`, counted from the sign-in.
        case sessionLifetime = "session_lifetime"
        /// No refresh token: the sign-in ends with its access token.
        case accessToken = "access_token"
    }

    /// Where the key its tokens are bound to is (RFC 9449).
    public enum KeyCustody: String, Sendable, Equatable {
        /// In the machine's TPM, which never lets it out.
        case tpm
        /// Kept with the sign-in, where its refresh token is.
        case withSignIn = "with-sign-in"
    }

    public var accessTokenExpiresAt: Date?
    public var renewable: Bool
    public var signedInAt: Date?
    /// When its tokens were last renewed; nil when they never were (or, for a sign-in kept by an
    /// earlier release, when that is not known).
    public var lastRenewedAt: Date?
    /// When the sign-in ends, the soonest of what is known; nil: not known (it lasts until revoked, as far as Latchkey can tell).
    public var endsAt: Date?
    public var endsBecause: End?
    public var key: KeyCustody?

    /// `minted`: a token had anew with nobody involved whenever it ends (`ProviderConfiguration.Grant.mints`):
    /// renewable, and its access token's end is not the sign-in's.
    public init(token: Token, idleLifetime: TimeInterval? = nil, sessionLifetime: TimeInterval? = nil, minted: Bool = false) {
        accessTokenExpiresAt = token.expiresAt
        renewable = token.canRefresh || minted
        signedInAt = token.signedInAt
        lastRenewedAt = token.signedInAt.flatMap { token.receivedAt > $0 ? token.receivedAt : nil }
        key = token.dpopKey.map { $0.hasPrefix(TPMKey.prefix) ? .tpm : .withSignIn }
        var ends: [(Date, End)] = []
        if !token.canRefresh {
            if let expiresAt = token.expiresAt, !minted { ends.append((expiresAt, .accessToken)) }
        } else {
            if let at = token.refreshExpiresAt { ends.append((at, .provider)) }
            // Idle: counted from the last renewal (or the sign-in), which starts it again.
            if let lifetime = idleLifetime { ends.append((token.receivedAt.addingTimeInterval(lifetime), .idleLifetime)) }
            if let lifetime = sessionLifetime, let signedInAt = token.signedInAt {
                ends.append((signedInAt.addingTimeInterval(lifetime), .sessionLifetime))
            }
        }
        let soonest = ends.min { $0.0 < $1.0 }
        (endsAt, endsBecause) = (soonest?.0, soonest?.1)
    }

    public init(token: Token, configuration: ProviderConfiguration?) {
        self.init(
            token: token, idleLifetime: configuration?.idleLifetime, sessionLifetime: configuration?.sessionLifetime,
            minted: configuration?.grant.mints == true && !token.canRefresh)
    }

    /// Whether the sign-in ends within `seconds` of `now` (known lifetimes only).
    public func ends(within seconds: TimeInterval, now: Date = Date()) -> Bool {
        guard renewable, let endsAt else { return false }
        return endsAt.timeIntervalSince(now) <= seconds
    }

    /// Why it ends then, in words: "as the provider said", and so on.
    public var endsBecauseText: String? {
        guard let endsBecause else { return nil }
        let source: String? =
            switch endsBecause {
            case .idleLifetime, .sessionLifetime: "the provider file's \(endsBecause.rawValue)"
            case .provider, .accessToken: nil
            }
        return Self.why(endsBecause) + (source.map { " (\($0))" } ?? "")
    }

    /// One sentence for the window, where the end is known: "This sign-in ends in 6 days, as the
    /// provider said." Nil when it is not.
    public func sentence(now: Date = Date()) -> String? {
        guard let endsAt, let endsBecause else { return nil }
        let left = endsAt.timeIntervalSince(now)
        guard left > 0 else { return "This sign-in has ended: sign in again." }
        return "This sign-in ends in \(Self.span(left)), \(Self.why(endsBecause))."
    }

    private static func why(_ end: End) -> String {
        switch end {
        case .provider: "as the provider said"
        case .idleLifetime: "unless it is renewed before then"
        case .sessionLifetime: "however often it is renewed"
        case .accessToken: "with its access token (it cannot be renewed)"
        }
    }

    /// A span in the largest unit it holds a whole one of, to the nearest: "7 days" (for 6 days and 23
    /// hours), "1 hour", "12 minutes", "less than a minute".
    public static func span(_ seconds: TimeInterval) -> String {
        for (unit, size) in [("day", 86_400.0), ("hour", 3_600.0), ("minute", 60.0)] where seconds >= size {
            let count = Int((seconds / size).rounded())
            return "\(count) \(unit)\(count == 1 ? "" : "s")"
        }
        return "less than a minute"
    }
}

extension AuthSession {
    /// The token this session holds, once it has read the store; nil before (nothing is read for it).
    public var heldToken: Token? { loaded ? token : nil }

    /// Whether a token is stored that is valid or can be renewed.
    public var isSignedIn: Bool {
        get async {
            guard let token = await currentToken(), await servable(token) else { return false }
            return token.canRefresh || !token.expires(within: 0, now: now())
        }
    }

    /// A sign-in the provider ended, as the session found out at a renewal (`AuthSession.ended`).
    public struct Ended: Sendable, Equatable {
        public let reason: String
        public let at: Date

        public init(reason: String, at: Date) {
            (self.reason, self.at) = (reason, at)
        }
    }
}
