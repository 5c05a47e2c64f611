// libsodium, opened with dlopen on first use rather than linked: oidc-agent's
// clients (oidc-token) encrypt each request to the agent with it (an X25519 key
// exchange, then XSalsa20-Poly1305, libsodium's crypto_box), so the agent
// speaks it the same way. Only the agent's socket needs it, and only once a
// client that encrypts connects: the window never loads it.
#ifndef LATCHKEY_CSODIUM_H
#define LATCHKEY_CSODIUM_H

#include <stddef.h>

enum {
    CSODIUM_PUBLIC_KEY_BYTES = 32,
    CSODIUM_SECRET_KEY_BYTES = 32,
    CSODIUM_SHARED_KEY_BYTES = 32,
    CSODIUM_NONCE_BYTES = 24,
    CSODIUM_MAC_BYTES = 16,
};

/// Opens libsodium.so.23 and runs sodium_init once per process; thread-safe.
/// Returns 0 on success; otherwise a sentence is written to `error`.
int csodium_load(char *error, size_t error_size);

/// A new X25519 key pair (crypto_box_keypair). 0 on success.
int csodium_box_keypair(unsigned char *public_key, unsigned char *secret_key);

/// The key both sides share after the exchange: crypto_box_beforenm (HSalsa20 over X25519). 0 on success.
int csodium_box_beforenm(unsigned char *shared, const unsigned char *their_public, const unsigned char *my_secret);

/// XSalsa20-Poly1305 with the shared key (crypto_secretbox_easy): `out` holds length + MAC bytes. 0 on success.
int csodium_secretbox_easy(unsigned char *out, const unsigned char *message, unsigned long long length,
                           const unsigned char *nonce, const unsigned char *key);

/// Opens a box (crypto_secretbox_open_easy): `out` holds length - MAC bytes. 0 when the box is genuine.
int csodium_secretbox_open_easy(unsigned char *out, const unsigned char *box, unsigned long long length,
                                const unsigned char *nonce, const unsigned char *key);

/// `length` bytes from the system's CSPRNG (randombytes_buf).
void csodium_random(void *buffer, size_t length);

/// Zeroes memory in a way the compiler keeps (sodium_memzero).
void csodium_memzero(void *buffer, size_t length);

#endif
