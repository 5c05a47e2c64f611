import Crypto
import Foundation
import TestSupport
import Testing

/// The sandbox as a DPoP authorization server (RFC 9449): proofs checked as §4.3 says, tokens and
/// refresh tokens bound to the proof's key, `dpop_jkt` (§10), and nonces (§8). The proofs are made
/// here, with swift-crypto, independently of OAuthCore.
@Suite struct DPoPTests {
    /// A client's DPoP key and the proofs it signs.
    struct Prover {
        let key = P256.Signing.PrivateKey()

        var jwk: [String: String] {
            let raw = key.publicKey.rawRepresentation
            return ["kty": "EC", "crv": "P-256", "x": Self.encode(raw.prefix(32)), "y": Self.encode(raw.suffix(32))]
        }

        /// RFC 7638.
        var thumbprint: String {
            let jwk = self.jwk
            let input = #"{"crv":"P-256","kty":"EC","x":"\#(jwk["x"]!)","y":"\#(jwk["y"]!)"}"#
            return Self.encode(SHA256.hash(data: Data(input.utf8)))
        }

        func proof(
            _ url: String, method: String = "POST", nonce: String? = nil, jti: String = UUID().uuidString, iat: Date = Date(),
            header: [String: Any]? = nil, accessToken: String? = nil
        ) throws -> String {
            let joseHeader = header ?? ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk]
            var claims: [String: Any] = ["jti": jti, "htm": method, "htu": url, "iat": Int(iat.timeIntervalSince1970)]
            if let nonce { claims["nonce"] = nonce }
            if let accessToken { claims["ath"] = Self.encode(SHA256.hash(data: Data(accessToken.utf8))) }
            let input =
                Self.encode(try JSONSerialization.data(withJSONObject: joseHeader)) + "."
                + Self.encode(try JSONSerialization.data(withJSONObject: claims))
            return input + "." + Self.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
        }

