import FoundationEssentials

/// Checks an ID token's signature (JWS, RFC 7515) against the provider's JWK Set
/// (RFC 7517). The cryptography is vapor/jwt-kit's, in a library opened only
/// when a signature is first checked (`SignatureCheckLibrary`).
///
/// What OAuthCore decides itself, before the library is asked:
/// - the algorithm is pinned per provider (`id_token_signing_alg_values`), and is
///   never `none` nor an HMAC, whose key would be the provider's public key;
/// - the key is the one the token names (`kid`), of the type its algorithm needs,
///   meant for signatures, and of that algorithm if the key says so;
/// - a `kid` the cached set lacks fetches the set again, once (a rotated key); a
///   `kid` still missing then is refused.
public enum IDTokenSignature {
    /// Asymmetric JWS algorithms OAuthCore checks.
    public static let supportedAlgorithms: Set<String> = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384"]
    /// What a provider file without `id_token_signing_alg_values` allows.
    public static let defaultAlgorithms = ["RS256", "ES256"]

    public static func verify(
        _ idToken: String, configuration: ProviderConfiguration, keys: JWKSCache = .shared,
        network: Network = Network()
    ) async throws {
        guard let jwksURI = configuration.jwksURI else { return }
        func invalid(_ reason: String) -> OAuthError { .invalidIDToken(reason) }
        let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData)
        else { throw invalid("its header cannot be read") }
        guard let algorithm = header.alg else { throw invalid("its header names no signing algorithm") }
        guard configuration.idTokenSigningAlgorithms.contains(algorithm) else {
            throw invalid(
                "it is signed with \(Redaction.safeCode(algorithm)), and \(configuration.displayName)'s ID tokens may only be signed with "
                    + configuration.idTokenSigningAlgorithms.joined(separator: " or "))
        }
        let kid = header.kid
        var set = try await keys.set(at: jwksURI, network: network, refresh: false)
        var key = set.key(kid: kid, algorithm: algorithm)
        if key == nil {
            // A key rotated in since the set was read: read it again, once.
            set = try await keys.set(at: jwksURI, network: network, refresh: true)
            key = set.key(kid: kid, algorithm: algorithm)
        }
        guard let key else {
            throw invalid("it is signed with a key \(configuration.displayName) does not publish")
        }
        let keyText = String(decoding: try JSONEncoder().encode(key), as: UTF8.self)
        guard try await SignatureCheckLibrary.shared().isValid(idToken, key: keyText) else {
            throw invalid("its signature does not match \(configuration.displayName)'s key")
        }
    }

    /// The members of a JWS header this check reads (RFC 7515 §4.1).
    struct Header: Decodable {
        let alg: String?
        let kid: String?
    }
}

/// A provider's JWK Set as last read, per `jwks_uri`, for this process.
public actor JWKSCache {
    public static let shared = JWKSCache()

    struct KeySet: Sendable {
        /// Each key's members (all strings in RS and EC public JWKs), for the library.
        let keys: [[String: String]]

        /// The key for `kid` (or, with no `kid`, the only key fit for `algorithm`), if it suits `algorithm`.
        func key(kid: String?, algorithm: String) -> [String: String]? {
            let wanted = algorithm.hasPrefix("ES") ? "EC" : "RSA"
            let fit = keys.filter { key in
                key["kty"] == wanted && (key["use"] ?? "sig") == "sig" && (key["alg"].map { $0 == algorithm } ?? true)
            }
            if let kid { return fit.first { $0["kid"] == kid } }
            return fit.count == 1 ? fit[0] : nil
        }
    }

    private var sets: [URL: KeySet] = [:]

    public init() {}

    /// A key set's keys (RFC 7517 §5): each one's members, a later one of the same name winning, then
    /// its strings, which are what a JWK's fields are (`"alg": "RS256", "alg": null` has no alg).
    static func keys(of object: JSONValue) throws -> [[String: String]] {
        guard let keys = object["keys"]?.array, keys.allSatisfy(\.isObject) else {
            throw OAuthError.malformedResponse(endpoint: .keys, reason: "it has no keys")
        }
        return keys.map { key in
            Dictionary(key.members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last }).compactMapValues(\.string)
        }
    }

    func set(at url: URL, network: Network, refresh: Bool) async throws -> KeySet {
        if !refresh, let cached = sets[url] { return cached }
        let response = try await ProviderDiscovery.getJSON(url, endpoint: .keys, network: network)
        let object = try ProviderDiscovery.jsonObject(response, endpoint: .keys)
        let set = KeySet(keys: try Self.keys(of: object))
        sets[url] = set
        return set
    }
}
