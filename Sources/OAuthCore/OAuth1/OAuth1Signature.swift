import Crypto
import CryptoExtras
import FoundationEssentials

/// RFC 5849 §3.4: how an OAuth 1.0a request is signed. Written from the RFC,
/// not from a library, and checked against its worked example and the
/// long-standing public test vectors (OAuth1SignatureTests).
///
/// A request is signed over its *signature base string* (§3.4.1): the method,
/// the base URI, and every parameter the request carries — in the query, in an
/// `application/x-www-form-urlencoded` body, and the `oauth_*` protocol
/// parameters — each percent-encoded per §3.6, then sorted.
public enum OAuth1Signature {
    /// The signature methods of RFC 5849 §3.4.
    public enum Method: String, Codable, Sendable, CaseIterable {
        case hmacSHA1 = "HMAC-SHA1"
        case rsaSHA1 = "RSA-SHA1"
        /// The shared secrets themselves: only over https (§3.4.4), never on a plain connection.
        case plaintext = "PLAINTEXT"
    }

    /// §3.6: every byte of the UTF-8 form but the unreserved ALPHA, DIGIT, `-`, `.`, `_`, `~`
    /// becomes `%XY` with upper-case hex. Not Foundation's encoding, which keeps `+`, `/`, `?`…
    public static func percentEncode(_ text: String) -> String { FormCoding.escape(text) }

    /// §3.4.1.2: scheme and host in lower case, the port only when it is not the
    /// scheme's default, the path as sent (`/` when empty); no query, no fragment.
    public static func baseURI(_ url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let scheme = (components?.scheme ?? "").lowercased()
        var host = (components?.percentEncodedHost ?? "").lowercased()
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        var authority = host
        if let port = components?.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            authority += ":\(port)"
        }
        let path = components?.percentEncodedPath ?? ""
        return "\(scheme)://\(authority)\(path.isEmpty ? "/" : path)"
    }

    /// §3.4.1.3.2: each name and value encoded, sorted by name and then by value
    /// (the byte order of the encoded strings), joined as `name=value&…`.
    public static func normalizedParameters(_ parameters: [(String, String)]) -> String {
        parameters
            .map { (percentEncode($0.0), percentEncode($0.1)) }
            .sorted { $0.0 == $1.0 ? $0.1.utf8.lexicographicallyPrecedes($1.1.utf8) : $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// §3.4.1.3.1: the parameters a request carries, the signature itself left out:
    /// the query (decoded as a form, so `+` is a space), the form body when there is
    /// one, and the protocol parameters (`realm` is not one of them).
    /// Nil when the query or body holds a broken percent escape: such a request cannot be signed.
    public static func requestParameters(url: URL, formBody: String?, protocolParameters: [(String, String)])
        -> [(String, String)]?
    {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        guard let fromQuery = FormCoding.decode(query), let fromBody = FormCoding.decode(formBody ?? "") else { return nil }
        let fromHeader = protocolParameters.filter { $0.0 != "realm" }
        // The signature is left out wherever it appears (§3.4.1.3.1), not only in the header.
        return (fromQuery.map { ($0.name, $0.value) } + fromBody.map { ($0.name, $0.value) } + fromHeader)
            .filter { $0.0 != "oauth_signature" }
    }

    /// §3.4.1.1: `METHOD&encoded base URI&encoded normalized parameters`.
    public static func baseString(method: String, url: URL, parameters: [(String, String)]) -> String {
        [method.uppercased(), percentEncode(baseURI(url)), percentEncode(normalizedParameters(parameters))]
            .joined(separator: "&")
    }

    /// §3.4.2 and §3.4.4: the key that signs, the consumer secret and the token secret
    /// (empty before there is a token), each encoded, joined by `&`.
    public static func key(consumerSecret: String, tokenSecret: String?) -> String {
        "\(percentEncode(consumerSecret))&\(percentEncode(tokenSecret ?? ""))"
    }

    /// §3.4.2: base64 of HMAC-SHA1 over the base string.
    public static func hmacSHA1(_ baseString: String, consumerSecret: String, tokenSecret: String?) -> String {
        let key = SymmetricKey(data: Data(key(consumerSecret: consumerSecret, tokenSecret: tokenSecret).utf8))
        return Data(HMAC<Insecure.SHA1>.authenticationCode(for: Data(baseString.utf8), using: key)).base64EncodedString()
    }

    /// §3.4.3: base64 of RSASSA-PKCS1-v1_5 with SHA-1 over the base string (RFC 3447 §8.2).
    public static func rsaSHA1(_ baseString: String, key: _RSA.Signing.PrivateKey) throws -> String {
        let signature = try key.signature(for: Insecure.SHA1.hash(data: Data(baseString.utf8)), padding: .insecurePKCS1v1_5)
        return signature.rawRepresentation.base64EncodedString()
    }

    /// An RSA private key in PEM (PKCS #1 or #8), as a consumer registers its public half
    /// with the provider. Keys of 1024 bits are still accepted: providers' own set-up
    /// guides (Atlassian's among them) long told people to make them.
    public static func privateKey(pem: String) throws -> _RSA.Signing.PrivateKey {
        try _RSA.Signing.PrivateKey(unsafePEMRepresentation: pem)
    }

    /// §3.5.1: `OAuth realm="…", name="value", …`, every name and value encoded per §3.6.
    public static func authorizationHeader(_ parameters: [(String, String)], realm: String? = nil) -> String {
        let pairs = (realm.map { [("realm", $0)] } ?? []) + parameters
        return "OAuth " + pairs.map { "\(percentEncode($0.0))=\"\(percentEncode($0.1))\"" }.joined(separator: ", ")
    }

    /// A nonce (§3.3): 24 bytes from the system CSPRNG, base64url, so it never repeats.
    public static func nonce() -> String { Base64URL.random(bytes: 24) }
}
