import Crypto
import FoundationEssentials
import Synchronization

/// A sign-in's DPoP key (RFC 9449): a P-256 key pair made by Latchkey when the sign-in begins, whose
/// public half the provider binds the sign-in's tokens to, and whose private half signs a proof for
/// every request that uses them. A copied token is worthless without it.
///
/// Kept with the sign-in (`Token.dpopKey`), where its refresh token is kept: in the keyring, or the
/// private file. One per sign-in; signing in again makes a new one.
public struct DPoPKey: Sendable {
    let key: P256.Signing.PrivateKey

    public init() { key = P256.Signing.PrivateKey() }

    /// A key as `stored` wrote it; nil for anything else.
    public init?(stored: String) {
        guard let raw = Base64URL.decode(Substring(stored)), let key = try? P256.Signing.PrivateKey(rawRepresentation: raw) else {
            return nil
        }
        self.key = key
    }

    /// The private key, base64url: what is kept with the sign-in, and never sent anywhere.
    public var stored: String { Base64URL.encode(key.rawRepresentation) }

    /// The public key as a JWK's required members (RFC 7638 order: crv, kty, x, y).
    var publicJWK: JSONValue {
        let raw = key.publicKey.rawRepresentation
        return .object([
            .init("crv", .string("P-256")), .init("kty", .string("EC")), .init("x", .string(Base64URL.encode(raw.prefix(32)))),
            .init("y", .string(Base64URL.encode(raw.suffix(32)))),
        ])
    }

    /// RFC 7638: what a provider binds tokens to (`cnf.jkt`), and the authorization request names (`dpop_jkt`).
    public var thumbprint: String { Base64URL.encode(SHA256.hash(data: Data(publicJWK.text(spaced: false).utf8))) }

    /// A proof (RFC 9449 §4.2) for `method` at `url` (its query and fragment left out), with the
    /// server's `nonce` where it gave one and, at a resource, the hash of the access token sent with it.
    public func proof(method: String, url: URL, nonce: String? = nil, accessToken: String? = nil, now: Date = Date()) -> String {
        let header: JSONValue = .object([
            .init("typ", .string("dpop+jwt")), .init("alg", .string("ES256")), .init("jwk", publicJWK),
        ])
        var claims: [JSONValue.Member] = [
            .init("jti", .string(Base64URL.random(bytes: 16))), .init("htm", .string(method)), .init("htu", .string(Self.target(url))),
            .init("iat", .number(String(Int(now.timeIntervalSince1970)))),
        ]
        if let nonce { claims.append(.init("nonce", .string(nonce))) }
        if let accessToken { claims.append(.init("ath", .string(Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8)))))) }
        let input =
            Base64URL.encode(Data(header.text(spaced: false).utf8)) + "."
            + Base64URL.encode(Data(JSONValue.object(claims).text(spaced: false).utf8))
        // Signing with a key made here does not fail; were it to, a proof that does not verify is refused by the server.
        let signature = (try? key.signature(for: Data(input.utf8)).rawRepresentation) ?? Data()
        return input + "." + Base64URL.encode(signature)
    }

    /// `htu`: the URL without its query and fragment (§4.2), nor a user name or password (which would
    /// go in a header a resource may log).
    static func target(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        parts.query = nil
        parts.fragment = nil
        parts.user = nil
        parts.password = nil
        return parts.string ?? url.absoluteString
    }
}

/// The nonces DPoP servers gave (§8), per endpoint (its `htu`: servers on one origin, a realm or a
/// tenant each, keep their own), for the next proof: the last one given. What a program says a
/// resource gave it is kept apart, so that no program can push out, or stand in for, the nonces
/// OAuthCore's own requests were given.
enum DPoPNonces {
    private struct Held {
        var own: [String: String] = [:]
        var programs: [String: String] = [:]
    }
    private static let held = Mutex(Held())

    static func nonce(for url: URL) -> String? {
        let target = DPoPKey.target(url)
        return held.withLock { $0.own[target] ?? $0.programs[target] }
    }

    /// A nonce longer than any server's (or with what a JSON string would need escaped) is not kept: it would only be refused.
    static func keep(_ nonce: String, for url: URL, fromProgram: Bool = false) {
        guard nonce.utf8.count <= 1024, nonce.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C }) else { return }
        let target = DPoPKey.target(url)
        held.withLock { held in
            if fromProgram {
                if held.programs.count >= 64, held.programs[target] == nil { held.programs.removeAll() }
                held.programs[target] = nonce
            } else {
                if held.own.count >= 64, held.own[target] == nil { held.own.removeAll() }
                held.own[target] = nonce
            }
        }
    }
}
