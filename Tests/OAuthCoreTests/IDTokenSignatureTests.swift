import Crypto
import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// ID tokens checked by signature, against the real sandbox's JWK Set: both algorithms,
/// a rotated key, and the forgeries a client must refuse.
@Suite struct IDTokenSignatureTests {
    /// A provider discovered from the sandbox (jwks_uri and algorithms included), as the public client.
    func configuration(_ sandbox: RunningSandbox, pinned: [String]? = nil) async throws -> ProviderConfiguration {
        var object = try await ProviderDiscovery.providerFile(issuer: sandbox.baseURL)
        object.clientID = .value("latchkey-desktop")
        if let pinned { object.idTokenSigningAlgorithms = .value(pinned) }
        return try ProviderConfiguration(file: object)
    }

    /// A real ID token from a real sign-in.
    func idToken(_ configuration: ProviderConfiguration) async throws -> String {
        let session = AuthSession(configuration: configuration, store: MemoryTokenStore())
        return try #require(try await session.signIn(using: FormPostingUserAgent()).token.idToken)
    }

    static func segments(_ token: String) -> [String] { token.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }
    static func object(_ segment: String) throws -> [String: Any] {
        let data = try #require(Base64URL.decode(Substring(segment)))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
    static func header(_ token: String) throws -> [String: Any] { try object(segments(token)[0]) }
    static func encode(_ object: [String: Any]) throws -> String {
        Base64URL.encode(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    @Test(arguments: ["ES256", "RS256"])
    func aSignInChecksTheSignatureWithEitherAlgorithm(algorithm: String) async throws {
        let sandbox = try await RunningSandbox.start(["--id-token-alg", algorithm])
        let configuration = try await configuration(sandbox)
        #expect(configuration.jwksURI?.absoluteString == sandbox.baseURL + "/jwks.json")
        #expect(configuration.idTokenSigningAlgorithms == ["ES256", "RS256"])
        let token = try await idToken(configuration)
        #expect(try Self.header(token)["alg"] as? String == algorithm)
        try await IDTokenSignature.verify(token, configuration: configuration, keys: JWKSCache())
    }

    @Test func aRotatedKeyIsFetchedOnceAndAnUnknownOneRefused() async throws {
        let sandbox = try await RunningSandbox.start()
        let configuration = try await configuration(sandbox)
        let keys = JWKSCache()
        let before = try await idToken(configuration)
        try await IDTokenSignature.verify(before, configuration: configuration, keys: keys)

        // The provider rotates (to RSA, even): the cached set lacks the new kid, so it is read again.
        let rotated = try await HTTPClient().send(
            method: "POST", sandbox.baseURL + "/_admin/rotate-keys", headers: ["Content-Type": "application/json"],
            body: Data(#"{"alg": "RS256"}"#.utf8))
        #expect(rotated.status == 200)
        let after = try await idToken(configuration)
        #expect(try Self.header(after)["kid"] as? String != Self.header(before)["kid"] as? String)
        try await IDTokenSignature.verify(after, configuration: configuration, keys: keys)
        // The previous key is still published while its tokens live.
        try await IDTokenSignature.verify(before, configuration: configuration, keys: keys)

        // A kid nobody publishes is refused, after that one extra read.
        var header = try Self.header(after)
        header["kid"] = "no-such-key"
        let parts = Self.segments(after)
        let stranger = [try Self.encode(header), parts[1], parts[2]].joined(separator: ".")
        let error = await #expect(throws: OAuthError.self) {
            try await IDTokenSignature.verify(stranger, configuration: configuration, keys: keys)
        }
        #expect("\(error!)".contains("does not publish"), "\(error!)")
    }

    @Test func forgeriesAreRefused() async throws {
        let sandbox = try await RunningSandbox.start()
        let configuration = try await configuration(sandbox)
        let keys = JWKSCache()
        let token = try await idToken(configuration)
        let parts = Self.segments(token)
        let header = try Self.header(token)

        // The claims changed after signing (another subject): the signature no longer matches.
        var claims = try Self.object(parts[1])
        claims["sub"] = "someone-else"
        let tampered = [parts[0], try Self.encode(claims), parts[2]].joined(separator: ".")
        // A signature from another key of the same kind, under the provider's kid.
        let otherKey = P256.Signing.PrivateKey()
        let input = "\(parts[0]).\(parts[1])"
        let foreign = input + "." + Base64URL.encode(try otherKey.signature(for: Data(input.utf8)).rawRepresentation)
        // alg none, and HS256 keyed with the provider's public key: the classic confusions.
        let none = [try Self.encode(header.merging(["alg": "none"]) { $1 }), parts[1], ""].joined(separator: ".")
        let jwks = try await HTTPClient().get(sandbox.baseURL + "/jwks.json").body
        let hmacInput = "\(try Self.encode(header.merging(["alg": "HS256"]) { $1 })).\(parts[1])"
        let hmac =
            hmacInput + "."
            + Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(hmacInput.utf8), using: SymmetricKey(data: jwks))))
        // Not a JWS at all.
        let garbage = "not.a-token"

        for (name, forged, says) in [
            ("tampered claims", tampered, "signature does not match"), ("another key", foreign, "signature does not match"),
            ("alg none", none, "may only be signed with"), ("HS256 with the public key", hmac, "may only be signed with"),
            ("garbage", garbage, "header cannot be read"),
        ] {
            let error = await #expect(throws: OAuthError.self, "\(name)") {
                try await IDTokenSignature.verify(forged, configuration: configuration, keys: keys)
            }
            #expect(error.map { "\($0)".contains(says) } == true, "\(name): \(String(describing: error))")
        }

        // Pinned to RS256 alone, an ES256 token from the same provider is refused too.
        let pinned = try await self.configuration(sandbox, pinned: ["RS256"])
        await #expect(throws: OAuthError.self) { try await IDTokenSignature.verify(token, configuration: pinned, keys: keys) }
    }

    @Test func aForgedIDTokenFailsTheSignIn() async throws {
        // The whole sign-in, not only the function: a provider whose published keys do not sign
        // its tokens (its jwks_uri points at another sandbox) ends in a sentence, with nothing kept.
        let sandbox = try await RunningSandbox.start()
        let other = try await RunningSandbox.start()
        var configuration = try await configuration(sandbox)
        configuration.jwksURI = URL(string: other.baseURL + "/jwks.json")
        let store = MemoryTokenStore()
        let session = AuthSession(configuration: configuration, store: store)
        let error = await #expect(throws: OAuthError.self) { try await session.signIn(using: FormPostingUserAgent()) }
        #expect("\(error!)".contains("identity token is not valid"), "\(error!)")
        #expect(await session.isSignedIn == false)
        #expect(try store.load(for: configuration.id) == nil)
    }

    @Test func aProviderFileCannotAllowNoneOrHMAC() {
        for algorithms in [["none"], ["HS256"], ["RS256", "HS512"], [String]()] {
            #expect(throws: OAuthError.self, "\(algorithms)") {
                try ProviderConfiguration(
                    file:
                        ProviderFile([
                            "id": "p", "authorization_endpoint": "https://id.example/a", "token_endpoint": "https://id.example/t",
                            "client_id": "c", "redirect_uri": "http://127.0.0.1/callback", "id_token_signing_alg_values": algorithms,
                        ])
                ).validate()
            }
        }
    }
}
