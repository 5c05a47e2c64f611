import Crypto
import Foundation
import HTTPTypes
import Hummingbird

// DPoP (RFC 9449) at every endpoint that takes a proof: the token endpoint (§5), and the
// resources and UserInfo, where a bound access token comes with the DPoP scheme and a proof of its key (§7).
extension SandboxServer {
    /// Why a proof is not taken: a sentence (`invalid_dpop_proof`), or the nonce it must carry (`use_dpop_nonce`, §8, §9).
    enum ProofRefusal: Error {
        case invalid(String)
        case nonce(String)
        /// A bound access token sent without a proof of its key (§7.2): `invalid_token`.
        case unproved(String)
    }

    /// The request's DPoP proof for `method` at this URL, checked (§4.3) and its `jti` spent; nil
    /// without one, or where DPoP is off (the header is ignored then, §5). With `accessToken`, the
    /// proof must carry its hash (`ath`, §7).
    func dpopProof(_ request: Request, method: String, accessToken: String? = nil) async -> Result<DPoPProof?, ProofRefusal> {
        let name = HTTPField.Name("DPoP")!
        guard configuration.dpop != .off, let header = request.headers[name] else { return .success(nil) }
        guard request.headers[values: name].count == 1 else { return .failure(.invalid("Send one DPoP proof.")) }
        let proof: DPoPProof
        switch DPoPCheck.check(header, method: method, url: base + request.uri.path) {
        case .failure(let why): return .failure(.invalid(why.sentence))
        case .success(let checked): proof = checked
        }
        if let accessToken, proof.accessTokenHash != Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8))) {
            return .failure(.invalid("The DPoP proof's ath is not the hash of this access token."))
        }
        if configuration.dpop == .nonce, proof.nonce != (await state.dpopNonce) { return .failure(.nonce(await state.dpopNonce)) }
        guard await state.firstUse(ofProof: proof.jti, issuedAt: proof.issuedAt) else {
            return .failure(.invalid("The DPoP proof was used before (its jti)."))
        }
        return .success(proof)
    }

    /// Whether `grant`'s access tokens are bound to its key (`token_type` `DPoP`), or only its refresh token is.
    func accessTokensBound(_ grant: SandboxState.Grant) -> Bool {
        grant.dpopKey != nil && configuration.dpopBinds == .all
    }

    /// How a request to a resource or UserInfo presents its access token.
    enum PresentedToken {
        /// No `Authorization` of a scheme this server takes.
        case none
        /// The token, and the key its proof proved (the `DPoP` scheme) or nil (`Bearer`).
        case token(String, provedKey: String?)
        case refused(ProofRefusal)
    }

    /// RFC 6750 §2.1's `Bearer`, or (where DPoP is offered) RFC 9449 §7.1's `DPoP` with its proof.
    func presentedToken(_ request: Request) async -> PresentedToken {
        guard let header = request.headers[.authorization] else { return .none }
        let lowered = header.lowercased()
        if lowered.hasPrefix("bearer ") {
            return .token(header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces), provedKey: nil)
        }
        guard configuration.dpop != .off, lowered.hasPrefix("dpop ") else { return .none }
        let token = header.dropFirst("dpop ".count).trimmingCharacters(in: .whitespaces)
        switch await dpopProof(request, method: request.method.rawValue, accessToken: token) {
        case .success(nil): return .refused(.invalid("The DPoP scheme comes with a DPoP proof."))
        case .success(let proof?): return .token(token, provedKey: proof.thumbprint)
        case .failure(let refusal): return .refused(refusal)
        }
    }

    /// §7.1: a bound access token is taken only with a proof of its key; sent as Bearer, it is no token at all.
    func bindingProblem(_ grant: SandboxState.Grant, provedKey: String?) -> ProofRefusal? {
        guard accessTokensBound(grant) else { return nil }
        guard let provedKey else {
            return .unproved("The access token is bound to a DPoP key: send it with the DPoP scheme and a proof.")
        }
        return provedKey == grant.dpopKey ? nil : .invalid("The DPoP proof's key is not the one the access token is bound to.")
    }

    /// The challenge of a resource or UserInfo (RFC 6750 §3, RFC 9449 §7.1): `Bearer` with
    /// `parameters`, and where DPoP is offered `DPoP` beside it with the algorithm it takes. A
    /// refused proof is said in the DPoP challenge, a nonce it lacked in `DPoP-Nonce` (§9).
    func resourceChallenge(_ status: HTTPResponse.Status, _ parameters: [String], proof: ProofRefusal? = nil) -> Response {
        var challenges = [parameters.isEmpty ? "Bearer" : "Bearer " + parameters.joined(separator: ", ")]
        var headers: HTTPFields = [:]
        if configuration.dpop != .off {
            var dpop = parameters.filter { !$0.hasPrefix("error") } + [#"algs="ES256""#]
            switch proof {
            case .invalid(let sentence)?:
                dpop += [#"error="invalid_dpop_proof""#, #"error_description="\#(sentence)""#]
                challenges = []
            case .unproved(let sentence)?:
                dpop += [#"error="invalid_token""#, #"error_description="\#(sentence)""#]
                challenges = []
            case .nonce(let nonce)?:
                dpop += [#"error="use_dpop_nonce""#, #"error_description="Prove it again with the server's nonce.""#]
                headers[HTTPField.Name("DPoP-Nonce")!] = nonce
                challenges = []
            case nil: break
            }
            challenges.append("DPoP " + dpop.joined(separator: ", "))
        }
        headers[.wwwAuthenticate] = challenges.joined(separator: ", ")
        return Response(status: status, headers: headers)
    }
}
