#define _GNU_SOURCE
#include "latchkey_tpm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tss2/tss2_esys.h>  // libtss2-dev; the libraries themselves are opened with dlopen, and only Recommended by the package
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

// tpm2-tss's functions, looked up once in its libraries.
static struct {
    TSS2_RC (*tcti_initialize)(const char *, TSS2_TCTI_CONTEXT **);
    void (*tcti_finalize)(TSS2_TCTI_CONTEXT **);
    TSS2_RC (*initialize)(ESYS_CONTEXT **, TSS2_TCTI_CONTEXT *, TSS2_ABI_VERSION *);
    void (*finalize)(ESYS_CONTEXT **);
    TSS2_RC (*create_primary)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_SENSITIVE_CREATE *, const TPM2B_PUBLIC *,
                              const TPM2B_DATA *, const TPML_PCR_SELECTION *, ESYS_TR *, TPM2B_PUBLIC **, TPM2B_CREATION_DATA **,
                              TPM2B_DIGEST **, TPMT_TK_CREATION **);
    TSS2_RC (*create)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_SENSITIVE_CREATE *, const TPM2B_PUBLIC *,
                      const TPM2B_DATA *, const TPML_PCR_SELECTION *, TPM2B_PRIVATE **, TPM2B_PUBLIC **, TPM2B_CREATION_DATA **,
                      TPM2B_DIGEST **, TPMT_TK_CREATION **);
    TSS2_RC (*load)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_PRIVATE *, const TPM2B_PUBLIC *, ESYS_TR *);
    TSS2_RC (*sign)(ESYS_CONTEXT *, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR, const TPM2B_DIGEST *, const TPMT_SIG_SCHEME *,
                    const TPMT_TK_HASHCHECK *, TPMT_SIGNATURE **);
    TSS2_RC (*flush)(ESYS_CONTEXT *, ESYS_TR);
    TSS2_RC (*set_timeout)(ESYS_CONTEXT *, int32_t);
    void (*free)(void *);
    TSS2_RC (*public_marshal)(const TPM2B_PUBLIC *, uint8_t *, size_t, size_t *);
    TSS2_RC (*public_unmarshal)(const uint8_t *, size_t, size_t *, TPM2B_PUBLIC *);
    TSS2_RC (*private_marshal)(const TPM2B_PRIVATE *, uint8_t *, size_t, size_t *);
    TSS2_RC (*private_unmarshal)(const uint8_t *, size_t, size_t *, TPM2B_PRIVATE *);
    const char *(*decode)(TSS2_RC);
    int loaded;
} tss;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *symbol(void *library, const char *name, int *missing) {
    void *found = library ? dlsym(library, name) : NULL;
    if (!found) *missing = 1;
    return found;
}

extern char **environ;

// Quiet: tpm2-tss logs to stderr unless TSS2_LOG says otherwise (3.2 has no other way: no call sets its
// log handler), and Latchkey says what went wrong itself. A TSS2_LOG already set is kept, for whoever
// wants tpm2-tss's own words; the programs Latchkey starts afterwards inherit the variable.
//
// Not setenv: this runs when a sign-in first reaches the TPM, beside threads that start programs with
// `environ` (GTK's, WebKit's, the agent's), and setenv grows the array by realloc, which may free the one
// such a start is reading (seen in tests: posix_spawn failing with EFAULT). Nor before main: a Swift
// program linked with -static-stdlib finds its arguments by way of `environ`, and a moved
// array leaves it none (CommandLine.arguments empty: the app ignored --provider). So a grown copy is put
// in place of the array, which this never frees: whoever read the old pointer keeps reading a whole array.
static void quiet_tss(void) {
    if (getenv("TSS2_LOG")) return;
    char **old = environ;
    size_t count = 0;
    while (old && old[count]) count++;
    char **grown = malloc((count + 2) * sizeof *grown);
    if (!grown) return;  // tpm2-tss's words are not worth failing for
    if (count) memcpy(grown, old, count * sizeof *grown);
    grown[count] = "TSS2_LOG=all+NONE";
    grown[count + 1] = NULL;
    __atomic_store_n(&environ, grown, __ATOMIC_RELEASE);  // filled before it is seen
}

