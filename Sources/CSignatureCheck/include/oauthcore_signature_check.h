// The C interface of libOAuthCoreSignatureCheck.so, which checks a JWS signature
// (RFC 7515) against one public JWK (RFC 7517) with vapor/jwt-kit. OAuthCore opens
// it with dlopen the first time an ID token's signature is checked, so a program
// that has not signed in yet never maps jwt-kit, swift-crypto's RSA and
// swift-certificates. Both sides import this one header.
//
// Only C types cross: strings, an integer and function pointers.
#ifndef OAUTHCORE_SIGNATURE_CHECK_H
#define OAUTHCORE_SIGNATURE_CHECK_H

#include <stdint.h>

// Bumped whenever anything below changes shape or meaning; OAuthCore refuses a
// library built against another version.
#define OAUTHCORE_SIGNATURE_CHECK_ABI_VERSION 1

// The one symbol OAuthCore looks up.
#define OAUTHCORE_SIGNATURE_CHECK_ENTRY_POINT "oauthcore_signature_check_interface"

typedef enum OAuthCoreSignatureVerdict {
    // The signature is the key's, over the token's header and payload.
    OAuthCoreSignatureVerdictValid = 1,
    // It is not: another key, changed content, a key the library cannot use.
    OAuthCoreSignatureVerdictInvalid = 0,
} OAuthCoreSignatureVerdict;

// Called once per check, on a thread of the library's own; `context` is the caller's.
typedef void (*OAuthCoreSignatureDone)(void *context, OAuthCoreSignatureVerdict verdict);

typedef struct OAuthCoreSignatureCheckInterface {
    // OAUTHCORE_SIGNATURE_CHECK_ABI_VERSION of the library: check it before any other field.
    int32_t abi_version;
    // Checks `compact_jws` (header.payload.signature) against `jwk_json` (one public key as
    // JSON text) and calls `done` exactly once. The library copies both strings before it returns.
    void (*check)(const char *compact_jws, const char *jwk_json, void *context, OAuthCoreSignatureDone done);
} OAuthCoreSignatureCheckInterface;

// What OAUTHCORE_SIGNATURE_CHECK_ENTRY_POINT names: the library's table.
typedef const OAuthCoreSignatureCheckInterface *(*OAuthCoreSignatureCheckEntryPoint)(void);

#endif
