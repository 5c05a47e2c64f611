import Crypto
import CryptoExtras
import Foundation
import Synchronization

/// Signs OpenID Connect ID tokens (JWS compact form) with ES256 or RS256 keys made
/// at start-up, and publishes their public halves as a JWK Set. Keys rotate on
/// demand (`POST /_admin/rotate-keys`): the new key signs from then on, and the
/// set keeps the previous one, as providers do while tokens signed with it live.
final class IDTokenSigner: Sendable {
    enum Algorithm: String, Sendable, CaseIterable {
        case es256 = "ES256"
        case rs256 = "RS256"
    }

    /// One signing key. Crypto's key types are Sendable values.
    struct Key: Sendable {
        enum Material: Sendable {
            case p256(P256.Signing.PrivateKey)
            case rsa(_RSA.Signing.PrivateKey)
        }
        let material: Material
        let keyID: String

        var algorithm: Algorithm {
            switch material {
            case .p256: .es256
            case .rsa: .rs256
            }
        }

        init(_ algorithm: Algorithm) throws {
            switch algorithm {
            case .es256: material = .p256(P256.Signing.PrivateKey())
            case .rs256: material = .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048))
            }
            keyID = Base64URL.encode(SHA256.hash(data: Data(try Self.thumbprintInput(material).utf8)))
        }

        /// The public JWK (RFC 7517), with `alg` and `use`.
        func jwk() throws -> [String: Any] {
            var members = try Self.requiredMembers(material)
            members["alg"] = algorithm.rawValue
            members["use"] = "sig"
            members["kid"] = keyID
            return members
        }

        /// RFC 7638: the required members only.
        static func requiredMembers(_ material: Material) throws -> [String: Any] {
            switch material {
            case .p256(let key):
                let raw = key.publicKey.rawRepresentation
                return ["kty": "EC", "crv": "P-256", "x": Base64URL.encode(raw.prefix(32)), "y": Base64URL.encode(raw.suffix(32))]
            case .rsa(let key):
                let primitives = try key.publicKey.getKeyPrimitives()
                return ["kty": "RSA", "n": Base64URL.encode(primitives.modulus), "e": Base64URL.encode(primitives.publicExponent)]
            }
        }

        /// RFC 7638 §3: the required members, in lexicographic order, no whitespace.
        static func thumbprintInput(_ material: Material) throws -> String {
            let members = try requiredMembers(material)
            return "{" + members.keys.sorted().map { #""\#($0)":"\#(members[$0] as! String)""# }.joined(separator: ",") + "}"
        }

        func sign(_ input: Data) throws -> Data {
            switch material {
            // JWS ES256 signatures are the raw 64-byte r‖s, not DER (RFC 7518 §3.4).
            case .p256(let key): try key.signature(for: input).rawRepresentation
            // RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
            case .rsa(let key): try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
            }
        }
    }

    /// The signing key first, then the one it replaced (if any).
    private let keys: Mutex<[Key]>

    init(algorithm: Algorithm = .es256) throws {
        keys = Mutex([try Key(algorithm)])
    }

    var algorithm: String { keys.withLock { $0[0].algorithm.rawValue } }

    /// The algorithms a token may be signed with: those of the keys in the set.
    var algorithms: [String] { keys.withLock { Array(Set($0.map(\.algorithm.rawValue))).sorted() } }

    /// Makes a new signing key (of `algorithm`, else the current one's); the previous key stays published.
    func rotate(to algorithm: Algorithm? = nil) throws -> String {
        let next = try Key(algorithm ?? keys.withLock { $0[0].algorithm })
        keys.withLock { keys in keys = [next, keys[0]] }
        return next.keyID
    }

    /// The JWK Set served at `jwks_uri`.
    var jwks: [String: Any] {
        ["keys": keys.withLock { $0 }.compactMap { try? $0.jwk() }]
    }

    /// The public keys, each a JWK: what a token this signer signed is checked with.
    var publicKeys: [[String: Any]] { keys.withLock { $0 }.compactMap { try? $0.jwk() } }

    /// A JWT of `claims`, its header's `typ` as given (an ID-JAG's is `oauth-id-jag+jwt`).
    func sign(claims: [String: Any], type: String = "JWT") throws -> String {
        let key = keys.withLock { $0[0] }
        let header: [String: Any] = ["alg": key.algorithm.rawValue, "typ": type, "kid": key.keyID]
        let encodedHeader = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        let encodedClaims = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let signingInput = "\(encodedHeader).\(encodedClaims)"
        return "\(signingInput).\(Base64URL.encode(try key.sign(Data(signingInput.utf8))))"
    }
}
