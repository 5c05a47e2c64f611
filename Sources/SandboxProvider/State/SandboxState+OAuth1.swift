import Foundation

extension SandboxState {
    /// Temporary credentials (RFC 5849 §2.1), until traded or expired.
    struct OAuth1Temporary {
        let consumerKey: String
        let secret: String
        let callback: String
        let expiresAt: Date
        /// Set when the person allowed it, with the verifier that proves it (§2.2).
        var username: String?
        var verifier: String?
        /// A verifier is traded once; a refusal ends the credentials too.
        var used = false
    }

    /// Token credentials (§2.3): no expiry, until revoked.
    struct OAuth1Access: Codable {
        let consumerKey: String
        let secret: String
        let username: String
        var revoked = false

        enum CodingKeys: String, CodingKey {
            case secret, username, revoked
            case consumerKey = "consumer_key"
        }
    }

    enum OAuth1Redemption {
        case granted(username: String)
        case unknown, used, notYetAuthorized, wrongVerifier
    }

    func issueTemporary(consumerKey: String, callback: String, ttl: Int, now: Date = Date()) -> (token: String, secret: String) {
        oauth1Temporary = oauth1Temporary.filter { $0.value.expiresAt > now }
        let (token, secret) = (Base64URL.randomToken(bytes: 18), Base64URL.randomToken())
        oauth1Temporary[token] = OAuth1Temporary(
            consumerKey: consumerKey, secret: secret, callback: callback, expiresAt: now.addingTimeInterval(TimeInterval(ttl)))
        return (token, secret)
    }

    /// Unused, unexpired temporary credentials.
    func temporary(_ token: String, now: Date = Date()) -> OAuth1Temporary? {
        guard let found = oauth1Temporary[token], found.expiresAt > now else { return nil }
        return found
    }

    /// The temporary credentials' secret, whatever became of them: a request signed with them is checked first, refused after.
    func temporarySecret(_ token: String) -> String? { oauth1Temporary[token]?.secret }

    func openOAuth1Page(for token: String) -> String {
        let id = Base64URL.randomToken()
        oauth1Pages[id] = token
        return id
    }

    /// The temporary token a sign-in page shows, while it may still be answered.
    func oauth1Page(_ id: String) -> String? {
        guard let token = oauth1Pages[id], let found = temporary(token), !found.used, found.verifier == nil else { return nil }
        return token
    }

    /// The person allowed it: a verifier for the callback.
    func authorizeTemporary(_ token: String, username: String, pageID: String) -> String? {
        oauth1Pages[pageID] = nil
        guard var found = temporary(token), !found.used, found.verifier == nil else { return nil }
        let verifier = Base64URL.randomToken(bytes: 16)
        found.username = username
        found.verifier = verifier
        oauth1Temporary[token] = found
        return verifier
    }

    /// The person refused: the credentials are spent.
    func denyTemporary(_ token: String, pageID: String) {
        oauth1Pages[pageID] = nil
        oauth1Temporary[token]?.used = true
    }

    /// §2.3: the verifier, once, with the credentials it was issued for.
    func redeemVerifier(_ token: String, verifier: String, consumerKey: String) -> OAuth1Redemption {
        guard let found = temporary(token), found.consumerKey == consumerKey else { return .unknown }
        guard !found.used else { return .used }
        guard let expected = found.verifier, let username = found.username else { return .notYetAuthorized }
        guard constantTimeEquals(expected, verifier) else { return .wrongVerifier }
        oauth1Temporary[token]?.used = true
        return .granted(username: username)
    }

    func issueAccess(consumerKey: String, username: String) -> (token: String, secret: String) {
        let (token, secret) = (Base64URL.randomToken(bytes: 24), Base64URL.randomToken())
        oauth1Access[token] = OAuth1Access(consumerKey: consumerKey, secret: secret, username: username)
        persist()
        return (token, secret)
    }

    func access(_ token: String) -> OAuth1Access? {
        guard let found = oauth1Access[token], !found.revoked else { return nil }
        return found
    }

    /// Revokes every token credential, as a person does at the provider's settings page.
    func revokeOAuth1Access() {
        for key in oauth1Access.keys { oauth1Access[key]?.revoked = true }
        persist()
    }

    /// Records a nonce (§3.3) for this consumer, token and timestamp; false when it was seen
    /// before. Nonces older than the window are forgotten: their timestamps are refused anyway.
    func useNonce(_ nonce: String, consumerKey: String, token: String?, timestamp: String, window: TimeInterval, now: Date = Date())
        -> Bool
    {
        oauth1Nonces = oauth1Nonces.filter { now.timeIntervalSince($0.value) <= 2 * window }
        let key = [consumerKey, token ?? "", timestamp, nonce].map(FormEncoding.escape).joined(separator: "&")
        guard oauth1Nonces[key] == nil else { return false }
        oauth1Nonces[key] = now
        return true
    }
}
