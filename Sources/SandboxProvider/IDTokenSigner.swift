import Crypto
import Foundation

/// Signs OpenID Connect ID tokens (JWS compact form, ES256) with a key made at
/// start-up, and publishes the public half as a JWK Set.
struct IDTokenSigner: Sendable {
    /// The private key's raw scalar: Crypto's key type is not Sendable, its bytes are.
    private let keyBytes: Data
    let keyID: String

    private var key: P256.Signing.PrivateKey {
        // The bytes came from a valid key; decoding them cannot fail.
        try! P256.Signing.PrivateKey(rawRepresentation: keyBytes)
    }

    init(key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) {
        self.keyBytes = key.rawRepresentation
        // RFC 7638 thumbprint: SHA-256 of the required members in lexicographic order.
        let thumbprintInput = #"{"crv":"P-256","kty":"EC","x":"\#(Self.x(of: key)),"y":"\#(Self.y(of: key))"}"#
        keyID = Base64URL.encode(SHA256.hash(data: Data(thumbprintInput.utf8)))
    }

    var algorithm: String { "ES256" }

    /// The JWK Set served at `jwks_uri`.
    var jwks: [String: Any] {
        [
            "keys": [
                [
                    "kty": "EC", "crv": "P-256", "use": "sig", "alg": algorithm, "kid": keyID,
                    "x": Self.x(of: key), "y": Self.y(of: key),
                ]
            ]
        ]
    }

    func sign(claims: [String: Any]) throws -> String {
        let header: [String: Any] = ["alg": algorithm, "typ": "JWT", "kid": keyID]
        let encodedHeader = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        let encodedClaims = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let signingInput = "\(encodedHeader).\(encodedClaims)"
        // JWS ES256 signatures are the raw 64-byte r‖s, not DER (RFC 7518 §3.4).
        let signature = try key.signature(for: Data(signingInput.utf8)).rawRepresentation
        return "\(signingInput).\(Base64URL.encode(signature))"
    }

    private static func x(of key: P256.Signing.PrivateKey) -> String {
        Base64URL.encode(key.publicKey.rawRepresentation.prefix(32))
    }

    private static func y(of key: P256.Signing.PrivateKey) -> String {
        Base64URL.encode(key.publicKey.rawRepresentation.suffix(32))
    }
}
