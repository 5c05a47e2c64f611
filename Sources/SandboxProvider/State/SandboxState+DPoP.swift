import Foundation

// DPoP (RFC 9449): the proofs seen, and the nonce.
extension SandboxState {
    /// Whether a DPoP proof's `jti` is new (and notes it, with the proof's `iat`).
    func firstUse(ofProof jti: String, issuedAt: Double, now: Date = Date()) -> Bool {
        if dpopProofsSeen.count > 10_000 {
            let oldest = now.timeIntervalSince1970 - DPoPCheck.window
            dpopProofsSeen = dpopProofsSeen.filter { $0.value >= oldest }
        }
        guard dpopProofsSeen[jti] == nil else { return false }
        dpopProofsSeen[jti] = issuedAt
        return true
    }

    /// Whether an assertion's `jti` is new (and notes it until its `exp`, after which it is refused anyway).
    func firstUse(ofAssertion jti: String, expiresAt: Double, now: Date = Date()) -> Bool {
        if assertionsSeen.count > 10_000 { assertionsSeen = assertionsSeen.filter { $0.value >= now.timeIntervalSince1970 } }
        guard assertionsSeen[jti] == nil else { return false }
        assertionsSeen[jti] = expiresAt
        return true
    }

    func setIDJAGPolicy(_ policy: [IDJAGPolicy]) { idJAGPolicy = policy }

    func rotateDPoPNonce(to given: String? = nil) -> String {
        dpopNonce = given ?? Base64URL.randomToken(bytes: 16)
        return dpopNonce
    }
}