        static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }

    /// A code for the public client, with `extra` authorization parameters; the exchange's fields.
    func exchange(_ browser: Browser, extra: [(String, String)] = []) async throws -> [(String, String)] {
        let pkce = PKCE()
        let code = try await browser.code(Browser.parameters(pkce: pkce) + extra)
        return [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https), ("client_id", Clients.publicID),
            ("code_verifier", pkce.verifier),
        ]
    }

    func token(_ sandbox: RunningSandbox, _ fields: [(String, String)], proof: String?) async throws -> Reply {
        try await HTTPClient().postForm("\(sandbox.baseURL)/token", fields, headers: proof.map { ["DPoP": $0] } ?? [:])
    }

    func introspect(_ sandbox: RunningSandbox, _ token: String) async throws -> [String: Any] {
        try await HTTPClient().postForm("\(sandbox.baseURL)/introspect", [("token", token), ("client_id", Clients.publicID)]).json
    }

    @Test func offIgnoresTheHeaderAndSaysNothingOfDPoP() async throws {
        let sandbox = try await RunningSandbox.start()
        let discovery = try await HTTPClient().get("\(sandbox.baseURL)/.well-known/openid-configuration").json
        #expect(discovery["dpop_signing_alg_values_supported"] == nil)
        let prover = Prover()
        let reply = try await token(
            sandbox, try await exchange(Browser(sandbox: sandbox)), proof: try prover.proof("\(sandbox.baseURL)/token"))
        #expect(reply.status == 200 && reply.json["token_type"] as? String == "Bearer")
    }

    @Test func aProofBindsTheTokensAndTheRefreshTokenNeedsItsKey() async throws {
        let sandbox = try await RunningSandbox.start(["--dpop", "on"])
        let endpoint = "\(sandbox.baseURL)/token"
        let discovery = try await HTTPClient().get("\(sandbox.baseURL)/.well-known/openid-configuration").json
        #expect(discovery["dpop_signing_alg_values_supported"] as? [String] == ["ES256"])
        let prover = Prover()
        let first = try await token(sandbox, try await exchange(Browser(sandbox: sandbox)), proof: try prover.proof(endpoint))
        #expect(first.status == 200 && first.json["token_type"] as? String == "DPoP")
        let seen = try await introspect(sandbox, try #require(first.json["access_token"] as? String))
        #expect((seen["cnf"] as? [String: String])?["jkt"] == prover.thumbprint && seen["token_type"] as? String == "DPoP")

        let refreshToken = try #require(first.json["refresh_token"] as? String)
        let refresh = [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", Clients.publicID)]
        // Without a proof, or with another key's: refused before the refresh token is spent.
        #expect(try await token(sandbox, refresh, proof: nil).error == "invalid_dpop_proof")
        #expect(try await token(sandbox, refresh, proof: try Prover().proof(endpoint)).error == "invalid_dpop_proof")
        let renewed = try await token(sandbox, refresh, proof: try prover.proof(endpoint))
        #expect(renewed.status == 200 && renewed.json["token_type"] as? String == "DPoP", "the refresh token was not spent by the refusals")
    }

    @Test(arguments: [
        ("replayed", "jti"), ("another URL", "htu"), ("another method", "htm"), ("stale", "iat"), ("no typ", "typ"),
        ("a private key", "jwk"), ("another key signed", "signature"),
    ])
    func aProofThatIsNotRightIsRefused(_ what: String, _ part: String) async throws {
        let sandbox = try await RunningSandbox.start(["--dpop", "on"])
        let endpoint = "\(sandbox.baseURL)/token"
        let prover = Prover()
        var proof: String
        switch part {
        case "jti":
            let used = try prover.proof(endpoint, jti: "once")
            #expect(try await token(sandbox, try await exchange(Browser(sandbox: sandbox)), proof: used).status == 200)
            proof = used
        case "htu": proof = try prover.proof("\(sandbox.baseURL)/elsewhere?x=1")
        case "htm": proof = try prover.proof(endpoint, method: "GET")
        case "iat": proof = try prover.proof(endpoint, iat: Date().addingTimeInterval(-600))
        case "typ": proof = try prover.proof(endpoint, header: ["typ": "JWT", "alg": "ES256", "jwk": prover.jwk])
        case "jwk":
            var jwk = prover.jwk
            jwk["d"] = Prover.encode(prover.key.rawRepresentation)
            proof = try prover.proof(endpoint, header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk])
        default: proof = try prover.proof(endpoint, header: ["typ": "dpop+jwt", "alg": "ES256", "jwk": Prover().jwk])
        }
        let reply = try await token(sandbox, try await exchange(Browser(sandbox: sandbox)), proof: proof)
        #expect(reply.status == 400 && reply.error == "invalid_dpop_proof", "\(what): \(reply.status) \(reply.json)")
    }

    @Test func aNonceIsAskedForOnceAndANewOneEndsTheOld() async throws {
        let sandbox = try await RunningSandbox.start(["--dpop", "nonce"])
        let endpoint = "\(sandbox.baseURL)/token"
        let prover = Prover()
        let fields = try await exchange(Browser(sandbox: sandbox))
        let asked = try await token(sandbox, fields, proof: try prover.proof(endpoint))
        #expect(asked.status == 400 && asked.error == "use_dpop_nonce")
        let nonce = try #require(asked.header("dpop-nonce"))
        let answered = try await token(sandbox, fields, proof: try prover.proof(endpoint, nonce: nonce))
        #expect(answered.status == 200 && answered.json["token_type"] as? String == "DPoP", "the code was not spent by the nonce's ask")
        let rotated = try await HTTPClient().postForm("\(sandbox.baseURL)/_admin/dpop-nonce", []).json["nonce"] as? String
        let refresh = [
            ("grant_type", "refresh_token"), ("refresh_token", try #require(answered.json["refresh_token"] as? String)),
            ("client_id", Clients.publicID),
        ]
        let stale = try await token(sandbox, refresh, proof: try prover.proof(endpoint, nonce: nonce))
        #expect(stale.error == "use_dpop_nonce" && stale.header("dpop-nonce") == rotated)
        #expect(try await token(sandbox, refresh, proof: try prover.proof(endpoint, nonce: rotated)).status == 200)
    }

    @Test func aCodeAskedForWithDpopJktIsExchangedWithThatKeyAlone() async throws {
        let sandbox = try await RunningSandbox.start(["--dpop", "on"])
        let endpoint = "\(sandbox.baseURL)/token"
        let prover = Prover()
        let browser = Browser(sandbox: sandbox)
        let intercepted = try await exchange(browser, extra: [("dpop_jkt", prover.thumbprint)])
        let other = try await token(sandbox, intercepted, proof: try Prover().proof(endpoint))
        #expect(other.error == "invalid_dpop_proof")
        let after = try await token(sandbox, intercepted, proof: try prover.proof(endpoint))
        #expect(after.status == 200, "whoever intercepted the code did not burn it for its client")
        let none = try await token(sandbox, try await exchange(browser, extra: [("dpop_jkt", prover.thumbprint)]), proof: nil)
        #expect(none.error == "invalid_dpop_proof")
        let right = try await token(
            sandbox, try await exchange(browser, extra: [("dpop_jkt", prover.thumbprint)]), proof: try prover.proof(endpoint))
        #expect(right.status == 200 && right.json["token_type"] as? String == "DPoP")
    }
}
