// A P-256 signing key held by a TPM 2.0 (tpm2-tss's ESAPI, opened with dlopen at the first use, so
// that Latchkey runs where libtss2 is not installed): made under the storage hierarchy's primary
// key, non-exportable (fixedTPM, fixedParent), only its TPM-wrapped blobs kept outside; it signs
// there. For DPoP proofs (RFC 9449), Sources/OAuthCore/Tokens/DPoPKey.swift.
#ifndef LATCHKEY_TPM_H
#define LATCHKEY_TPM_H
#include <stddef.h>
#include <stdint.h>

/// How long one TPM command may take before it counts as a TPM that does not answer (milliseconds).
#define LATCHKEY_TPM_TIMEOUT_MS 20000

/// The most a marshalled TPM2B_PUBLIC or TPM2B_PRIVATE of such a key takes.
#define LATCHKEY_TPM_BLOB_CAPACITY 1024

/// Makes a key in the TPM `tcti` names (tpm2-tss's TCTI configuration: "device:/dev/tpmrm0",
/// "swtpm:path=…"); its public and private blobs, and its public point (x, y, 32 bytes each).
/// 0, or the TSS2_RC of what failed with a sentence in `error`.
uint32_t latchkey_tpm_create(const char *tcti, uint8_t *public_blob, size_t *public_length, uint8_t *private_blob,
                             size_t *private_length, uint8_t *x, uint8_t *y, char *error, size_t error_capacity);

/// Signs the SHA-256 `digest` (32 bytes) with the key the blobs hold, loaded into that TPM:
/// `signature` is r and s, 32 bytes each (JWS's ES256). 0, or the TSS2_RC with a sentence in `error`.
uint32_t latchkey_tpm_sign(const char *tcti, const uint8_t *public_blob, size_t public_length, const uint8_t *private_blob,
                           size_t private_length, const uint8_t *digest, uint8_t *signature, char *error, size_t error_capacity);

/// The public point of a public blob, without a TPM; 0, or nonzero with a sentence in `error`.
uint32_t latchkey_tpm_public_point(const uint8_t *public_blob, size_t public_length, uint8_t *x, uint8_t *y, char *error,
                                   size_t error_capacity);

#endif