static void load_tss(void) {
    quiet_tss();
    void *esys = dlopen("libtss2-esys.so.0", RTLD_NOW | RTLD_LOCAL), *tctildr = dlopen("libtss2-tctildr.so.0", RTLD_NOW | RTLD_LOCAL);
    void *mu = dlopen("libtss2-mu.so.0", RTLD_NOW | RTLD_LOCAL), *rc = dlopen("libtss2-rc.so.0", RTLD_NOW | RTLD_LOCAL);
    int missing = 0;
    *(void **)&tss.tcti_initialize = symbol(tctildr, "Tss2_TctiLdr_Initialize", &missing);
    *(void **)&tss.tcti_finalize = symbol(tctildr, "Tss2_TctiLdr_Finalize", &missing);
    *(void **)&tss.initialize = symbol(esys, "Esys_Initialize", &missing);
    *(void **)&tss.finalize = symbol(esys, "Esys_Finalize", &missing);
    *(void **)&tss.create_primary = symbol(esys, "Esys_CreatePrimary", &missing);
    *(void **)&tss.create = symbol(esys, "Esys_Create", &missing);
    *(void **)&tss.load = symbol(esys, "Esys_Load", &missing);
    *(void **)&tss.sign = symbol(esys, "Esys_Sign", &missing);
    *(void **)&tss.flush = symbol(esys, "Esys_FlushContext", &missing);
    *(void **)&tss.set_timeout = symbol(esys, "Esys_SetTimeout", &missing);
    *(void **)&tss.free = symbol(esys, "Esys_Free", &missing);
    *(void **)&tss.public_marshal = symbol(mu, "Tss2_MU_TPM2B_PUBLIC_Marshal", &missing);
    *(void **)&tss.public_unmarshal = symbol(mu, "Tss2_MU_TPM2B_PUBLIC_Unmarshal", &missing);
    *(void **)&tss.private_marshal = symbol(mu, "Tss2_MU_TPM2B_PRIVATE_Marshal", &missing);
    *(void **)&tss.private_unmarshal = symbol(mu, "Tss2_MU_TPM2B_PRIVATE_Unmarshal", &missing);
    *(void **)&tss.decode = symbol(rc, "Tss2_RC_Decode", &missing);
    tss.loaded = !missing;
}

// The libraries, or why not (a sentence in `error`).
static int ready(char *error, size_t capacity) {
    pthread_once(&once, load_tss);
    if (!tss.loaded)
        snprintf(error, capacity, "the TPM software (libtss2-esys0, libtss2-tctildr0, libtss2-mu0, libtss2-rc0) is not installed");
    return tss.loaded;
}

static uint32_t failed(TSS2_RC rc, const char *step, char *error, size_t capacity) {
    snprintf(error, capacity, "%s: %s", step, tss.decode ? tss.decode(rc) : "failed");
    return rc ? rc : 1;
}

// The storage hierarchy's primary key, made again from the TCG's ECC template (the "SRK" every TPM
// user makes the same way): the same key each time on the same TPM, nothing left behind in it.
static TSS2_RC primary(ESYS_CONTEXT *context, ESYS_TR *handle) {
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_ECC,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                                TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
            .parameters.eccDetail = {.symmetric = {.algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB},
                                     .scheme = {.scheme = TPM2_ALG_NULL},
                                     .curveID = TPM2_ECC_NIST_P256,
                                     .kdf = {.scheme = TPM2_ALG_NULL}},
        }};
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    return tss.create_primary(context, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside,
                              &pcrs, handle, NULL, NULL, NULL, NULL);
}

// A TPM connection, with SIGPIPE held off this thread while it lasts: tpm2-tss writes to a socket
// without MSG_NOSIGNAL, and a TPM that went away must be a sentence, not the end of the process.
struct session {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *context;
    sigset_t saved;
};

static TSS2_RC open_session(struct session *s, const char *tcti) {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &s->saved);
    s->tcti = NULL;
    s->context = NULL;
    TSS2_RC rc = tss.tcti_initialize(tcti, &s->tcti);
    if (rc == TSS2_RC_SUCCESS) rc = tss.initialize(&s->context, s->tcti, NULL);
    // A TPM that stops answering is a failure after this long, never a sign-in that waits forever
    // (a hardware TPM makes an ECC key in well under a second; a busy one, in a few).
    if (rc == TSS2_RC_SUCCESS) rc = tss.set_timeout(s->context, LATCHKEY_TPM_TIMEOUT_MS);
    return rc;
}

static void close_session(struct session *s) {
    if (s->context) tss.finalize(&s->context);
    if (s->tcti) tss.tcti_finalize(&s->tcti);
    // A SIGPIPE raised meanwhile is taken here, never delivered.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    struct timespec now = {0};
    while (sigtimedwait(&pipe, NULL, &now) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &s->saved, NULL);
}

