import Crypto
import Foundation
import TestSupport
import Testing

/// A DPoP-bound access token at the sandbox's UserInfo and protected resources (RFC 9449 §7): taken
/// with the DPoP scheme and a proof of its key for that method and URL carrying the token's hash,
/// never as a bearer token; the resource's nonce asked for on demand (§9); and the binding mode that
/// binds the refresh token alone.
@Suite struct DPoPResourceTests {
    typealias Prover = DPoPTests.Prover

    /// Signs in the public client with `prover`'s key (answering a nonce if asked); the token endpoint's answer.
    func signIn(_ sandbox: RunningSandbox, _ prover: Prover, extra: [(String, String)] = []) async throws -> Reply {
        let fields = try await DPoPTests().exchange(Browser(sandbox: sandbox), extra: extra)
        let endpoint = "\(sandbox.baseURL)/token"
        let first = try await DPoPTests().token(sandbox, fields, proof: try prover.proof(endpoint))
        guard first.error == "use_dpop_nonce", let nonce = first.header("dpop-nonce") else { return first }
        return try await DPoPTests().token(sandbox, fields, proof: try prover.proof(endpoint, nonce: nonce))
    }

    func get(_ url: String, _ authorization: String?, proof: String? = nil) async throws -> Reply {
        var headers: [String: String] = [:]
        if let authorization { headers["Authorization"] = authorization }
        if let proof { headers["DPoP"] = proof }
        return try await HTTPClient().get(url, headers: headers)
    }

    @Test func aBoundTokenIsTakenWithAProofOfItsKeyAndNeverAsBearer() async throws {
        let sandbox = try await RunningSandbox.start(["--dpop", "on"])
        let prover = Prover()
        let signedIn = try await signIn(sandbox, prover)
        #expect(signedIn.json["token_type"] as? String == "DPoP")
        let token = try #require(signedIn.json["access_token"] as? String)
        let userinfo = "\(sandbox.baseURL)/userinfo"

        let asBearer = try await get(userinfo, "Bearer \(token)")
        #expect(asBearer.status == 401)
        #expect(
            asBearer.header("www-authenticate")?.hasPrefix(#"DPoP realm="latchkey-sandbox", algs="ES256", error="invalid_token""#) == true)
        let refusals: [(String, String?)] = [
            ("no proof", nil),
            ("another key's", try Prover().proof(userinfo, method: "GET", accessToken: token)),
            ("no ath", try prover.proof(userinfo, method: "GET")),
            ("another token's ath", try prover.proof(userinfo, method: "GET", accessToken: token + "x")),
            ("another method", try prover.proof(userinfo, method: "POST", accessToken: token)),
            ("another URL", try prover.proof("\(sandbox.baseURL)/api/me", method: "GET", accessToken: token)),
        ]
        for (what, proof) in refusals {
            let reply = try await get(userinfo, "DPoP \(token)", proof: proof)
            #expect(reply.status == 401, "\(what)")
            #expect(reply.header("www-authenticate")?.contains(#"error="invalid_dpop_proof""#) == true, "\(what): \(reply.headers)")
        }
        let proof = try prover.proof(userinfo, method: "GET", accessToken: token)
        let answered = try await get(userinfo, "DPoP \(token)", proof: proof)
        #expect(answered.status == 200 && answered.json["sub"] != nil, "no refusal spent the token")
        let replayed = try await get(userinfo, "DPoP \(token)", proof: proof)
        #expect(replayed.status == 401 && replayed.header("www-authenticate")?.contains("used before") == true)
    }

    @Test func aResourceChallengesWithBothSchemesAndAsksForItsNonce() async throws {
        let sandbox = try await RunningSandbox.start(["--dpop", "nonce"])
        let notes = "\(sandbox.baseURL)/api/notes"
        let challenge = try await get(notes, nil)
        #expect(challenge.status == 401)
        let schemes = try #require(challenge.header("www-authenticate"))
        #expect(schemes.hasPrefix("Bearer ") && schemes.contains(#"DPoP resource_metadata=""#) && schemes.hasSuffix(#"algs="ES256""#))

        let prover = Prover()
        let signedIn = try await signIn(sandbox, prover, extra: [("resource", notes)])
        let token = try #require(signedIn.json["access_token"] as? String)
        let asked = try await get(notes, "DPoP \(token)", proof: try prover.proof(notes, method: "GET", accessToken: token))
        #expect(asked.status == 401 && asked.header("www-authenticate")?.contains(#"error="use_dpop_nonce""#) == true)
        let nonce = try #require(asked.header("dpop-nonce"))
        let answered = try await get(
            notes, "DPoP \(token)", proof: try prover.proof(notes, method: "GET", nonce: nonce, accessToken: token))
        #expect(answered.status == 200 && answered.json["notes"] != nil)
    }

    @Test func bindingTheRefreshTokenAloneLeavesAccessTokensBearer() async throws {
        let sandbox = try await RunningSandbox.start(["--dpop", "on", "--dpop-binds", "refresh"])
        let prover = Prover()
        let signedIn = try await signIn(sandbox, prover)
        #expect(signedIn.json["token_type"] as? String == "Bearer")
        let token = try #require(signedIn.json["access_token"] as? String)
        #expect(try await get("\(sandbox.baseURL)/userinfo", "Bearer \(token)").status == 200)
        let seen = try await DPoPTests().introspect(sandbox, token)
        #expect(seen["active"] as? Bool == true && seen["cnf"] == nil)

        let endpoint = "\(sandbox.baseURL)/token"
        let refresh = [
            ("grant_type", "refresh_token"), ("refresh_token", try #require(signedIn.json["refresh_token"] as? String)),
            ("client_id", Clients.publicID),
        ]
        #expect(
            try await DPoPTests().token(sandbox, refresh, proof: nil).error == "invalid_dpop_proof", "a copied refresh token is no good")
        let renewed = try await DPoPTests().token(sandbox, refresh, proof: try prover.proof(endpoint))
        #expect(renewed.status == 200 && renewed.json["token_type"] as? String == "Bearer")
    }

    /// RFC 9449 §10 through a pushed request (RFC 9126): the `dpop_jkt` pushed binds the code as one in the address would.
    @Test func aPushedRequestsDpopJktBindsItsCode() async throws {
        let sandbox = try await RunningSandbox.start(["--dpop", "on", "--pushed-requests", "required"])
        let prover = Prover()
        let pkce = PKCE()
        let pushed = try await HTTPClient().postForm(
            "\(sandbox.baseURL)/par", Browser.parameters(pkce: pkce) + [("dpop_jkt", prover.thumbprint)])
        let reference = try #require(pushed.json["request_uri"] as? String, "\(pushed.status) \(pushed.json)")
        let code = try await Browser(sandbox: sandbox).code([("client_id", Clients.publicID), ("request_uri", reference)])
        let fields = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Clients.https), ("client_id", Clients.publicID),
            ("code_verifier", pkce.verifier),
        ]
        let endpoint = "\(sandbox.baseURL)/token"
        #expect(try await DPoPTests().token(sandbox, fields, proof: try Prover().proof(endpoint)).error == "invalid_dpop_proof")
        let right = try await DPoPTests().token(sandbox, fields, proof: try prover.proof(endpoint))
        #expect(right.status == 200 && right.json["token_type"] as? String == "DPoP")
    }
}
