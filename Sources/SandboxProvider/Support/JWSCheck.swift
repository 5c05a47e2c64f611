import Crypto
import CryptoExtras
import Foundation

/// A compact JWS checked against public keys (JWKs): ES256 with a P-256 key, RS256 with an RSA key
/// of 2048 bits or more; no other algorithm (never `none`, nor an HMAC a public key could be
/// mistaken for the secret of). What a client assertion (RFC 7523) and an ID-JAG are checked with.
struct JWSCheck {
    let header: [String: Any]
    let claims: [String: Any]

    /// Why a JWS is refused, in a sentence.
    struct Refusal: Error {
        let sentence: String
        init(_ sentence: String) { self.sentence = sentence }
    }

    /// `text` verified with one of `keys` (the one its `kid` names, else each that fits its `alg`).
    static func verified(_ text: String, keys: [[String: Any]], what: String) -> Result<JWSCheck, Refusal> {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = DPoPCheck.decode(parts[0]), let claimBytes = DPoPCheck.decode(parts[1]),
            let signature = DPoPCheck.decode(parts[2]),
            let header = (try? JSONSerialization.jsonObject(with: headerBytes)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimBytes)) as? [String: Any]
        else { return .failure(Refusal("The \(what) is not a JWT in compact form.")) }
        guard let algorithm = header["alg"] as? String, ["ES256", "RS256"].contains(algorithm) else {
            return .failure(Refusal("The \(what) must be signed with ES256 or RS256."))
        }
        let kid = header["kid"] as? String
        let candidates = keys.filter { key in
            (kid == nil || key["kid"] == nil || key["kid"] as? String == kid)
                && (key["kty"] as? String == (algorithm == "ES256" ? "EC" : "RSA"))
        }
        let input = Data((parts[0] + "." + parts[1]).utf8)
        guard candidates.contains(where: { verifies(signature, of: input, with: $0, algorithm: algorithm) }) else {
            return .failure(Refusal("The \(what)'s signature does not verify with the keys registered for it."))
        }
        return .success(JWSCheck(header: header, claims: claims))
    }

    private static func verifies(_ signature: Data, of input: Data, with jwk: [String: Any], algorithm: String) -> Bool {
        if algorithm == "ES256" {
            guard jwk["crv"] as? String == "P-256", let x = (jwk["x"] as? String).flatMap(DPoPCheck.decode),
                let y = (jwk["y"] as? String).flatMap(DPoPCheck.decode), x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(rawRepresentation: x + y),
                let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(ecdsa, for: input)
        }
        guard let n = (jwk["n"] as? String).flatMap(DPoPCheck.decode), let e = (jwk["e"] as? String).flatMap(DPoPCheck.decode),
            let key = try? _RSA.Signing.PublicKey(n: n, e: e), key.keySizeInBits >= 2048
        else { return false }
        return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
    }

    /// A claim that is a moment (NumericDate), in seconds.
    func time(_ name: String) -> Double? { (claims[name] as? NSNumber)?.doubleValue }

    /// Whether `aud` (a string, or an array of them) names one of `wanted`.
    func isFor(_ wanted: [String]) -> Bool {
        let audiences = (claims["aud"] as? [String]) ?? [(claims["aud"] as? String)].compactMap { $0 }
        return audiences.contains { wanted.contains($0) }
    }
}
