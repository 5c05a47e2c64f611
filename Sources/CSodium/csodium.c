#include "csodium.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct {
    int (*init)(void);
    int (*box_keypair)(unsigned char *, unsigned char *);
    int (*box_beforenm)(unsigned char *, const unsigned char *, const unsigned char *);
    int (*secretbox_easy)(unsigned char *, const unsigned char *, unsigned long long, const unsigned char *,
                          const unsigned char *);
    int (*secretbox_open_easy)(unsigned char *, const unsigned char *, unsigned long long, const unsigned char *,
                               const unsigned char *);
    void (*random)(void *, size_t);
    void (*memzero)(void *, size_t);
} sodium;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];
static int loaded;

#define LOOK_UP(field, symbol)                                                                \
    do {                                                                                      \
        *(void **)(&sodium.field) = dlsym(library, symbol);                                   \
        if (!sodium.field) {                                                                  \
            snprintf(load_error, sizeof load_error, "libsodium.so.23 has no %s.", symbol);    \
            return;                                                                           \
        }                                                                                     \
    } while (0)

static void load_once(void) {
    void *library = dlopen("libsodium.so.23", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error,
                 "libsodium is not installed (libsodium.so.23, Debian's libsodium23), and oidc-agent's clients need it: %s",
                 dlerror());
        return;
    }
    LOOK_UP(init, "sodium_init");
    LOOK_UP(box_keypair, "crypto_box_keypair");
    LOOK_UP(box_beforenm, "crypto_box_beforenm");
    LOOK_UP(secretbox_easy, "crypto_secretbox_easy");
    LOOK_UP(secretbox_open_easy, "crypto_secretbox_open_easy");
    LOOK_UP(random, "randombytes_buf");
    LOOK_UP(memzero, "sodium_memzero");
    if (sodium.init() < 0) {
        snprintf(load_error, sizeof load_error, "libsodium could not start (sodium_init failed).");
        return;
    }
    loaded = 1;
}

int csodium_load(char *error, size_t error_size) {
    pthread_once(&once, load_once);
    if (loaded) return 0;
    if (error && error_size) snprintf(error, error_size, "%s", load_error);
    return -1;
}

int csodium_box_keypair(unsigned char *public_key, unsigned char *secret_key) {
    return sodium.box_keypair(public_key, secret_key);
}

int csodium_box_beforenm(unsigned char *shared, const unsigned char *their_public, const unsigned char *my_secret) {
    return sodium.box_beforenm(shared, their_public, my_secret);
}

int csodium_secretbox_easy(unsigned char *out, const unsigned char *message, unsigned long long length,
                           const unsigned char *nonce, const unsigned char *key) {
    return sodium.secretbox_easy(out, message, length, nonce, key);
}

int csodium_secretbox_open_easy(unsigned char *out, const unsigned char *box, unsigned long long length,
                                const unsigned char *nonce, const unsigned char *key) {
    return sodium.secretbox_open_easy(out, box, length, nonce, key);
}

void csodium_random(void *buffer, size_t length) { sodium.random(buffer, length); }

void csodium_memzero(void *buffer, size_t length) { sodium.memzero(buffer, length); }