// A coordinate, left-padded to 32 bytes; 0 when it is longer than P-256's.
static int coordinate(const TPM2B_ECC_PARAMETER *value, uint8_t *out) {
    if (value->size > 32) return 0;
    memset(out, 0, 32);
    memcpy(out + 32 - value->size, value->buffer, value->size);
    return 1;
}

static uint32_t create_here(const char *tcti, uint8_t *public_blob, size_t *public_length, uint8_t *private_blob,
                            size_t *private_length, uint8_t *x, uint8_t *y, char *error, size_t error_capacity) {
    struct session s;
    ESYS_TR parent = ESYS_TR_NONE;
    TPM2B_PUBLIC *made_public = NULL;
    TPM2B_PRIVATE *made_private = NULL;
    TSS2_RC rc = open_session(&s, tcti);
    const char *step = "reaching the TPM";
    if (rc == TSS2_RC_SUCCESS) rc = primary(s.context, &parent), step = "making the storage key";
    if (rc == TSS2_RC_SUCCESS) {
        step = "making the key";
        TPM2B_PUBLIC template = {
            .publicArea = {
                .type = TPM2_ALG_ECC,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
                                    TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH,
                .parameters.eccDetail = {.symmetric = {.algorithm = TPM2_ALG_NULL},
                                         .scheme = {.scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256},
                                         .curveID = TPM2_ECC_NIST_P256,
                                         .kdf = {.scheme = TPM2_ALG_NULL}},
            }};
        TPM2B_SENSITIVE_CREATE sensitive = {0};
        TPM2B_DATA outside = {0};
        TPML_PCR_SELECTION pcrs = {0};
        rc = tss.create(s.context, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside, &pcrs,
                        &made_private, &made_public, NULL, NULL, NULL);
    }
    if (rc == TSS2_RC_SUCCESS) {
        step = "writing the key's blobs";
        *public_length = 0;
        *private_length = 0;
        rc = tss.public_marshal(made_public, public_blob, LATCHKEY_TPM_BLOB_CAPACITY, public_length);
        if (rc == TSS2_RC_SUCCESS) rc = tss.private_marshal(made_private, private_blob, LATCHKEY_TPM_BLOB_CAPACITY, private_length);
        if (rc == TSS2_RC_SUCCESS && !(coordinate(&made_public->publicArea.unique.ecc.x, x) &&
                                       coordinate(&made_public->publicArea.unique.ecc.y, y)))
            rc = 1;
    }
    uint32_t answer = rc == TSS2_RC_SUCCESS ? 0 : failed(rc, step, error, error_capacity);
    if (made_public) tss.free(made_public);
    if (made_private) tss.free(made_private);
    if (parent != ESYS_TR_NONE && s.context) tss.flush(s.context, parent);
    close_session(&s);
    return answer;
}

static uint32_t sign_here(const char *tcti, const uint8_t *public_blob, size_t public_length, const uint8_t *private_blob,
                          size_t private_length, const uint8_t *digest, uint8_t *signature, char *error, size_t error_capacity) {
    TPM2B_PUBLIC public = {0};
    TPM2B_PRIVATE private = {0};
    size_t offset = 0;
    if (tss.public_unmarshal(public_blob, public_length, &offset, &public) != TSS2_RC_SUCCESS ||
        (offset = 0, tss.private_unmarshal(private_blob, private_length, &offset, &private)) != TSS2_RC_SUCCESS) {
        snprintf(error, error_capacity, "the key's blobs cannot be read");
        return 1;
    }
    struct session s;
    ESYS_TR parent = ESYS_TR_NONE, key = ESYS_TR_NONE;
    TPMT_SIGNATURE *made = NULL;
    TSS2_RC rc = open_session(&s, tcti);
    const char *step = "reaching the TPM";
    if (rc == TSS2_RC_SUCCESS) rc = primary(s.context, &parent), step = "making the storage key";
    if (rc == TSS2_RC_SUCCESS) rc = tss.load(s.context, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &private, &public, &key),
                               step = "loading the key (is it this TPM's?)";
    if (rc == TSS2_RC_SUCCESS) {
        step = "signing";
        TPM2B_DIGEST hashed = {.size = 32};
        memcpy(hashed.buffer, digest, 32);
        TPMT_SIG_SCHEME scheme = {.scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256};
        TPMT_TK_HASHCHECK ticket = {.tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL, .digest.size = 0};
        rc = tss.sign(s.context, key, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &hashed, &scheme, &ticket, &made);
        if (rc == TSS2_RC_SUCCESS && !(coordinate(&made->signature.ecdsa.signatureR, signature) &&
                                       coordinate(&made->signature.ecdsa.signatureS, signature + 32)))
            rc = 1;
    }
    uint32_t answer = rc == TSS2_RC_SUCCESS ? 0 : failed(rc, step, error, error_capacity);
    if (made) tss.free(made);
    if (key != ESYS_TR_NONE && s.context) tss.flush(s.context, key);
    if (parent != ESYS_TR_NONE && s.context) tss.flush(s.context, parent);
    close_session(&s);
    return answer;
}

