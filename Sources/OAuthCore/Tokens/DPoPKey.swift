import Crypto
import FoundationEssentials
import Synchronization

/// A sign-in's DPoP key (RFC 9449): a P-256 key pair made by Latchkey when the sign-in begins, whose
/// public half the provider binds the sign-in's tokens to, and whose private half signs a proof for
/// every request that uses them. A copied token is worthless without it.
///
/// Kept with the sign-in (`Token.dpopKey`), where its refresh token is kept: in the keyring, or the
/// private file. Where the machine has a TPM 2.0 (`DPoPKey.TPM`), the key is made in it and never
/// leaves it: what is kept is its TPM-wrapped blob, which no other TPM can use. One per sign-in;
/// signing in again makes a new one.
public struct DPoPKey: Sendable {
    enum Custody: Sendable {
        case software(P256.Signing.PrivateKey)
        case tpm(TPMKey)
    }
    let custody: Custody
    /// The public point, x then y (32 bytes each).
    let point: Data

    /// A key made in software.
    public init() { self.init(software: P256.Signing.PrivateKey()) }

    init(software key: P256.Signing.PrivateKey) {
        custody = .software(key)
        point = key.publicKey.rawRepresentation
    }

    /// A key made in `tpm`, waiting for it on a thread of its own; the TPM's refusal (or absence) as a sentence.
    public static func made(in tpm: TPM) async throws -> DPoPKey {
        let made: Result<TPMKey, any Error> = await BlockingWork.run { Result { try TPMKey.make(in: tpm) } }
        return DPoPKey(tpm: try made.get())
    }

    init(tpm key: TPMKey) {
        custody = .tpm(key)
        point = key.point
    }

    /// A key for a new sign-in: in the machine's TPM where it has one (`TPM.ofThisMachine`), else in
    /// software; and why not the TPM, when one was there and failed.
    public static func forNewSignIn(tpm: TPM? = TPM.ofThisMachine) async -> (key: DPoPKey, tpmProblem: String?) {
        guard let tpm else { return (DPoPKey(), nil) }
        do { return (try await made(in: tpm), nil) } catch { return (DPoPKey(), "\(error)") }
    }

    /// A key as `stored` wrote it; nil for anything else.
    public init?(stored: String) {
        if stored.hasPrefix(TPMKey.prefix) {
            guard let key = TPMKey(stored: stored) else { return nil }
            self.init(tpm: key)
            return
        }
        guard let raw = Base64URL.decode(Substring(stored)), let key = try? P256.Signing.PrivateKey(rawRepresentation: raw) else {
            return nil
        }
        self.init(software: key)
    }

    /// The kept key of a sign-in whose tokens are bound to one; one missing or unreadable is said as such
    /// (without it the provider refuses every renewal with a sentence nobody could act on), and kept.
    static func reading(_ stored: String?) throws -> DPoPKey {
        guard let stored, let key = DPoPKey(stored: stored) else {
            throw OAuthError.storage("the sign-in's DPoP key could not be read, so its tokens cannot be used. Sign in again.")
        }
        return key
    }

    /// What is kept with the sign-in, and never sent anywhere: the private key (base64url), or the TPM's blob of it.
    public var stored: String {
        switch custody {
        case .software(let key): Base64URL.encode(key.rawRepresentation)
        case .tpm(let key): key.stored
        }
    }

    /// Where the private key is, in words: "in the TPM, …" or "with the sign-in, …".
    public var whereKept: String { Self.whereKept(stored) ?? "" }

    /// Where a kept key (`Token.dpopKey`) is, without reading it: nil for none.
    public static func whereKept(_ stored: String?) -> String? {
        guard let stored else { return nil }
        return stored.hasPrefix(TPMKey.prefix)
            ? "in the TPM, which never lets it out" : "with the sign-in, where its refresh token is (no TPM)"
    }

    /// The public key as a JWK's required members (RFC 7638 order: crv, kty, x, y).
    var publicJWK: JSONValue {
        .object([
            .init("crv", .string("P-256")), .init("kty", .string("EC")), .init("x", .string(Base64URL.encode(point.prefix(32)))),
            .init("y", .string(Base64URL.encode(point.suffix(32)))),
        ])
    }

    /// RFC 7638: what a provider binds tokens to (`cnf.jkt`), and the authorization request names (`dpop_jkt`).
    public var thumbprint: String { Base64URL.encode(SHA256.hash(data: Data(publicJWK.text(spaced: false).utf8))) }

    /// A proof (RFC 9449 §4.2) for `method` at `url` (its query and fragment left out), with the
    /// server's `nonce` where it gave one and, at a resource, the hash of the access token sent with it.
    /// Signed in software at once, or by the TPM on a thread of its own (a TPM takes its time); a TPM
    /// that cannot sign is a sentence.
    public func proof(method: String, url: URL, nonce: String? = nil, accessToken: String? = nil, now: Date = Date()) async throws
        -> String
    {
        let input = signingInput(method: method, url: url, nonce: nonce, accessToken: accessToken, now: now)
        switch custody {
        case .software(let key): return input + "." + Base64URL.encode(Self.sign(input, with: key))
        case .tpm(let key): return input + "." + Base64URL.encode(try await key.sign(Data(input.utf8)))
        }
    }

    /// A proof signed in software, for a key that is (`nil` for a TPM's, which signs only asynchronously).
    public func softwareProof(method: String, url: URL, nonce: String? = nil, accessToken: String? = nil) -> String? {
        guard case .software(let key) = custody else { return nil }
        let input = signingInput(method: method, url: url, nonce: nonce, accessToken: accessToken, now: Date())
        return input + "." + Base64URL.encode(Self.sign(input, with: key))
    }

    /// An ES256 signature (r and s, 32 bytes each) of `input`: in software at once, or by the TPM on a
    /// thread of its own. What a client assertion made with a kept client key is signed with.
    func signature(for input: Data) async throws -> Data {
        switch custody {
        case .software(let key): return (try? key.signature(for: input).rawRepresentation) ?? Data()
        case .tpm(let key): return try await key.sign(input)
        }
    }

    private static func sign(_ input: String, with key: P256.Signing.PrivateKey) -> Data {
        // Signing with a key made here does not fail; were it to, a proof that does not verify is refused by the server.
        (try? key.signature(for: Data(input.utf8)).rawRepresentation) ?? Data()
    }

    private func signingInput(method: String, url: URL, nonce: String?, accessToken: String?, now: Date) -> String {
        let header: JSONValue = .object([
            .init("typ", .string("dpop+jwt")), .init("alg", .string("ES256")), .init("jwk", publicJWK),
        ])
        var claims: [JSONValue.Member] = [
            .init("jti", .string(Base64URL.random(bytes: 16))), .init("htm", .string(method)), .init("htu", .string(Self.target(url))),
            .init("iat", .number(String(Int(now.timeIntervalSince1970)))),
        ]
        if let nonce { claims.append(.init("nonce", .string(nonce))) }
        if let accessToken { claims.append(.init("ath", .string(Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8)))))) }
        return Base64URL.encode(Data(header.text(spaced: false).utf8)) + "."
            + Base64URL.encode(Data(JSONValue.object(claims).text(spaced: false).utf8))
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
