import Crypto
import Foundation

/// A DPoP proof (RFC 9449 §4) checked as an authorization server checks it (§4.3): a compact JWS
/// whose header carries `typ` `dpop+jwt`, `alg` ES256 and the public key (`jwk`, no private member),
/// signed by that key, for this request's method and URL, made within five minutes, with a `jti`;
/// and the server's nonce where it asks for one (§8).
struct DPoPProof: Sendable {
    /// RFC 7638 thumbprint of its key: what a token bound to it carries (`cnf.jkt`).
    let thumbprint: String
    let jti: String
    /// `iat`, seconds since 1970.
    let issuedAt: Double
    let nonce: String?
    /// `ath`: the hash of the access token it goes with, at a resource.
    let accessTokenHash: String?
}

/// Why a proof is refused, in a sentence (the `error_description` of `invalid_dpop_proof`).
struct DPoPRefusal: Error {
    let sentence: String
    init(_ sentence: String) { self.sentence = sentence }
}

enum DPoPCheck {
    /// How far `iat` may be from now, either way (§11.1 leaves it to the server; the MCP extension says 5 minutes).
    static let window: TimeInterval = 300

    /// The proof in `header` (the request's one `DPoP` header) for `method` at `url`, or why it is none.
    static func check(_ header: String, method: String, url: String, now: Date = Date()) -> Result<DPoPProof, DPoPRefusal> {
        let parts = header.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = decode(parts[0]), let payloadBytes = decode(parts[1]),
            let signature = decode(parts[2]),
            let joseHeader = (try? JSONSerialization.jsonObject(with: headerBytes)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: payloadBytes)) as? [String: Any]
        else { return .failure(DPoPRefusal("The DPoP proof is not a JWS in compact form.")) }
        guard joseHeader["typ"] as? String == "dpop+jwt" else { return .failure(DPoPRefusal("The DPoP proof's typ must be dpop+jwt.")) }
        guard joseHeader["alg"] as? String == "ES256" else {
            return .failure(DPoPRefusal("The DPoP proof must be signed with ES256 here."))
        }
        guard let jwk = joseHeader["jwk"] as? [String: Any], jwk["d"] == nil, jwk["kty"] as? String == "EC",
            jwk["crv"] as? String == "P-256", let x = (jwk["x"] as? String).flatMap(decode), let y = (jwk["y"] as? String).flatMap(decode),
            x.count == 32, y.count == 32, let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
        else { return .failure(DPoPRefusal("The DPoP proof's jwk must be a public P-256 key.")) }
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            key.isValidSignature(ecdsa, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return .failure(DPoPRefusal("The DPoP proof's signature does not verify.")) }
        guard let jti = claims["jti"] as? String, !jti.isEmpty, jti.count <= 256 else {
            return .failure(DPoPRefusal("The DPoP proof has no jti."))
        }
        guard claims["htm"] as? String == method else { return .failure(DPoPRefusal("The DPoP proof's htm is not \(method).")) }
        guard let htu = claims["htu"] as? String, Self.sameTarget(htu, url) else {
            return .failure(DPoPRefusal("The DPoP proof's htu is not this endpoint."))
        }
        guard let iat = (claims["iat"] as? NSNumber)?.doubleValue, abs(iat - now.timeIntervalSince1970) <= window else {
            return .failure(DPoPRefusal("The DPoP proof's iat is not within five minutes of now."))
        }
        let thumbprint = Base64URL.encode(
            SHA256.hash(data: Data(#"{"crv":"P-256","kty":"EC","x":"\#(Base64URL.encode(x))","y":"\#(Base64URL.encode(y))"}"#.utf8)))
        return .success(
            DPoPProof(
                thumbprint: thumbprint, jti: jti, issuedAt: iat, nonce: claims["nonce"] as? String,
                accessTokenHash: claims["ath"] as? String))
    }

    /// §4.3 step 9: `htu` names this URL, without its query and fragment, compared as RFC 3986 §6.2.2
    /// and §6.2.3 say (scheme and host in any case, a scheme's default port, an empty path as `/`).
    static func sameTarget(_ htu: String, _ url: String) -> Bool {
        func normal(_ text: String) -> String? {
            guard var parts = URLComponents(string: text) else { return nil }
            parts.query = nil
            parts.fragment = nil
            parts.scheme = parts.scheme?.lowercased()
            parts.host = parts.host?.lowercased()
            if (parts.scheme, parts.port) == ("https", 443) || (parts.scheme, parts.port) == ("http", 80) { parts.port = nil }
            if parts.path.isEmpty { parts.path = "/" }
            return parts.string
        }
        guard let a = normal(htu), let b = normal(url) else { return false }
        return a == b
    }

    static func decode<Text: StringProtocol>(_ text: Text) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