// The TPM is talked to on a thread of its own with a file table of its own (unshare CLONE_FILES):
// tpm2-tss opens its sockets without close-on-exec, and a program another thread starts meanwhile
// (WebKit's web process, started as a sign-in begins) would keep a copy open for its whole life;
// swtpm, which serves one connection at a time, then waited on that copy forever. Here no other
// thread's child can get one.
struct work {
    int signing;
    const char *tcti;
    uint8_t *public_blob, *private_blob, *x, *y, *signature;
    const uint8_t *public_in, *private_in, *digest;
    size_t *public_length, *private_length, public_in_length, private_in_length;
    char *error;
    size_t error_capacity;
    uint32_t answer;
};

static void *work_apart(void *argument) {
    struct work *w = argument;
    if (unshare(CLONE_FILES) != 0) {
        snprintf(w->error, w->error_capacity, "a thread of its own for the TPM could not be had");
        w->answer = 1;
        return NULL;
    }
    w->answer = w->signing ? sign_here(w->tcti, w->public_in, w->public_in_length, w->private_in, w->private_in_length, w->digest,
                                       w->signature, w->error, w->error_capacity)
                           : create_here(w->tcti, w->public_blob, w->public_length, w->private_blob, w->private_length, w->x, w->y,
                                         w->error, w->error_capacity);
    return NULL;
}

static uint32_t apart(struct work *w) {
    if (!ready(w->error, w->error_capacity)) return 1;
    pthread_t thread;
    if (pthread_create(&thread, NULL, work_apart, w) != 0) {
        snprintf(w->error, w->error_capacity, "a thread for the TPM could not be started");
        return 1;
    }
    pthread_join(thread, NULL);
    return w->answer;
}

uint32_t latchkey_tpm_create(const char *tcti, uint8_t *public_blob, size_t *public_length, uint8_t *private_blob,
                             size_t *private_length, uint8_t *x, uint8_t *y, char *error, size_t error_capacity) {
    struct work w = {.signing = 0, .tcti = tcti, .public_blob = public_blob, .public_length = public_length, .private_blob = private_blob,
                     .private_length = private_length, .x = x, .y = y, .error = error, .error_capacity = error_capacity};
    return apart(&w);
}

uint32_t latchkey_tpm_sign(const char *tcti, const uint8_t *public_blob, size_t public_length, const uint8_t *private_blob,
                           size_t private_length, const uint8_t *digest, uint8_t *signature, char *error, size_t error_capacity) {
    struct work w = {.signing = 1, .tcti = tcti, .public_in = public_blob, .public_in_length = public_length, .private_in = private_blob,
                     .private_in_length = private_length, .digest = digest, .signature = signature, .error = error,
                     .error_capacity = error_capacity};
    return apart(&w);
}

uint32_t latchkey_tpm_public_point(const uint8_t *public_blob, size_t public_length, uint8_t *x, uint8_t *y, char *error,
                                   size_t error_capacity) {
    if (!ready(error, error_capacity)) return 1;
    TPM2B_PUBLIC public = {0};
    size_t offset = 0;
    if (tss.public_unmarshal(public_blob, public_length, &offset, &public) != TSS2_RC_SUCCESS ||
        public.publicArea.type != TPM2_ALG_ECC || public.publicArea.parameters.eccDetail.curveID != TPM2_ECC_NIST_P256 ||
        !coordinate(&public.publicArea.unique.ecc.x, x) || !coordinate(&public.publicArea.unique.ecc.y, y)) {
        snprintf(error, error_capacity, "the key's public blob is not a P-256 key's");
        return 1;
    }
    return 0;
}
