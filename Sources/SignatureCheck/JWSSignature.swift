import CSignatureCheck
import Foundation
import JWTKit

/// One JWS signature checked against one public JWK, by vapor/jwt-kit: a
/// well-kept library rather than hand-written RSA and ECDSA verification.
///
/// This is all of libOAuthCoreSignatureCheck.so. OAuthCore decides everything
/// else before it asks (the pinned algorithm, never `none` nor an HMAC; the key
/// the token names, of the right type and use) and checks the claims itself;
/// here only the signature is.
public enum JWSSignature {
    /// Whether `compactJWS` is signed by `jwkJSON` (one public key, as JSON text).
    public static func isValid(_ compactJWS: String, key jwkJSON: String) async -> Bool {
        do {
            let jwk = try JSONDecoder().decode(JWK.self, from: Data(jwkJSON.utf8))
            let collection = JWTKeyCollection()
            try await collection.add(jwk: jwk, isDefault: true)
            _ = try await collection.verify(compactJWS, as: UncheckedClaims.self)
            return true
        } catch {
            return false
        }
    }

    /// The claims are OAuthCore's to check; jwt-kit is asked about the signature alone.
    struct UncheckedClaims: JWTPayload {
        init(from decoder: any Decoder) throws {}
        func encode(to encoder: any Encoder) throws {}
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}

/// The library's entry point: its table, typed by oauthcore_signature_check.h.
@_cdecl("oauthcore_signature_check_interface")
public func oauthCoreSignatureCheckInterface() -> UnsafePointer<OAuthCoreSignatureCheckInterface> {
    UnsafePointer(interfaceTable)
}

/// Made once, never freed: OAuthCore may call through it for the life of the process.
private nonisolated(unsafe) let interfaceTable: UnsafeMutablePointer<OAuthCoreSignatureCheckInterface> = {
    let table = UnsafeMutablePointer<OAuthCoreSignatureCheckInterface>.allocate(capacity: 1)
    table.initialize(
        to: OAuthCoreSignatureCheckInterface(
            abi_version: OAUTHCORE_SIGNATURE_CHECK_ABI_VERSION,
            check: { cJWS, cKey, context, done in
                guard let done else { return }
                guard let cJWS, let cKey else { return done(context, OAuthCoreSignatureVerdictInvalid) }
                let (jws, key) = (String(cString: cJWS), String(cString: cKey))
                // The caller's pointer and C function, handed back untouched on this library's own thread.
                nonisolated(unsafe) let (caller, answer) = (context, done)
                Task.detached {
                    let valid = await JWSSignature.isValid(jws, key: key)
                    answer(caller, valid ? OAuthCoreSignatureVerdictValid : OAuthCoreSignatureVerdictInvalid)
                }
            }))
    return table
}()
