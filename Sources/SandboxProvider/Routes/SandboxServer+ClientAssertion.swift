import Foundation

// private_key_jwt (OpenID Connect Core §9, RFC 7523 §2.2 and §3): a client proves itself with a JWT
// its private key signed, checked against the public keys it registered.
extension SandboxServer {
    static let clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    /// The client a `client_assertion` proves, or why it proves none (401 `invalid_client`, as RFC
    /// 7523 §3.2 has it): the type, the signature with one of the client's keys, `iss` and `sub`
    /// its id, `aud` this server (its issuer, or the endpoint's URL), an `exp` within five minutes,
    /// a `jti` not seen before.
    func authenticateAssertion(_ parameters: Parameters, now: Date = Date()) async -> Result<SandboxClient, ClientAuthenticationError> {
        func failure(_ description: String, error: String = "invalid_client") -> Result<SandboxClient, ClientAuthenticationError> {
            .failure(.init(error: error, description: description, basicChallenge: false))
        }
        guard parameters["client_assertion_type"] == Self.clientAssertionType else {
            return failure("client_assertion_type must be \(Self.clientAssertionType).", error: "invalid_request")
        }
        guard let assertion = parameters["client_assertion"], !assertion.isEmpty else {
            return failure("client_assertion is missing.", error: "invalid_request")
        }
        // Who it says it is, read before the signature: to know whose keys check it.
        guard let payload = assertion.split(separator: ".", omittingEmptySubsequences: false).dropFirst().first,
            let bytes = DPoPCheck.decode(payload), let unverified = (try? JSONSerialization.jsonObject(with: bytes)) as? [String: Any],
            let subject = unverified["sub"] as? String
        else { return failure("The client assertion is not a JWT with a sub.") }
        if let named = parameters["client_id"], named != subject {
            return failure("client_id differs from the client assertion's sub.", error: "invalid_request")
        }
        guard let client = await lookUpClient(subject), let keys = client.jwks, !keys.isEmpty else {
            return failure("Client authentication failed: the client is unknown, or has registered no keys.")
        }
        let checked: JWSCheck
        switch JWSCheck.verified(assertion, keys: keys, what: "client assertion") {
        case .failure(let refusal): return failure(refusal.sentence)
        case .success(let verified): checked = verified
        }
        guard checked.claims["iss"] as? String == client.clientID, checked.claims["sub"] as? String == client.clientID else {
            return failure("The client assertion's iss and sub must both be the client's id.")
        }
        let tokenEndpoint = base + Self.prefix + likeness.tokenPath
        guard checked.isFor([issuer, issuer + "/", tokenEndpoint]) else {
            return failure("The client assertion's aud must name this authorization server (\(issuer)).")
        }
        let moment = now.timeIntervalSince1970
        guard let expiry = checked.time("exp"), expiry > moment - 30, expiry <= moment + 300 else {
            return failure("The client assertion has expired, or lasts more than five minutes.")
        }
        guard let jti = checked.claims["jti"] as? String, !jti.isEmpty, jti.count <= 256 else {
            return failure("The client assertion has no jti.")
        }
        guard await state.firstUse(ofAssertion: "client\u{0}" + client.clientID + "\u{0}" + jti, expiresAt: expiry + 30, now: now) else {
            return failure("The client assertion was used before.")
        }
        await state.count(\.clientAssertions)
        return .success(client)
    }
}
