import AgentCore
import Foundation
import Testing

/// What `latchkey token --format` prints, for scripts, HTTP clients and kubectl.
@Suite struct TokenFormatTests {
    let token = AgentToken(
        accessToken: "t0k", tokenType: "bearer", expiresAt: Date(timeIntervalSince1970: 1_900_000_000), scopes: ["repo", "read:user"],
        provider: "github", issuer: "https://github.com")
    let now = Date(timeIntervalSince1970: 1_900_000_000 - 600)

    @Test func tokenAndHeader() {
        #expect(TokenFormat.token.text(token) == "t0k\n")
        #expect(TokenFormat.header.text(token) == "Authorization: Bearer t0k\n", "GitHub's lower-case bearer as the scheme is written")
    }

    @Test func aProofIsAHeaderOfItsOwnAndAMemberOfTheJSON() throws {
        var bound = token
        (bound.tokenType, bound.proof) = ("DPoP", "h.p.s")
        #expect(bound.needsProof && !token.needsProof)
        #expect(TokenFormat.header.text(bound) == "Authorization: DPoP t0k\nDPoP: h.p.s\n")
        let json = try JSONSerialization.jsonObject(with: Data(TokenFormat.json.text(bound, now: now).utf8)) as? [String: Any]
        #expect(json?["token_type"] as? String == "DPoP" && json?["dpop_proof"] as? String == "h.p.s")
        #expect(TokenFormat.token.text(bound) == "t0k\n")
    }

    @Test func jsonHasTheTokenItsTypeExpiryAndScopes() throws {
        let json = try JSONSerialization.jsonObject(with: Data(TokenFormat.json.text(token, now: now).utf8)) as? [String: Any]
        #expect(json?["token"] as? String == "t0k")
        #expect(json?["token_type"] as? String == "Bearer")
        #expect(json?["expires_at"] as? String == "2030-03-17T17:46:40Z")
        #expect((json?["expires_in"] as? NSNumber)?.intValue == 600)
        #expect(json?["scopes"] as? [String] == ["repo", "read:user"])
    }

    @Test func execCredentialSpeaksTheVersionKubectlAsked() throws {
        let v1 = try JSONSerialization.jsonObject(with: Data(TokenFormat.execCredential.text(token).utf8)) as? [String: Any]
        #expect(v1?["apiVersion"] as? String == "client.authentication.k8s.io/v1")
        #expect(v1?["kind"] as? String == "ExecCredential")
        let status = v1?["status"] as? [String: String]
        #expect(status == ["token": "t0k", "expirationTimestamp": "2030-03-17T17:46:40Z"])
        let info = #"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{"interactive":false}}"#
        let beta =
            try JSONSerialization.jsonObject(
                with: Data(TokenFormat.execCredential.text(token, environment: ["KUBERNETES_EXEC_INFO": info]).utf8)) as? [String: Any]
        #expect(beta?["apiVersion"] as? String == "client.authentication.k8s.io/v1beta1")
    }

    @Test func noExpiryIsNullOrLeftOut() throws {
        var lasting = token
        lasting.expiresAt = nil
        let json = try JSONSerialization.jsonObject(with: Data(TokenFormat.json.text(lasting).utf8)) as? [String: Any]
        #expect(json?["expires_at"] is NSNull && json?["expires_in"] is NSNull)
        let exec = try JSONSerialization.jsonObject(with: Data(TokenFormat.execCredential.text(lasting).utf8)) as? [String: Any]
        #expect((exec?["status"] as? [String: String]) == ["token": "t0k"])
    }
}
