import Crypto
import CryptoExtras
import FoundationEssentials
import Glibc
import Synchronization

/// A confidential client's private key, for `private_key_jwt` (OpenID Connect Core §9, RFC 7523
/// §2.2): the client proves itself at the token endpoint with a short JWT it signs, and no secret
/// ever travels. Its public half is registered at the provider (a JWK, or a `jwks_uri`).
///
/// Read from the PEM file the provider file names (`private_key_file`): a P-256 key signs ES256, an
/// RSA key RS256 — the two algorithms every server that takes `private_key_jwt` accepts.
public struct ClientKey: Sendable {
    enum Material: Sendable {
        case p256(P256.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
        /// A key Latchkey made and keeps (`latchkey client-key`), as it keeps DPoP keys: in the TPM where there is one.
        case kept(DPoPKey)
    }
    let material: Material

    /// The key in `pem` (PKCS #8, SEC 1 or PKCS #1); nil when it holds neither kind.
    public init?(pem: String) {
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
            material = .p256(key)
        } else if let key = try? _RSA.Signing.PrivateKey(unsafePEMRepresentation: pem), key.keySizeInBits >= 2048 {
            material = .rsa(key)
        } else {
            return nil
        }
    }

    /// A key Latchkey keeps, as `DPoPKey.stored` wrote it; nil for anything else.
    public init?(kept stored: String) {
        guard let key = DPoPKey(stored: stored) else { return nil }
        material = .kept(key)
    }

    /// A key made now for a client, in the machine's TPM where it has one, else in software.
    public static func made() async -> ClientKey {
        ClientKey(material: .kept(await DPoPKey.forNewSignIn().key))
    }

    init(material: Material) { self.material = material }

    /// What is kept of a key Latchkey made (never the key itself where a TPM holds it); nil for a PEM file's.
    public var stored: String? {
        guard case .kept(let key) = material else { return nil }
        return key.stored
    }

    /// The key of `configuration` (its `private_key_file`, else the one Latchkey keeps for it), or why
    /// it cannot be had, in a sentence.
    public static func of(_ configuration: ProviderConfiguration) throws -> ClientKey {
        guard let path = configuration.privateKeyFile, !path.isEmpty else {
            if let stored = configuration.clientKey, let key = ClientKey(kept: stored) { return key }
            throw OAuthError.invalidConfiguration(
                "\(configuration.displayName) authenticates with private_key_jwt: name the client's private key (a PEM file) in private_key_file, or have a key made and kept for it where client secrets are kept."
            )
        }
        let file = URL(fileURLWithPath: PathText.expandingTilde(path))
        // A key others can read (or put there) is not the client's alone: it proves nothing of the client.
        var status = stat()
        if stat(file.path, &status) == 0, status.st_uid != getuid() || status.st_mode & 0o077 != 0 {
            throw OAuthError.invalidConfiguration(
                "the client's private key file \(file.path) is readable by others or not yours: make it yours alone (chmod 600).")
        }
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw OAuthError.invalidConfiguration("the client's private key file \(file.path) cannot be read.")
        }
        guard let key = ClientKey(pem: String(decoding: data, as: UTF8.self)) else {
            throw OAuthError.invalidConfiguration(
                "\(file.path) does not hold a P-256 or RSA (2048 bits or more) private key in PEM form.")
        }
        return key
    }

    /// Where the private key is, in words.
    public var whereKept: String {
        guard case .kept(let key) = material else { return "in its PEM file" }
        return key.stored.hasPrefix(TPMKey.prefix) ? "in the TPM, which never lets it out" : "in software (no TPM here)"
    }

    /// The JWS algorithm the key signs with.
    public var algorithm: String {
        switch material {
        case .p256, .kept: "ES256"
        case .rsa: "RS256"
        }
    }

    /// The public key as a JWK's required members (RFC 7638, in its order), what a provider registers.
    public var publicJWK: JSONValue {
        switch material {
        case .p256(let key):
            let point = key.publicKey.rawRepresentation
            return .object([
                .init("crv", .string("P-256")), .init("kty", .string("EC")), .init("x", .string(Base64URL.encode(point.prefix(32)))),
                .init("y", .string(Base64URL.encode(point.suffix(32)))),
            ])
        case .kept(let key):
            return key.publicJWK
        case .rsa(let key):
            // A key read from PEM always yields its primitives.
            let primitives = try? key.publicKey.getKeyPrimitives()
            return .object([
                .init("e", .string(Base64URL.encode(primitives?.publicExponent ?? Data()))), .init("kty", .string("RSA")),
                .init("n", .string(Base64URL.encode(primitives?.modulus ?? Data()))),
            ])
        }
    }

    /// RFC 7638: the key's `kid`, which a server with several keys of a client looks it up by.
    public var keyID: String { Base64URL.encode(SHA256.hash(data: Data(publicJWK.text(spaced: false).utf8))) }

    /// The client assertion for one request (RFC 7523 §3): issued by the client and about it
    /// (`iss` and `sub` its id), for `audience` (the authorization server), lasting a minute, with a
    /// `jti` of its own so that a server refuses it used twice.
    public func assertion(clientID: String, audience: String, now: Date = Date()) async throws -> String {
        let header: JSONValue = .object([
            .init("alg", .string(algorithm)), .init("kid", .string(keyID)), .init("typ", .string("JWT")),
        ])
        let issued = Int(now.timeIntervalSince1970)
        let claims: JSONValue = .object([
            .init("iss", .string(clientID)), .init("sub", .string(clientID)), .init("aud", .string(audience)),
            .init("jti", .string(Base64URL.random(bytes: 16))), .init("iat", .number(String(issued))),
            .init("exp", .number(String(issued + 60))),
        ])
        let input =
            Base64URL.encode(Data(header.text(spaced: false).utf8)) + "." + Base64URL.encode(Data(claims.text(spaced: false).utf8))
        let assertion = input + "." + Base64URL.encode(try await sign(Data(input.utf8)))
        Self.recent.withLock { recent in
            recent.append(assertion)
            if recent.count > 16 { recent.removeFirst() }
        }
        return assertion
    }

    /// The assertions made last (for a minute each): what an error answer that echoes one is cleared of.
    static let recent = Mutex<[String]>([])
    static var recentAssertions: [String] { recent.withLock { $0 } }

    private func sign(_ input: Data) async throws -> Data {
        // Signing with a key that was read whole does not fail; were it to, the server refuses an assertion
        // that does not verify. A TPM that cannot sign is a sentence.
        switch material {
        case .p256(let key): return (try? key.signature(for: input).rawRepresentation) ?? Data()
        case .rsa(let key): return (try? key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation) ?? Data()
        case .kept(let key): return try await key.signature(for: input)
        }
    }

    /// `client_assertion_type` (RFC 7523 §2.2).
    public static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
}
